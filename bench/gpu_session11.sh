#!/usr/bin/env bash
# Session 4, device call 1 (nvidia-h200-x2). The layernorm knob ROWS (rows in turn, the next
# row's cached chunks requested before the current row is reduced), and the GPU tests after
# the sample-pool refactor. (Its two bench steps, the same as bench/gpu_session12.sh's, stopped
# at bench's old limit of 8 configurations; session 12 ran them.)
# GPU 0: ctest -L gpu; then `tunefarm bench` of ROWS against ROWS 1 at both layernorm shapes;
#        then bench/peers.py for layernorm and the device copy (same call, same GPU).
# GPU 1: the correctness sweep of the restructured template: every reachable configuration
#        at 1001 rows (not a multiple of any block's rows) of the four awkward widths, and
#        the ROWS > 1 configurations at 4096x768.
set -uo pipefail
source bench/gpu_env.sh
LATE_S=${LATE_S:-500}
gpu_session_start
sweeps1() {
  export CUDA_VISIBLE_DEVICES=1
  for d in 100 128 4097 1000; do
    sweep ln-1001x$d campaigns/layernorm-4096x768.json R=1001,D=$d 'ROWS >= 1' 16 $((LATE_S + 80 - $(date +%s) + T0))
  done
  sweep ln-4096x768-rows campaigns/layernorm-4096x768.json - 'ROWS > 1' 16 $((LATE_S + 80 - $(date +%s) + T0))
}
sweeps1 >"$R/logs/sweeps1.out" 2>&1 &
S1=$!

export CUDA_VISIBLE_DEVICES=0
build/tunefarm devices >"$R/logs/devices.txt" 2>&1
t0=$(date +%s)
(cd build && timeout 200 ctest -L gpu --output-on-failure) >"$R/logs/ctest-gpu.log" 2>&1
say "ctest -L gpu: rc=$? $(( $(date +%s) - t0 )) s; $(grep -E 'tests passed|tests failed' "$R/logs/ctest-gpu.log")"

# (here ran the two layernorm benches of bench/gpu_session12.sh, refused by the old limit)
peers_run layernorm 120
peers_run copy 120
wait "$S1"
grep -h -B2 -A4 '^FAILED\|wrong' "$R"/logs/sweep-*.log | head -30 | tee -a "$S"
