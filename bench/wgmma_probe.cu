// The wgmma template (examples/matmul_bf16/templates/matmul_bf16_wgmma.cu) outside the farm:
// a few of its configurations and cublasGemmEx on the same BF16 inputs, each output checked
// against cuBLAS's (|d| <= 1e-2 + 1e-3 |ref|, after a NaN poison), each timed as the median
// of 7 batches of 10 back-to-back launches (no L2 flush). With ONCE=1 every kernel runs once at
// 4096^3, for a profiler; with M N K it runs that shape alone (for compute-sanitizer):
//
//   nvcc -O3 -std=c++17 -gencode arch=compute_90a,code=sm_90a -o wgmma_probe \
//     bench/wgmma_probe.cu -lcublas && ./wgmma_probe [M N K]
//   ONCE=1 ncu --clock-control none --metrics lts__t_bytes.sum,lts__t_bytes.sum.per_second,\
//     sm__throughput.avg.pct_of_peak_sustained_elapsed ./wgmma_probe
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <vector>

#include <cublas_v2.h>
#include <cuda_bf16.h>

#include "../examples/matmul_bf16/templates/matmul_bf16_wgmma.cu"

#define CUDA_CHECK(x)                                                                          \
  do {                                                                                         \
    cudaError_t err_ = (x);                                                                    \
    if (err_ != cudaSuccess) {                                                                 \
      fprintf(stderr, "%s:%d: %s\n", __FILE__, __LINE__, cudaGetErrorString(err_));           \
      exit(1);                                                                                 \
    }                                                                                          \
  } while (0)

__global__ void fill(__nv_bfloat16 *p, size_t n, unsigned seed) {
  size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x;
  if (i >= n) return;
  unsigned h = (unsigned)i * 2654435761u ^ seed;
  h ^= h >> 13, h *= 0x5bd1e995, h ^= h >> 15;
  p[i] = __float2bfloat16((h & 0xffff) / 32768.0f - 1.0f); // [-1, 1)
}

__global__ void poison(float *p, size_t n) {
  size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x;
  if (i < n) p[i] = __int_as_float(0x7fc00000);
}

typedef void (*kernel_fn)(const __nv_bfloat16 *, const __nv_bfloat16 *, float *, int, int, int);
struct variant {
  const char *name;
  kernel_fn f;
  int bm, bn, stages;
};
#define V(bm, bn, s, mb) {#bm "," #bn "," #s "," #mb, tf_matmul_bf16_wgmma<bm, bn, s, mb>, bm, bn, s}
static const variant variants[] = {V(256, 128, 3, 1), V(256, 128, 4, 1), V(128, 256, 3, 1),
                                   V(128, 128, 3, 1), V(128, 128, 3, 2), V(64, 128, 4, 2)};

template <class F> static float median_us(F launch, int once) {
  if (once) {
    launch();
    CUDA_CHECK(cudaDeviceSynchronize());
    return 0;
  }
  cudaEvent_t a, b;
  CUDA_CHECK(cudaEventCreate(&a));
  CUDA_CHECK(cudaEventCreate(&b));
  std::vector<float> t;
  for (int r = 0; r < 7; r++) {
    CUDA_CHECK(cudaEventRecord(a));
    for (int i = 0; i < 10; i++) launch();
    CUDA_CHECK(cudaEventRecord(b));
    CUDA_CHECK(cudaEventSynchronize(b));
    float ms;
    CUDA_CHECK(cudaEventElapsedTime(&ms, a, b));
    t.push_back(ms * 100.f); // µs per launch
  }
  std::sort(t.begin(), t.end());
  return t[t.size() / 2];
}

