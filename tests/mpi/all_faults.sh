#!/usr/bin/env bash
# A search whose every job faulted ran no candidate: its summary line and its end record say
# so, no best is claimed, and the run exits 1. One where some jobs fault and others are
# measured still exits 0.
source "$(dirname "$0")/../lib.sh"
cd "$WORK"
mkdir -p camp
export TUNEFARM_ROOT="$SRC"
# inject "when": {} matches every configuration: best, new and control crash in every job
sed -e 's/"measure": {/"inject": [{"when": {}, "fault": "crash"}],\n  "measure": {/' \
  "$SRC/campaigns/faulty.json" >camp/allfault.json
sed -e 's/"measure": {/"inject": [{"when": {"FAULT": 1}, "fault": "crash"}],\n  "measure": {/' \
  "$SRC/campaigns/faulty.json" >camp/somefault.json
run() { "${MPIRUN[@]}" -np 2 "$TF" run --backend sim --ledgers "$WORK/led" "camp/$1.json"; }
expect_exit 1 run allfault
l=$(ls "$WORK"/led/allfault/*.jsonl)
[ "$(grep -c '"status":"ok"' "$l")" -eq 0 ] || fail "a job of the all-fault campaign ran"
line=$(grep '^  gpu0 ' "$WORK/last.err" || true)
echo "$line" | grep -q "no candidate ran" || { cat "$WORK/last.err"; fail "summary: $line"; }
echo "$line" | grep -q "; best " && fail "the summary claims a best: $line"
grep '"type":"end"' "$l" | grep -q "no candidate ran" || fail "the end record does not say so"
grep -q "tunefarm run: .*no candidate ran" "$WORK/last.err" || fail "no error line says why it fails"
# resumed, the ended search still has no answer: exit 1 again
expect_exit 1 run allfault
expect_exit 0 run somefault
l=$(ls "$WORK"/led/somefault/*.jsonl)
grep -q '"status":"fault"' "$l" || fail "no fault recorded in the campaign where some fault"
grep -q '"status":"ok"' "$l" || fail "nothing measured in the campaign where some fault"
grep -q "no candidate ran" "$WORK/last.err" && fail "some ran, yet it says none did"
echo "ok: every job faulted: exit 1, said; some faulted: exit 0"
