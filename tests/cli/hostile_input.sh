#!/usr/bin/env bash
# Hostile numbers, keys and text, through `tunefarm check`: numbers that are not whole or do
# not fit are refused, not cast (1e300 as an integer is undefined behaviour, 1.5 is not 1);
# a key given twice is refused, not read as its first copy; and a message stays one line
# whatever a key or value holds (a newline or escape sequence is written as \n, \x1b).
# Each: exit 2 and one line naming the file and the key.
source "$(dirname "$0")/../lib.sh"
cd "$WORK"
good="$SRC/campaigns/matmul-1024.json"
mkdir -p root/campaigns root/templates root/kernels
cp "$SRC"/templates/* root/templates/
cp "$SRC"/kernels/*.json "$SRC"/kernels/*.cu root/kernels/
cp root/templates/matmul.json matmul.json.orig
export TUNEFARM_ROOT="$WORK/root"
n=0

# case_ NAME WANT FILE: check exits 2 with one line holding WANT (and no control character)
case_() {
  expect_exit 2 "$TF" check "$3"
  grep -qF -- "$2" last.err || { cat -A last.err; fail "$1: message lacks '$2'"; }
  [ "$(wc -l <last.err)" -eq 1 ] || { cat -A last.err; fail "$1: not one line"; }
  LC_ALL=C grep -q $'[\x01-\x09\x0b-\x1f\x7f]' last.err && { cat -A last.err; fail "$1: a control character"; }
  n=$((n + 1))
  echo "ok $1: $(cut -c1-160 last.err)"
}
mutate() { sed -E "$2" "$good" >"root/campaigns/$1.json"; echo "root/campaigns/$1.json"; }
tmpl() { sed -E "$1" matmul.json.orig >root/templates/matmul.json; echo "$good"; }

# item 7: keys given twice
case_ budget-twice "campaign 'root/campaigns/twice.json': key 'search.budget' appears more than once" \
  "$(mutate twice 's/"budget": ([0-9]+)/"budget": \1, "budget": -3/')"
case_ template-twice "key 'template' appears more than once" \
  "$(mutate twice2 's/"template": "matmul"/"template": "matmul", "template": "..\/..\/etc\/passwd"/')"
case_ template-key-twice "spec '$WORK/root/templates/matmul.json': key 'tolerance' appears more than once" \
  "$(tmpl 's/"tolerance": ([^,]+),/"tolerance": \1, "tolerance": 0.5,/')"

# item 3: numbers cast only when whole and in range
case_ smem-1e300 "key 'launch.smem' must be an expression string or a whole number" \
  "$(tmpl 's/"smem": "[^"]*"/"smem": 1e300/')"
case_ grid-1.5 "key 'launch.grid[0]' must be an expression string or a whole number" \
  "$(tmpl 's/"grid": \["[^"]*"/"grid": [1.5/')"
case_ block-1000.7 "key 'launch.block[2]'" "$(tmpl 's/"block": \[([^]]*), "1"\]/"block": [\1, 1000.7]/')"
cp matmul.json.orig root/templates/matmul.json
case_ inject-1e300 "key 'inject[0].when.BK': not a knob with a whole number" \
  "$(mutate inj 's/"measure": \{/"inject": [{"when": {"BK": 1e300}, "fault": "crash"}], "measure": {/')"
case_ inject-1.5 "key 'inject[0].when.BK': not a knob with a whole number" \
  "$(mutate inj2 's/"measure": \{/"inject": [{"when": {"BK": 1.5}, "fault": "crash"}], "measure": {/')"
case_ rounds-1000.7 "key 'measure.rounds' must be an integer" "$(mutate rounds 's/"rounds": [0-9]+/"rounds": 1000.7/')"

# item 11: control characters in keys and values are escaped, the message stays one line
case_ newline-key "unknown key 'prob\\nlem\\x1b[2J'" "$(mutate nlkey 's/"problem"/"prob\\nlem\\u001b[2J"/')"
case_ newline-value "'mat\\nmul' must be a plain name" "$(mutate nlval 's/"template": "matmul"/"template": "mat\\nmul"/')"
case_ newline-twice "key 'sea\\rrch' appears more than once" \
  "$(mutate nltwice 's/"search": \{/"sea\\rrch": 1, "sea\\rrch": 2, "search": {/')"
echo "ok: $n hostile inputs refused in one line each"
