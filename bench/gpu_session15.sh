#!/usr/bin/env bash
# Session 4, device call 5 (nvidia-h200-x2). Is layernorm 4096x768 at 0.90x Triton? Three
# repeats, each `tunefarm bench` of the template's best configurations with ROWS 2 (and the
# farm's bests of call 3) then Triton, on GPU 0. Meanwhile GPU 1 runs the GPU tests
# (ctest -L gpu) on the final code.
set -uo pipefail
source bench/gpu_env.sh
LATE_S=${LATE_S:-400}
gpu_session_start
( export CUDA_VISIBLE_DEVICES=1
  t0=$(date +%s)
  (cd build && timeout 240 ctest -L gpu --output-on-failure) >"$R/logs/ctest-gpu.log" 2>&1
  say "ctest -L gpu (GPU 1): rc=$? $(( $(date +%s) - t0 )) s; $(grep -E 'tests passed|tests failed' "$R/logs/ctest-gpu.log")"
) &
P1=$!
export CUDA_VISIBLE_DEVICES=0
build/tunefarm devices >"$R/logs/devices.txt" 2>&1
L=docs/results/h200x2-2026-11-30-rows/campaigns/layernorm-4096x768
C768=(
  FORM=0,BLOCK=64,VEC=2,CACHE=12,RSQRT=1,ROWS=2
  FORM=0,BLOCK=128,VEC=2,CACHE=12,RSQRT=1,ROWS=2
  FORM=0,BLOCK=256,VEC=2,CACHE=12,RSQRT=1,ROWS=2
  FORM=0,BLOCK=128,VEC=2,CACHE=12,ROWS=2
  FORM=0,BLOCK=128,VEC=2,CACHE=12,RSQRT=1
)
for i in 1 2 3; do
  mapfile -t a < <(for l in "$L"/*.jsonl; do printf -- '--ledger\n%s\n' "$l"; done; configs "${C768[@]}")
  bench_run layernorm-4096x768-$i 60 "${a[@]}" campaigns/layernorm-4096x768.json
  peers_run layernorm 60 "$i"
done
wait "$P1"
