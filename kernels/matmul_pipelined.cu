// kernels/matmul_pipelined.cu: committed cp.async double-buffered FP32 matrix multiply
// C = A * B, row-major, any M, N, K.
//
// Standalone build:
//   nvcc -arch=sm_90 -std=c++17 -c -Xptxas -v kernels/matmul_pipelined.cu
// Checked against templates/ref_matmul.cu (double accumulation).
//
// - A block of 128 threads computes a 64 x 128 tile of C; each thread owns an 8 x 8 register
//   tile (rows 8 apart, columns in two 4-wide groups 64 apart), K advances 32 at a time.
//   (A 128 x 128 tile would give 1024^3 only 64 blocks and leave half of an H200's 132 SMs
//   idle.)
// - Two shared-memory stages: the cp.async copies of step s+1 are issued before step s is
//   multiplied, so global latency overlaps the arithmetic; one wait and one barrier per step
//   (after the barrier every thread is done with the stage the new copies overwrite).
// - A stays row-major in shared memory (rows padded to 36 floats, so the rows a warp reads
//   fall in distinct 16-byte bank groups) and a thread reads 4 consecutive k of a row in one
//   128-bit load, working 4 k steps at a time; B is row-major and read as float4s.
// - The stages are dynamic shared memory (51200 bytes: over 48 KB, so the launcher opts in).
// - Copies are 16 bytes when K % 4 == 0 and N % 4 == 0 (every row 16-byte aligned), else
//   4 bytes; either way a copy past the matrix edge reads nothing and zero-fills (src-size 0),
//   so edge tiles need no other guard. C stores are 128-bit where N % 4 == 0.

namespace tf_mm_pipe {
constexpr int BM = 64, BN = 128, BK = 32, TM = 8, TN = 8;
constexpr int NTX = BN / TN, NTY = BM / TM, THREADS = NTX * NTY;
constexpr int SA = BK + 4;                                          // padded A rows
constexpr int A_ELEMS = BM * SA, B_ELEMS = BK * BN;
constexpr int SMEM_BYTES = 2 * 4 * (A_ELEMS + B_ELEMS);             // two stages, each A then B
static_assert(SMEM_BYTES == 51200, "kernels/matmul_pipelined.json launch.smem says 51200");
// Staging: a thread's chunks share one column, THREADS / (chunks per row) rows apart.
constexpr int AQ = BK / 4, BQ = BN / 4;                             // 16-byte chunks per row
static_assert(THREADS % AQ == 0 && THREADS % BQ == 0 && THREADS % BK == 0 && THREADS % BN == 0 &&
                  (BM * BK) % (4 * THREADS) == 0 && (BK * BN) % (4 * THREADS) == 0,
              "the staging loops cover the tiles exactly");

__device__ __forceinline__ unsigned smem_u32(const void *p) {
  return (unsigned)__cvta_generic_to_shared(p);
}
__device__ __forceinline__ void cp16(float *dst, const float *src, bool ok) {
  asm volatile("cp.async.cg.shared.global [%0], [%1], 16, %2;\n" ::"r"(smem_u32(dst)), "l"(src),
               "r"(ok ? 16 : 0)
               : "memory");
}
__device__ __forceinline__ void cp4(float *dst, const float *src, bool ok) {
  asm volatile("cp.async.ca.shared.global [%0], [%1], 4, %2;\n" ::"r"(smem_u32(dst)), "l"(src),
               "r"(ok ? 4 : 0)
               : "memory");
}
__device__ __forceinline__ void commit() { asm volatile("cp.async.commit_group;\n" ::: "memory"); }
__device__ __forceinline__ void wait_all() { asm volatile("cp.async.wait_group 0;\n" ::: "memory"); }

// Issue the copies of the K step at k0 into stage (as, bs). A predicated-off copy names the
// matrix base, a valid address whose bytes are not read.
__device__ __forceinline__ void stage(float *as, float *bs, const float *A, const float *B, int M,
                                      int N, int K, int m0, int n0, int k0, bool wide) {
  const int tid = threadIdx.x;
  if (wide) {
#pragma unroll
    for (int i = 0; i < BM * AQ / THREADS; ++i) {
      const int r = tid / AQ + i * (THREADS / AQ), kq = (tid % AQ) * 4;
      const bool ok = m0 + r < M && k0 + kq < K;
      cp16(as + r * SA + kq, ok ? A + (long long)(m0 + r) * K + k0 + kq : A, ok);
    }
#pragma unroll
    for (int i = 0; i < BK * BQ / THREADS; ++i) {
      const int r = tid / BQ + i * (THREADS / BQ), nq = (tid % BQ) * 4;
      const bool ok = k0 + r < K && n0 + nq < N;
      cp16(bs + r * BN + nq, ok ? B + (long long)(k0 + r) * N + n0 + nq : B, ok);
    }
  } else {
#pragma unroll
    for (int i = 0; i < BM * BK / THREADS; ++i) {
      const int r = tid / BK + i * (THREADS / BK), k = tid % BK;
      const bool ok = m0 + r < M && k0 + k < K;
      cp4(as + r * SA + k, ok ? A + (long long)(m0 + r) * K + k0 + k : A, ok);
    }
#pragma unroll
    for (int i = 0; i < BK * BN / THREADS; ++i) {
      const int r = tid / BN + i * (THREADS / BN), n = tid % BN;
      const bool ok = k0 + r < K && n0 + n < N;
      cp4(bs + r * BN + n, ok ? B + (long long)(k0 + r) * N + n0 + n : B, ok);
    }
  }
}
}  // namespace tf_mm_pipe

