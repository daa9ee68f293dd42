#!/usr/bin/env bash
# Session 7, device calls 8 and 9 (nvidia-h200; call 8 spun for 2 s, not 2 ms: the clock rate is in kHz). bench/rowcopy.cu once more at 16384x4096, now ending
# with its probe: does cudaMemcpy's device-to-device copy (the copy peer) run while a spin
# kernel holds every SM, i.e. on the copy engines, or does it wait like the row copy kernel?
set -uo pipefail
OUT=${OUT:-/tmp/out}
mkdir -p "$OUT"
nvidia-smi --query-gpu=name,uuid,driver_version --format=csv,noheader | tee "$OUT/summary.txt"
nvcc -O3 -arch=sm_90 -o /tmp/rowcopy bench/rowcopy.cu 2>&1 | tee -a "$OUT/summary.txt"
echo "build/rowcopy 16384 4096" | tee -a "$OUT/summary.txt"
CUDA_VISIBLE_DEVICES=0 timeout 120 /tmp/rowcopy 16384 4096 2>&1 | tee -a "$OUT/summary.txt"
echo "rc=${PIPESTATUS[0]}" | tee -a "$OUT/summary.txt"
