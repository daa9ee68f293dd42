#!/usr/bin/env bash
# Session 6, device call 3 (nvidia-h200-x2). Restarts at 1024^3: matmul-1024 with 10 restarts in
# a budget of 200 on both GPUs; then, on GPU 0, the farm's bests from those ledgers against
# the template's best configuration, cuBLAS in the same process, and the matmul peers.
set -uo pipefail
source bench/gpu_env.sh
LATE_S=${LATE_S:-480}
gpu_session_start
campaign_run matmul-1024 330
grep -E '^- (restarts|ended)' "$R/logs/report-matmul-1024.md" | tee -a "$S"
export CUDA_VISIBLE_DEVICES=0
ledgers() { for l in "$R"/ledgers/$1/*.jsonl; do printf -- '--ledger\n%s\n' "$l"; done; }
C1024=(
  BM=64,BN=128,TM=8,TN=8,VEC=4,STAGING=1,PIPE=2,WARP=1,KSLICE=2,FRAG=1
)
mapfile -t a < <(ledgers matmul-1024; configs "${C1024[@]}")
bench_run matmul-1024 90 "${a[@]}" campaigns/matmul-1024.json
peers_run matmul 100
