#!/usr/bin/env bash
# Session 4, device call 6 (nvidia-h200-x2). The layernorm knob STAGE (rows in turn through
# two shared-memory buffers filled by cp.async, so the prefetched row holds no registers).
# GPU 1: correctness sweep of every STAGE 1 configuration at 1001 rows of widths 100, 128,
#        1000, 4096 and at both headline shapes.
# GPU 0: `tunefarm bench` of STAGE 1 against the best register forms at both shapes, then
#        Triton and the device copy. Then, both GPUs, the two layernorm campaigns again.
# Ran at commit e609992; STAGE was dropped after it (measured slower), so its configurations
# no longer exist at later commits.
set -uo pipefail
source bench/gpu_env.sh
LATE_S=${LATE_S:-420}
gpu_session_start
sweeps1() {
  export CUDA_VISIBLE_DEVICES=1
  for d in 100 128 1000 4096; do
    sweep ln-1001x$d campaigns/layernorm-4096x768.json R=1001,D=$d 'STAGE == 1' 16 120
  done
  sweep ln-4096x768-stage campaigns/layernorm-4096x768.json - 'STAGE == 1' 16 120
  sweep ln-16384x4096-stage campaigns/layernorm-16384x4096.json - 'STAGE == 1' 8 120
}
sweeps1 >"$R/logs/sweeps1.out" 2>&1 &
S1=$!
export CUDA_VISIBLE_DEVICES=0
build/tunefarm devices >"$R/logs/devices.txt" 2>&1
C16K=(
  FORM=2,BLOCK=256,VEC=4,CACHE=4
  FORM=2,BLOCK=256,VEC=4,STAGE=1,ROWS=2
  FORM=2,BLOCK=256,VEC=4,STAGE=1,ROWS=4
  FORM=2,BLOCK=256,VEC=4,STAGE=1,ROWS=8
  FORM=2,BLOCK=256,VEC=4,STAGE=1,ROWS=4,HINT=1
  FORM=2,BLOCK=128,VEC=4,STAGE=1,ROWS=4
  FORM=2,BLOCK=512,VEC=4,STAGE=1,ROWS=4
  FORM=2,BLOCK=1024,VEC=4,STAGE=1,ROWS=4
  FORM=1,WARPS=4,BLOCK=256,VEC=4,STAGE=1,ROWS=4
  FORM=0,BLOCK=128,VEC=4,STAGE=1,ROWS=4
)
mapfile -t a < <(configs "${C16K[@]}")
bench_run layernorm-16384x4096 90 "${a[@]}" campaigns/layernorm-16384x4096.json
C768=(
  FORM=0,BLOCK=64,VEC=2,CACHE=12,RSQRT=1,ROWS=2
  FORM=0,BLOCK=64,VEC=4,STAGE=1,ROWS=2
  FORM=0,BLOCK=128,VEC=4,STAGE=1,ROWS=2
  FORM=0,BLOCK=256,VEC=4,STAGE=1,ROWS=2
  FORM=0,BLOCK=128,VEC=4,STAGE=1,ROWS=4
  FORM=0,BLOCK=128,VEC=4,STAGE=1,ROWS=2,RSQRT=1
  FORM=1,WARPS=2,BLOCK=128,VEC=4,STAGE=1,ROWS=2
)
mapfile -t a < <(configs "${C768[@]}")
bench_run layernorm-4096x768 60 "${a[@]}" campaigns/layernorm-4096x768.json
peers_run layernorm 60
peers_run copy 60
wait "$S1"
grep -h -B2 -A4 '^FAILED\|wrong' "$R"/logs/sweep-*.log | head -30 | tee -a "$S"
unset CUDA_VISIBLE_DEVICES
for c in layernorm-4096x768 layernorm-16384x4096; do
  campaign_run "$c" 120
done
