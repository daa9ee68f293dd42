// The reference of matmul.cu (and of the committed matmul kernels): C = A * B, row-major,
// one thread per element of C, the K products summed in double (a product of two floats is
// exact in double), rounded to float once. It takes the template's arguments (A, B, C, M,
// N, K) and is launched on 16 x 16 blocks over C.
__global__ void ref_matmul(const float *A, const float *B, float *C, int M, int N, int K) {
  const long long m = (long long)blockIdx.y * blockDim.y + threadIdx.y;
  const long long n = (long long)blockIdx.x * blockDim.x + threadIdx.x;
  if (m >= M || n >= N) return;
  double acc = 0.0;
  for (long long k = 0; k < K; k++) acc += (double)A[m * K + k] * (double)B[k * N + n];
  C[m * N + n] = (float)acc;
}
