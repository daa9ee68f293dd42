// bench/rowcopy.cu: what a row-shaped copy costs on this GPU, to tell which part of the
// layernorm's gap to the device copy comes from its shape (a block reads a whole row, then
// writes it) and which from its reductions (two block barriers between the reads and the
// writes), and whether the Hopper bulk-copy engine (TMA) moves a row-shaped stream, and a
// layernorm over it, faster than threads do. Not part of tunefarm: the diagnostic behind the
// 16384x4096 bound in docs/results.md (`bash bench/reproduce.sh rowcopy`).
//
//   nvcc -O3 -arch=sm_90 -o rowcopy bench/rowcopy.cu && ./rowcopy [R D [sweep]]   (default 16384 4096)
//   sweep: cudaMemcpy and the block-per-row copy at every (threads, chunks, vector width)
//   that holds a 4096-float row once, instead of the default arms and the probe.
//
// Same protocol as `tunefarm bench`: the L2 flushed (a 256 MiB memset) before every launch,
// CUDA events around the launch only, 10 rounds of 20 launches, the median of the round
// medians and their spread. Every output is checked after the output was poisoned with NaN:
// a copy against its input (exact), a layernorm against a double-precision reference
// (relative L2 error at most 1e-5, as tunefarm checks). Prints a Markdown table, then
// whether the driver's device-to-device copy needs the SMs (probe, below).
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>

#define CK(call)                                                                        \
  do {                                                                                  \
    cudaError_t e_ = (call);                                                            \
    if (e_ != cudaSuccess) {                                                            \
      fprintf(stderr, "rowcopy: %s:%d: %s\n", __FILE__, __LINE__, cudaGetErrorString(e_)); \
      exit(1);                                                                          \
    }                                                                                   \
  } while (0)

constexpr int BLOCK = 256, CHUNKS = 8;  // the farm's 16384x4096 best: 256 threads x 8 float2

// Flat: every thread copies float4s in a grid-stride loop, a load and its store back to back.
__global__ void copy_flat(const float4 *__restrict__ x, float4 *__restrict__ y, long long n4) {
  for (long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x; i < n4;
       i += (long long)gridDim.x * blockDim.x)
    y[i] = x[i];
}

// Row: one block per row; every thread loads its CHUNKS float2s of the row into registers,
// then stores them (BARRIERS 0), or first passes BARRIERS block reductions of their sum,
// as the layernorm's mean and variance do, and adds 0 * the sum (exact for finite inputs).
template <int BARRIERS>
__global__ void __launch_bounds__(BLOCK, 1)
    copy_row(const float2 *__restrict__ x, float2 *__restrict__ y, int D2) {
  __shared__ float red[BARRIERS > 0 ? BARRIERS : 1][BLOCK / 32];
  const float2 *xr = x + (long long)blockIdx.x * D2;
  float2 *yr = y + (long long)blockIdx.x * D2;
  float2 v[CHUNKS];
  float s = 0.f;
#pragma unroll
  for (int j = 0; j < CHUNKS; ++j) {
    const int c = threadIdx.x + j * BLOCK;
    if (c < D2) v[j] = xr[c], s += v[j].x + v[j].y;
  }
#pragma unroll
  for (int b = 0; b < BARRIERS; ++b) {
#pragma unroll
    for (int o = 16; o > 0; o >>= 1) s += __shfl_xor_sync(0xffffffffu, s, o);
    if ((threadIdx.x & 31) == 0) red[b][threadIdx.x / 32] = s;
    __syncthreads();
    s = 0.f;
#pragma unroll
    for (int w = 0; w < BLOCK / 32; ++w) s += red[b][w];
  }
  const float z = BARRIERS > 0 ? 0.f * s : 0.f;
#pragma unroll
  for (int j = 0; j < CHUNKS; ++j) {
    const int c = threadIdx.x + j * BLOCK;
    if (c < D2) yr[c] = make_float2(v[j].x + z, v[j].y + z);
  }
}


// Flat x4: a grid-stride loop in which every thread has four float4 loads in flight before
// its four stores (the unrolled form of elementwise copy kernels).
__global__ void copy_flat4(const float4 *__restrict__ x, float4 *__restrict__ y, long long n4) {
  const long long stride = (long long)gridDim.x * blockDim.x;
  for (long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x; i < n4; i += 4 * stride) {
    float4 v[4];
#pragma unroll
    for (int u = 0; u < 4; ++u)
      if (i + u * stride < n4) v[u] = x[i + u * stride];
#pragma unroll
    for (int u = 0; u < 4; ++u)
      if (i + u * stride < n4) y[i + u * stride] = v[u];
  }
}

