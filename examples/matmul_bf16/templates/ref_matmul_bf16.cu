// Reference for matmul_bf16: one thread per element of C, products and sum in double.
#include <cuda_bf16.h>
__global__ void ref_matmul_bf16(const __nv_bfloat16 *A, const __nv_bfloat16 *B,
                                           float *C, int M, int N, int K) {
  const long long e = (long long)blockIdx.x * blockDim.x + threadIdx.x;
  if (e >= (long long)M * N) return;
  const int r = (int)(e / N), c = (int)(e % N);
  double s = 0;
  for (int k = 0; k < K; k++)
    s += (double)__bfloat162float(A[(size_t)r * K + k]) * (double)__bfloat162float(B[(size_t)c * K + k]);
  C[e] = (float)s;
}
