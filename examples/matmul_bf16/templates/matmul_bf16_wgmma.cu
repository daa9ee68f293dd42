// BF16 matrix multiply on Hopper's warpgroup tensor cores (wgmma), FP32 accumulate and output:
// C[M][N] = A[M][K] * B[N][K]^T, A and B row-major with k contiguous (the "TN" GEMM of
// cublasGemmEx with op(B) = T). wgmma and setmaxnreg need sm_90a ("arch_specific").
//
// Warpgroup 0 is the producer: its first thread moves each 64-deep k-tile of A and B into a
// ring of STAGES stages by TMA (tensor maps tmA, tmB: boxes of 64 x BM and 64 x BN, 128-byte
// swizzled, the layout wgmma's descriptors read). BM/WM consumer warpgroups each multiply a
// WM x BN strip straight from shared memory. Per stage, barrier full takes the producer's
// expected bytes, completed by the TMA; empty one arrive per consumer warp once the wgmmas
// that read the stage completed. setmaxnreg moves registers from producer to consumers. Tiles
// go in groups of GROUP along M for L2 reuse; GRID > 0 blocks stride over the tiles, the
// producer loading a next tile while the consumers store the last. A and B (the maps'
// buffers) are for the reference; past M, N or K the TMA reads zeros; K % 8 == 0.

// The CUtensorMap of cuda.h, which NVRTC cannot include: 128 opaque bytes, 64-byte aligned.
struct __align__(64) tf_tensormap { unsigned long long opaque[16]; };

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

// Pins the accumulators here in the instruction stream: not read before a wait_group, not
// written across a fence.
template <int NF> __device__ __forceinline__ void acc_fence(float *acc) {
#pragma unroll
  for (int i = 0; i < NF; i++) asm volatile("" : "+f"(acc[i])::"memory");
}

__device__ __forceinline__ void mbar_init(unsigned a, unsigned n) {
  asm volatile("mbarrier.init.shared::cta.b64 [%0], %1;\n" ::"r"(a), "r"(n) : "memory");
}
__device__ __forceinline__ void mbar_arrive(unsigned a) {
  asm volatile("mbarrier.arrive.shared::cta.b64 _, [%0];\n" ::"r"(a) : "memory");
}
__device__ __forceinline__ void mbar_expect(unsigned a, unsigned bytes) {
  asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;\n" ::"r"(a), "r"(bytes)
               : "memory");
}
// Returns once the barrier's phase of this parity has completed.
__device__ __forceinline__ void mbar_wait(unsigned a, unsigned parity) {
  asm volatile("{\n.reg .pred p;\nWAIT_%=:\n"
               "mbarrier.try_wait.parity.shared::cta.b64 p, [%0], %1;\n"
               "@!p bra WAIT_%=;\n}\n" ::"r"(a), "r"(parity) : "memory");
}
// The box at (k element c0, row c1) into shared memory at dst, its bytes counted on bar.
__device__ __forceinline__ void tma_load(unsigned dst, const tf_tensormap *tm, int c0, int c1,
                                         unsigned bar) {
  asm volatile("cp.async.bulk.tensor.2d.shared::cluster.global.mbarrier::complete_tx::bytes"
               " [%0], [%1, {%2, %3}], [%4];\n" ::"r"(dst), "l"(tm), "r"(c0), "r"(c1), "r"(bar)
               : "memory");
}

// Registers: the launch bounds give each of the block's threads R0; setmaxnreg moves what
// the producer gives up (down to RP) to the consumers (up to RC), and must not ask for more
// than the block holds, or it waits forever. One consumer warpgroup already has 255.
template <int BM, int WM> struct tf_regs {
  static constexpr int NC = BM / WM, THREADS = 128 * (NC + 1);
  static constexpr int R0 = 65536 / THREADS / 8 * 8 > 255 ? 255 : 65536 / THREADS / 8 * 8;
  static constexpr bool MOVE = 65536 / THREADS < 248;
  static constexpr int RP = NC <= 2 ? 40 : 24;
  static constexpr int RC = (R0 + (R0 - RP) / NC) / 8 * 8 > 240 ? 240 : (R0 + (R0 - RP) / NC) / 8 * 8;
  static_assert(!MOVE || NC * (RC - R0) <= R0 - RP, "the consumers ask for more than the producer frees");
};

