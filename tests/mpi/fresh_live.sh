#!/usr/bin/env bash
# A `run --fresh` started while another run is live on the same ledger is refused (exit 2,
# naming the ledger and saying another run holds it) and moves nothing aside: the live run
# keeps its ledger at its path and is the only farm measuring the device.
source "$(dirname "$0")/../lib.sh"
cd "$WORK"
export TUNEFARM_ROOT="$SRC"
sed -E 's/"budget": 120/"budget": 400/' "$SRC/campaigns/decide-aa.json" >aa.json
cmd=("${MPIRUN[@]}" -np 2 "$TF" run --backend sim --ledgers "$WORK/led" --quiet aa.json)
# The simulated device slowed down, so that the first run is still live when --fresh comes.
TUNEFARM_SIM_SLEEP=20 "${cmd[@]}" >live.out 2>live.err &
pid=$!
stop_live() { kill -TERM "$pid" 2>/dev/null || true; wait "$pid" 2>/dev/null || true; }
trap stop_live EXIT
n=0
for _ in $(seq 1 300); do
  n=$(cat "$WORK"/led/aa/*.jsonl 2>/dev/null | grep -c '"type":"generation"' || true)
  [ "$n" -ge 2 ] && break
  sleep 0.1
done
[ "$n" -ge 2 ] || { cat live.err; fail "the live run never got going"; }
ledger=$(ls "$WORK"/led/aa/*.jsonl)
inode=$(stat -c %i "$ledger")

expect_exit 2 "${cmd[@]}" --fresh
grep -qF "ledger '$ledger' is in use: another tunefarm run holds its lock" last.err ||
  { cat last.err; fail "--fresh: no message naming the ledger and the other run"; }
[ "$(ls "$WORK"/led/aa/)" = "$(basename "$ledger")" ] || fail "--fresh moved or made files: $(ls "$WORK"/led/aa/)"
[ "$(stat -c %i "$ledger")" = "$inode" ] || fail "the live ledger is no longer at its path"
expect_exit 2 "${cmd[@]}"
grep -qF "is in use" last.err || { cat last.err; fail "a second run without --fresh was not refused"; }

# The live run goes on writing the same file.
n0=$(grep -c '"type":"generation"' "$ledger")
for _ in $(seq 1 300); do
  [ "$(grep -c '"type":"generation"' "$ledger")" -gt "$n0" ] && break
  sleep 0.1
done
[ "$(grep -c '"type":"generation"' "$ledger")" -gt "$n0" ] || fail "the live run stopped writing its ledger"
stop_live
trap - EXIT
check_consecutive "$ledger"
echo "ok: --fresh refused while the run was live ($n0 generations), nothing moved"
