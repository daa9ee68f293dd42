#!/usr/bin/env bash
# Session 7, device call 11 (nvidia-h200). Which block-per-row shape moves a 16384x4096 row
# fastest? rowcopy's sweep (a block of T threads, C chunks of V floats each, the whole row
# once) beside cudaMemcpy, and the template's layernorm at the same shapes (FORM 2, BLOCK T,
# VEC V, CACHE C, RSQRT 1) in one tunefarm bench, twice each.
set -uo pipefail
source bench/gpu_env.sh
LATE_S=${LATE_S:-300}
gpu_session_start
export CUDA_VISIBLE_DEVICES=0
nvcc -O3 -arch=sm_90 -o build/rowcopy bench/rowcopy.cu >"$R/logs/rowcopy-build.log" 2>&1 || say "rowcopy: build failed"
SHAPES=()
for s in 1,16,256 1,8,512 1,4,1024 2,16,128 2,8,256 2,4,512 2,2,1024 4,16,64 4,8,128 4,4,256 4,2,512 4,1,1024; do
  IFS=, read -r v c t <<<"$s"
  SHAPES+=("FORM=2,BLOCK=$t,VEC=$v,CACHE=$c,RSQRT=1")
done
for i in 1 2; do
  timeout 60 build/rowcopy 16384 4096 sweep >"$R/logs/rowcopy-sweep-$i.md" 2>&1
  say "build/rowcopy 16384 4096 sweep: rc=$?"
  tee -a "$S" <"$R/logs/rowcopy-sweep-$i.md"
  mapfile -t a < <(configs "${SHAPES[@]}")
  bench_run "layernorm-16384x4096-$i" 90 "${a[@]}" campaigns/layernorm-16384x4096.json
done
peers_run copy 40
