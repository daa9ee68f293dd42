#!/usr/bin/env bash
# Session 4, device call 8 (nvidia-h200-x2): the final code. `ctest -L gpu` on GPU 0, then the
# session helpers of bench/gpu_env.sh (sweep, campaign_run, peers_run) once each, small:
# a sweep of the ROWS 8 configurations at 1001x1000, a 3-generation layernorm campaign on
# both GPUs, and the device copy.
set -uo pipefail
source bench/gpu_env.sh
LATE_S=${LATE_S:-300}
gpu_session_start
t0=$(date +%s)
(cd build && CUDA_VISIBLE_DEVICES=0 timeout 200 ctest -L gpu --output-on-failure) >"$R/logs/ctest-gpu.log" 2>&1
say "ctest -L gpu: rc=$? $(( $(date +%s) - t0 )) s; $(grep -E 'tests passed|tests failed' "$R/logs/ctest-gpu.log")"
sweep ln-1001x1000-rows8 campaigns/layernorm-4096x768.json R=1001,D=1000 'ROWS == 8' 16 120
sed -E 's/"budget": [0-9]+/"budget": 3/' campaigns/layernorm-4096x768.json >campaigns/smoke-layernorm.json
campaign_run smoke-layernorm 120
peers_run copy 60
