#!/usr/bin/env bash
# Two workers that report the same device: the second is refused clearly, the first runs.
source "$(dirname "$0")/../lib.sh"
cd "$WORK"
TUNEFARM_SIM_UUID=SIM-00000000000000000000000000000001 \
  "${MPIRUN[@]}" -np 3 "$TF" run --backend sim --ledgers "$WORK/ledgers" --quiet \
  "$SRC/campaigns/matmul-1024.json" 2>run.err || { cat run.err; fail "run failed"; }
grep -q "already measures" run.err || { cat run.err; fail "no clear refusal"; }
[ "$(ls "$WORK"/ledgers/matmul-1024/*.jsonl | wc -l)" -eq 1 ] || fail "expected one ledger"
echo "ok: $(grep 'already measures' run.err)"
