#!/usr/bin/env bash
# Session 2, device call 3 (nvidia-h200-x2): the correctness sweep of every reachable matmul
# configuration at 1024^3 on the GPU (the new WARP, KSLICE, 16-wide tiles, BK 8, PIPE 4), then
# the four issue-5 campaigns, 3 ranks (one worker per GPU), each GPU its own search and ledger,
# with reports and verify.
# (Its sweep and campaign steps were moved into bench/gpu_env.sh's helpers after it ran;
# the commands are the same.)
set -uo pipefail
source bench/gpu_env.sh
LATE_S=${LATE_S:-560}
gpu_session_start
sweep matmul-1024 campaigns/matmul-1024.json - 1 "$(nproc)" 150
grep -h -A1 '^FAILED' "$R"/logs/sweep-*.log | head -10 | tee -a "$S"
for c in matmul-1024 layernorm-4096x768 layernorm-16384x4096 matmul-4096; do
  campaign_run "$c" 240
done
