// BF16 matrix multiply on Hopper's warpgroup tensor cores (wgmma), FP32 accumulate and output:
// C[M][N] = A[M][K] * B[N][K]^T, A and B row-major with k contiguous (the "TN" GEMM that
// cublasGemmEx computes with op(B) = T). wgmma needs sm_90a, the target the farm compiles for
// on an H200.
//
// A block computes a BM x BN tile of C with BM/64 warpgroups, each a 64 x BN strip: per k16
// step one wgmma m64nBNk16 reads its A rows and all of B straight from shared memory (no
// registers in between), accumulating in registers (BN/2 floats a thread). Tiles of depth 64
// (128 bytes of a row: one 128-byte swizzle atom) move global -> shared with 16-byte cp.async
// copies into a ring of STAGES buffers, written at the swizzled position wgmma's descriptor
// expects (16-byte chunk c of row r at chunk c ^ (r % 8)), so its reads are conflict-free.
// Each k-tile: wait for its copies, fence them to the async proxy that wgmma reads through,
// one barrier, the tile's four wgmmas, the copies of the tile STAGES-1 ahead into the buffer
// the previous tile used (every warpgroup waited for its wgmmas before the barrier), then wait
// for the wgmmas. MINB blocks an SM let one block's barrier hide behind another's tensor work.
// wgmmas kept in flight across the barrier, or a producer warpgroup with mbarriers, measured
// no faster on the H200 (docs/results.md, Examples).
// Copies past M, N or K are zero-filled by the copy itself; K must be a multiple of 8.
#include <cuda_bf16.h>

// d += A * B^T over k16 (scale_d 0: d = A * B^T): one m64nNk16 across the warpgroup, A and B
// K-major in shared memory, 128-byte swizzled, given by their descriptors; d holds N/2 floats.
#define WG_F8(i)                                                                             \
  "+f"(d[i]), "+f"(d[i + 1]), "+f"(d[i + 2]), "+f"(d[i + 3]), "+f"(d[i + 4]), "+f"(d[i + 5]), \
      "+f"(d[i + 6]), "+f"(d[i + 7])
__device__ __forceinline__ void wgmma_n128(float *d, unsigned long long da,
                                          unsigned long long db, int scale_d) {
  asm volatile("{\n.reg .pred p;\nsetp.ne.b32 p, %66, 0;\n"
      "wgmma.mma_async.sync.aligned.m64n128k16.f32.bf16.bf16 {"
      "%0,%1,%2,%3,%4,%5,%6,%7,%8,%9,%10,%11,%12,%13,%14,%15,%16,%17,%18,%19,%20,%21,%22,%23,"
      "%24,%25,%26,%27,%28,%29,%30,%31,%32,%33,%34,%35,%36,%37,%38,%39,%40,%41,%42,%43,%44,%45,"
      "%46,%47,%48,%49,%50,%51,%52,%53,%54,%55,%56,%57,%58,%59,%60,%61,%62,%63"
      "}, %64, %65, p, 1, 1, 0, 0;\n}\n"
      : WG_F8(0), WG_F8(8), WG_F8(16), WG_F8(24), WG_F8(32), WG_F8(40), WG_F8(48), WG_F8(56)
      : "l"(da), "l"(db), "r"(scale_d));
}

__device__ __forceinline__ void wgmma_n256(float *d, unsigned long long da,
                                          unsigned long long db, int scale_d) {
  asm volatile("{\n.reg .pred p;\nsetp.ne.b32 p, %130, 0;\n"
      "wgmma.mma_async.sync.aligned.m64n256k16.f32.bf16.bf16 {"
      "%0,%1,%2,%3,%4,%5,%6,%7,%8,%9,%10,%11,%12,%13,%14,%15,%16,%17,%18,%19,%20,%21,%22,%23,"
      "%24,%25,%26,%27,%28,%29,%30,%31,%32,%33,%34,%35,%36,%37,%38,%39,%40,%41,%42,%43,%44,%45,"
      "%46,%47,%48,%49,%50,%51,%52,%53,%54,%55,%56,%57,%58,%59,%60,%61,%62,%63,%64,%65,%66,%67,"
      "%68,%69,%70,%71,%72,%73,%74,%75,%76,%77,%78,%79,%80,%81,%82,%83,%84,%85,%86,%87,%88,%89,"
      "%90,%91,%92,%93,%94,%95,%96,%97,%98,%99,%100,%101,%102,%103,%104,%105,%106,%107,%108,"
      "%109,%110,%111,%112,%113,%114,%115,%116,%117,%118,%119,%120,%121,%122,%123,%124,%125,"
      "%126,%127"
      "}, %128, %129, p, 1, 1, 0, 0;\n}\n"
      : WG_F8(0), WG_F8(8), WG_F8(16), WG_F8(24), WG_F8(32), WG_F8(40), WG_F8(48), WG_F8(56),
        WG_F8(64), WG_F8(72), WG_F8(80), WG_F8(88), WG_F8(96), WG_F8(104), WG_F8(112),
        WG_F8(120)
      : "l"(da), "l"(db), "r"(scale_d));
}

