// BF16 matrix multiply on the tensor cores, FP32 accumulate and output:
// C[M][N] = A[M][K] * B[N][K]^T, A and B row-major with k contiguous (B is the N x K
// operand of a "TN" GEMM, as cublasGemmEx computes with op(B) = T).
// A block computes a BM x BN tile of C; its (BM/WM) x (BN/WN) warps each a WM x WN tile,
// from mma.sync m16n8k16 instructions fed by ldmatrix. Tiles of A and B of depth BK move
// global -> shared with 16-byte cp.async copies in a ring of STAGES buffers: the copies of
// step t+STAGES-1 are in flight while step t is multiplied. Shared rows are padded by 8
// elements (16 bytes), so the eight rows one ldmatrix phase reads fall in distinct banks.
// Copies past M, N or K are zero-filled by the copy itself; K must be a multiple of 8.
#include <cuda_bf16.h>

template <int BM, int BN, int BK, int WM, int WN, int STAGES>
__global__ void __launch_bounds__(32 * (BM / WM) * (BN / WN))
tf_matmul_bf16(const __nv_bfloat16 *__restrict__ A, const __nv_bfloat16 *__restrict__ B,
               float *__restrict__ C, int M, int N, int K) {
  constexpr int NT = 32 * (BM / WM) * (BN / WN);
  constexpr int LD = BK + 8;           // padded row, elements
  constexpr int MI = WM / 16, NI = WN / 8;
  extern __shared__ __align__(16) unsigned char smem[];
  __nv_bfloat16 *As = reinterpret_cast<__nv_bfloat16 *>(smem);   // [STAGES][BM][LD]
  __nv_bfloat16 *Bs = As + STAGES * BM * LD;                      // [STAGES][BN][LD]

  const int tid = threadIdx.x, lane = tid & 31, warp = tid >> 5;
  const int wm = warp / (BN / WN), wn = warp % (BN / WN);
  const int m0 = blockIdx.y * BM, n0 = blockIdx.x * BN;
  const int ktiles = (K + BK - 1) / BK;

  // One stage: BM*BK/8 chunks of A and BN*BK/8 of B, 16 bytes each.
  auto load = [&](int stage, int kt) {
    const int k0 = kt * BK;
#pragma unroll
    for (int c = tid; c < (BM + BN) * BK / 8; c += NT) {
      const bool isa = c < BM * BK / 8;
      const int cc = isa ? c : c - BM * BK / 8;
      const int row = cc / (BK / 8), col = (cc % (BK / 8)) * 8;
      const int grow = (isa ? m0 : n0) + row, gk = k0 + col;
      const bool ok = grow < (isa ? M : N) && gk < K;
      const __nv_bfloat16 *src = (isa ? A : B) + (ok ? (size_t)grow * K + gk : 0);
      __nv_bfloat16 *dst = (isa ? As + stage * BM * LD : Bs + stage * BN * LD) + row * LD + col;
      unsigned s = (unsigned)__cvta_generic_to_shared(dst);
      asm volatile("cp.async.cg.shared.global [%0], [%1], 16, %2;\n" ::"r"(s), "l"(src),
                   "r"(ok ? 16 : 0));
    }
  };

  float acc[MI][NI][4];
#pragma unroll
  for (int i = 0; i < MI; i++)
#pragma unroll
    for (int j = 0; j < NI; j++)
#pragma unroll
      for (int r = 0; r < 4; r++) acc[i][j][r] = 0.f;

#pragma unroll
  for (int s = 0; s < STAGES - 1; s++) {
    if (s < ktiles) load(s, s);
    asm volatile("cp.async.commit_group;\n" ::);
  }

  for (int kt = 0; kt < ktiles; kt++) {
    asm volatile("cp.async.wait_group %0;\n" ::"n"(STAGES - 2));
    __syncthreads();
    const int next = kt + STAGES - 1;
    if (next < ktiles) load(next % STAGES, next);
    asm volatile("cp.async.commit_group;\n" ::);

    const __nv_bfloat16 *as = As + (kt % STAGES) * BM * LD + (wm * WM) * LD;
    const __nv_bfloat16 *bs = Bs + (kt % STAGES) * BN * LD + (wn * WN) * LD;
#pragma unroll
    for (int kk = 0; kk < BK; kk += 16) {
      unsigned a[MI][4], b[NI][2];
#pragma unroll
      for (int i = 0; i < MI; i++) {
        // lanes 0-15: rows 0-15 at k 0; lanes 16-31: rows 0-15 at k 8
        const __nv_bfloat16 *p = as + (i * 16 + (lane & 15)) * LD + kk + (lane >> 4) * 8;
        unsigned s = (unsigned)__cvta_generic_to_shared(p);
        asm volatile("ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%0,%1,%2,%3}, [%4];\n"
                     : "=r"(a[i][0]), "=r"(a[i][1]), "=r"(a[i][2]), "=r"(a[i][3])
                     : "r"(s));
      }
#pragma unroll
      for (int j = 0; j < NI; j += 2) {
        // matrices: (n 0-7, k 0), (n 0-7, k 8), (n 8-15, k 0), (n 8-15, k 8)
        const __nv_bfloat16 *p =
            bs + (j * 8 + (lane & 7) + (lane >> 4) * 8) * LD + kk + ((lane >> 3) & 1) * 8;
        unsigned s = (unsigned)__cvta_generic_to_shared(p);
        asm volatile("ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%0,%1,%2,%3}, [%4];\n"
                     : "=r"(b[j][0]), "=r"(b[j][1]), "=r"(b[j + 1][0]), "=r"(b[j + 1][1])
                     : "r"(s));
      }
#pragma unroll
      for (int i = 0; i < MI; i++)
#pragma unroll
        for (int j = 0; j < NI; j++)
          asm volatile("mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32 "
                       "{%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, {%0,%1,%2,%3};\n"
                       : "+f"(acc[i][j][0]), "+f"(acc[i][j][1]), "+f"(acc[i][j][2]),
                         "+f"(acc[i][j][3])
                       : "r"(a[i][0]), "r"(a[i][1]), "r"(a[i][2]), "r"(a[i][3]), "r"(b[j][0]),
                         "r"(b[j][1]));
    }
  }
  asm volatile("cp.async.wait_group 0;\n" ::);

  // Accumulator layout: c0,c1 at (lane/4, 2*(lane%4) + {0,1}); c2,c3 eight rows below.
#pragma unroll
  for (int i = 0; i < MI; i++)
#pragma unroll
    for (int j = 0; j < NI; j++)
#pragma unroll
      for (int h = 0; h < 2; h++) {
        const int r = m0 + wm * WM + i * 16 + (lane >> 2) + h * 8;
        const int c = n0 + wn * WN + j * 8 + (lane & 3) * 2;
        if (r < M) {
          if (c < N) C[(size_t)r * N + c] = acc[i][j][2 * h];
          if (c + 1 < N) C[(size_t)r * N + c + 1] = acc[i][j][2 * h + 1];
        }
      }
}
