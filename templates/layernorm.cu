// templates/layernorm.cu: tunable FP32 layer normalization over the rows of x[R][D]:
//   y = (x - mean) / sqrt(var + eps) * gamma + beta,   var the biased variance, eps 1e-5.
//
// Standalone build (append an explicit instantiation, e.g.
//   template __global__ void tf_layernorm<1,2,256,4,0,2,0,1>(const float*, const float*, const float*, float*, int, int, float);):
//   nvcc -arch=sm_90 -std=c++17 -c -Xptxas -v templates/layernorm.cu
// tunefarm compiles it with NVRTC (no system headers: nothing is #included).
//
// Checked against ref_layernorm.cu (double precision).
// Two passes over each row in registers: the mean first, then the sum of squared
// deviations from it (no E[x^2] - E[x]^2 cancellation), then the output.
// Knobs, in template order:
//   FORM    who owns a row: 0 one warp (shuffle reductions only, no barrier); 1 WARPS warps
//           (shuffles, then one shared-memory exchange and barrier per reduction), several
//           rows per block; 2 the whole block (same exchange across all its warps).
//   WARPS   warps per row in form 1 (the other forms ignore it).
//   BLOCK   threads per block.
//   VEC     floats per load and store (1, 2 or 4: float, float2, float4); >1 needs D % VEC == 0.
//   RSQRT   0: 1.0f / sqrtf(var + eps); 1: rsqrtf (approximate reciprocal square root).
//   CACHE   chunks of VEC floats each thread keeps in registers between the passes; the rest
//           of a row that does not fit is read again from global memory (L1/L2) by the
//           later passes. 0 streams the row three times.
//   HINT    1: the last read of each chunk of x and every store of y carry the evict-first
//           ("streaming", .cs) cache hint, so a row read once and the output written once do
//           not push lines that will be used again out of L1 and L2; 0: default caching.
//   ROWS    rows each row group normalizes in turn (a block covers ROWS*BLOCK/TPR rows).
//           With ROWS > 1 the next row's cached chunks are requested before the current
//           row's reductions, so loads stay in flight while a group reduces and writes
//           (needs CACHE > 0: the prefetched chunks wait in a second set of registers).
//           (Staging those rows through shared memory with cp.async instead keeps the
//           registers low but is slower.)
// Thread t of a row's TPR threads takes chunks t, t+TPR, t+2*TPR, ... and every chunk is
// guarded by c < D/VEC: each element is counted exactly once at every width. (A kernel that
// gives each warp a span and steps through it in whole 32-lane steps counts part of the row
// twice whenever the span is not a multiple of 32.)

namespace tf_ln_tmpl {

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
  } else if constexpr (VEC == 2) {
    const float2 q = *reinterpret_cast<const float2 *>(p);
    v[0] = q.x, v[1] = q.y;
  } else {
    v[0] = *p;
  }
}

// The last read of a chunk: with HINT, ld.global.cs (evict first: the row is not read again).
template <int VEC, int HINT>
__device__ __forceinline__ void load_last(const float *p, float (&v)[VEC]) {
  if constexpr (!HINT) {
    load<VEC>(p, v);
  } else if constexpr (VEC == 4) {
    asm("ld.global.cs.v4.f32 {%0, %1, %2, %3}, [%4];"
                 : "=f"(v[0]), "=f"(v[1]), "=f"(v[2]), "=f"(v[3]) : "l"(p));
  } else if constexpr (VEC == 2) {
    asm("ld.global.cs.v2.f32 {%0, %1}, [%2];" : "=f"(v[0]), "=f"(v[1]) : "l"(p));
  } else {
    asm("ld.global.cs.f32 %0, [%1];" : "=f"(v[0]) : "l"(p));
  }
}

template <int VEC, int HINT>
__device__ __forceinline__ void store(float *p, const float (&v)[VEC]) {
  if constexpr (HINT && VEC == 4) {
    asm volatile("st.global.cs.v4.f32 [%0], {%1, %2, %3, %4};" ::"l"(p), "f"(v[0]), "f"(v[1]),
                 "f"(v[2]), "f"(v[3]) : "memory");
  } else if constexpr (HINT && VEC == 2) {
    asm volatile("st.global.cs.v2.f32 [%0], {%1, %2};" ::"l"(p), "f"(v[0]), "f"(v[1]) : "memory");
  } else if constexpr (HINT) {
    asm volatile("st.global.cs.f32 [%0], %1;" ::"l"(p), "f"(v[0]) : "memory");
  } else if constexpr (VEC == 4) {
    *reinterpret_cast<float4 *>(p) = make_float4(v[0], v[1], v[2], v[3]);
  } else if constexpr (VEC == 2) {
    *reinterpret_cast<float2 *>(p) = make_float2(v[0], v[1]);
  } else {
    *p = v[0];
  }
}