// Row copy with float4s: one block per row, 4 float4 a thread (D <= 4096), no reductions;
// HINT 1 reads without L1 allocation and stores evict-first.
template <int HINT>
__global__ void __launch_bounds__(BLOCK, 1)
    copy_row4(const float4 *__restrict__ x, float4 *__restrict__ y, int D4) {
  const float4 *xr = x + (long long)blockIdx.x * D4;
  float4 *yr = y + (long long)blockIdx.x * D4;
  float4 v[4];
#pragma unroll
  for (int j = 0; j < 4; ++j) {
    const int c = threadIdx.x + j * BLOCK;
    if (c >= D4) continue;
    if (HINT)
      asm volatile("ld.global.nc.L1::no_allocate.v4.f32 {%0, %1, %2, %3}, [%4];"
                   : "=f"(v[j].x), "=f"(v[j].y), "=f"(v[j].z), "=f"(v[j].w) : "l"(xr + c));
    else
      v[j] = xr[c];
  }
#pragma unroll
  for (int j = 0; j < 4; ++j) {
    const int c = threadIdx.x + j * BLOCK;
    if (c >= D4) continue;
    if (HINT)
      asm volatile("st.global.cs.v4.f32 [%0], {%1, %2, %3, %4};" ::"l"(yr + c), "f"(v[j].x),
                   "f"(v[j].y), "f"(v[j].z), "f"(v[j].w) : "memory");
    else
      yr[c] = v[j];
  }
}

// The shape sweep (argument "sweep"): a block of T threads copies one row, each thread C
// chunks of V floats (float, float2 or float4), all loads before all stores, as the
// template's block-per-row layernorm (FORM 2, BLOCK T, VEC V, CACHE C) moves its row.
template <int V> struct Vec;
template <> struct Vec<1> { using T = float; };
template <> struct Vec<2> { using T = float2; };
template <> struct Vec<4> { using T = float4; };

template <int V, int C, int T>
__global__ void __launch_bounds__(T, 1) copy_rowv(const float *__restrict__ x, float *__restrict__ y, int D) {
  using vec = typename Vec<V>::T;
  const vec *xr = reinterpret_cast<const vec *>(x + (long long)blockIdx.x * D);
  vec *yr = reinterpret_cast<vec *>(y + (long long)blockIdx.x * D);
  const int n = D / V;
  vec v[C];
#pragma unroll
  for (int j = 0; j < C; ++j)
    if (threadIdx.x + j * T < n) v[j] = xr[threadIdx.x + j * T];
#pragma unroll
  for (int j = 0; j < C; ++j)
    if (threadIdx.x + j * T < n) yr[threadIdx.x + j * T] = v[j];
}

// TMA (the Hopper bulk-copy engine): a persistent block streams its rows through STAGES
// shared-memory buffers. One thread asks for a whole row with one cp.async.bulk, which
// completes on the stage's mbarrier; the block then either stores it back unchanged
// (MATH 0, a copy of the layernorm's shape) or normalizes it in place (MATH 1: the mean,
// the sum of squared deviations, y = (x - mean) * rstd * gamma + beta, as the template's
// two passes) and one thread writes the row back with one bulk store. The next load into a
// stage waits until the store issued from it one row earlier has read it.
__device__ __forceinline__ unsigned smem_addr(const void *p) {
  return (unsigned)__cvta_generic_to_shared(p);
}
__device__ __forceinline__ void bulk_load(void *dst, const void *src, unsigned bytes,
                                          unsigned long long *bar) {
  asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;"
               ::"r"(smem_addr(bar)), "r"(bytes) : "memory");
  asm volatile("cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes [%0], [%1], %2, [%3];"
               ::"r"(smem_addr(dst)), "l"(src), "r"(bytes), "r"(smem_addr(bar)) : "memory");
}
__device__ __forceinline__ void bar_wait(unsigned long long *bar, unsigned parity) {
  asm volatile("{\n .reg .pred p;\n wait_%=: mbarrier.try_wait.parity.shared::cta.b64 p, [%0], %1;\n"
               " @!p bra wait_%=;\n}" ::"r"(smem_addr(bar)), "r"(parity) : "memory");
}
__device__ __forceinline__ void bulk_store(void *dst, const void *src, unsigned bytes) {
  asm volatile("cp.async.bulk.global.shared::cta.bulk_group [%0], [%1], %2;"
               ::"l"(dst), "r"(smem_addr(src)), "r"(bytes) : "memory");
  asm volatile("cp.async.bulk.commit_group;" ::: "memory");
}

