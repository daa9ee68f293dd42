// axpy: y[i] = a * x[i] + y[i], each thread handling V consecutive elements.
// A self-contained template kernel for test_compile: two instantiations
// (V = 1 and V = 4) must come back as two distinct lowered names in one cubin.
template <int V>
__global__ void axpy(int n, float a, const float *__restrict__ x, float *__restrict__ y) {
  int base = (blockIdx.x * blockDim.x + threadIdx.x) * V;
#pragma unroll
  for (int v = 0; v < V; v++) {
    int i = base + v;
    if (i < n) y[i] = a * x[i] + y[i];
  }
}
