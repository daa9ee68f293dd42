#!/usr/bin/env bash
# Session 7, device call 10 (nvidia-h200). Call 9 showed cudaMemcpy's device-to-device copy
# waiting for the SMs like a kernel. Can ncu see that kernel: its name, grid, block, registers,
# DRAM throughput and its memory instructions? A program that only copies, under ncu.
set -uo pipefail
OUT=${OUT:-/tmp/out}
mkdir -p "$OUT"
cat >/tmp/d2d.cu <<'CU'
#include <cstdio>
int main() {
  const size_t bytes = (size_t)16384 * 4096 * 4;
  void *x, *y;
  if (cudaMalloc(&x, bytes) || cudaMalloc(&y, bytes) || cudaMemset(x, 1, bytes)) return 1;
  for (int i = 0; i < 3; ++i) cudaMemcpyAsync(y, x, bytes, cudaMemcpyDeviceToDevice);
  printf("d2d: %s\n", cudaGetErrorString(cudaDeviceSynchronize()));
  return 0;
}
CU
nvcc -O3 -arch=sm_90 -o /tmp/d2d /tmp/d2d.cu
CUDA_VISIBLE_DEVICES=0 timeout 120 ncu --launch-skip 1 --launch-count 1 --section LaunchStats \
  --section Occupancy --section MemoryWorkloadAnalysis --section InstructionStats \
  --metrics dram__throughput.avg.pct_of_peak_sustained_elapsed,gpu__time_duration.sum,smsp__inst_executed_op_global_ld.sum,smsp__inst_executed_op_global_st.sum,sm__sass_inst_executed_op_global_ld.sum,l1tex__t_bytes_pipe_lsu_mem_global_op_ld.sum,l1tex__t_requests_pipe_lsu_mem_global_op_ld.sum \
  /tmp/d2d 2>&1 | tee "$OUT/ncu-d2d.txt" | tail -80