template <int THREADS>
__device__ __forceinline__ float block_sum(float v, float *red) {
#pragma unroll
  for (int o = 16; o > 0; o >>= 1) v += __shfl_xor_sync(0xffffffffu, v, o);
  if ((threadIdx.x & 31) == 0) red[threadIdx.x / 32] = v;
  __syncthreads();
  float s = 0.f;
#pragma unroll
  for (int w = 0; w < THREADS / 32; ++w) s += red[w];
  return s;
}

constexpr int TMA_THREADS = 256, TMA_Q = 4;  // a thread's float4s of a row (D <= 4096)

template <int STAGES, int MATH>
__global__ void __launch_bounds__(TMA_THREADS, 1)
    row_tma(const float *__restrict__ x, const float *__restrict__ gamma,
            const float *__restrict__ beta, float *__restrict__ y, int R, int D) {
  extern __shared__ float4 stage[];  // STAGES rows of D floats
  __shared__ unsigned long long bar[STAGES];
  __shared__ float red_mean[TMA_THREADS / 32], red_var[TMA_THREADS / 32];
  const int t = threadIdx.x, D4 = D / 4;
  const unsigned bytes = (unsigned)D * 4;
  float4 g[TMA_Q], b[TMA_Q];
#pragma unroll
  for (int j = 0; j < TMA_Q; ++j)
    if (MATH && t + j * TMA_THREADS < D4)
      g[j] = ((const float4 *)gamma)[t + j * TMA_THREADS], b[j] = ((const float4 *)beta)[t + j * TMA_THREADS];
  if (t == 0) {
    for (int s = 0; s < STAGES; ++s)
      asm volatile("mbarrier.init.shared::cta.b64 [%0], 1;" ::"r"(smem_addr(&bar[s])) : "memory");
    asm volatile("fence.mbarrier_init.release.cluster;" ::: "memory");
    for (int s = 0; s < STAGES; ++s) {
      const long long r = blockIdx.x + (long long)s * gridDim.x;
      if (r < R) bulk_load(stage + s * D4, x + r * D, bytes, &bar[s]);
    }
  }
  __syncthreads();
  for (long long k = 0;; ++k) {
    const long long r = blockIdx.x + k * gridDim.x;
    if (r >= R) break;
    const int s = (int)(k % STAGES);
    float4 *row = stage + s * D4;
    bar_wait(&bar[s], (unsigned)((k / STAGES) & 1));
    if (MATH) {
      float4 v[TMA_Q];
      float sum = 0.f;
#pragma unroll
      for (int j = 0; j < TMA_Q; ++j)
        if (t + j * TMA_THREADS < D4) {
          v[j] = row[t + j * TMA_THREADS];
          sum += (v[j].x + v[j].y) + (v[j].z + v[j].w);
        }
      const float mean = block_sum<TMA_THREADS>(sum, red_mean) / (float)D;
      float q = 0.f;
#pragma unroll
      for (int j = 0; j < TMA_Q; ++j)
        if (t + j * TMA_THREADS < D4) {
          const float a = v[j].x - mean, c = v[j].y - mean, d = v[j].z - mean, e = v[j].w - mean;
          q = fmaf(a, a, fmaf(c, c, fmaf(d, d, fmaf(e, e, q))));
        }
      const float rstd = rsqrtf(block_sum<TMA_THREADS>(q, red_var) / (float)D + 1e-5f);
#pragma unroll
      for (int j = 0; j < TMA_Q; ++j)
        if (t + j * TMA_THREADS < D4)
          row[t + j * TMA_THREADS] = make_float4(fmaf((v[j].x - mean) * rstd, g[j].x, b[j].x),
                                                 fmaf((v[j].y - mean) * rstd, g[j].y, b[j].y),
                                                 fmaf((v[j].z - mean) * rstd, g[j].z, b[j].z),
                                                 fmaf((v[j].w - mean) * rstd, g[j].w, b[j].w));
      // The bulk store reads shared memory through the async proxy: make the writes visible.
      asm volatile("fence.proxy.async.shared::cta;" ::: "memory");
    }
    __syncthreads();
    if (t == 0) {
      bulk_store(y + r * D, row, bytes);
      // Refill the stage the previous row was stored from, once that store has read it.
      const long long nk = k - 1 + STAGES, nr = blockIdx.x + nk * gridDim.x;
      if (k > 0 && nr < R) {
        asm volatile("cp.async.bulk.wait_group.read 1;" ::: "memory");
        bulk_load(stage + (int)(nk % STAGES) * D4, x + nr * D, bytes, &bar[nk % STAGES]);
      }
    }
  }
  if (t == 0) asm volatile("cp.async.bulk.wait_group 0;" ::: "memory");
}

