#!/usr/bin/env bash
# Session 3, device call 4 (nvidia-h200-x2): the correctness sweep of the headline shapes,
# completing what call 3 began (FRAG 1 at 4096^3). 4096^3 with FRAG 0, then at 1024^3 every
# configuration that 4096^3 does not reach (K slices and split-K: the grid is too small at
# 4096^3 for them); the rest of 1024^3's set is 4096^3's set of instantiations. 32 ranks over
# both GPUs (rank % GPUs), each configuration launched and checked on two fresh input sets.
set -uo pipefail
source bench/gpu_env.sh
LATE_S=${LATE_S:-500}
gpu_session_start
mpi=(mpirun --oversubscribe --bind-to none)
sweep() { # name campaign WHERE
  late "sweep $1" && return
  local t0=$(date +%s)
  OMP_NUM_THREADS=1 timeout $((LATE_S + 80 - $(date +%s) + T0)) "${mpi[@]}" -np "$(nproc)" \
    build/tunefarm audit --run --where "$3" "$2" >"$R/logs/sweep-$1.log" 2>&1
  say "sweep $1 ($3): rc=$? $(( $(date +%s) - t0 )) s; $(grep -E '^audit:|^run:|--where' "$R/logs/sweep-$1.log" | tr '\n' ' ')"
}
sweep matmul-4096-frag0 campaigns/matmul-4096.json 'FRAG == 0'
sweep matmul-1024-slices-splitk campaigns/matmul-1024.json 'KSLICE == 2 || SPLITK > 1'
grep -h -A2 '^FAILED\|wrong' "$R"/logs/sweep-*.log | head -20 | tee -a "$S"
