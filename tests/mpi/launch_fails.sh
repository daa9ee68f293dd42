#!/usr/bin/env bash
# A launch expression that fails at one reachable configuration (here launch.smem divides by
# zero at FAULT=2) refuses that candidate alone, as a static violation is refused: a refused
# record naming the key and the failure, no job, and the search goes on to its end. A resume
# replays the refusal: from a ledger cut just before it and from one cut just after it, the
# search ends with the same generations.
source "$(dirname "$0")/../lib.sh"
cd "$WORK"
mkdir -p root/templates root/campaigns
export TUNEFARM_ROOT="$WORK/root"
cp "$SRC/templates/faulty.cu" "$SRC/templates/ref_scale2.cu" root/templates/
sed 's|"smem": "0"|"smem": "(FAULT - 2) / (FAULT - 2) - 1"|' "$SRC/templates/faulty.json" \
  >root/templates/faulty.json
grep -q 'FAULT - 2' root/templates/faulty.json || fail "the template copy has no failing smem"
sed 's|"max_stale": 10|"max_stale": 10, "restarts": 0|' "$SRC/campaigns/faulty.json" \
  >root/campaigns/divzero.json
cmd=("${MPIRUN[@]}" -np 2 "$TF" run --backend sim --ledgers "$WORK/led" root/campaigns/divzero.json)
expect_exit 0 "${cmd[@]}"
cp last.err first.err
l=$(ls "$WORK"/led/divzero/*.jsonl)
refusal=$(grep '"type":"generation"' "$l" | grep '"FAULT":2}' | grep -v '"status"' || true)
[ -n "$refusal" ] || { cat "$l"; fail "FAULT=2 is not refused statically"; }
echo "$refusal" | grep -q '"decision":"refused"' || fail "FAULT=2's record is not refused"
echo "$refusal" | grep -q "launch.smem" || fail "the refusal does not name the key: $refusal"
echo "$refusal" | grep -q "division by zero" || fail "the refusal does not name the failure"
grep -q '"type":"end"' "$l" || fail "the search did not end"
measured=$(grep '"status"' "$l" | grep -o '"new":{"FAULT":[0-9]}' | sort -u | tr -d '\n')
[ "$measured" = '"new":{"FAULT":1}"new":{"FAULT":3}"new":{"FAULT":4}' ] ||
  fail "measured $measured, wanted FAULT 1, 3 and 4"
grep -q "gen [0-9]* refused: its launch cannot be computed: key 'launch.smem'" first.err ||
  fail "the progress lines do not say why FAULT=2 was refused"
"$TF" verify "$l" >/dev/null || fail "verify refuses the ledger"
# A resume from a ledger cut just before the refusal writes the same refusal again; one cut
# just after it replays it (the search accepts it as its own) and goes on to the end.
unstamped() { grep '"type":"generation"' "$1" | grep '"FAULT":2}' | grep -v '"status"' |
  sed 's/"time":"[^"]*"//'; }
want=$(unstamped "$l")
cp "$l" full.jsonl
g=$(grep -n '"FAULT":2}' full.jsonl | grep -v '"status"' | cut -d: -f1)
for cut in $((g - 1)) "$g"; do
  head -n "$cut" full.jsonl >"$l"
  expect_exit 0 "${cmd[@]}"
  [ "$(unstamped "$l")" = "$want" ] || fail "resumed from line $cut: refusal $(unstamped "$l")"
  grep -q '"type":"end"' "$l" || fail "resumed from line $cut: the search did not end"
  check_consecutive "$l"
  "$TF" verify "$l" >/dev/null || fail "verify refuses the resumed ledger (cut at $cut)"
done
echo "ok: FAULT=2 refused (launch.smem: division by zero), resumes replay it"