struct Arm {
  const char *name;
  bool layernorm;  // checked against the double reference, else as an exact copy
  void (*launch)(const float *, const float *, const float *, float *, int, int);
};
static int sms() {
  int dev, n;
  CK(cudaGetDevice(&dev));
  CK(cudaDeviceGetAttribute(&n, cudaDevAttrMultiProcessorCount, dev));
  return n;
}
static void flat(const float *x, const float *, const float *, float *y, int R, int D) {
  copy_flat<<<sms() * 8, BLOCK>>>((const float4 *)x, (float4 *)y, (long long)R * D / 4);
}
static void flat4(const float *x, const float *, const float *, float *y, int R, int D) {
  copy_flat4<<<sms() * 8, BLOCK>>>((const float4 *)x, (float4 *)y, (long long)R * D / 4);
}
template <int HINT>
static void row4(const float *x, const float *, const float *, float *y, int R, int D) {
  copy_row4<HINT><<<R, BLOCK>>>((const float4 *)x, (float4 *)y, D / 4);
}
// What torch's dst.copy_(src) of two contiguous float tensors does (bench/peers.py's copy).
static void memcpy_d2d(const float *x, const float *, const float *, float *y, int R, int D) {
  CK(cudaMemcpyAsync(y, x, (size_t)R * D * 4, cudaMemcpyDeviceToDevice));
}
template <int V, int C, int T>
static void rowv(const float *x, const float *, const float *, float *y, int R, int D) {
  copy_rowv<V, C, T><<<R, T>>>(x, y, D);
}
template <int B>
static void row(const float *x, const float *, const float *, float *y, int R, int D) {
  copy_row<B><<<R, BLOCK>>>((const float2 *)x, (float2 *)y, D / 2);
}
// As many persistent blocks as fit on every SM (shared memory, registers), at most one per row.
template <int STAGES, int MATH>
static void tma(const float *x, const float *g, const float *b, float *y, int R, int D) {
  const size_t smem = (size_t)STAGES * D * 4;
  static int per_sm = 0;
  if (!per_sm) {
    CK(cudaFuncSetAttribute(row_tma<STAGES, MATH>, cudaFuncAttributeMaxDynamicSharedMemorySize, (int)smem));
    CK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, row_tma<STAGES, MATH>, TMA_THREADS, smem));
    fprintf(stderr, "rowcopy: row_tma<%d,%d>: %d blocks per SM\n", STAGES, MATH, per_sm);
  }
  row_tma<STAGES, MATH><<<std::min(R, sms() * per_sm), TMA_THREADS, smem>>>(x, g, b, y, R, D);
}

// Relative L2 error of y against the double-precision layernorm of x (eps 1e-5).
static double ln_error(const std::vector<float> &x, const std::vector<float> &g,
                       const std::vector<float> &b, const std::vector<float> &y, int R, int D) {
  double num = 0, den = 0;
  for (int r = 0; r < R; ++r) {
    const float *xr = &x[(size_t)r * D];
    double mean = 0, var = 0;
    for (int i = 0; i < D; ++i) mean += xr[i];
    mean /= D;
    for (int i = 0; i < D; ++i) var += (xr[i] - mean) * (xr[i] - mean);
    const double rstd = 1.0 / std::sqrt(var / D + 1e-5);
    for (int i = 0; i < D; ++i) {
      const double ref = (xr[i] - mean) * rstd * g[i] + b[i], d = y[(size_t)r * D + i] - ref;
      num += d * d, den += ref * ref;
    }
  }
  return std::sqrt(num / den);  // NaN (a missing store) fails the check below
}

