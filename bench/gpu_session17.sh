#!/usr/bin/env bash
# Session 4, device call 7 (nvidia-h200, one GPU): why STAGE 1 loses at 16384x4096. ncu on the
# register-cached row (CACHE 4, ROWS 1) and two staged forms: occupancy, DRAM throughput and
# bytes, and the stall reasons that differ. Ran at commit e609992 (STAGE was dropped after it).
set -uo pipefail
source bench/gpu_env.sh
LATE_S=${LATE_S:-300}
gpu_session_start
name() { echo "tf_layernorm<\\(int\\)${1//,/, \\(int\\)}>"; }
for cfg in 2,2,256,4,0,4,0,1,0 2,2,256,4,0,0,0,4,1 2,2,512,4,0,0,0,4,1; do
  late "ncu $cfg" && continue
  IFS=, read -r form warps block vec rsqrt cache hint rows stage <<<"$cfg"
  timeout 60 ncu --kernel-name-base demangled --launch-skip 2 --launch-count 1 -k "regex:$(name $cfg)" \
    --section LaunchStats --section Occupancy \
    --metrics dram__throughput.avg.pct_of_peak_sustained_elapsed,dram__bytes_read.sum,dram__bytes_write.sum,gpu__time_duration.sum,smsp__average_warps_issue_stalled_long_scoreboard_per_issue_active.ratio,smsp__average_warps_issue_stalled_barrier_per_issue_active.ratio,smsp__average_warps_issue_stalled_short_scoreboard_per_issue_active.ratio,smsp__average_warps_issue_stalled_lg_throttle_per_issue_active.ratio,smsp__warps_active.avg.per_cycle_active \
    build/tunefarm bench --rounds 1 --samples 1 --no-cublas \
    --config FORM=$form,WARPS=$warps,BLOCK=$block,VEC=$vec,CACHE=$cache,HINT=$hint,ROWS=$rows,STAGE=$stage \
    campaigns/layernorm-16384x4096.json >"$R/logs/ncu-$cfg.txt" 2>&1
  say "ncu <$cfg>: rc=$?"
  grep -E 'Registers Per|Achieved Occupancy|Theoretical Occupancy|Block Limit (Registers|Shared)|Dynamic Shared|dram__|gpu__time|stalled|warps_active' "$R/logs/ncu-$cfg.txt" | sed 's/  */ /g' | tee -a "$S"
done