static void shape(cublasHandle_t h, int M, int N, int K, int once) {
  __nv_bfloat16 *A, *B;
  float *C, *R;
  CUDA_CHECK(cudaMalloc(&A, (size_t)M * K * 2));
  CUDA_CHECK(cudaMalloc(&B, (size_t)N * K * 2));
  CUDA_CHECK(cudaMalloc(&C, (size_t)M * N * 4));
  CUDA_CHECK(cudaMalloc(&R, (size_t)M * N * 4));
  fill<<<(unsigned)(((size_t)M * K + 255) / 256), 256>>>(A, (size_t)M * K, 1);
  fill<<<(unsigned)(((size_t)N * K + 255) / 256), 256>>>(B, (size_t)N * K, 2);
  const float one = 1, zero = 0;
  // row-major C = A B^T is column-major C^T = B^T' A: B (N x K, k contiguous) transposed
  auto ref = [&] {
    if (cublasGemmEx(h, CUBLAS_OP_T, CUBLAS_OP_N, N, M, K, &one, B, CUDA_R_16BF, K, A,
                     CUDA_R_16BF, K, &zero, R, CUDA_R_32F, N, CUBLAS_COMPUTE_32F,
                     CUBLAS_GEMM_DEFAULT) != CUBLAS_STATUS_SUCCESS) {
      fprintf(stderr, "cublasGemmEx failed\n");
      exit(1);
    }
  };
  ref();
  CUDA_CHECK(cudaDeviceSynchronize());
  std::vector<float> want((size_t)M * N), got((size_t)M * N);
  CUDA_CHECK(cudaMemcpy(want.data(), R, want.size() * 4, cudaMemcpyDeviceToHost));
  const double flop = 2.0 * M * N * K;
  float us = median_us(ref, once);
  if (once) printf("%dx%dx%d, each kernel once (no times)\n", M, N, K);
  else printf("%dx%dx%d cublasGemmEx %.1f us %.0f TFLOP/s\n", M, N, K, us, flop / us / 1e6);
  for (const variant &v : variants) {
    int smem = v.stages * (v.bm + v.bn) * 128 + 1024;
    CUDA_CHECK(cudaFuncSetAttribute(v.f, cudaFuncAttributeMaxDynamicSharedMemorySize, smem));
    dim3 grid((N + v.bn - 1) / v.bn, (M + v.bm - 1) / v.bm), block(2 * v.bm);
    poison<<<(unsigned)(((size_t)M * N + 255) / 256), 256>>>(C, (size_t)M * N);
    v.f<<<grid, block, smem>>>(A, B, C, M, N, K);
    CUDA_CHECK(cudaDeviceSynchronize());
    CUDA_CHECK(cudaMemcpy(got.data(), C, got.size() * 4, cudaMemcpyDeviceToHost));
    size_t bad = 0;
    for (size_t i = 0; i < got.size(); i++)
      bad += !(std::fabs((double)got[i] - want[i]) <= 1e-2 + 1e-3 * std::fabs(want[i]));
    float t = median_us([&] { v.f<<<grid, block, smem>>>(A, B, C, M, N, K); }, once);
    if (once) {
      printf("  BM,BN,STAGES,MINB %-12s %s (%zu wrong)\n", v.name, bad ? "WRONG" : "ok", bad);
      continue;
    }
    printf("  BM,BN,STAGES,MINB %-12s %s (%zu wrong)  %.1f us  %.0f TFLOP/s  %.3fx cuBLAS\n",
           v.name, bad ? "WRONG" : "ok", bad, t, flop / t / 1e6, us / t);
  }
  CUDA_CHECK(cudaFree(A));
  CUDA_CHECK(cudaFree(B));
  CUDA_CHECK(cudaFree(C));
  CUDA_CHECK(cudaFree(R));
}

int main(int argc, char **argv) {
  const int once = getenv("ONCE") != NULL;
  cublasHandle_t h;
  if (cublasCreate(&h) != CUBLAS_STATUS_SUCCESS) return 1;
  if (argc == 4) {
    const int m = atoi(argv[1]), n = atoi(argv[2]), k = atoi(argv[3]);
    if (m < 1 || n < 1 || k < 8 || k % 8) {
      fprintf(stderr, "usage: wgmma_probe [M N K], K a multiple of 8\n");
      return 2;
    }
    shape(h, m, n, k, 1);
    cublasDestroy(h);
    return 0;
  }
  shape(h, 4096, 4096, 4096, once);
  if (!once) shape(h, 4095, 4097, 1016, 0); // edges: every tile's copies zero-filled somewhere
  cublasDestroy(h);
  return 0;
}
