#!/usr/bin/env bash
# A resumed run is the run that was interrupted. Each device's job ids count
# on from its ledger, and the simulated device draws its noise from the job, so a ledger cut
# at any record (what a kill leaves) and resumed ends as the uncut run's: the same
# generations, rounds, decisions and job ids, on both devices of a two-worker run. The canary
# is off: a resumed run's processes are new, and vetting them measures rounds the uncut run
# did not.
source "$(dirname "$0")/../lib.sh"
cd "$WORK"
export TUNEFARM_ROOT="$SRC"
sed -E 's/"budget": [0-9]+/"budget": 60/; s/"restarts": [0-9]+/"restarts": 2/; s/"max_stale": [0-9]+/"max_stale": 8/' \
  "$SRC/campaigns/matmul-1024.json" | sed 's/"decide":/"canary": {"rounds": 0},\n  "decide":/' >exact.json
grep -q '"canary": {"rounds": 0}' exact.json || fail "could not write the campaign"
run() { "${MPIRUN[@]}" -np 3 "$TF" run --backend sim --ledgers "$1" --quiet exact.json; }
run "$WORK/full" 2>full.err || { cat full.err; fail "the uncut run failed"; }
mapfile -t full < <(ls "$WORK"/full/exact/*.jsonl)
[ "${#full[@]}" -eq 2 ] || fail "expected two ledgers"
# What must not differ: every record's kind, numbers, decision, reason, rounds and job id.
facts() {
  grep -oE '"(type|generation|restart|duel|decision|reason|best_us|new_us|control_us|median_ratio|id)":("[^"]*"|[^,}]*)' "$1"
}
for cut in 3 17 41; do
  mkdir -p "$WORK/cut$cut/exact"
  for l in "${full[@]}"; do head -n "$cut" "$l" >"$WORK/cut$cut/exact/$(basename "$l")"; done
  run "$WORK/cut$cut" 2>cut.err || { cat cut.err; fail "the run resumed at line $cut failed"; }
  for l in "${full[@]}"; do
    diff <(facts "$l") <(facts "$WORK/cut$cut/exact/$(basename "$l")") >diff.out ||
      { head -5 diff.out; fail "$(basename "$l") resumed after line $cut differs from the uncut run"; }
  done
done
echo "ok: cut at lines 3, 17 and 41 of both ledgers, resumed runs equal the uncut one"
