// The rate at which one GPU retires mma.sync.m16n8k16 BF16 x BF16 -> FP32 from registers alone,
// no memory traffic: the ceiling of any kernel built on mma.sync (examples/matmul_bf16), to
// read beside cublasGemmEx, which uses Hopper's warpgroup instructions (wgmma) instead.
// Each warp keeps ACC independent accumulators so that consecutive instructions do not wait
// on each other; blocks of W warps, 8 blocks per SM.
//
//   nvcc -O3 -arch=sm_90a -o mma_ceiling bench/mma_ceiling.cu && ./mma_ceiling
//
// Prints, per warps per block, the median over 5 launches of TFLOP/s (2*16*8*16 per mma).
#include <algorithm>
#include <cstdio>
#include <cuda_runtime.h>

#define CUDA_CHECK(x)                                                                          \
  do {                                                                                         \
    cudaError_t err_ = (x);                                                                    \
    if (err_ != cudaSuccess) {                                                                 \
      fprintf(stderr, "%s:%d: %s\n", __FILE__, __LINE__, cudaGetErrorString(err_));           \
      return 1;                                                                                \
    }                                                                                          \
  } while (0)

constexpr int ACC = 8;

__global__ void mma_loop(float *out, int iters) {
  // BF16 pairs of 1.0 and 0.5: finite products whatever the count
  const unsigned a0 = 0x3f803f80u, a1 = 0x3f003f00u, a2 = a0, a3 = a1, b0 = a1, b1 = a0;
  float acc[ACC][4] = {};
  for (int i = 0; i < iters; i++) {
#pragma unroll
    for (int j = 0; j < ACC; j++)
      asm volatile("mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32 "
                   "{%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, {%0,%1,%2,%3};\n"
                   : "+f"(acc[j][0]), "+f"(acc[j][1]), "+f"(acc[j][2]), "+f"(acc[j][3])
                   : "r"(a0), "r"(a1), "r"(a2), "r"(a3), "r"(b0), "r"(b1));
  }
  float s = 0;
  for (int j = 0; j < ACC; j++) s += acc[j][0] + acc[j][1] + acc[j][2] + acc[j][3];
  out[blockIdx.x * blockDim.x + threadIdx.x] = s;
}

int main() {
  cudaDeviceProp p;
  CUDA_CHECK(cudaGetDeviceProperties(&p, 0));
  const int iters = 4096, blocks = 8 * p.multiProcessorCount;
  float *out;
  CUDA_CHECK(cudaMalloc(&out, (size_t)blocks * 1024 * sizeof(float)));
  cudaEvent_t t0, t1;
  CUDA_CHECK(cudaEventCreate(&t0));
  CUDA_CHECK(cudaEventCreate(&t1));
  printf("%s, %d SMs, %d blocks, %d accumulators per warp\n", p.name, p.multiProcessorCount,
         blocks, ACC);
  for (int warps = 1; warps <= 8; warps *= 2) {
    float ms[5];
    mma_loop<<<blocks, 32 * warps>>>(out, iters); // warm-up
    for (int r = 0; r < 5; r++) {
      CUDA_CHECK(cudaEventRecord(t0));
      mma_loop<<<blocks, 32 * warps>>>(out, iters);
      CUDA_CHECK(cudaEventRecord(t1));
      CUDA_CHECK(cudaEventSynchronize(t1));
      CUDA_CHECK(cudaEventElapsedTime(&ms[r], t0, t1));
    }
    CUDA_CHECK(cudaGetLastError());
    std::sort(ms, ms + 5);
    const double flops = 2.0 * 16 * 8 * 16 * ACC * (double)iters * warps * blocks;
    printf("warps per block %d: %.1f TFLOP/s (median of 5, %.3f ms)\n", warps,
           flops / (ms[2] * 1e-3) / 1e12, ms[2]);
  }
  return 0;
}