// Does cudaMemcpy's device-to-device copy need the SMs? A spin kernel first fills every SM
// (two 1024-thread blocks each, so no other block fits) for about 2 ms on one stream; the
// copy, or as a control the row copy kernel, starts on a second stream right after. A copy
// that runs on the copy engines finishes inside the spin; one that is an SM kernel waits
// for it.
__global__ void spin(long long cycles) {
  const long long t0 = clock64();
  while (clock64() - t0 < cycles) {
  }
}

static void probe(const float *x, float *y, int R, int D) {
  cudaStream_t s1, s2;
  CK(cudaStreamCreateWithFlags(&s1, cudaStreamNonBlocking));
  CK(cudaStreamCreateWithFlags(&s2, cudaStreamNonBlocking));
  cudaEvent_t e[4];
  for (auto &ev : e) CK(cudaEventCreate(&ev));
  int dev, khz;
  CK(cudaGetDevice(&dev));
  CK(cudaDeviceGetAttribute(&khz, cudaDevAttrClockRate, dev));
  const char *what[] = {"cudaMemcpyAsync device to device", "row copy kernel (control)"};
  for (int w = 0; w < 2; ++w) {
    CK(cudaEventRecord(e[0], s1));
    spin<<<sms() * 2, 1024, 0, s1>>>(2LL * khz);  // 2 ms at the SM clock (khz: cycles per ms)
    CK(cudaGetLastError());
    CK(cudaEventRecord(e[1], s1));
    CK(cudaEventRecord(e[2], s2));
    if (w == 0)
      CK(cudaMemcpyAsync(y, x, (size_t)R * D * 4, cudaMemcpyDeviceToDevice, s2));
    else
      copy_row<0><<<R, BLOCK, 0, s2>>>((const float2 *)x, (float2 *)y, D / 2);
    CK(cudaGetLastError());
    CK(cudaEventRecord(e[3], s2));
    CK(cudaDeviceSynchronize());
    float spin_ms, copy_ms;
    CK(cudaEventElapsedTime(&spin_ms, e[0], e[1]));
    CK(cudaEventElapsedTime(&copy_ms, e[2], e[3]));
    printf("probe: %s issued behind a %.0f µs spin on every SM: done after %.0f µs\n", what[w],
           spin_ms * 1e3, copy_ms * 1e3);
  }
  for (auto &ev : e) CK(cudaEventDestroy(ev));
  CK(cudaStreamDestroy(s1));
  CK(cudaStreamDestroy(s2));
}

static double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

