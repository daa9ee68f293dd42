#!/usr/bin/env bash
# Session 7, device call 4 (nvidia-h200, one GPU). The four targets side by side in one run on
# one GPU, three times over: the farm's bests read from the latest ledgers (session 6 for
# 1024^3 and both layernorms, session 5 for 4096^3), the template's best configurations, the
# committed kernels, cuBLAS in the same process; then Triton, torch and the device copies.
# Before that, bench/rowcopy.cu: a row-shaped copy with and without the layernorm's two
# block reductions, to split target 4's gap to the copy into shape and reductions.
set -uo pipefail
source bench/gpu_env.sh
LATE_S=${LATE_S:-470}
gpu_session_start
export CUDA_VISIBLE_DEVICES=0
S5=docs/results/h200x2-2026-11-30-s5/call2/campaigns
S6=docs/results/h200x2-2026-11-30-s6
ledgers() { for l in "$@"; do printf -- '--ledger\n%s\n' "$l"; done; }
nvcc -O3 -arch=sm_90 -o build/rowcopy bench/rowcopy.cu >"$R/logs/rowcopy-build.log" 2>&1 || say "rowcopy: build failed"
for shape in "16384 4096" "4096 768"; do
  build/rowcopy $shape >"$R/logs/rowcopy-${shape/ /x}.md" 2>&1
  say "build/rowcopy $shape: rc=$?"
  tee -a "$S" <"$R/logs/rowcopy-${shape/ /x}.md"
done
for i in 1 2 3; do
  mapfile -t a < <(ledgers "$S6"/call3/campaigns/matmul-1024/*.jsonl
    configs BM=64,BN=128,TM=8,TN=8,VEC=4,STAGING=1,PIPE=2,WARP=1,KSLICE=2,FRAG=1)
  bench_run "matmul-1024-$i" 60 "${a[@]}" campaigns/matmul-1024.json
  mapfile -t a < <(ledgers "$S5"/matmul-4096/*.jsonl)
  bench_run "matmul-4096-$i" 90 --rounds 5 --samples 10 "${a[@]}" campaigns/matmul-4096.json
  mapfile -t a < <(ledgers "$S6"/call1/campaigns/layernorm-4096x768/vm-gpu0-*.jsonl \
    "$S6"/call4/campaigns/layernorm-4096x768/vm-gpu0-*.jsonl
    configs FORM=0,BLOCK=128,VEC=2,CACHE=12,RSQRT=1,ROWS=2)
  bench_run "layernorm-4096x768-$i" 60 "${a[@]}" campaigns/layernorm-4096x768.json
  mapfile -t a < <(ledgers "$S6"/call2/campaigns/layernorm-16384x4096/*.jsonl)
  bench_run "layernorm-16384x4096-$i" 60 "${a[@]}" campaigns/layernorm-16384x4096.json
  peers_run layernorm 60 "layernorm-$i"
  peers_run copy 40 "copy-$i"
  peers_run matmul 120 "matmul-$i"
done