template <int BM, int BN, int WM, int STAGES, int GROUP, int GRID>
__global__ void __launch_bounds__(tf_regs<BM, WM>::THREADS, 1)
tf_matmul_bf16_wgmma(const void *A, const void *B, float *__restrict__ C,
                     const __grid_constant__ tf_tensormap tmA,
                     const __grid_constant__ tf_tensormap tmB, int M, int N, int K) {
  using R = tf_regs<BM, WM>;
  constexpr int NC = R::NC, MI = WM / 64, NF = BN / 2; // NF: floats per m64 block a thread
  constexpr int A_BYTES = BM * 128, STAGE = (BM + BN) * 128;
  extern __shared__ __align__(16) unsigned char smem_raw[];
  // The swizzle is of address bits: every tile starts 1024-byte aligned (the launch asks for
  // 1 KiB more than the ring and its barriers).
  const unsigned base = ((unsigned)__cvta_generic_to_shared(smem_raw) + 1023u) & ~1023u;
  const unsigned full0 = base + STAGES * STAGE, empty0 = full0 + 8 * STAGES;
  const int tid = threadIdx.x, wg = tid >> 7;
  const int tiles_m = (M + BM - 1) / BM, tiles_n = (N + BN - 1) / BN, ntiles = tiles_m * tiles_n;
  const int ktiles = (K + 63) / 64;
  // tile t -> (m tile, n tile): groups of GROUP m tiles, down the group first
  auto tile_of = [&](int t, int &tm, int &tn) {
    const int g = t / (GROUP * tiles_n), first = g * GROUP, gm = min(tiles_m - first, GROUP);
    const int r = t - g * GROUP * tiles_n;
    tm = first + r % gm, tn = r / gm;
  };
  (void)A, (void)B;
  if (tid == 0) {
    for (int s = 0; s < STAGES; s++) mbar_init(full0 + 8 * s, 1), mbar_init(empty0 + 8 * s, 4 * NC);
    // the barriers, visible to the TMA's completions
    asm volatile("fence.mbarrier_init.release.cluster;\nfence.proxy.async.shared::cta;\n" ::: "memory");
  }
  __syncthreads();
  // A global k-tile count `it` over the block's tiles: stage it % STAGES, its use's phase
  // (it / STAGES) & 1; the producer waits for the previous use's release.
  if (wg == 0) {
    if constexpr (R::MOVE) asm volatile("setmaxnreg.dec.sync.aligned.u32 %0;\n" ::"n"(R::RP));
    if (tid != 0) return;
    unsigned it = 0;
    for (int t = blockIdx.x; t < ntiles; t += gridDim.x) {
      int tm, tn;
      tile_of(t, tm, tn);
      for (int kt = 0; kt < ktiles; kt++, it++) {
        const unsigned s = it % STAGES, sb = base + s * STAGE, fb = full0 + 8 * s;
        if (it >= (unsigned)STAGES) mbar_wait(empty0 + 8 * s, ((it / STAGES) & 1) ^ 1);
        mbar_expect(fb, STAGE);
        tma_load(sb, &tmA, kt * 64, tm * BM, fb);
        tma_load(sb + A_BYTES, &tmB, kt * 64, tn * BN, fb);
      }
    }
    return;
  }
  if constexpr (R::MOVE) asm volatile("setmaxnreg.inc.sync.aligned.u32 %0;\n" ::"n"(R::RC));
  const int cw = wg - 1, lane = tid & 31, w = (tid >> 5) & 3;
  float acc[MI * NF];
  unsigned it = 0;
  for (int t = blockIdx.x; t < ntiles; t += gridDim.x) {
    int tm, tn;
    tile_of(t, tm, tn);
    for (int kt = 0; kt < ktiles; kt++, it++) {
      const unsigned s = it % STAGES;
      mbar_wait(full0 + 8 * s, (it / STAGES) & 1);
      const unsigned sa = base + s * STAGE + cw * WM * 128, sb = base + s * STAGE + A_BYTES;
      acc_fence<MI * NF>(acc);
      asm volatile("wgmma.fence.sync.aligned;\n" ::: "memory");
#pragma unroll
      for (int k = 0; k < 4; k++)
#pragma unroll
        for (int mi = 0; mi < MI; mi++) {
          const unsigned long long da = wgmma_desc(sa + mi * 64 * 128 + 32 * k);
          const unsigned long long db = wgmma_desc(sb + 32 * k);
          const int add = kt > 0 || k > 0; // the tile's first step overwrites
          if constexpr (BN == 128) wgmma_n128(acc + mi * NF, da, db, add);
          else wgmma_n256(acc + mi * NF, da, db, add);
        }
      asm volatile("wgmma.commit_group.sync.aligned;\n" ::: "memory");
      acc_fence<MI * NF>(acc);
      // this k-tile's wgmmas stay in flight; the previous one's stage goes back
      asm volatile("wgmma.wait_group.sync.aligned 1;\n" ::: "memory");
      acc_fence<MI * NF>(acc);
      if (kt > 0 && lane == 0) mbar_arrive(empty0 + 8 * ((it - 1) % STAGES));
    }
    asm volatile("wgmma.wait_group.sync.aligned 0;\n" ::: "memory");
    acc_fence<MI * NF>(acc);
    if (lane == 0) mbar_arrive(empty0 + 8 * ((it - 1) % STAGES));
    // m64nN's layout: warp w holds rows 16w..16w+15; per n8 block j, acc[4j], acc[4j+1] at
    // (lane/4, 8j + 2(lane%4) + {0,1}), acc[4j+2], acc[4j+3] eight rows below
#pragma unroll
    for (int mi = 0; mi < MI; mi++) {
      const int r0 = tm * BM + cw * WM + mi * 64 + w * 16 + (lane >> 2);
      const float *a = acc + mi * NF;
#pragma unroll
      for (int j = 0; j < BN / 8; j++) {
        const int c = tn * BN + j * 8 + (lane & 3) * 2;
#pragma unroll
        for (int h = 0; h < 2; h++) {
          const int r = r0 + h * 8;
          if (r >= M) continue;
          float *p = C + (size_t)r * N + c;
          if (c + 1 < N && (N & 1) == 0) {
            *reinterpret_cast<float2 *>(p) = make_float2(a[4 * j + 2 * h], a[4 * j + 2 * h + 1]);
          } else {
            if (c < N) p[0] = a[4 * j + 2 * h];
            if (c + 1 < N) p[1] = a[4 * j + 2 * h + 1];
          }
        }
      }
    }
  }
}