__global__ void __launch_bounds__(tf_mm_pipe::THREADS, 1)
    tf_matmul_pipelined(const float *__restrict__ A, const float *__restrict__ B,
                        float *__restrict__ C, int M, int N, int K) {
  using namespace tf_mm_pipe;
  // Dynamic shared memory, SMEM_BYTES: two stages, each A then B.
  extern __shared__ __align__(16) float tf_mm_pipe_smem[];
  auto As = [&](int st) { return tf_mm_pipe_smem + st * (A_ELEMS + B_ELEMS); };
  auto Bs = [&](int st) { return tf_mm_pipe_smem + st * (A_ELEMS + B_ELEMS) + A_ELEMS; };

  const int tid = threadIdx.x, tx = tid % NTX, ty = tid / NTX;
  const int m0 = blockIdx.y * BM, n0 = blockIdx.x * BN;
  const bool wide = (K & 3) == 0 && (N & 3) == 0;  // uniform over the grid
  const int steps = (K + BK - 1) / BK;

  float acc[TM][TN];
#pragma unroll
  for (int i = 0; i < TM; ++i)
#pragma unroll
    for (int j = 0; j < TN; ++j) acc[i][j] = 0.f;

  stage(As(0), Bs(0), A, B, M, N, K, m0, n0, 0, wide);
  commit();
  for (int s = 0; s < steps; ++s) {
    const int cur = s & 1;
    wait_all();       // this thread's copies of step s have landed
    __syncthreads();  // everyone's have; and everyone is done with step s-1's stage
    // Start step s+1 into that other stage; its copies overlap step s's arithmetic.
    if (s + 1 < steps) stage(As(cur ^ 1), Bs(cur ^ 1), A, B, M, N, K, m0, n0, (s + 1) * BK, wide);
    commit();
    const float *as = As(cur) + ty * SA, *bs = Bs(cur) + tx * 4;
#pragma unroll 2  // 8 k per iteration: full unrolling is slower from BK 32 on an H200
    for (int k = 0; k < BK; k += 4) {
      float4 a4[TM];
#pragma unroll
      for (int i = 0; i < TM; ++i) a4[i] = *reinterpret_cast<const float4 *>(as + i * NTY * SA + k);
#pragma unroll
      for (int kk = 0; kk < 4; ++kk) {
        float b[TN];
#pragma unroll
        for (int g = 0; g < TN / 4; ++g) {
          const float4 q = *reinterpret_cast<const float4 *>(bs + (k + kk) * BN + g * 4 * NTX);
          b[4 * g] = q.x, b[4 * g + 1] = q.y, b[4 * g + 2] = q.z, b[4 * g + 3] = q.w;
        }
#pragma unroll
        for (int i = 0; i < TM; ++i) {
          const float a = kk == 0 ? a4[i].x : kk == 1 ? a4[i].y : kk == 2 ? a4[i].z : a4[i].w;
#pragma unroll
          for (int j = 0; j < TN; ++j) acc[i][j] = fmaf(a, b[j], acc[i][j]);
        }
      }
    }
  }

#pragma unroll
  for (int i = 0; i < TM; ++i) {
    const int row = m0 + i * NTY + ty;
    if (row >= M) continue;
    float *crow = C + (long long)row * N;
#pragma unroll
    for (int g = 0; g < TN / 4; ++g) {
      const int col = n0 + g * 4 * NTX + tx * 4;
      const float *v = &acc[i][4 * g];
      if ((N & 3) == 0 && col + 3 < N) {
        *reinterpret_cast<float4 *>(crow + col) = make_float4(v[0], v[1], v[2], v[3]);
      } else {
#pragma unroll
        for (int j = 0; j < 4; ++j)
          if (col + j < N) crow[col + j] = v[j];
      }
    }
  }
}
