// The reference of chain.cu and faulty.cu: y = 2 * x, one thread per element. It takes their
// arguments (x, y, N).
__global__ void ref_scale2(const float *x, float *y, int n) {
  const long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) y[i] = 2.0f * x[i];
}
