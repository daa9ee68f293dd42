// The reference of transpose.cu: one thread per element of in, no shared memory. It takes the
// template's arguments (in, out, R, C).
__global__ void ref_transpose(const float *in, float *out, int R, int C) {
  const size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= (size_t)R * C) return;
  const size_t r = i / C, c = i % C;
  out[c * R + r] = in[i];
}
