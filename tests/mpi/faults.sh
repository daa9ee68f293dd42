#!/usr/bin/env bash
# A crashing and a hanging configuration are recorded as faults; the campaign goes on.
source "$(dirname "$0")/../lib.sh"
cd "$WORK"
mkdir -p camp
sed -e 's/"measure": {/"inject": [{"when": {"BK": 32}, "fault": "crash"}, {"when": {"PIPE": 2}, "fault": "hang"}],\n  "measure": {"deadline_s": 3, /' \
  "$SRC/campaigns/matmul-1024.json" >camp/faulty.json
export TUNEFARM_ROOT="$SRC"
"$TF" check camp/faulty.json >/dev/null || fail "the fault campaign does not load"
"${MPIRUN[@]}" -np 2 "$TF" run --backend sim --ledgers "$WORK/ledgers" camp/faulty.json \
  2>run.err || { cat run.err; fail "run failed"; }
l=$(ls "$WORK"/ledgers/faulty/*.jsonl)
grep -q 'killed by signal 11' "$l" || fail "no crash fault recorded"
grep -q 'timeout' "$l" || fail "no timeout fault recorded"
grep -q '"type":"end"' "$l" || fail "the campaign did not go on to its end"
n=$(grep -c '"decision":"keep"\|"decision":"reject"' "$l")
[ "$n" -ge 3 ] || fail "too few decisions after the faults ($n)"
"$TF" verify "$l" >/dev/null || fail "decisions do not recompute"
echo "ok: faults recorded, $n decisions"
