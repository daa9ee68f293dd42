#!/usr/bin/env bash
# Session 3, device call 1 (nvidia-h200, one GPU): pipelined operand fragments (FRAG).
# Correctness first: FRAG configurations at the awkward shapes (edge tiles, K slices, split-K,
# fewer K steps than stages), each checked against the double reference by `tunefarm bench`
# before it is timed. Then FRAG 0 against FRAG 1 side by side at 1024^3 and 4096^3 with
# cuBLAS in the same process, and ncu's warp-state breakdown of the 1024^3 pair.
set -uo pipefail
source bench/gpu_env.sh
LATE_S=${LATE_S:-430}
gpu_session_start
build/tunefarm devices >"$R/logs/devices.txt" 2>&1

C1024=(
  BM=64,BN=128,TM=8,TN=8,VEC=4,STAGING=2,PIPE=2,KSLICE=2
  BM=64,BN=128,TM=8,TN=8,VEC=4,STAGING=2,PIPE=2,KSLICE=2,FRAG=1
  BM=64,BN=128,TM=8,TN=8,VEC=4,STAGING=1,PIPE=2,FRAG=1
  BM=64,BN=128,BK=32,TM=8,TN=8,VEC=4,STAGING=1,PIPE=3,KSLICE=2,FRAG=1
  BM=64,BN=128,TM=8,TN=8,AK=1,VEC=1,STAGING=1,PIPE=2,KSLICE=2,FRAG=1
  BM=64,BN=64,TM=8,TN=4,VEC=4,STAGING=1,PIPE=2,KSLICE=2,FRAG=1
  BM=64,BN=128,TM=8,TN=8,VEC=4,STAGING=1,PIPE=2,WARP=1,KSLICE=2,FRAG=1
  BM=128,BN=64,TM=8,TN=8,VEC=4,STAGING=1,PIPE=2,KSLICE=2,FRAG=1
)
C4096=(
  BM=64,BN=128,BK=32,TM=8,TN=8,VEC=4,STAGING=1,PIPE=3
  BM=64,BN=128,BK=32,TM=8,TN=8,VEC=4,STAGING=1,PIPE=3,FRAG=1
  BM=64,BN=128,BK=32,TM=8,TN=8,VEC=4,STAGING=1,PIPE=2,FRAG=1
  BM=128,BN=128,BK=16,TM=8,TN=8,VEC=4,STAGING=1,PIPE=3,WARP=1
  BM=128,BN=128,BK=16,TM=8,TN=8,VEC=4,STAGING=1,PIPE=3,WARP=1,FRAG=1
  BM=128,BN=128,BK=32,TM=8,TN=8,VEC=4,STAGING=1,PIPE=2,FRAG=1
  BM=128,BN=64,BK=32,TM=8,TN=8,VEC=4,STAGING=1,PIPE=3,FRAG=1
  BM=128,BN=128,BK=16,TM=8,TN=8,AK=1,VEC=1,STAGING=1,PIPE=3,FRAG=1
)
CODD=(
  BM=64,BN=128,BK=32,TM=8,TN=8,VEC=1,STAGING=2,PIPE=2,FRAG=1
  BM=64,BN=128,BK=32,TM=8,TN=8,AK=1,VEC=1,STAGING=2,PIPE=3,FRAG=1
  BM=128,BN=128,BK=16,TM=8,TN=8,VEC=1,STAGING=2,PIPE=3,WARP=1,FRAG=1
  BM=128,BN=128,BK=16,TM=8,TN=8,AK=1,VEC=1,STAGING=2,PIPE=3,FRAG=1
)
C1000=(
  BM=64,BN=128,TM=8,TN=8,VEC=4,STAGING=2,PIPE=2,KSLICE=2,FRAG=1
  BM=64,BN=128,BK=32,TM=8,TN=8,VEC=4,STAGING=2,PIPE=3,SPLITK=2,FRAG=1
  BM=128,BN=128,BK=16,TM=8,TN=8,VEC=4,STAGING=0,PIPE=3,WARP=1,FRAG=1
  BM=64,BN=128,TM=8,TN=8,AK=1,VEC=1,STAGING=2,PIPE=2,KSLICE=2,FRAG=1
)
CTHIN=(
  BM=64,BN=128,BK=32,TM=8,TN=8,VEC=4,STAGING=2,PIPE=3,FRAG=1
  BM=64,BN=128,BK=64,TM=8,TN=8,VEC=4,STAGING=2,PIPE=2,KSLICE=2,FRAG=1
  BM=64,BN=128,BK=16,TM=8,TN=8,VEC=4,STAGING=2,PIPE=3,SPLITK=2,FRAG=1
  BM=64,BN=128,BK=16,TM=8,TN=8,AK=1,VEC=1,STAGING=2,PIPE=3,FRAG=1
)
quick=(--rounds 2 --samples 3 --no-cublas)
mapfile -t a < <(configs "${CODD[@]}");  bench_run odd 90 "${quick[@]}" --dims M=4095,N=4097,K=1023 "${a[@]}" campaigns/matmul-1024.json
mapfile -t a < <(configs "${C1000[@]}"); bench_run 1000 60 "${quick[@]}" --dims M=1000,N=1000,K=1000 "${a[@]}" campaigns/matmul-1024.json
mapfile -t a < <(configs "${CTHIN[@]}"); bench_run thin 60 "${quick[@]}" --dims M=128,N=8192,K=64 "${a[@]}" campaigns/matmul-1024.json
mapfile -t a < <(configs "${C1024[@]}"); bench_run 1024 120 "${a[@]}" campaigns/matmul-1024.json
mapfile -t a < <(configs "${C4096[@]}"); bench_run 4096 200 --rounds 5 --samples 10 "${a[@]}" campaigns/matmul-4096.json

# Where the 1024^3 cycles go, FRAG 0 and 1: one launch of that configuration after its
# correctness launches; stall reasons are per issued instruction.
for f in 0 1; do
  late "ncu FRAG=$f" && continue
  timeout 60 ncu --kernel-name-base demangled -k "regex:tf_matmul<64, 128, 64, 8, 8, 0, 4, 2, 2, 1, 0, 2, $f>" \
    --launch-skip 2 --launch-count 1 --section SchedulerStats --section WarpStateStats --section LaunchStats \
    --metrics 'regex:smsp__average_warps_issue_stalled_.*_per_issue_active\.ratio' \
    build/tunefarm bench --rounds 1 --samples 1 --no-cublas --config "${C1024[$f]}" \
    campaigns/matmul-1024.json >"$R/logs/ncu-1024-frag$f.txt" 2>&1
  say "ncu FRAG=$f: rc=$?"
  grep -E "Issued Warp Per Scheduler|No Eligible|Warp Cycles Per Issued|Registers Per|stalled" \
    "$R/logs/ncu-1024-frag$f.txt" | awk '$NF+0 >= 0.05 || !/stalled/' | head -30 | tee -a "$S"
done
