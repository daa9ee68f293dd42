#!/usr/bin/env bash
# `tunefarm export` keeps what files say inert in the code it writes, and the code builds:
#  - a ledger `verify` accepts whose device strings and path hold comment ends and starts,
#    newlines, '\', '"', trigraphs, control characters, invalid UTF-8 and a long string:
#    NAME.h and NAME.cu compile, and with comments stripped no payload is left;
#  - a template whose constraint names and reasons hold the same: the string literals end
#    where they should, even for a compiler that reads trigraphs;
#  - the launcher's own names (the locals it declares) as buffer and problem-size names: the
#    exported .cu compiles with nvcc;
#  - the files the template's source includes are copied beside NAME.cu, which then builds;
#  - names that cannot be written as code are refused (exit 2, the file and the key).
# EXPORT_SAMPLE=DIR also exports and compiles every ledger of DIR that export accepts (the
# fuzz_export corpus: tests/fuzz/fuzz_export.c says how).
source "$(dirname "$0")/../lib.sh"
cd "$WORK"
export PATH="$PATH:/usr/local/cuda/bin"
# Without a working nvcc every check but the .cu builds still runs; the test is then
# reported skipped, for those builds alone were not tried.
have_nvcc=1
nvcc --version >/dev/null 2>&1 || have_nvcc=0
mkdir -p root/campaigns stub
cp -r "$SRC/templates" "$SRC/kernels" root/
export TUNEFARM_ROOT="$WORK/root" TUNEFARM_CACHE="$WORK/cache"
printf 'typedef int cudaError_t;\ntypedef void *cudaStream_t;\n' >stub/cuda_runtime.h

# build_h H: the header compiles as C (trigraphs read) and as C++; with its comments gone,
# nothing of a payload is left
build_h() {
  cc -std=c99 -pedantic -trigraphs -Wall -Werror -fsyntax-only -Istub -x c "$1" ||
    fail "$1 does not compile as C"
  c++ -std=c++14 -trigraphs -Wall -Werror -fsyntax-only -Istub -x c++ "$1" ||
    fail "$1 does not compile as C++"
  ! cc -fpreprocessed -dD -E -P -x c "$1" 2>/dev/null | grep -n 'pwned\|PWNED' ||
    fail "$1: a payload is code"
}
# build_cu CU: nvcc builds it
build_cu() {
  [ "$have_nvcc" = 1 ] || return 0
  nvcc -std=c++17 -arch=sm_90 -c -o "${1%.cu}.o" "$1" >nvcc.log 2>&1 ||
    { cat nvcc.log; fail "$1 does not build with nvcc"; }
}

# ---- a hostile ledger ----
sed -E 's/"budget": [0-9]+/"budget": 6/' "$SRC/campaigns/layernorm-4096x768.json" \
  >root/campaigns/layernorm-4096x768.json
"${MPIRUN[@]}" -np 2 "$TF" run --backend sim --quiet --ledgers ledgers \
  root/campaigns/layernorm-4096x768.json || fail "run failed"
