#!/usr/bin/env bash
# Session 5, device call 2 (nvidia-h200-x2). The proposer of call 1 plus steps from near misses
# that measured faster than best (coordinator/propose.h, 2b): all four campaigns from their
# start configurations, 3 ranks, one worker and one ledger per H200; report and verify. Then
# the GPU tests (ctest -L gpu) on GPU 0.
set -uo pipefail
source bench/gpu_env.sh
LATE_S=${LATE_S:-470}
gpu_session_start
for c in layernorm-4096x768 matmul-1024 layernorm-16384x4096 matmul-4096; do
  campaign_run "$c" 200
done
ctest_gpu 100
