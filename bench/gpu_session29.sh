#!/usr/bin/env bash
# Session 6, device call 5 (nvidia-h200). The GPU tests at the final code (after the review
# fixes of the restarts), then the farm's 4096x768 bests from calls 1 and 4 against the
# template's earlier best and Triton, twice more.
set -uo pipefail
source bench/gpu_env.sh
LATE_S=${LATE_S:-240}
gpu_session_start
ctest_gpu 120
export CUDA_VISIBLE_DEVICES=0
S6=docs/results/h200x2-2026-11-30-s6
ledgers() { for l in "$S6"/call1/campaigns/$1/*.jsonl "$S6"/call4/campaigns/$1/*.jsonl; do printf -- '--ledger\n%s\n' "$l"; done; }
for i in 1 2; do
  mapfile -t a < <(ledgers layernorm-4096x768; configs FORM=0,BLOCK=128,VEC=2,CACHE=12,RSQRT=1,ROWS=2)
  bench_run "layernorm-4096x768-$i" 60 "${a[@]}" campaigns/layernorm-4096x768.json
  peers_run layernorm 60 "layernorm-$i"
done
