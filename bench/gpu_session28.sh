#!/usr/bin/env bash
# Session 6, device call 4 (nvidia-h200-x2). The committed layernorm-4096x768 campaign again on
# both GPUs (does the farm find the 64-thread float4 form again?), then on GPU 0 the farm's
# bests from this call's and call 1's ledgers against the template's earlier best and Triton,
# twice.
set -uo pipefail
source bench/gpu_env.sh
LATE_S=${LATE_S:-450}
gpu_session_start
campaign_run layernorm-4096x768 290
grep -E '^- (restarts|ended)' "$R/logs/report-layernorm-4096x768.md" | tee -a "$S"
export CUDA_VISIBLE_DEVICES=0
C1=docs/results/h200x2-2026-11-30-s6/call1/campaigns/layernorm-4096x768
ledgers() { for l in "$R"/ledgers/$1/*.jsonl "$C1"/*.jsonl; do printf -- '--ledger\n%s\n' "$l"; done; }
for i in 1 2; do
  mapfile -t a < <(ledgers layernorm-4096x768; configs FORM=0,BLOCK=128,VEC=2,CACHE=12,RSQRT=1,ROWS=2)
  bench_run "layernorm-4096x768-$i" 60 "${a[@]}" campaigns/layernorm-4096x768.json
  peers_run layernorm 100 "layernorm-$i"
done
