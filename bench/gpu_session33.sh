#!/usr/bin/env bash
# Session 7, device calls 5 and 6 (nvidia-h200; call 5 ran before the cudaMemcpy, flat x4 and
# float4-row arms were added). bench/rowcopy.cu with the TMA arms: does the bulk-copy
# engine stream a row-shaped copy, and a layernorm over it, faster than the threads' loads? And which
# copy shape reaches cudaMemcpy's rate (the copy peer: torch's copy_ of contiguous tensors)?
set -uo pipefail
OUT=${OUT:-/tmp/out}
mkdir -p "$OUT"
nvidia-smi --query-gpu=name,uuid,driver_version --format=csv,noheader | tee "$OUT/summary.txt"
nvcc -O3 -arch=sm_90 -o /tmp/rowcopy bench/rowcopy.cu 2>&1 | tee -a "$OUT/summary.txt"
for shape in "16384 4096" "4096 768" "16384 4096"; do
  echo "build/rowcopy $shape" | tee -a "$OUT/summary.txt"
  CUDA_VISIBLE_DEVICES=0 timeout 120 /tmp/rowcopy $shape 2>&1 | tee -a "$OUT/summary.txt"
  echo "rc=${PIPESTATUS[0]}" | tee -a "$OUT/summary.txt"
done
