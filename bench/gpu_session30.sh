#!/usr/bin/env bash
# Session 7, device call 1 (nvidia-h200, one GPU). The OCC knob (threads per SM asked of the
# register allocator) measured before the farm gets it: at 16384x4096 the register-cached
# row forms with and without a cap, twice, beside Triton and the copies; ncu on the best form
# uncapped and capped (occupancy, DRAM throughput); at 4096x768 the two best forms.
# Ran at d6b5c50: the OCC knob was dropped in cf1009b, so its configurations no longer parse.
set -uo pipefail
source bench/gpu_env.sh
LATE_S=${LATE_S:-330}
gpu_session_start
export CUDA_VISIBLE_DEVICES=0
C16K=(
  FORM=2,BLOCK=256,VEC=2,CACHE=8,RSQRT=1 FORM=2,BLOCK=256,VEC=2,CACHE=8,RSQRT=1,OCC=1024
  FORM=2,BLOCK=256,VEC=2,CACHE=8,RSQRT=1,OCC=1536 FORM=2,BLOCK=256,VEC=2,CACHE=8,RSQRT=1,OCC=2048
  FORM=2,BLOCK=256,VEC=4,CACHE=4 FORM=2,BLOCK=256,VEC=4,CACHE=4,OCC=1536
  FORM=2,BLOCK=512,VEC=2,CACHE=4 FORM=2,BLOCK=512,VEC=2,CACHE=4,OCC=2048
  FORM=2,BLOCK=1024,VEC=4,CACHE=1 FORM=2,BLOCK=1024,VEC=4,CACHE=1,OCC=2048
  FORM=2,BLOCK=128,VEC=4,CACHE=8 FORM=2,BLOCK=128,VEC=4,CACHE=8,OCC=1024
  FORM=2,BLOCK=1024,VEC=2,CACHE=2 FORM=2,BLOCK=1024,VEC=2,CACHE=2,OCC=2048
  FORM=2,BLOCK=256,VEC=2,CACHE=8,RSQRT=1,HINT=1,OCC=1536
)
C768=(
  FORM=0,BLOCK=64,VEC=4,CACHE=6,RSQRT=1,ROWS=2 FORM=0,BLOCK=64,VEC=4,CACHE=6,RSQRT=1,ROWS=2,OCC=768
  FORM=0,BLOCK=64,VEC=4,CACHE=6,RSQRT=1,ROWS=2,OCC=1024
  FORM=0,BLOCK=128,VEC=2,CACHE=12,RSQRT=1,ROWS=2 FORM=0,BLOCK=128,VEC=2,CACHE=12,RSQRT=1,ROWS=2,OCC=768
  FORM=0,BLOCK=64,VEC=4,CACHE=6,RSQRT=1 FORM=0,BLOCK=64,VEC=4,CACHE=6,RSQRT=1,OCC=1024
)
for i in 1 2; do
  mapfile -t a < <(configs "${C16K[@]}")
  bench_run "layernorm-16384x4096-$i" 90 "${a[@]}" campaigns/layernorm-16384x4096.json
  mapfile -t a < <(configs "${C768[@]}")
  bench_run "layernorm-4096x768-$i" 60 "${a[@]}" campaigns/layernorm-4096x768.json
done
peers_run layernorm 60
peers_run copy 60
name() { echo "tf_layernorm<\\(int\\)${1//,/, \\(int\\)}>"; }
for cfg in 2,2,256,2,1,8,0,1,0 2,2,256,2,1,8,0,1,1536 2,2,256,2,1,8,0,1,1024; do
  late "ncu $cfg" && continue
  IFS=, read -r form warps block vec rsqrt cache hint rows occ <<<"$cfg"
  timeout 60 ncu --kernel-name-base demangled --launch-skip 2 --launch-count 1 -k "regex:$(name $cfg)" \
    --section LaunchStats --section Occupancy \
    --metrics dram__throughput.avg.pct_of_peak_sustained_elapsed,dram__bytes_read.sum,dram__bytes_write.sum,gpu__time_duration.sum,smsp__average_warps_issue_stalled_long_scoreboard_per_issue_active.ratio,smsp__average_warps_issue_stalled_barrier_per_issue_active.ratio,smsp__warps_active.avg.per_cycle_active \
    build/tunefarm bench --rounds 1 --samples 1 \
    --config FORM=$form,WARPS=$warps,BLOCK=$block,VEC=$vec,RSQRT=$rsqrt,CACHE=$cache,HINT=$hint,ROWS=$rows,OCC=$occ \
    campaigns/layernorm-16384x4096.json >"$R/logs/ncu-$cfg.txt" 2>&1
  say "ncu <$cfg>: rc=$?"
  grep -E 'Registers Per|Achieved Occupancy|Theoretical Occupancy|Block Limit Registers|dram__|gpu__time|stalled|warps_active' "$R/logs/ncu-$cfg.txt" | sed 's/  */ /g' | tee -a "$S"
done
