// kernels/matmul_regtile.cu: committed register-tiled FP32 matrix multiply C = A * B,
// row-major, any M, N, K (every access guarded). The classic 128 x 128 x 8 SGEMM.
//
// Standalone build:
//   nvcc -arch=sm_90 -std=c++17 -c -Xptxas -v kernels/matmul_regtile.cu
// Checked against templates/ref_matmul.cu (double accumulation).
//
// - A block of 256 threads computes a 128 x 128 tile of C; each thread owns an 8 x 8 register
//   tile, as two 4-row groups 64 rows apart and two 4-column groups 64 columns apart, so a
//   warp's shared-memory reads of B are contiguous 128-bit loads and its stores of C coalesce.
// - A is staged k-major (transposed, rows padded to 132 floats) so a thread's four rows arrive
//   in one 128-bit read per k; B is staged row-major and read as float4s.
// - K advances 8 at a time through two shared-memory buffers: the next step's A and B are
//   loaded into registers before the current step is multiplied and stored after it, so one
//   barrier per step suffices and global latency overlaps the arithmetic.
// - Staging loads are scalar and individually guarded (zero outside the matrices), so no
//   alignment or divisibility is assumed; C stores are 128-bit where N % 4 == 0.

namespace tf_mm_regtile {
constexpr int BM = 128, BN = 128, BK = 8, TM = 8, TN = 8;
constexpr int NTX = BN / TN, NTY = BM / TM, THREADS = NTX * NTY;  // 16 x 16 = 256
constexpr int SA = BM + 4;                                          // padded k-major A rows
}  // namespace tf_mm_regtile

__global__ void __launch_bounds__(256, 2)
    tf_matmul_regtile(const float *__restrict__ A, const float *__restrict__ B,
                      float *__restrict__ C, int M, int N, int K) {
  using namespace tf_mm_regtile;
  __shared__ __align__(16) float As[2][BK][SA];
  __shared__ __align__(16) float Bs[2][BK][BN];

  const int tid = threadIdx.x, tx = tid % NTX, ty = tid / NTX;
  const int m0 = blockIdx.y * BM, n0 = blockIdx.x * BN;
  // Staging: a thread loads 4 consecutive k of one A row (2 threads per row) and 4
  // consecutive columns of one B row (32 threads per row).
  const int ar = tid / 2, ak = (tid % 2) * 4;
  const int bk = tid / 32, bn = (tid % 32) * 4;
  const bool arow_ok = m0 + ar < M;
  const float *ap = A + (long long)(m0 + ar) * K + ak;  // dereferenced only when in range
  const float *bp = B + (long long)bk * N + n0 + bn;

  float ra[4], rb[4];
  auto load = [&](int k0) {
#pragma unroll
    for (int j = 0; j < 4; ++j) {
      ra[j] = arow_ok && k0 + ak + j < K ? ap[k0 + j] : 0.f;
      rb[j] = k0 + bk < K && n0 + bn + j < N ? bp[(long long)k0 * N + j] : 0.f;
    }
  };
  auto store = [&](int buf) {
#pragma unroll
    for (int j = 0; j < 4; ++j) As[buf][ak + j][ar] = ra[j];
    *reinterpret_cast<float4 *>(&Bs[buf][bk][bn]) = make_float4(rb[0], rb[1], rb[2], rb[3]);
  };

  float acc[TM][TN];
#pragma unroll
  for (int i = 0; i < TM; ++i)
#pragma unroll
    for (int j = 0; j < TN; ++j) acc[i][j] = 0.f;

  const int steps = (K + BK - 1) / BK;
  load(0);
  store(0);
  __syncthreads();
  for (int s = 0; s < steps; ++s) {
    const int cur = s & 1;
    if (s + 1 < steps) load((s + 1) * BK);  // in flight during the arithmetic below
#pragma unroll
    for (int k = 0; k < BK; ++k) {
      float a[TM], b[TN];
#pragma unroll
      for (int g = 0; g < 2; ++g) {
        const float4 qa = *reinterpret_cast<const float4 *>(&As[cur][k][g * 64 + ty * 4]);
        const float4 qb = *reinterpret_cast<const float4 *>(&Bs[cur][k][g * 64 + tx * 4]);
        a[4 * g] = qa.x, a[4 * g + 1] = qa.y, a[4 * g + 2] = qa.z, a[4 * g + 3] = qa.w;
        b[4 * g] = qb.x, b[4 * g + 1] = qb.y, b[4 * g + 2] = qb.z, b[4 * g + 3] = qb.w;
      }
#pragma unroll
      for (int i = 0; i < TM; ++i)
#pragma unroll
        for (int j = 0; j < TN; ++j) acc[i][j] = fmaf(a[i], b[j], acc[i][j]);
    }
    // The other buffer was last read in step s-1, which every thread finished before the
    // barrier that ended it; this step's barrier publishes it for step s+1.
    if (s + 1 < steps) store(cur ^ 1);
    __syncthreads();
  }

#pragma unroll
  for (int i = 0; i < TM; ++i) {
    const int row = m0 + (i / 4) * 64 + ty * 4 + (i % 4);
    if (row >= M) continue;
    float *crow = C + (long long)row * N;
#pragma unroll
    for (int g = 0; g < 2; ++g) {
      const int col = n0 + g * 64 + tx * 4;
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