int main(int argc, char **argv) {
  const int R = argc > 2 ? atoi(argv[1]) : 16384, D = argc > 2 ? atoi(argv[2]) : 4096;
  if (R <= 0 || D <= 0 || D % 4 || D / 2 > BLOCK * CHUNKS || D / 4 > TMA_THREADS * TMA_Q || D / 4 > 4 * BLOCK) {
    fprintf(stderr, "rowcopy: R > 0 and D a multiple of 4, at most %d\n", 2 * BLOCK * CHUNKS);
    return 2;
  }
  const size_t n = (size_t)R * D, flush_bytes = 256u << 20;
  std::vector<float> h(n), back(n), hg(D), hb(D);
  srand(7);
  for (auto &f : h) f = (float)rand() / RAND_MAX - 0.5f;
  for (int i = 0; i < D; ++i) hg[i] = 0.5f + (float)rand() / RAND_MAX, hb[i] = (float)rand() / RAND_MAX - 0.5f;
  float *x, *y, *g, *b;
  void *flush;
  CK(cudaMalloc(&x, n * 4));
  CK(cudaMalloc(&y, n * 4));
  CK(cudaMalloc(&g, D * 4));
  CK(cudaMalloc(&b, D * 4));
  CK(cudaMalloc(&flush, flush_bytes));
  CK(cudaMemcpy(x, h.data(), n * 4, cudaMemcpyHostToDevice));
  CK(cudaMemcpy(g, hg.data(), D * 4, cudaMemcpyHostToDevice));
  CK(cudaMemcpy(b, hb.data(), D * 4, cudaMemcpyHostToDevice));
  const Arm arms[] = {{"cudaMemcpyAsync device to device (torch's copy_)", false, memcpy_d2d},
                      {"flat float4 grid-stride copy", false, flat},
                      {"flat grid-stride copy, 4 float4 in flight a thread", false, flat4},
                      {"row copy, 4 float4 a thread", false, row4<0>},
                      {"row copy, 4 float4 a thread, no L1 allocation, evict-first stores", false, row4<1>},
                      {"row copy (block per row, 8 float2 a thread)", false, row<0>},
                      {"row copy + 1 block reduction", false, row<1>},
                      {"row copy + 2 block reductions (the layernorm's)", false, row<2>},
                      {"TMA row copy, 2 stages", false, tma<2, 0>},
                      {"TMA row copy, 4 stages", false, tma<4, 0>},
                      {"TMA layernorm, 2 stages", true, tma<2, 1>},
                      {"TMA layernorm, 3 stages", true, tma<3, 1>},
                      {"TMA layernorm, 4 stages", true, tma<4, 1>}};
  const Arm sweep[] = {{"cudaMemcpyAsync device to device (torch's copy_)", false, memcpy_d2d},
                       {"row copy, 128 threads x 32 float", false, rowv<1, 32, 128>},
                       {"row copy, 256 threads x 16 float", false, rowv<1, 16, 256>},
                       {"row copy, 512 threads x 8 float", false, rowv<1, 8, 512>},
                       {"row copy, 1024 threads x 4 float", false, rowv<1, 4, 1024>},
                       {"row copy, 128 threads x 16 float2", false, rowv<2, 16, 128>},
                       {"row copy, 256 threads x 8 float2", false, rowv<2, 8, 256>},
                       {"row copy, 512 threads x 4 float2", false, rowv<2, 4, 512>},
                       {"row copy, 1024 threads x 2 float2", false, rowv<2, 2, 1024>},
                       {"row copy, 64 threads x 16 float4", false, rowv<4, 16, 64>},
                       {"row copy, 128 threads x 8 float4", false, rowv<4, 8, 128>},
                       {"row copy, 256 threads x 4 float4", false, rowv<4, 4, 256>},
                       {"row copy, 512 threads x 2 float4", false, rowv<4, 2, 512>},
                       {"row copy, 1024 threads x 1 float4", false, rowv<4, 1, 1024>}};
  const bool sweeping = argc > 3 && !strcmp(argv[3], "sweep");
  const Arm *list = sweeping ? sweep : arms;
  const size_t narms = sweeping ? sizeof sweep / sizeof *sweep : sizeof arms / sizeof *arms;
  cudaEvent_t ea, eb;
  CK(cudaEventCreate(&ea));
  CK(cudaEventCreate(&eb));
  printf("| kernel (%d x %d, L2 flushed) | median µs | spread µs | GB/s | rel_err |\n|---|---:|---:|---:|---:|\n", R, D);
  for (size_t ai = 0; ai < narms; ++ai) {
    const Arm &arm = list[ai];
    CK(cudaMemset(y, 0xff, n * 4));  // NaN everywhere: a store that is missing shows
    arm.launch(x, g, b, y, R, D);
    CK(cudaGetLastError());
    CK(cudaMemcpy(back.data(), y, n * 4, cudaMemcpyDeviceToHost));
    double err = 0;
    if (arm.layernorm) {
      err = ln_error(h, hg, hb, back, R, D);
      if (!(err <= 1e-5)) {
        fprintf(stderr, "rowcopy: %s: relative error %g (tolerance 1e-5)\n", arm.name, err);
        return 1;
      }
    } else {
      for (size_t i = 0; i < n; ++i)
        if (back[i] != h[i]) {
          fprintf(stderr, "rowcopy: %s: y[%zu] = %g, not %g\n", arm.name, i, back[i], h[i]);
          return 1;
        }
    }
    std::vector<double> rounds;
    for (int r = 0; r < 12; ++r) {  // the first two rounds are burn-in
      std::vector<double> t;
      for (int s = 0; s < 20; ++s) {
        CK(cudaMemsetAsync(flush, r + s, flush_bytes));
        CK(cudaEventRecord(ea));
        arm.launch(x, g, b, y, R, D);
        CK(cudaEventRecord(eb));
        CK(cudaEventSynchronize(eb));
        float ms;
        CK(cudaEventElapsedTime(&ms, ea, eb));
        t.push_back(ms * 1e3);
      }
      if (r >= 2) rounds.push_back(median(t));
    }
    const double m = median(rounds);
    printf("| %s | %.2f | %.2f–%.2f | %.0f | %.1e |\n", arm.name, m,
           *std::min_element(rounds.begin(), rounds.end()),
           *std::max_element(rounds.begin(), rounds.end()), 2.0 * n * 4 / (m * 1e3), err);
  }
  if (!sweeping) probe(x, y, R, D);
  return 0;
}
