#!/usr/bin/env bash
# Session 3, device call 2 (nvidia-h200-x2). The farm's search with pipelined fragments
# (FRAG) and the proposer's repairs: matmul-1024 and matmul-4096 from their start
# configurations, 3 ranks, one worker and one ledger per H200, then report and verify. Then,
# in parallel: GPU 0 benches 1024^3 (both ledgers' bests against warp-tiled FRAG candidates,
# cuBLAS in the same process) and profiles the FRAG pair with ncu; GPU 1 benches 4096^3.
# (Its sweep and campaign steps were moved into bench/gpu_env.sh's helpers after it ran;
# the commands are the same.)
set -uo pipefail
source bench/gpu_env.sh
LATE_S=${LATE_S:-470}
gpu_session_start
for c in matmul-1024 matmul-4096; do
  campaign_run "$c" 300
done

ledgers() { for l in "$R"/ledgers/$1/*.jsonl; do printf -- '--ledger\n%s\n' "$l"; done; }
# "64,128,..." -> the demangled name ncu matches: tf_matmul<(int)64, (int)128, ...>
ncu_regex() { echo "tf_matmul<\\(int\\)${1//,/, \\(int\\)}>"; }

C1024=(
  BM=64,BN=128,TM=8,TN=8,VEC=4,STAGING=1,PIPE=2,WARP=1,KSLICE=2,FRAG=1
  BM=64,BN=128,TM=8,TN=8,VEC=4,STAGING=1,PIPE=2,WARP=1,KSLICE=2
  BM=64,BN=128,TM=8,TN=8,VEC=4,STAGING=2,PIPE=2,WARP=1,KSLICE=2,FRAG=1
  BM=64,BN=128,TM=8,TN=8,VEC=4,STAGING=1,PIPE=2,WARP=1,FRAG=1
  BM=64,BN=128,BK=32,TM=8,TN=8,VEC=4,STAGING=1,PIPE=3,WARP=1,KSLICE=2,FRAG=1
  BM=128,BN=64,TM=8,TN=8,VEC=4,STAGING=1,PIPE=2,WARP=1,KSLICE=2,FRAG=1
  BM=64,BN=128,TM=8,TN=8,VEC=4,STAGING=1,PIPE=2,KSLICE=2
  BM=64,BN=128,BK=16,TM=8,TN=8,VEC=4,STAGING=1,PIPE=4,WARP=1,KSLICE=2,FRAG=1
)
C4096=(
  BM=64,BN=128,BK=32,TM=8,TN=8,VEC=4,STAGING=1,PIPE=3
  BM=64,BN=128,BK=32,TM=8,TN=8,VEC=4,STAGING=1,PIPE=3,FRAG=1
  BM=64,BN=128,BK=32,TM=8,TN=8,VEC=4,STAGING=1,PIPE=3,WARP=1,FRAG=1
  BM=128,BN=128,BK=16,TM=8,TN=8,VEC=4,STAGING=1,PIPE=3,WARP=1,FRAG=1
  BM=128,BN=128,BK=32,TM=8,TN=8,VEC=4,STAGING=1,PIPE=2,WARP=1,FRAG=1
  BM=128,BN=64,BK=32,TM=8,TN=8,VEC=4,STAGING=1,PIPE=3,WARP=1,FRAG=1
  BM=128,BN=128,BK=8,TM=8,TN=8,VEC=4,STAGING=1,PIPE=4,WARP=1,FRAG=1
  BM=128,BN=256,BK=16,TM=8,TN=16,VEC=4,STAGING=1,PIPE=3,WARP=1,FRAG=1
)
gpu0() {
  export CUDA_VISIBLE_DEVICES=0
  mapfile -t a < <(ledgers matmul-1024; configs "${C1024[@]}")
  bench_run 1024 150 "${a[@]}" campaigns/matmul-1024.json
  for cfg in 64,128,64,8,8,0,4,1,2,1,1,2,0 64,128,64,8,8,0,4,1,2,1,1,2,1; do
    late "ncu $cfg" && continue
    timeout 60 ncu --kernel-name-base demangled -k "regex:$(ncu_regex $cfg)" --launch-skip 2 --launch-count 1 \
      --section SchedulerStats --section WarpStateStats --section LaunchStats \
      --metrics 'regex:smsp__average_warps_issue_stalled_.*_per_issue_active\.ratio' \
      build/tunefarm bench --rounds 1 --samples 1 --no-cublas \
      --config BM=64,BN=128,TM=8,TN=8,VEC=4,STAGING=1,PIPE=2,WARP=1,KSLICE=2,FRAG=${cfg##*,} \
      campaigns/matmul-1024.json >"$R/logs/ncu-1024-$cfg.txt" 2>&1
    say "ncu <$cfg>: rc=$?"
    grep -E "Issued Warp Per Scheduler|No Eligible|Warp Cycles Per Issued|Registers Per|stalled" \
      "$R/logs/ncu-1024-$cfg.txt" | awk '$NF+0 >= 0.05 || !/stalled/' | head -20 | tee -a "$S"
  done
}
gpu1() {
  export CUDA_VISIBLE_DEVICES=1
  mapfile -t a < <(ledgers matmul-4096; configs "${C4096[@]}")
  bench_run 4096 330 --rounds 5 --samples 10 "${a[@]}" campaigns/matmul-4096.json
}
gpu1 >"$R/logs/gpu1.out" 2>&1 &
gpu0
wait
