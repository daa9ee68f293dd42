// templates/chain.cu: a kernel whose time is set by one knob, for studies of the decision rule.
//
//   nvcc -arch=sm_90 -std=c++17 -c templates/chain.cu   (append an explicit instantiation)
//
// Each thread runs ITERS dependent steps acc = 0.5 * acc + x from acc = 0, which converge to
// 2x (acc_n = 2x(1 - 2^-n)), so the output is checked against ref_scale2.cu
// (y = 2x) whatever ITERS is. The steps are a dependent chain, so the kernel's time grows in
// proportion to ITERS: ITERS 1030 against 1000 is a known 3% difference, measured, not
// assumed (docs/results.md). Nothing here is tuned; it exists so a rule can be judged on
// pairs whose truth is known.

namespace tf_chain {
template <int ITERS>
__device__ __forceinline__ float run(float x) {
  float acc = 0.0f;
#pragma unroll 10
  for (int i = 0; i < ITERS; i++) acc = fmaf(0.5f, acc, x);
  return acc;
}
}  // namespace tf_chain

template <int ITERS>
__global__ void tf_chain_kernel(const float *__restrict__ x, float *__restrict__ y, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) y[i] = tf_chain::run<ITERS>(x[i]);
}