// Sum of v over the TPR threads of one row (slot `slot` of the block). With TPR > 32 the
// warps of the row meet in shared memory `red` (one float per warp of the block) behind
// one barrier, which every thread of the block reaches (the caller never returns early).
template <int TPR, int BLOCK>
__device__ __forceinline__ float row_sum(float v, float *red, int slot) {
  v = warp_sum(v);
  if constexpr (TPR == 32) {
    return v;
  } else {
    constexpr int WPR = TPR / 32;
    if ((threadIdx.x & 31) == 0) red[threadIdx.x / 32] = v;
    __syncthreads();
    float s = 0.f;
#pragma unroll
    for (int w = 0; w < WPR; ++w) s += red[slot * WPR + w];
    return s;
  }
}

}  // namespace tf_ln_tmpl

namespace tf_ln_tmpl {

// Pass 0 of a row: its first CACHE chunks per thread (t + j*TPR), read once into registers.
template <int TPR, int VEC, int CACHE, int HINT>
__device__ __forceinline__ void load_cached(const float *xr, int t, int nch,
                                            float (&v)[CACHE > 0 ? CACHE : 1][VEC]) {
#pragma unroll
  for (int j = 0; j < CACHE; ++j) {
    const int c = t + j * TPR;
    if (c < nch) load_last<VEC, HINT>(xr + c * VEC, v[j]);
  }
}

// One row, its cached chunks already in v: the mean, the sum of squared deviations from it
// (the rest of the row streamed from global memory in each pass), then y. Every thread of
// the block calls it the same number of times (the reductions may hold barriers); a thread
// whose row is past the end (live false) reads and writes nothing.
template <int TPR, int BLOCK, int VEC, int RSQRT, int CACHE, int HINT>
__device__ __forceinline__ void norm_row(const float *xr, float *yr, const float *gamma,
                                         const float *beta, int t, int nch, bool live, int D,
                                         float eps, const float (&v)[CACHE > 0 ? CACHE : 1][VEC],
                                         float *red_mean, float *red_var, int slot) {
  // Pass 1: the sum.
  float s = 0.f;
#pragma unroll
  for (int j = 0; j < CACHE; ++j)
    if (live && t + j * TPR < nch) {
#pragma unroll
      for (int e = 0; e < VEC; ++e) s += v[j][e];
    }
  if (live) {
#pragma unroll 4
    for (int c = t + CACHE * TPR; c < nch; c += TPR) {
      float w[VEC];
      load<VEC>(xr + c * VEC, w);
#pragma unroll
      for (int e = 0; e < VEC; ++e) s += w[e];
    }
  }
  const float mean = row_sum<TPR, BLOCK>(s, red_mean, slot) / (float)D;

  // Pass 2: the sum of squared deviations from the mean.
  float q = 0.f;
#pragma unroll
  for (int j = 0; j < CACHE; ++j)
    if (live && t + j * TPR < nch) {
#pragma unroll
      for (int e = 0; e < VEC; ++e) {
        const float d = v[j][e] - mean;
        q = fmaf(d, d, q);
      }
    }
  if (live) {
#pragma unroll 4
    for (int c = t + CACHE * TPR; c < nch; c += TPR) {
      float w[VEC];
      load<VEC>(xr + c * VEC, w);
#pragma unroll
      for (int e = 0; e < VEC; ++e) {
        const float d = w[e] - mean;
        q = fmaf(d, d, q);
      }
    }
  }
  const float var = row_sum<TPR, BLOCK>(q, red_var, slot) / (float)D;
  const float rstd = RSQRT ? rsqrtf(var + eps) : 1.0f / sqrtf(var + eps);
  if (!live) return;  // after the row's last barrier

  // Pass 3: normalize, scale, shift.
#pragma unroll
  for (int j = 0; j < CACHE; ++j) {
    const int c = t + j * TPR;
    if (c < nch) {
      float g[VEC], b[VEC], o[VEC];
      load<VEC>(gamma + c * VEC, g);
      load<VEC>(beta + c * VEC, b);
#pragma unroll
      for (int e = 0; e < VEC; ++e) o[e] = fmaf((v[j][e] - mean) * rstd, g[e], b[e]);
      store<VEC, HINT>(yr + c * VEC, o);
    }
  }
#pragma unroll 4
  for (int c = t + CACHE * TPR; c < nch; c += TPR) {
    float w[VEC], g[VEC], b[VEC], o[VEC];
    load_last<VEC, HINT>(xr + c * VEC, w);
    load<VEC>(gamma + c * VEC, g);
    load<VEC>(beta + c * VEC, b);
#pragma unroll
    for (int e = 0; e < VEC; ++e) o[e] = fmaf((w[e] - mean) * rstd, g[e], b[e]);
    store<VEC, HINT>(yr + c * VEC, o);
  }
}

}  // namespace tf_ln_tmpl

