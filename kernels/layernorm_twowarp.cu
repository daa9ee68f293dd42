// kernels/layernorm_twowarp.cu: committed FP32 layer normalization, two warps per row,
// four rows per 256-thread block, correct at every width D.
//   y = (x - mean) / sqrt(var + eps) * gamma + beta,   var the biased variance.
//
// Standalone build:
//   nvcc -arch=sm_90 -std=c++17 -c -Xptxas -v kernels/layernorm_twowarp.cu
// Checked against templates/ref_layernorm.cu (double precision).
//
// - A two-warp kernel that gives each warp half the row and walks it in whole 32-lane steps
//   counts part of the row twice whenever the half is not a multiple of 32 (at width 128 it is
//   wrong by 0.43). Here thread t of the row's 64 takes
//   chunks t, t+64, t+128, ... and every chunk is guarded by the row width, so each element is
//   counted exactly once at every width.
// - float4 chunks where D % 4 == 0 (every row 16-byte aligned), single floats otherwise.
// - Two passes: the mean, then the sum of squared deviations from it; each reduction is a
//   warp shuffle tree and one exchange between the row's two warps behind one barrier.
// - The first 4 chunks of each thread (a row of up to 1024 floats with float4) stay in
//   registers between the passes; the rest of a wider row is read again (L1/L2).
// - 1.0f / sqrtf: exact reciprocal square root.

namespace tf_ln_twowarp {
constexpr int BLOCK = 256, TPR = 64, RPB = BLOCK / TPR, CACHE = 4;

__device__ __forceinline__ float warp_sum(float v) {
#pragma unroll
  for (int o = 16; o > 0; o >>= 1) v += __shfl_xor_sync(0xffffffffu, v, o);
  return v;
}

template <int VEC>
__device__ __forceinline__ void load(const float *p, float (&v)[VEC]) {
  if constexpr (VEC == 4) {
    const float4 q = *reinterpret_cast<const float4 *>(p);
    v[0] = q.x, v[1] = q.y, v[2] = q.z, v[3] = q.w;
  } else {
    v[0] = *p;
  }
}

template <int VEC>
__device__ __forceinline__ void store(float *p, const float (&v)[VEC]) {
  if constexpr (VEC == 4)
    *reinterpret_cast<float4 *>(p) = make_float4(v[0], v[1], v[2], v[3]);
  else
    *p = v[0];
}

// Sum over the row's two warps: warp w of the block writes red[w], row slot s reads 2s, 2s+1.
__device__ __forceinline__ float pair_sum(float v, float *red, int slot) {
  v = warp_sum(v);
  if ((threadIdx.x & 31) == 0) red[threadIdx.x / 32] = v;
  __syncthreads();
  return red[2 * slot] + red[2 * slot + 1];
}

template <int VEC>
__device__ __forceinline__ void row(const float *__restrict__ x, const float *__restrict__ gamma,
                                    const float *__restrict__ beta, float *__restrict__ y, int R,
                                    int D, float eps) {
  __shared__ float red_mean[BLOCK / 32], red_var[BLOCK / 32];
  const int slot = threadIdx.x / TPR, t = threadIdx.x % TPR;
  const int r = blockIdx.x * RPB + slot;
  const bool live = r < R;  // dead rows still reach both barriers
  const int nch = D / VEC;
  const float *xr = x + (long long)(live ? r : 0) * D;
  float *yr = y + (long long)(live ? r : 0) * D;

  float v[CACHE][VEC];
  float s = 0.f;
#pragma unroll
  for (int j = 0; j < CACHE; ++j) {
    const int c = t + j * TPR;
    if (live && c < nch) {
      load<VEC>(xr + c * VEC, v[j]);
#pragma unroll
      for (int e = 0; e < VEC; ++e) s += v[j][e];
    }
  }
  for (int c = t + CACHE * TPR; live && c < nch; c += TPR) {
    float w[VEC];
    load<VEC>(xr + c * VEC, w);
#pragma unroll
    for (int e = 0; e < VEC; ++e) s += w[e];
  }
  const float mean = pair_sum(s, red_mean, slot) / (float)D;

  float q = 0.f;
#pragma unroll
  for (int j = 0; j < CACHE; ++j) {
    const int c = t + j * TPR;
    if (live && c < nch) {
#pragma unroll
      for (int e = 0; e < VEC; ++e) q = fmaf(v[j][e] - mean, v[j][e] - mean, q);
    }
  }
  for (int c = t + CACHE * TPR; live && c < nch; c += TPR) {
    float w[VEC];
    load<VEC>(xr + c * VEC, w);
#pragma unroll
    for (int e = 0; e < VEC; ++e) q = fmaf(w[e] - mean, w[e] - mean, q);
  }
  const float var = pair_sum(q, red_var, slot) / (float)D;
  const float rstd = 1.0f / sqrtf(var + eps);
  if (!live) return;

#pragma unroll
  for (int j = 0; j < CACHE; ++j) {
    const int c = t + j * TPR;
    if (c < nch) {
      float g[VEC], b[VEC], o[VEC];
      load<VEC>(gamma + c * VEC, g);
      load<VEC>(beta + c * VEC, b);
#pragma unroll
      for (int e = 0; e < VEC; ++e) o[e] = fmaf((v[j][e] - mean) * rstd, g[e], b[e]);
      store<VEC>(yr + c * VEC, o);
    }
  }
  for (int c = t + CACHE * TPR; c < nch; c += TPR) {
    float w[VEC], g[VEC], b[VEC], o[VEC];
    load<VEC>(xr + c * VEC, w);
    load<VEC>(gamma + c * VEC, g);
    load<VEC>(beta + c * VEC, b);
#pragma unroll
    for (int e = 0; e < VEC; ++e) o[e] = fmaf((w[e] - mean) * rstd, g[e], b[e]);
    store<VEC>(yr + c * VEC, o);
  }
}
}  // namespace tf_ln_twowarp

__global__ void __launch_bounds__(256, 1)
    tf_layernorm_twowarp(const float *__restrict__ x, const float *__restrict__ gamma,
                         const float *__restrict__ beta, float *__restrict__ y, int R, int D,
                         float eps) {
  if ((D & 3) == 0)  // uniform over the grid
    tf_ln_twowarp::row<4>(x, gamma, beta, y, R, D, eps);
  else
    tf_ln_twowarp::row<1>(x, gamma, beta, y, R, D, eps);
}
