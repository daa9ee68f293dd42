#!/usr/bin/env bash
# Session 5, device call 1 (nvidia-h200-x2). The proposer now measures every single move
# before blind pairs, repairs refused moves at any distance, and lets a near miss repair a
# refused move (coordinator/propose.h). All four campaigns from their start configurations,
# 3 ranks, one worker and one ledger per H200; report and verify. Then the layernorm and copy
# peers with their kernel times (CUPTI through torch.profiler) beside the event spans.
set -uo pipefail
source bench/gpu_env.sh
LATE_S=${LATE_S:-440}
gpu_session_start
for c in layernorm-4096x768 layernorm-16384x4096 matmul-1024 matmul-4096; do
  campaign_run "$c" 240
done
export CUDA_VISIBLE_DEVICES=0
peers_run layernorm 100
peers_run copy 60