// The shared-memory descriptor of a K-major operand tile at byte address `addr` (1024-byte
// aligned plus the k step's 32 bytes): start >> 4, leading byte offset 16 (unused by the
// swizzled K-major layout), stride byte offset 1024 (eight 128-byte rows, the next 8 rows of
// M or N), swizzle mode 1 (128 bytes).
__device__ __forceinline__ unsigned long long wgmma_desc(unsigned addr) {
  return (unsigned long long)((addr & 0x3FFFF) >> 4) | (1ull << 16) | (64ull << 32) |
         (1ull << 62);
}

// One staged tile, 64 deep: four k16 steps, the descriptors' start 32 bytes further each.
template <int BN>
__device__ __forceinline__ void wgmma_tile(float *acc, unsigned a, unsigned b) {
#pragma unroll
  for (int k = 0; k < 4; k++) {
    if constexpr (BN == 128) wgmma_n128(acc, wgmma_desc(a + 32 * k), wgmma_desc(b + 32 * k), 1);
    else wgmma_n256(acc, wgmma_desc(a + 32 * k), wgmma_desc(b + 32 * k), 1);
  }
}

template <int BM, int BN, int STAGES, int MINB>
__global__ void __launch_bounds__(2 * BM, MINB)
tf_matmul_bf16_wgmma(const __nv_bfloat16 *__restrict__ A, const __nv_bfloat16 *__restrict__ B,
                     float *__restrict__ C, int M, int N, int K) {
  constexpr int NT = 2 * BM;             // BM / 64 warpgroups of 128 threads
  constexpr int STAGE = (BM + BN) * 128; // bytes: BM rows of A, BN of B, 64 k each
  extern __shared__ __align__(16) unsigned char smem_raw[];
  // The swizzle is of address bits, so every tile starts 1024-byte aligned (the launch asks
  // for 1 KiB more than the ring).
  const unsigned raw = (unsigned)__cvta_generic_to_shared(smem_raw);
  const unsigned base = (raw + 1023u) & ~1023u;

  const int tid = threadIdx.x, wg = tid >> 7;
  const int m0 = blockIdx.y * BM, n0 = blockIdx.x * BN;
  const int ktiles = (K + 63) / 64;

  auto load = [&](int stage, int kt) {
    const unsigned sb = base + stage * STAGE;
#pragma unroll
    for (int c = tid; c < (BM + BN) * 8; c += NT) {
      const int row = c >> 3, ch = c & 7;
      const bool isa = row < BM;
      const int r = isa ? row : row - BM;
      const int grow = (isa ? m0 : n0) + r, gk = kt * 64 + ch * 8;
      const bool ok = grow < (isa ? M : N) && gk < K;
      const __nv_bfloat16 *src = (isa ? A : B) + (ok ? (size_t)grow * K + gk : 0);
      const unsigned dst = sb + row * 128 + ((ch ^ (r & 7)) << 4);
      asm volatile("cp.async.cg.shared.global [%0], [%1], 16, %2;\n" ::"r"(dst), "l"(src),
                   "r"(ok ? 16 : 0));
    }
  };

  float acc[BN / 2];
#pragma unroll
  for (int i = 0; i < BN / 2; i++) acc[i] = 0.f;

#pragma unroll
  for (int s = 0; s < STAGES - 1; s++) {
    if (s < ktiles) load(s, s);
    asm volatile("cp.async.commit_group;\n" ::);
  }

  for (int kt = 0; kt < ktiles; kt++) {
    asm volatile("cp.async.wait_group %0;\n" ::"n"(STAGES - 2));
    asm volatile("fence.proxy.async.shared::cta;\n" ::: "memory");
    __syncthreads();
    const unsigned sb = base + (kt % STAGES) * STAGE;
    asm volatile("wgmma.fence.sync.aligned;\n" ::: "memory");
    wgmma_tile<BN>(acc, sb + wg * 64 * 128, sb + BM * 128);
    asm volatile("wgmma.commit_group.sync.aligned;\n" ::: "memory");
    const int next = kt + STAGES - 1;
    if (next < ktiles) load(next % STAGES, next);
    asm volatile("cp.async.commit_group;\n" ::);
    asm volatile("wgmma.wait_group.sync.aligned 0;\n" ::: "memory");
  }
  asm volatile("cp.async.wait_group 0;\n" ::);

  // Accumulator layout of m64nN: warp w of the warpgroup holds rows 16w..16w+15; for each
  // n8 block j, acc[4j], acc[4j+1] at (lane/4, 8j + 2(lane%4) + {0,1}), acc[4j+2], acc[4j+3]
  // eight rows below.
  const int lane = tid & 31, w = (tid >> 5) & 3;
  const int r0 = m0 + wg * 64 + w * 16 + (lane >> 2);
#pragma unroll
  for (int j = 0; j < BN / 8; j++) {
    const int c = n0 + j * 8 + (lane & 3) * 2;
#pragma unroll
    for (int h = 0; h < 2; h++) {
      const int r = r0 + h * 8;
      if (r >= M) continue;
      float *p = C + (size_t)r * N + c;
      if (c + 1 < N && (N & 1) == 0) {
        *reinterpret_cast<float2 *>(p) = make_float2(acc[4 * j + 2 * h], acc[4 * j + 2 * h + 1]);
      } else {
        if (c < N) p[0] = acc[4 * j + 2 * h];
        if (c + 1 < N) p[1] = acc[4 * j + 2 * h + 1];
      }
    }
  }
}
