#!/usr/bin/env bash
# Session 6, device call 1 (nvidia-h200-x2). Restarts (search.restarts): layernorm-4096x768 with
# 30 restarts in a budget of 400 on both GPUs, one ledger each; then, on GPU 0, the farm's
# bests from those ledgers against the template's best configuration and Triton, three times; the
# GPU tests last.
set -uo pipefail
source bench/gpu_env.sh
LATE_S=${LATE_S:-470}
gpu_session_start
campaign_run layernorm-4096x768 300
grep -E '^- (restarts|ended)' "$R/logs/report-layernorm-4096x768.md" | tee -a "$S"
export CUDA_VISIBLE_DEVICES=0
ledgers() { for l in "$R"/ledgers/$1/*.jsonl; do printf -- '--ledger\n%s\n' "$l"; done; }
C768=(
  FORM=0,BLOCK=128,VEC=2,CACHE=12,RSQRT=1,ROWS=2
  FORM=0,BLOCK=128,VEC=2,CACHE=12,ROWS=2
)
for i in 1 2 3; do
  mapfile -t a < <(ledgers layernorm-4096x768; configs "${C768[@]}")
  bench_run "layernorm-4096x768-$i" 60 "${a[@]}" campaigns/layernorm-4096x768.json
  peers_run layernorm 100 "layernorm-$i"
done
ctest_gpu 150
