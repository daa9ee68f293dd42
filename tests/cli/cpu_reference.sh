#!/usr/bin/env bash
# A CPU reference from a shared library (include/tunefarm_ref.h, examples/softmax): `check`
# and `audit` accept the example with its library built, and refuse with one message naming
# the template and the key 'reference.library', exit 2, a missing file, a file that is no
# library, a library without tunefarm_reference, one built for another ABI version, and one
# reached through a link out of the template's folder. The simulated device loads no library.
source "$(dirname "$0")/../lib.sh"
cd "$WORK"
[ -n "${TF_REF_SOFTMAX:-}" ] && [ -f "$TF_REF_SOFTMAX" ] || fail "TF_REF_SOFTMAX names no library"
CC="${TF_CC:-cc}"
cp -r "$SRC/examples/softmax" root
mkdir -p root/templates/lib
lib=root/templates/lib/libref_softmax.so
cp "$TF_REF_SOFTMAX" "$lib"
camp=root/campaigns/softmax-cpu-4096x1000.json
export TUNEFARM_CACHE="$WORK/cache"

expect_exit 0 "$TF" check "$camp"
grep -q "accepted:   152" last.out || { cat last.out; fail "check: not 152 accepted configurations"; }
expect_exit 0 "$TF" audit --where 'BLOCK == 1024 && ROWS == 1 && VEC == 4' "$camp"
grep -q "failed 0" last.err last.out || { cat last.out last.err; fail "audit: a kernel failed"; }

# refused: one line on stderr naming the template and the key, and what is wrong
refused() { # WHAT PATTERN
  for cmd in check "audit --where BLOCK==1024"; do
    expect_exit 2 "$TF" $cmd "$camp"
    [ "$(wc -l <last.err)" -eq 1 ] || { cat last.err; fail "$1 ($cmd): not one line"; }
    grep -q "spec '[^']*softmax_cpu.json': key 'reference.library': .*$2" last.err ||
      { cat last.err; fail "$1 ($cmd): message"; }
  done
  echo "ok: $1 refused: $(cat last.err)"
}
rm "$lib"
refused "a missing library" "cannot open '[^']*lib/libref_softmax.so'"
echo "not a library" >"$lib"
refused "a file that is no library" "lib/libref_softmax.so': dlopen fails"
cat >nosym.c <<'C'
int tunefarm_ref(void) { return 0; }
C
"$CC" -shared -fPIC -o "$lib" nosym.c
refused "a library without the entry point" "exports no function 'tunefarm_reference'"
cat >abi.c <<C
#include "tunefarm_ref.h"
int tunefarm_ref_abi_version(void) { return TUNEFARM_REF_ABI_VERSION + 98; }
int tunefarm_reference(const tf_ref_args *a, char *err, size_t n) { (void)a; (void)err; (void)n; return 0; }
C
"$CC" -shared -fPIC -I"$SRC/include" -o "$lib" abi.c
refused "a library of another ABI version" "says ABI version 99, this tunefarm reads version 1"
rm "$lib"
cp "$TF_REF_SOFTMAX" outside.so
ln -s "$WORK/outside.so" "$lib"
refused "a link out of the template's folder" "outside the spec's folder"

# the path's form is refused where the spec loads, by every command
sed -i 's|"library": "lib/libref_softmax.so"|"library": "../libref_softmax.so"|' root/templates/softmax_cpu.json
expect_exit 2 "$TF" check "$camp"
grep -q "key 'reference.library': '../libref_softmax.so' must be a relative path inside" last.err ||
  { cat last.err; fail "a path out of the folder: message"; }
echo "ok: a path out of the template's folder refused"

# the simulated device checks no output, so it needs no library: a short run without one
sed -i 's|"library": "../libref_softmax.so"|"library": "lib/libref_softmax.so"|' root/templates/softmax_cpu.json
rm -f "$lib"
sed -E 's/"budget": [0-9]+/"budget": 2/' "$camp" >root/campaigns/short.json
expect_exit 0 "${MPIRUN[@]}" -np 2 "$TF" run --backend sim --quiet --ledgers "$WORK/ledgers" \
  root/campaigns/short.json
grep -q '"library":"templates/lib/libref_softmax.so"' "$WORK"/ledgers/short/*.jsonl ||
  fail "the ledger's jobs do not name the library"
echo "ok: cpu reference"
