#!/usr/bin/env bash
# Resume trusts nothing it could not have written. A ledger whose record says
# "decision": "maybe", whose rounds are not rounds, that goes on after its end, that kept a
# configuration breaking a constraint, or whose best is not the best its earlier records lead
# to, is refused with one message naming the ledger and the line, exit 2, and left as it was.
source "$(dirname "$0")/../lib.sh"
cd "$WORK"
export TUNEFARM_ROOT="$SRC"
sed -E 's/"budget": [0-9]+/"budget": 30/; s/, "restarts": [0-9]+//' \
  "$SRC/campaigns/matmul-1024.json" >mm.json
run() { "${MPIRUN[@]}" -np 2 "$TF" run --backend sim --ledgers "$1" --quiet mm.json; }
run "$WORK/good" 2>good.err || { cat good.err; fail "the run failed"; }
good=$(ls "$WORK"/good/mm/*.jsonl)
name=$(basename "$good")
grep -q '"constraint"' "$good" || fail "no static refusal in the run to borrow from"

# corrupt CASE LINE WANT: the ledger $WORK/CASE/mm/$name (written by the caller) is refused
# naming line LINE and WANT, and is not changed.
corrupt() {
  local l="$WORK/$1/mm/$name"
  local before
  before=$(cksum <"$l")
  expect_exit 2 run "$WORK/$1"
  grep -qF "ledger '$l': line $2: $3" last.err ||
    { cat last.err; fail "$1: no message naming the line $2 and '$3'"; }
  [ "$(cksum <"$l")" = "$before" ] || fail "$1: the refused ledger was changed"
  echo "ok $1: $(grep -o "line $2: .*" last.err | sed -n 1p | cut -c1-120)"
}
at() { mkdir -p "$WORK/$1/mm"; echo "$WORK/$1/mm/$name"; }
measured() { grep -n '"status"' "$good" | sed -n "${1}p" | cut -d: -f1; }

m=$(measured 2)
head -n "$m" "$good" | sed -E "${m}s/\"decision\":\"[a-z]*\"/\"decision\":\"maybe\"/" >"$(at maybe)"
corrupt maybe "$m" "key 'decision' must be one of"

head -n "$m" "$good" | sed -E "${m}s/\"rounds\":\[.*\],\"ratios\"/\"rounds\":\"x\",\"ratios\"/" >"$(at rounds)"
corrupt rounds "$m" "key 'rounds' must be an array"

{ cat "$good"; sed -n "${m}p" "$good"; } >"$(at after_end)"
corrupt after_end "$(($(wc -l <"$good") + 1))" "a \"generation\" record after the search's end"

# A kept new that breaks a constraint: a measured record given a statically refused candidate
# (with its change) from the same best, and "keep".
refusal=$(grep -m1 '"constraint"' "$good")
rbest=$(echo "$refusal" | grep -o '"best":{[^}]*}')
rnew=$(echo "$refusal" | grep -o '"new":{[^}]*},"change":{[^}]*}')
k=$(grep -n -F "$rbest" "$good" | grep '"status"' | sed -n 1p | cut -d: -f1)
[ -n "$k" ] || fail "no measured record from the refusal's best"
head -n "$k" "$good" | sed -E -e "${k}s/\"new\":\{[^}]*\},\"change\":\{[^}]*\}/$rnew/" \
  -e "${k}s/\"decision\":\"[a-z]*\"/\"decision\":\"keep\"/" >"$(at breaks)"
corrupt breaks "$k" "key 'new' breaks a constraint"

# A best that is not the rebuilt best: after the first keep, a record measured from the start.
keep=$(grep -n '"decision":"keep"' "$good" | sed -n 1p | cut -d: -f1)
after=$(tail -n +"$((keep + 1))" "$good" | grep -n '"status"' | sed -n 1p | cut -d: -f1)
[ -n "$keep" ] && [ -n "$after" ] || fail "no keep with a measured record after it"
after=$((keep + after))
first=$(measured 1)
pair=$(sed -n "${first}p" "$good" | grep -o '"best":{[^}]*},"new":{[^}]*},"change":{[^}]*}')
head -n "$after" "$good" |
  sed -E "${after}s/\"best\":\{[^}]*\},\"new\":\{[^}]*\},\"change\":\{[^}]*\}/$pair/" >"$(at best)"
corrupt best "$after" "key 'best' is"
echo "ok: 5 corrupt ledgers refused by resume"
