#!/usr/bin/env bash
# Session 2, device call 3 (nvidia-h200-x2): the correctness sweep of every reachable matmul
# configuration at 1024^3 on the GPU (the new WARP, KSLICE, 16-wide tiles, BK 8, PIPE 4), then
# the four issue-5 campaigns, 3 ranks (one worker per GPU), each GPU its own search and ledger,
# with reports and verify.
set -uo pipefail
source bench/gpu_env.sh
LATE_S=${LATE_S:-560}
gpu_session_start
G=$(build/tunefarm devices --json 2>/dev/null | grep -c uuid)
mpi=(mpirun --oversubscribe --bind-to none)
mkdir -p sweep/campaigns
t0=$(date +%s)
TUNEFARM_ROOT=$PWD timeout 150 "${mpi[@]}" -np "$(nproc)" build/tunefarm audit --run \
  campaigns/matmul-1024.json >"$R/logs/sweep-matmul-1024.log" 2>&1
say "sweep matmul-1024: rc=$? $(( $(date +%s) - t0 )) s; $(grep -E '^audit:|^run:' "$R/logs/sweep-matmul-1024.log" | tr '\n' ' ')"
grep -h -A1 '^FAILED' "$R"/logs/sweep-*.log | head -10 | tee -a "$S"
for c in matmul-1024 layernorm-4096x768 layernorm-16384x4096 matmul-4096; do
  late "run $c" && continue
  t0=$(date +%s)
  timeout 240 "${mpi[@]}" -np $((G + 1)) build/tunefarm run --backend cuda --ledgers "$R/ledgers" \
    "campaigns/$c.json" >"$R/logs/run-$c.log" 2>&1
  say "mpirun -np $((G + 1)) build/tunefarm run --backend cuda campaigns/$c.json: rc=$? $(( $(date +%s) - t0 )) s"
  build/tunefarm report "$R/ledgers/$c" >"$R/logs/report-$c.md" 2>&1
  build/tunefarm verify "$R"/ledgers/$c/*.jsonl | tail -1 | tee -a "$S"
  grep -E '^\| GPU|final best' "$R/logs/report-$c.md" | head -6 | tee -a "$S"
done
