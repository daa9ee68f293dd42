#!/usr/bin/env bash
# Session 4, device call 4 (nvidia-h200-x2). The four targets side by side, from the ledgers of
# call 3 (bench/gpu_session13.sh, copied to docs/results/h200x2-2026-11-30-rows/campaigns):
# GPU 0 benches matmul 1024^3 and both layernorms (the ledgers' bests, the template's best
# configurations measured before, the committed kernels, cuBLAS in the same process) and runs
# the layernorm and copy peers; GPU 1 benches matmul 4096^3 (cuBLAS in the same process) and
# runs the matmul peers (torch, Triton).
set -uo pipefail
source bench/gpu_env.sh
LATE_S=${LATE_S:-450}
gpu_session_start
L=docs/results/h200x2-2026-11-30-rows/campaigns
ledgers() { for l in "$L"/$1/*.jsonl; do printf -- '--ledger\n%s\n' "$l"; done; }
C1024=(
  BM=64,BN=128,TM=8,TN=8,VEC=4,STAGING=1,PIPE=2,WARP=1,KSLICE=2,FRAG=1
  BM=64,BN=128,TM=8,TN=8,VEC=4,STAGING=1,PIPE=2,WARP=1,KSLICE=2
  BM=64,BN=128,TM=8,TN=8,VEC=4,STAGING=2,PIPE=2,KSLICE=2
)
C4096=(
  BM=64,BN=128,BK=32,TM=8,TN=8,VEC=4,STAGING=1,PIPE=3
  BM=64,BN=128,BK=32,TM=8,TN=8,VEC=4,STAGING=1,PIPE=3,FRAG=1
)
C768=(
  FORM=0,BLOCK=128,VEC=2,CACHE=12,ROWS=2
  FORM=0,BLOCK=64,VEC=2,CACHE=12,ROWS=2
  FORM=0,BLOCK=256,VEC=2,CACHE=12,ROWS=2
  FORM=0,BLOCK=128,VEC=2,CACHE=12,ROWS=4
  FORM=0,BLOCK=128,VEC=2,CACHE=12,RSQRT=1,ROWS=2
  FORM=0,BLOCK=128,VEC=2,CACHE=12,HINT=1,ROWS=2
  FORM=0,BLOCK=128,VEC=2,CACHE=12
  FORM=0,BLOCK=512,VEC=2,CACHE=0
)
C16K=(
  FORM=2,BLOCK=256,VEC=4,CACHE=4
  FORM=2,BLOCK=128,VEC=4,CACHE=8,ROWS=2
)
gpu0() {
  export CUDA_VISIBLE_DEVICES=0
  mapfile -t a < <(ledgers matmul-1024; configs "${C1024[@]}")
  bench_run matmul-1024 90 "${a[@]}" campaigns/matmul-1024.json
  mapfile -t a < <(ledgers layernorm-4096x768; configs "${C768[@]}")
  bench_run layernorm-4096x768 60 "${a[@]}" campaigns/layernorm-4096x768.json
  mapfile -t a < <(ledgers layernorm-16384x4096; configs "${C16K[@]}")
  bench_run layernorm-16384x4096 60 "${a[@]}" campaigns/layernorm-16384x4096.json
  peers_run layernorm 150
  peers_run copy 150
  # Why ROWS 2 loses at 16384x4096: occupancy and DRAM throughput of the pair, from ncu.
  for rows in 1 2; do
    late "ncu layernorm ROWS=$rows" && continue
    timeout 60 ncu --kernel-name-base demangled --launch-skip 2 --launch-count 1 \
      -k "regex:tf_layernorm<\\(int\\)2, \\(int\\)2, \\(int\\)256, \\(int\\)4, \\(int\\)0, \\(int\\)4, \\(int\\)0, \\(int\\)$rows>" \
      --section LaunchStats --section Occupancy --section SpeedOfLight \
      --metrics dram__throughput.avg.pct_of_peak_sustained_elapsed,smsp__average_warps_issue_stalled_long_scoreboard_per_issue_active.ratio \
      build/tunefarm bench --rounds 1 --samples 1 --no-cublas --config FORM=2,BLOCK=256,VEC=4,CACHE=4,ROWS=$rows \
      campaigns/layernorm-16384x4096.json >"$R/logs/ncu-ln16k-rows$rows.txt" 2>&1
    say "ncu layernorm 16384x4096 ROWS=$rows: rc=$?"
    grep -E 'Registers Per|Achieved Occupancy|Theoretical Occupancy|Block Limit Registers|DRAM Throughput|dram__throughput|long_scoreboard|^    Duration' "$R/logs/ncu-ln16k-rows$rows.txt" | tee -a "$S"
  done
}
gpu1() {
  export CUDA_VISIBLE_DEVICES=1
  mapfile -t a < <(ledgers matmul-4096; configs "${C4096[@]}")
  bench_run matmul-4096 120 --rounds 5 --samples 10 "${a[@]}" campaigns/matmul-4096.json
  peers_run matmul 150
}
gpu1 >"$R/logs/gpu1.out" 2>&1 &
P1=$!
gpu0
wait "$P1"
