#!/usr/bin/env bash
# Session 6, device call 2 (nvidia-h200-x2). Restarts at 16384x4096: layernorm-16384x4096 with
# 10 restarts in a budget of 150 on both GPUs; then, on GPU 0, the farm's bests from those
# ledgers against session 5's best forms, the layernorm peers and the copies.
set -uo pipefail
source bench/gpu_env.sh
LATE_S=${LATE_S:-480}
gpu_session_start
campaign_run layernorm-16384x4096 330
grep -E '^- (restarts|ended)' "$R/logs/report-layernorm-16384x4096.md" | tee -a "$S"
export CUDA_VISIBLE_DEVICES=0
ledgers() { for l in "$R"/ledgers/$1/*.jsonl; do printf -- '--ledger\n%s\n' "$l"; done; }
C16K=(
  FORM=2,BLOCK=256,VEC=2,CACHE=8,RSQRT=1
  FORM=2,BLOCK=256,VEC=4,CACHE=4
)
mapfile -t a < <(ledgers layernorm-16384x4096; configs "${C16K[@]}")
bench_run layernorm-16384x4096 60 "${a[@]}" campaigns/layernorm-16384x4096.json
peers_run layernorm 100
peers_run copy 60