// __launch_bounds__(BLOCK, 1) lets ptxas use the registers the row cache needs. Asking for
// more resident blocks instead (a register cap) raises occupancy at 16384x4096 without
// moving DRAM throughput or time, and makes no kernel faster at either shape the campaigns
// tune.
template <int FORM, int WARPS, int BLOCK, int VEC, int RSQRT, int CACHE, int HINT, int ROWS>
__global__ void __launch_bounds__(BLOCK, 1)
    tf_layernorm(const float *__restrict__ x, const float *__restrict__ gamma,
                 const float *__restrict__ beta, float *__restrict__ y, int R, int D, float eps) {
  constexpr int TPR = FORM == 0 ? 32 : FORM == 1 ? 32 * WARPS : BLOCK;  // threads per row
  constexpr int RPB = BLOCK / TPR;                                        // rows per block at once
  constexpr int NV = CACHE > 0 ? CACHE : 1;
  static_assert(BLOCK % 32 == 0 && BLOCK <= 1024, "whole warps");
  static_assert(BLOCK % TPR == 0 && TPR % 32 == 0, "rows own whole warps of the block");
  static_assert(VEC == 1 || VEC == 2 || VEC == 4, "vector width");
  static_assert(CACHE >= 0 && (HINT == 0 || HINT == 1), "cache, hint");
  static_assert(ROWS >= 1 && (ROWS == 1 || CACHE > 0), "rows in turn prefetch into the cache");
  // Two exchange arrays, one per reduction: the second can be written while slow threads
  // still read the first, so each reduction needs only its own barrier. Across rows in turn
  // this still holds: a thread writes red_mean for the next row only after the barrier of
  // red_var, which every thread reaches after its last read of red_mean.
  __shared__ float red_mean[TPR > 32 ? BLOCK / 32 : 1];
  __shared__ float red_var[TPR > 32 ? BLOCK / 32 : 1];

  const int slot = threadIdx.x / TPR, t = threadIdx.x % TPR;
  const int first = blockIdx.x * ROWS * RPB + slot;  // this group's rows: first + i*RPB
  const int nch = D / VEC;  // D % VEC == 0 when VEC > 1 (constraint)
  float v[NV][VEC], next[NV][VEC];
  if (first < R) tf_ln_tmpl::load_cached<TPR, VEC, CACHE, HINT>(x + (long long)first * D, t, nch, v);
#pragma unroll 1
  for (int i = 0; i < ROWS; ++i) {
    const int row = first + i * RPB;
    const bool live = row < R;
    if (TPR == 32 && !live) return;  // a whole warp; form 0 has no block barrier
    // Rows in turn: the next row's cached chunks are requested before this row's two
    // reductions, so the group keeps loads in flight while it reduces and writes.
    const int nrow = row + RPB;
    if (ROWS > 1 && i + 1 < ROWS && nrow < R)
      tf_ln_tmpl::load_cached<TPR, VEC, CACHE, HINT>(x + (long long)nrow * D, t, nch, next);
    tf_ln_tmpl::norm_row<TPR, BLOCK, VEC, RSQRT, CACHE, HINT>(
        x + (long long)(live ? row : 0) * D, y + (long long)(live ? row : 0) * D, gamma, beta, t,
        nch, live, D, eps, v, red_mean, red_var, slot);
    if (ROWS > 1) {
#pragma unroll
      for (int j = 0; j < NV; ++j)
#pragma unroll
        for (int e = 0; e < VEC; ++e) v[j][e] = next[j][e];
    }
  }
}
