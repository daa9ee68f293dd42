#!/usr/bin/env bash
# Every kind of bad campaign or template ends with one clear message naming the file and
# the key, and exit status 2: never a crash, a hang or a partial result.
source "$(dirname "$0")/../lib.sh"
cd "$WORK"
good="$SRC/campaigns/matmul-1024.json"
mkdir -p root/campaigns root/templates root/kernels
cp "$SRC"/templates/* root/templates/
cp "$SRC"/kernels/*.json "$SRC"/kernels/*.cu root/kernels/
export TUNEFARM_ROOT="$WORK/root"
n=0

# case NAME WANT-IN-MESSAGE FILE: `tunefarm check FILE` exits 2 and says WANT
case_() {
  local name="$1" want="$2" file="$3"
  expect_exit 2 timeout 20 "$TF" check "$file"
  grep -qF -- "$want" last.err || { cat last.err; fail "$name: message lacks '$want'"; }
  [ "$(wc -l <last.err)" -le 2 ] || { cat last.err; fail "$name: more than one message"; }
  [ -s last.out ] && fail "$name: printed a partial result"
  n=$((n + 1))
  echo "ok $name: $(head -1 last.err)"
}

# mutate NAME SED-EXPR: a copy of the good campaign with one edit
mutate() { sed -E "$2" "$good" >"root/campaigns/$1.json"; echo "root/campaigns/$1.json"; }

case_ missing-file "nope.json" "$WORK/nope.json"
mkdir -p dir.json
case_ unreadable "dir.json" "$WORK/dir.json"
: >root/campaigns/empty.json
case_ empty "empty" root/campaigns/empty.json
echo 'hello' >root/campaigns/notjson.json
case_ not-json "not valid JSON" root/campaigns/notjson.json
head -c 120 "$good" >root/campaigns/truncated.json
case_ truncated "truncated" root/campaigns/truncated.json
echo '[1, 2, 3]' >root/campaigns/array.json
case_ top-level "top level must be a JSON object" root/campaigns/array.json
case_ missing-key "key 'problem' is missing" "$(mutate nokey '/"problem"/d')"
case_ unknown-key "unknown key 'problxm'" "$(mutate unknownkey 's/"problem"/"problxm"/')"
case_ wrong-type "key 'measure.rounds' must be an integer" "$(mutate wrongtype 's/"rounds": [0-9]+/"rounds": "eight"/')"
case_ unknown-knob "no knob 'XX'" "$(mutate knob 's/"start": \{/"start": {"XX": 1, /')"
case_ domain "not in the knob's domain" "$(mutate domain '/"start"/,/\}/s/"BK": [0-9]+/"BK": 7/')"
case_ absurd-size "key 'problem.M' must be an integer in" "$(mutate absurd 's/"M": [0-9]+/"M": 1000000000000/')"
case_ escape "must be a plain name" "$(mutate escape 's/"template": "matmul"/"template": "..\/..\/etc\/passwd"/')"
case_ missing-template "cannot open" "$(mutate notmpl 's/"template": "matmul"/"template": "nosuch"/')"
case_ bad-rule "unknown rule" "$(mutate rule 's/"rule": "[a-z]+"/"rule": "coinflip"/')"
case_ negative "key 'search.budget' must be an integer" "$(mutate budget 's/"budget": [0-9]+/"budget": -3/')"

# Template errors, through a good campaign.
cp "$good" root/campaigns/t.json
cp "$SRC/templates/matmul.json" root/templates/matmul.json.orig
sed -E '0,/"expr": "/s/"expr": "/"expr": "BM +* /' root/templates/matmul.json.orig >root/templates/matmul.json
case_ expr-syntax "column" root/campaigns/t.json
grep -q "constraints\[0\].expr" last.err || fail "expr-syntax: key not named"
sed -E '0,/"expr": "/s/"expr": "/"expr": "BX > 0 \&\& /' root/templates/matmul.json.orig >root/templates/matmul.json
case_ expr-name "unknown name 'BX'" root/campaigns/t.json
sed -E 's/"source": "matmul.cu"/"source": "..\/matmul.cu"/' root/templates/matmul.json.orig >root/templates/matmul.json
case_ source-escape "key 'source'" root/campaigns/t.json
sed -E 's/"values": \[/"values": ["x", /' root/templates/matmul.json.orig >root/templates/matmul.json
case_ knob-values "values' must hold integers" root/campaigns/t.json
sed -E '0,/"performance": true/s/"performance": true/"performance": "yes"/' root/templates/matmul.json.orig >root/templates/matmul.json
case_ constraint-performance "performance' must be true or false" root/campaigns/t.json
head -c 200 root/templates/matmul.json.orig >root/templates/matmul.json
case_ template-truncated "template" root/campaigns/t.json
sed -E '0,/"expr": "/s/"expr": "/"expr": "64 \/ (1 - AK) > 0 \&\& /' root/templates/matmul.json.orig >root/templates/matmul.json
case_ expr-div-zero "division by zero" root/campaigns/t.json
# run finds it before any ledger is written, though the start configuration is fine
expect_exit 2 "${MPIRUN[@]}" -np 2 "$TF" run --backend sim --ledgers "$WORK/ledgers" root/campaigns/t.json
grep -q "division by zero" last.err || fail "run: no clear message for a failing constraint"
[ ! -e "$WORK/ledgers" ] || fail "run wrote a ledger before refusing the template"
cp root/templates/matmul.json.orig root/templates/matmul.json

# A knob's default: a campaign written before the knob existed still loads and means the
# kernel it measured (FRAG 0); a default outside the domain is a template error.
sed -E 's/, "FRAG": 0\}/}/' "$good" >root/campaigns/nofrag.json
grep -q FRAG root/campaigns/nofrag.json && fail "nofrag: the edit did not remove FRAG"
expect_exit 0 "$TF" check root/campaigns/nofrag.json
grep -q "start: .*FRAG=0" last.out || { cat last.out; fail "a missing FRAG did not take its default"; }
sed -E 's/"default": 0, "doc": "operand/"default": 2, "doc": "operand/' root/templates/matmul.json.orig \
  >root/templates/matmul.json
case_ knob-default "key 'knobs.FRAG.default' must be one of the knob's values" root/campaigns/t.json
cp root/templates/matmul.json.orig root/templates/matmul.json

# audit --where: a bad expression is bad input; a good one keeps only what it names.
expect_exit 2 "$TF" audit --list --where 'FRAG = 1' "$good"
grep -q "did you mean '=='" last.err || fail "audit --where: no clear message for a syntax error"
expect_exit 2 "$TF" audit --list --where 'FROG == 1' "$good"
grep -q "unknown name 'FROG'" last.err || fail "audit --where: an unknown name is not named"
expect_exit 0 "$TF" audit --list --where 'FRAG == 1 && KSLICE == 2' "$good"
[ -s last.out ] || fail "audit --where kept nothing"
grep -v ', 2, 1>$' last.out && fail "audit --where kept a configuration it excludes"
echo "ok audit --where: $(wc -l <last.out) configurations with FRAG 1 and KSLICE 2"
expect_exit 2 "$TF" check --where 'FRAG == 1' "$good"
grep -q "options of \`tunefarm audit\`" last.err || fail "check accepted an option of audit"

# run refuses the same input with exit 2 and writes no ledger.
expect_exit 2 "${MPIRUN[@]}" -np 2 "$TF" run --backend sim --ledgers "$WORK/ledgers" \
  root/campaigns/notjson.json
grep -q "not valid JSON" last.err || fail "run: no clear message"
[ ! -e "$WORK/ledgers" ] || [ -z "$(find "$WORK/ledgers" -name '*.jsonl')" ] || fail "run wrote a ledger"
echo "ok: $n bad-input cases, and run refuses with exit 2"

# a bad command line: exit 2 and a message that names what is wrong
run_says() { # what-it-must-say args...
  local want=$1
  shift
  expect_exit 2 "${MPIRUN[@]}" -np 2 "$TF" run "$@"
  grep -qF -- "$want" last.err || { cat last.err; fail "run $*: does not say '$want'"; }
}
run_says "unknown backend 'gpu' (cuda, sim or replay)" --backend gpu "$good"
run_says "--compile-jobs wants auto or a whole number 0..1024, not '-3'" --compile-jobs -3 "$good"
run_says "--worker-margin wants seconds in [0, 86400], not 'abc'" --worker-margin abc "$good"
run_says "unknown option '--bogus'" --bogus "$good"
run_says "unknown option '-z'" -fz "$good"
run_says "option '--fresh' takes no value" --fresh=1 "$good"
run_says "option '--ledgers' needs a value" "$good" --ledgers
run_says "one campaign file, not also 'b.json'" "$good" b.json
run_says "no campaign file given" --backend sim
: >"$WORK/afile"
run_says "ledgers folder '$WORK/afile': not a folder" --backend sim --ledgers "$WORK/afile" "$good"
echo "ok: run names what is wrong with its command line"
