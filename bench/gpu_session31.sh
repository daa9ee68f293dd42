#!/usr/bin/env bash
# Session 7, device calls 2 and 3 (nvidia-h200). Ran at d6b5c50: the OCC knob was dropped in
# cf1009b, so these configurations no longer parse. Call 2 ran only the R benches (its first
# two benches were refused for OCC=1280, since replaced); call 3 ran the rest, with RS= .
# Call 1 found that the OCC cap raises occupancy at 16384x4096 (47% -> 70%) without moving
# DRAM throughput (82.3% -> 82.7%). Two questions: (1) do rows in turn, which call 1 did not
# try, pay once OCC keeps their second set of registers from halving the blocks per SM?
# (2) is the plateau a tail: 16384 rows are 31.03 waves of 528 resident 256-thread blocks,
# so does R = 15840 (30 whole waves) or 16896 (32) move more bytes per µs than R = 16384?
set -uo pipefail
source bench/gpu_env.sh
LATE_S=${LATE_S:-300}
gpu_session_start
export CUDA_VISIBLE_DEVICES=0
BASE=FORM=2,BLOCK=256,VEC=2,CACHE=8,RSQRT=1
C16K=(
  $BASE FORM=2,BLOCK=512,VEC=2,CACHE=4,OCC=2048
  FORM=2,BLOCK=512,VEC=2,CACHE=4,ROWS=2,OCC=1536 FORM=2,BLOCK=512,VEC=2,CACHE=4,ROWS=4,OCC=1536
  FORM=2,BLOCK=512,VEC=2,CACHE=4,ROWS=2,OCC=1024
  FORM=2,BLOCK=1024,VEC=2,CACHE=2,ROWS=2 FORM=2,BLOCK=1024,VEC=2,CACHE=2,ROWS=2,OCC=2048
  $BASE,ROWS=2 $BASE,ROWS=2,OCC=1024 $BASE,ROWS=4,OCC=1024
  FORM=1,WARPS=4,BLOCK=256,VEC=4,CACHE=8 FORM=1,WARPS=4,BLOCK=256,VEC=4,CACHE=8,OCC=1024
  FORM=2,BLOCK=512,VEC=4,CACHE=2,OCC=2048
)
for i in 1 2; do
  mapfile -t a < <(configs "${C16K[@]}")
  bench_run "layernorm-16384x4096-$i" 90 "${a[@]}" campaigns/layernorm-16384x4096.json
done
for r in ${RS-15840 16384 16896}; do
  mapfile -t a < <(configs $BASE FORM=2,BLOCK=512,VEC=2,CACHE=4,OCC=2048)
  bench_run "layernorm-R$r" 60 --dims R=$r "${a[@]}" campaigns/layernorm-16384x4096.json
done
peers_run copy 60
