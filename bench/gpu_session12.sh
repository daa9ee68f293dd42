#!/usr/bin/env bash
# Session 4, device call 2 (nvidia-h200, one GPU): `tunefarm bench` of the layernorm knob
# ROWS against ROWS 1 at both layernorm shapes, then Triton and the device copy in the same
# call (call 1's bench stopped at bench's old limit of 8 configurations).
set -uo pipefail
source bench/gpu_env.sh
LATE_S=${LATE_S:-420}
gpu_session_start
build/tunefarm devices >"$R/logs/devices.txt" 2>&1
C768=(
  FORM=0,BLOCK=512,VEC=2,CACHE=0
  FORM=0,BLOCK=256,VEC=4,CACHE=6,HINT=1
  FORM=0,BLOCK=256,VEC=4,CACHE=6,HINT=1,ROWS=2
  FORM=0,BLOCK=256,VEC=4,CACHE=6,HINT=1,ROWS=4
  FORM=0,BLOCK=256,VEC=4,CACHE=6,ROWS=2
  FORM=0,BLOCK=128,VEC=4,CACHE=6,HINT=1,ROWS=2
  FORM=0,BLOCK=128,VEC=2,CACHE=12,ROWS=2
  FORM=1,WARPS=2,BLOCK=128,VEC=4,CACHE=3,HINT=1
  FORM=1,WARPS=2,BLOCK=128,VEC=4,CACHE=3,HINT=1,ROWS=2
)
mapfile -t a < <(configs "${C768[@]}")
bench_run layernorm-4096x768 100 "${a[@]}" campaigns/layernorm-4096x768.json
C4096=(
  FORM=2,BLOCK=256,VEC=4,CACHE=4
  FORM=2,BLOCK=256,VEC=4,CACHE=4,ROWS=2
  FORM=2,BLOCK=256,VEC=4,CACHE=4,ROWS=4
  FORM=2,BLOCK=256,VEC=4,CACHE=4,ROWS=8
  FORM=2,BLOCK=256,VEC=4,CACHE=4,HINT=1,ROWS=4
  FORM=2,BLOCK=512,VEC=4,CACHE=2
  FORM=2,BLOCK=512,VEC=4,CACHE=2,ROWS=2
  FORM=2,BLOCK=512,VEC=4,CACHE=2,ROWS=4
  FORM=2,BLOCK=1024,VEC=4,CACHE=1,ROWS=4
  FORM=2,BLOCK=128,VEC=4,CACHE=8,ROWS=2
  FORM=1,WARPS=8,BLOCK=512,VEC=4,CACHE=4,ROWS=2
)
mapfile -t a < <(configs "${C4096[@]}")
bench_run layernorm-16384x4096 150 "${a[@]}" campaigns/layernorm-16384x4096.json
peers_run layernorm 120
peers_run copy 120
