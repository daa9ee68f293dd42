#!/usr/bin/env bash
# `run` without --backend on a machine with no GPU uses the simulated device and says so on
# its first line (and every ledger record says "simulated").
source "$(dirname "$0")/../lib.sh"
cd "$WORK"
if "$TF" devices >/dev/null 2>&1; then
  echo "SKIP: this machine has a GPU, so run picks the cuda backend"
  exit 77
fi
sed -E 's/"budget": [0-9]+/"budget": 3/' "$SRC/campaigns/layernorm-4096x768.json" >small.json
TUNEFARM_ROOT="$SRC" "${MPIRUN[@]}" -np 2 "$TF" run --ledgers "$WORK/ledgers" small.json \
  2>run.err || { cat run.err; fail "run failed"; }
head -1 run.err | grep -q "running on the simulated device" || { head -3 run.err; fail "first line does not say sim"; }
l=$(ls "$WORK"/ledgers/small/*.jsonl)
n=$(grep -c '"type":"generation"' "$l")
[ "$(grep -c '"simulated":true' "$l")" -eq "$n" ] || fail "a record does not say simulated"
echo "ok: $(head -1 run.err)"
