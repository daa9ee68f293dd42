#!/usr/bin/env bash
# Session 4, device call 3 (nvidia-h200-x2). The farm's search with near-miss combinations in
# the proposer and the layernorm knob ROWS: all four campaigns from their start
# configurations, 3 ranks, one worker and one ledger per H200; report and verify. The side by
# side of the four targets reads these ledgers in the next call (bench/gpu_session14.sh).
set -uo pipefail
source bench/gpu_env.sh
LATE_S=${LATE_S:-380}
gpu_session_start
for c in layernorm-4096x768 matmul-1024 layernorm-16384x4096 matmul-4096; do
  campaign_run "$c" 240
done