mkdir -p 'l*'
ln=$(ls ledgers/layernorm-4096x768/*.jsonl)
python3 - "$ln" 'l*/*??=.jsonl' <<'PY' || fail "cannot write the hostile ledger"
import json, sys
lines = open(sys.argv[1], 'rb').read().split(b'\n')
head = json.loads(lines[0])
d = head['device']
old = d['uuid'].encode()
d['name'] = '*/ _Static_assert(0, "PWNED name"); /*\n#error pwned\n??/\\ \x01\x1b\x7f"' + 'x' * 60
d['uuid'] = 'SIM-*/\n#error pwned uuid\n/* ??/'
d['host'] = '*/ int pwned_host; /*'
d['arch'] = 'sm_90*/ x /*'
d['pci_bus_id'] = '??/\n*/'
text = json.dumps(head, separators=(',', ':')).encode().replace(b'PWNED name', b'PWNED \xff\xfe\xc3 name')
new = json.dumps(d['uuid'])[1:-1].encode()
out = [text] + [l.replace(old, new) for l in lines[1:]]
open(sys.argv[2], 'wb').write(b'\n'.join(out))
PY
hl='l*/*??=.jsonl'
"$TF" verify "$hl" >/dev/null || fail "verify refuses the hostile ledger: the test proves nothing"
"$TF" export --no-cubin -o out --name tf_h "$hl" >/dev/null || fail "export of the hostile ledger failed"
grep -q 'PWNED' out/tf_h.h || fail "the device name is not in the header: the test proves nothing"
LC_ALL=C grep -n '[^ -~]' out/tf_h.h && fail "the header holds a byte outside printable ASCII"
build_h out/tf_h.h
build_cu out/tf_h.cu

# ---- a hostile template: constraint names and reasons in string literals ----
python3 - <<'PY' || fail "cannot write the hostile template"
import json
t = json.load(open('root/templates/layernorm.json'))
t['name'] = 'hostile'
for c in t['constraints']:
    if c['name'] == 'vector_alignment':
        c['name'] = 'a"b*/c??/'
        c['reason'] = 'ends in a trigraph ??/ then "quotes" \\ */ /* and #error pwned \u00e9 ??/'
json.dump(t, open('root/templates/hostile.json', 'w'))
# a reason of more than one line never reaches a ledger or an export: the template is refused
for c in t['constraints']:
    if c['name'] == 'a"b*/c??/':
        c['reason'] += '\n#error pwned\n\x01'
t['name'] = 'multiline'
json.dump(t, open('root/templates/multiline.json', 'w'))
c = json.load(open('root/campaigns/layernorm-4096x768.json'))
c['template'] = 'hostile'
c['control'] = c['start']
json.dump(c, open('root/campaigns/hostile.json', 'w'))
PY
"$TF" export --no-cubin -o out --name tf_t --config VEC=1 root/campaigns/hostile.json >/dev/null ||
  fail "export of the hostile template failed"
sed 's/"hostile"/"multiline"/' root/campaigns/hostile.json >root/campaigns/multiline.json
expect_exit 2 "$TF" export --no-cubin -o out-ml --name tf_t --config VEC=1 root/campaigns/multiline.json
grep -q "holds a control character" "$WORK/last.err" || { cat "$WORK/last.err"; fail "a reason of two lines: no clear refusal"; }
[ ! -e out-ml ] || fail "a refused template left an export"
LC_ALL=C grep -n '[^ -~]' out/tf_t.cu && fail "the code holds a byte outside printable ASCII"
build_h out/tf_t.h
# NAME_check is host code: with the header and the helpers it compiles alone, trigraphs read
{ echo '#include "tf_t.h"'; sed -n '/^\/\/ ---- the exported configuration ----$/,/_launch(/p' out/tf_t.cu |
  sed '$d'; } >out/check.cc
c++ -std=c++14 -trigraphs -Wall -Werror -fsyntax-only -Istub -Iout out/check.cc ||
  fail "NAME_check's string literals do not survive trigraphs"
build_cu out/tf_t.cu

# ---- the launcher's own names as the user's names; included files ----
# variant CAMPAIGN TEMPLATE "DIMS" "BUFFERS" [KERNEL]: a copy of layernorm with these problem
# sizes and input buffers besides its own (which its reference kernel takes), one constraint reading them
variant() {
  python3 - "$@" <<'PY' || fail "cannot write template $2"
import json, sys
camp, name, dims, bufs = sys.argv[1], sys.argv[2], sys.argv[3].split(), sys.argv[4].split()
t = json.load(open('root/templates/layernorm.json'))
t['name'] = name
for d in dims:
    t['problem'][d] = [1, 4]
for b in bufs:
    t['buffers'].append({'name': b, 'count': '1', 'role': 'input'})
if dims:
    t['constraints'].append({'name': 'extra', 'expr': ' + '.join(dims) + ' >= %d' % len(dims),
                             'reason': 'the extra sizes reach the check'})
if len(sys.argv) > 5:
    t['kernel'] = sys.argv[5]
json.dump(t, open('root/templates/%s.json' % name, 'w'))
c = json.load(open('root/campaigns/layernorm-4096x768.json'))
c['template'] = name
c['problem'].update({d: 1 for d in dims})
c['control'] = c['start']
json.dump(c, open('root/campaigns/%s.json' % camp, 'w'))
PY
}
# the template includes a file, which includes another ("%:" is '#')
printf '#include "more.cuh"\n#define TF_TEST_ONE 1\n' >root/templates/helpers.cuh
printf '%%:  /* a comment */ include "tf_inc.h"\n#define TF_TEST_TWO 2\n' >root/templates/more.cuh
printf '#define TF_TEST_THREE 3\n' >root/templates/tf_inc.h
{ echo '#include "helpers.cuh"'; cat "$SRC/templates/layernorm.cu"
  echo 'static_assert(TF_TEST_ONE + TF_TEST_TWO + TF_TEST_THREE == 6, "the included files");'; } \
  >root/templates/layernorm.cu
names=(g b r ev smem grid block stream a0 d dev args)
for k in 0 1 2; do
  bs=""
  for i in 0 1 2 3; do bs="$bs ${names[$(((4 * k + 4 + i) % 12))]}"; done
  variant "c$k" "t$k" "${names[*]:$((4 * k)):4}" "$bs"
  # with a cubin, so that the launcher's cubin branch (its own locals) is built too
  "$TF" export --arch sm_90 -o "o$k" --name tf_c --config VEC=1 "root/campaigns/c$k.json" \
    >/dev/null || fail "export of c$k failed"
done
for f in helpers.cuh more.cuh tf_inc.h; do
  cmp -s "root/templates/$f" "o0/$f" || fail "the included $f is not beside the exported code"
done
for k in 0 1 2; do
  build_h "o$k/tf_c.h"
  build_cu "o$k/tf_c.cu"
done

# ---- names that cannot be code ----
variant bad1 bad1 "" "z int"
expect_exit 2 "$TF" export --no-cubin -o bad --config VEC=1 root/campaigns/bad1.json
grep -q "^tunefarm export: template '.*/bad1.json': key 'buffers\[5\].name': 'int' is a C or C++ keyword" \
  last.err || { cat last.err; fail "a keyword as a buffer name is not refused"; }
variant bad2 bad2 "" "" ev
expect_exit 2 "$TF" export --no-cubin -o bad --config VEC=1 root/campaigns/bad2.json
grep -q "key 'kernel': 'ev' is a name of the exported code" last.err ||
  { cat last.err; fail "a kernel named like the launcher's own names is not refused"; }
expect_exit 2 "$TF" export --no-cubin -o bad --name tf_inc --config VEC=1 root/campaigns/c0.json
grep -q 'includes "tf_inc.h", a file the export writes' last.err ||
  { cat last.err; fail "an included file named like NAME.h is not refused"; }
for bad in class __x tf_l_x 9x; do
  expect_exit 2 "$TF" export --no-cubin -o bad --name "$bad" --config VEC=1 root/campaigns/c0.json
  grep -q "^tunefarm export: the name '$bad'" last.err || { cat last.err; fail "--name $bad is not refused"; }
done
[ ! -e bad ] || fail "files written for a refused name"

# ---- a sample of ledgers (EXPORT_SAMPLE, after a fuzz run) ----
# the tree's campaigns as fuzz_export holds them, their recorded paths relative to sroot
if [ -n "${EXPORT_SAMPLE:-}" ]; then
  mkdir -p sroot/campaigns
  cp -r "$SRC/templates" "$SRC/kernels" sroot/
  cp "$SRC/campaigns/layernorm-4096x768.json" "$SRC/campaigns/matmul-1024.json" sroot/campaigns/
  n=0
  for l in "$EXPORT_SAMPLE"/*; do
    rm -rf s
    (cd sroot && TUNEFARM_ROOT="$WORK/sroot" "$TF" export --no-cubin -o ../s --name tf_s "$l") \
      >/dev/null 2>&1 || continue
    LC_ALL=C grep -n '[^ -~]' s/tf_s.h && fail "$l: the header holds a byte outside printable ASCII"
    build_h s/tf_s.h
    [ $((n % 10)) -ne 0 ] || build_cu s/tf_s.cu
    n=$((n + 1))
  done
  [ "$n" -gt 0 ] || fail "no ledger of $EXPORT_SAMPLE exports: the sample proves nothing"
  echo "sample: $n ledgers of $EXPORT_SAMPLE exported and their headers compiled," \
    "$(((n + 9) / 10)) of their .cu built"
fi
[ "$have_nvcc" = 1 ] ||
  { echo "SKIP: every check passed but the .cu builds: no working nvcc here"; exit 77; }
echo "ok: hostile strings inert, the launcher's names and included files build"
