#!/usr/bin/env bash
# A hung worker does not hang the farm. SIGSTOP worker rank 2 mid-campaign on
# the simulated device: the coordinator declares it lost once its job is measure.deadline_s +
# --worker-margin late, records the job as a fault in gpu1's ledger, lets gpu0's search finish,
# and ends with status 1 naming the rank; the stopped rank is torn down with the run. The same
# command then resumes gpu1's search from its ledger.
source "$(dirname "$0")/../lib.sh"
cd "$WORK"
export TUNEFARM_ROOT="$SRC"
sed -E 's/"budget": [0-9]+/"budget": 24/; s/"restarts": [0-9]+/"restarts": 0/; s/"deadline_s": [0-9.]+/"deadline_s": 2/' \
  "$SRC/campaigns/matmul-1024.json" >lost.json
grep -q '"deadline_s": 2' lost.json || fail "could not write the campaign"
cmd=("${MPIRUN[@]}" -np 3 "$TF" run --backend sim --ledgers "$WORK/ledgers" --worker-margin 2 lost.json)

# Processes of this test's farm (mpirun and its ranks), and the one of a given rank.
farm_pids() { pgrep -f -- "--ledgers $WORK/ledgers" || true; }
rank_pid() {
  local p
  for p in $(farm_pids); do
    tr '\0' '\n' <"/proc/$p/environ" 2>/dev/null | grep -qx "OMPI_COMM_WORLD_RANK=$1" && { echo "$p"; return; }
  done
}
cleanup() { for p in $(farm_pids); do kill -9 "$p" 2>/dev/null || true; done; }
trap cleanup EXIT

TUNEFARM_SIM_SLEEP=20 "${cmd[@]}" >first.out 2>first.err &
pid=$!
gen() { cat "$WORK"/ledgers/lost/*gpu1-*.jsonl 2>/dev/null | grep -c '"type":"generation"' || true; }
for _ in $(seq 1 600); do [ "$(gen)" -ge 2 ] && break; sleep 0.1; done
[ "$(gen)" -ge 2 ] || { cat first.err; fail "gpu1's search never got going"; }
victim=$(rank_pid 2)
[ -n "$victim" ] || fail "found no process of rank 2"
kill -STOP "$victim"
stopped=$(gen)

# Lost after 2 + 2 s at most; gpu0 finishes its 24 generations meanwhile.
rc=0
for _ in $(seq 1 1200); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
if kill -0 "$pid" 2>/dev/null; then cat first.err; fail "the farm still runs 120 s after rank 2 stopped"; fi
wait "$pid" || rc=$?
[ "$rc" -ne 0 ] || { cat first.err; fail "the run ended with status 0 though rank 2 was lost"; }
grep -q "worker(s) lost: rank 2 (gpu1" first.err || { cat first.err; fail "the run's end does not name rank 2"; }
[ -z "$(farm_pids)" ] || { ps -o pid,stat,args -p "$(farm_pids | paste -sd,)"; fail "the farm's processes outlive it"; }
l1=$(ls "$WORK"/ledgers/lost/*gpu1-*.jsonl)
l0=$(ls "$WORK"/ledgers/lost/*gpu0-*.jsonl)
tail -1 "$l1" | grep -q '"status":"fault".*declared lost' || { tail -1 "$l1"; fail "gpu1's ledger does not end with the lost job as a fault"; }
grep -q '"type":"end"' "$l0" || fail "gpu0's search did not finish while gpu1 was lost"
[ "$(gen)" -le $((stopped + 1)) ] || fail "gpu1 recorded $(gen) generations, $stopped when it stopped"

# The same command resumes gpu1's search and ends it.
"${cmd[@]}" >second.out 2>second.err || { cat second.err; fail "the resumed run failed"; }
grep -q '"type":"end"' "$l1" || fail "the resumed run did not end gpu1's search"
check_consecutive "$l0" "$l1"
echo "ok: rank 2 stopped after $stopped generations, declared lost (status $rc), gpu0 finished, gpu1 resumed"
