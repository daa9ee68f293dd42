#!/usr/bin/env bash
# Session 5, device call 5 (nvidia-h200-x2). The final proposer (after review): steps only from
# near misses at least 0.5% faster (PROPOSE_STEP_FROM), and repairs more than two values away
# only after every single move. All four campaigns again, 3 ranks, one ledger per H200; report
# and verify; then the GPU tests on GPU 0.
set -uo pipefail
source bench/gpu_env.sh
LATE_S=${LATE_S:-480}
gpu_session_start
for c in layernorm-4096x768 layernorm-16384x4096 matmul-1024 matmul-4096; do
  campaign_run "$c" 200
done
ctest_gpu 100
