#!/usr/bin/env bash
# Session 3, device call 4 (nvidia-h200-x2): the correctness sweep of the headline shapes,
# completing what call 3 began (FRAG 1 at 4096^3). 4096^3 with FRAG 0, then at 1024^3 every
# configuration that 4096^3 does not reach (K slices and split-K: the grid is too small at
# 4096^3 for them); the rest of 1024^3's set is 4096^3's set of instantiations. 32 ranks over
# both GPUs (rank % GPUs), each configuration launched and checked on two fresh input sets.
# (Its sweep and campaign steps were moved into bench/gpu_env.sh's helpers after it ran;
# the commands are the same.)
set -uo pipefail
source bench/gpu_env.sh
LATE_S=${LATE_S:-500}
gpu_session_start
sweep matmul-4096-frag0 campaigns/matmul-4096.json - 'FRAG == 0' "$(nproc)" $((LATE_S + 80 - $(date +%s) + T0))
sweep matmul-1024-slices-splitk campaigns/matmul-1024.json - 'KSLICE == 2 || SPLITK > 1' "$(nproc)" $((LATE_S + 80 - $(date +%s) + T0))
grep -h -A2 '^FAILED\|wrong' "$R"/logs/sweep-*.log | head -20 | tee -a "$S"
