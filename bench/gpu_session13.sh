#!/usr/bin/env bash
# Session 4, device call 3 (nvidia-h200-x2). The farm's search with near-miss combinations in
# the proposer and the layernorm knob ROWS: all four campaigns from their start
# configurations, 3 ranks, one worker and one ledger per H200; report and verify. The side by
# side of the four targets reads these ledgers in the next call (bench/gpu_session14.sh).
set -uo pipefail
source bench/gpu_env.sh
LATE_S=${LATE_S:-380}
gpu_session_start
G=$(build/tunefarm devices --json 2>/dev/null | grep -c uuid)
mpi=(mpirun --oversubscribe --bind-to none)
for c in layernorm-4096x768 matmul-1024 layernorm-16384x4096 matmul-4096; do
  late "run $c" && continue
  t0=$(date +%s)
  timeout 240 "${mpi[@]}" -np $((G + 1)) build/tunefarm run --backend cuda --ledgers "$R/ledgers" \
    "campaigns/$c.json" >"$R/logs/run-$c.log" 2>&1
  say "mpirun -np $((G + 1)) build/tunefarm run --backend cuda campaigns/$c.json: rc=$? $(( $(date +%s) - t0 )) s"
  build/tunefarm report "$R/ledgers/$c" >"$R/logs/report-$c.md" 2>&1
  build/tunefarm verify "$R"/ledgers/$c/*.jsonl | tail -1 | tee -a "$S"
  grep -E '^\| GPU|final best' "$R/logs/report-$c.md" | head -6 | cut -c1-220 | tee -a "$S"
done
