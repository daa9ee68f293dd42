#!/usr/bin/env bash
# On the GPU: an illegal address, a trap and a kernel that never ends each end only the
# measure child; the next job runs on a fresh child on the same GPU; a wrong result is
# rejected with its error; the campaign goes on to its end.
source "$(dirname "$0")/../lib.sh"
source "$(dirname "$0")/../lib_gpu.sh"
cd "$WORK"
"${MPIRUN[@]}" -np 2 "$TF" run --backend cuda --ledgers "$WORK/ledgers" "$SRC/campaigns/faulty.json" \
  2>run.err || { cat run.err; fail "run failed"; }
l=$(ls "$WORK"/ledgers/faulty/*.jsonl)
cat run.err
grep -q '"new":{"FAULT":1}.*"status":"fault"' "$l" || fail "illegal address not recorded as a fault"
grep -q '"new":{"FAULT":2}.*"status":"fault"' "$l" || fail "trap not recorded as a fault"
# Each fault must be blamed on its own configuration: the cause names the device error,
# never the exit of the previous job's child.
! grep -q 'exited with status 3' "$l" || fail "a job was blamed for the previous child's exit"
grep -q '"new":{"FAULT":3}.*timeout' "$l" || fail "hang not caught by the deadline"
grep -q '"new":{"FAULT":4}.*"correct":false' "$l" || fail "wrong result not rejected"
grep -q '"type":"end"' "$l" || fail "the campaign did not go on to its end"
"$TF" verify "$l"
echo "ok: every fault recorded, campaign ended"
