// templates/matmul.cu: tunable FP32 matrix multiply C = A * B, row-major, any M, N, K.
//
// Standalone build (append an explicit instantiation, e.g.
//   template __global__ void tf_matmul<64,128,64,8,8,0,4,1,2,1,0,2,1>(const float*, const float*, float*, int, int, int);):
//   nvcc -arch=sm_90 -std=c++17 -c -Xptxas -v templates/matmul.cu
// tunefarm compiles it with NVRTC (no system headers: nothing is #included).
//
// Checked against ref_matmul.cu (double accumulation).
// A block computes a BM x BN tile of C from K steps of depth BK; each of its
// (BM/TM)*(BN/TN) threads owns a TM x TN register tile. Knobs, in template order:
//   BM, BN   block tile. Bigger tiles re-read A and B from global memory less often.
//   BK       depth of one K step: how much is staged in shared memory per barrier.
//   TM, TN   register tile per thread: more FMAs per shared-memory read.
//   AK       1: A is stored k-major (transposed) in shared memory, so a thread's 4 rows
//            arrive in one 128-bit read per k; 0: A stays row-major and a thread reads
//            4 consecutive k of one row per 128-bit read (4 k steps at a time).
//   VEC      4: staging moves 128-bit chunks (needs K % 4 == 0 and N % 4 == 0); 1: scalars.
//   STAGING  how the copies global -> shared are issued:
//            0 one loop moving A chunk i and B chunk i together, every chunk predicated;
//            1 separate guard-free loops (only where the tiles divide the problem);
//            2 one branch per tile: full tiles take the guard-free loops, edge tiles
//              predicated loops.
//   PIPE     0: registers carry each tile to static shared memory, one barrier on each side
//            of the arithmetic; 2, 3 or 4: cp.async ring of PIPE stages in dynamic shared
//            memory, the copies of tile t+PIPE-1 in flight while tile t is multiplied
//            (16-byte copies with VEC 4, 4-byte copies with VEC 1; out-of-range bytes
//            are zero-filled by the copy itself).
//   SPLITK   blockIdx.z takes a contiguous share of the K steps and atomically adds its
//            partial tile into C, which the launcher zeroes first. 0: stream-K, a grid of
//            two blocks per SM sharing every (tile, K step) pair in equal contiguous runs,
//            each block adding a tile it holds only part of and storing one it holds whole:
//            a grid whose tiles fill their last wave only partly keeps every SM busy.
//   WARP     where a thread's register tile lies: 0, spread over the whole block tile (thread
//            (tx, ty) of the block's NTX x NTY grid, columns 4*NTX apart); 1, inside its warp's
//            tile of (4*TM) x (8*TN): a warp's lanes are 4 rows x 8 columns, a thread's
//            columns 32 apart, so one 128-bit read of B serves a warp in one shared-memory
//            wavefront (8 distinct quads, 128 bytes) instead of NTX/4 wavefronts.
//   KSLICE   thread groups that share the block tile and split each staged K step between
//            them (group s multiplies k in [s*BK/KSLICE, (s+1)*BK/KSLICE)), adding their
//            partial tiles through shared memory once at the end. 2 doubles the warps of a
//            block without atomics, a cleared C or smaller register tiles: for grids too
//            small to give each SM two blocks (1024^3 with 64x128 tiles is 128 blocks on 132
//            SMs, one warp per scheduler, which stalls on every shared-memory read).
//   FRAG     1 (with cp.async stages): software-pipelined operand fragments. Each k's A and B
//            fragments are loaded from shared memory while the previous k's FMAs run (two
//            register buffers), also across the loop's back edge and across the step
//            barrier: the barrier comes before the last k's FMAs, which then cover the
//            loads of the next step's first fragments. Every stage of the ring is in flight
//            from the start, since a buffer is refilled as soon as its last fragment is in
//            registers. 0: a k's loads come right before its FMAs; the compiler schedules
//            within the unrolled body only, and each step begins with exposed load latency.
// Shared-memory layout: A row-major rows are padded to BK+4 floats (consecutive rows land on
// different 16-byte bank groups); k-major A rows are padded to BM+4; B is row-major [BK][BN]
// and read as consecutive float4s across a warp. A thread's columns are TN/4 groups of 4,
// spaced 4*(BN/TN) apart, so a warp's B reads are contiguous and its C stores coalesce.
// k-major A is staged in patches of 32 bytes x several rows per warp, which makes the
// transposing stores conflict-free. Partial tiles are zero-filled in shared memory, so the
// arithmetic never tests bounds. The fastest configurations found, and their times beside
// cuBLAS and Triton: docs/results.md.

namespace tf_mm_tmpl {

__device__ __forceinline__ unsigned smem_u32(const void *p) {
  return (unsigned)__cvta_generic_to_shared(p);
}

// 16-byte asynchronous copy; with GUARD the source is read only when ok, else zeros land.
template <bool GUARD>
__device__ __forceinline__ void cp16(float *dst, const float *src, bool ok) {
  if (GUARD)
    asm volatile("cp.async.cg.shared.global [%0], [%1], 16, %2;\n" ::"r"(smem_u32(dst)), "l"(src),
                 "r"(ok ? 16 : 0)
                 : "memory");
  else
    asm volatile("cp.async.cg.shared.global [%0], [%1], 16;\n" ::"r"(smem_u32(dst)), "l"(src)
                 : "memory");
}

template <bool GUARD>
__device__ __forceinline__ void cp4(float *dst, const float *src, bool ok) {
  if (GUARD)
    asm volatile("cp.async.ca.shared.global [%0], [%1], 4, %2;\n" ::"r"(smem_u32(dst)), "l"(src),
                 "r"(ok ? 4 : 0)
                 : "memory");
  else
    asm volatile("cp.async.ca.shared.global [%0], [%1], 4;\n" ::"r"(smem_u32(dst)), "l"(src)
                 : "memory");
}

__device__ __forceinline__ void cp_commit() { asm volatile("cp.async.commit_group;\n" ::: "memory"); }

template <int N>
__device__ __forceinline__ void cp_wait() {
  asm volatile("cp.async.wait_group %0;\n" ::"n"(N) : "memory");
}

// Compile-time geometry of one configuration.
template <int BM_, int BN_, int BK_, int TM_, int TN_, int AK_, int VEC_, int WARP_, int KSLICE_>
struct Geo {
  // enum constants, not static members: NVRTC would emit every static member as a global.
  enum : int { BM = BM_, BN = BN_, BK = BK_, TM = TM_, TN = TN_, AK = AK_, VEC = VEC_ };
  enum : int { WARP = WARP_, KSLICE = KSLICE_ };
  // TC threads compute one slice of the block tile's K step; T = all threads (staging).
  enum : int { NTX = BN / TN, NTY = BM / TM, TC = NTX * NTY, T = TC * KSLICE, KS = BK / KSLICE };
  // A thread's register tile: row i is row0 + (AK ? (i/4)*RS4 + i%4 : i*RS) of the block tile,
  // column j is col0 + (j/4)*CS4 + j%4 (k-major A is read as 4 consecutive rows per quad,
  // row-major A one row per read, so consecutive lanes take consecutive rows).
  enum : int { LX = 8, LY = 4, WX = BN / (TN * LX) };        // warp tiles: lanes, warps along N
  enum : int { RS = WARP ? LY : NTY, RS4 = WARP ? 4 * LY : 4 * NTY, CS4 = WARP ? 4 * LX : 4 * NTX };
  enum : int { SA = AK ? BM + 4 : BK + 4 };                 // A row stride in shared memory
  enum : int { A_ELEMS = AK ? BK * SA : BM * SA, SB = BN, B_ELEMS = BK * BN };
  enum : int { STAGE = A_ELEMS + B_ELEMS };                 // floats per pipeline stage
  enum : int { AQ = BK / VEC, BQ = BN / VEC };              // chunks per row of the A / B tile
  enum : int { IA = BM * BK / VEC / T, IB = BK * BN / VEC / T };  // chunks per thread
};

// One K step's tiles in global memory: a = &A[m0][k0], b = &B[k0][n0], and what is left of
// the problem from that corner (rows of A, columns of B, depth).
struct Tile {
  const float *a, *b;
  int mrem, nrem, krem;
};

// ---- staging: which chunks (VEC floats of one row) of the A and B tiles thread tid moves.
// B, and A when row-major: chunk i lies at row r0 + i*R (R = threads / chunks per row),
// column c0; a warp's chunks of one row are contiguous, so every copy is coalesced and the
// float4 stores to shared memory are conflict-free.
// A when k-major (AK 1): a warp moves patches of WR rows x 32 bytes (WK chunks), one patch
// per chunk index i. Its transposed stores A[r][k] -> As[k][r] then land in 32 distinct banks
// (row stride BM+4 = 4 mod 32 banks: bank = 4k + r), where whole-row chunks would put 8
// lanes on each bank; every 32-byte sector it reads is still used whole.
// Destinations differ by compile-time offsets from the first chunk, sources by compile-time
// multiples of the run-time row stride.

template <class G>
struct Lanes {
  enum : int { RA = G::T / G::AQ, RB = G::T / G::BQ };        // row-major: rows between chunks
  enum : int { WK = 8 / G::VEC, WR = 32 / WK };                // k-major A: patch of a warp
  enum : int { NW = G::T / 32, PK = G::AQ / WK };              // warps; patches across the tile
  enum : int { WIDE = NW % PK == 0 };                          // a warp keeps one patch column
  int ra, kc, rb, nc;                                          // this thread's first chunks
  __device__ __forceinline__ explicit Lanes(int tid)
      : rb(tid / G::BQ), nc((tid % G::BQ) * G::VEC) {
    if (G::AK) {
      const int w = tid / 32, lane = tid % 32;
      ra = (WIDE ? w / PK : 0) * WR + lane / WK;
      kc = ((WIDE ? w % PK : w) * WK + lane % WK) * G::VEC;
    } else {
      ra = tid / G::AQ;
      kc = (tid % G::AQ) * G::VEC;
    }
  }
  // Offsets of A chunk i from the first: rows, and columns (floats). Compile-time after unrolling.
  __device__ __forceinline__ static constexpr int a_dr(int i) {
    return !G::AK ? i * RA : WIDE ? i * (NW / PK) * WR : (i / (PK / NW)) * WR;
  }
  __device__ __forceinline__ static constexpr int a_dc(int i) {
    return !G::AK || WIDE ? 0 : (i % (PK / NW)) * NW * WK * G::VEC;
  }
  // Source step from A chunk i to chunk i+1, for a pointer walked along the chunks.
  __device__ __forceinline__ static int a_step(int i, int K) {
    return (a_dr(i + 1) - a_dr(i)) * K + (a_dc(i + 1) - a_dc(i));
  }
  // Shared-memory offsets (floats) of chunk i.
  __device__ __forceinline__ int a_dst(int i) const {
    return G::AK ? (kc + a_dc(i)) * G::SA + ra + a_dr(i) : (ra + a_dr(i)) * G::SA + kc;
  }
  __device__ __forceinline__ int b_dst(int i) const { return (rb + i * RB) * G::SB + nc; }
  // Is A chunk i inside the matrix? (With VEC 4, K % 4 == 0: a quad is wholly in or out.)
  __device__ __forceinline__ bool a_in(int i, const Tile &t) const {
    return ra + a_dr(i) < t.mrem && kc + a_dc(i) < t.krem;
  }
};

template <class G>
__device__ __forceinline__ void store_a(float *as, int off, const float (&v)[G::VEC]) {
  if constexpr (G::AK) {
#pragma unroll
    for (int j = 0; j < G::VEC; ++j) as[off + j * G::SA] = v[j];
  } else if constexpr (G::VEC == 4) {
    *reinterpret_cast<float4 *>(as + off) = make_float4(v[0], v[1], v[2], v[3]);
  } else {
    as[off] = v[0];
  }
}

template <class G>
__device__ __forceinline__ void store_b(float *bs, int off, const float (&v)[G::VEC]) {
  if constexpr (G::VEC == 4)
    *reinterpret_cast<float4 *>(bs + off) = make_float4(v[0], v[1], v[2], v[3]);
  else
    bs[off] = v[0];
}

template <int VEC>
__device__ __forceinline__ void load(const float *p, bool ok, float (&v)[VEC]) {
  if constexpr (VEC == 4) {
    const float4 q = ok ? *reinterpret_cast<const float4 *>(p) : make_float4(0.f, 0.f, 0.f, 0.f);
    v[0] = q.x, v[1] = q.y, v[2] = q.z, v[3] = q.w;
  } else {
    v[0] = ok ? *p : 0.f;
  }
}

// One asynchronous chunk copy; a predicated-off copy names `zero`, a valid global address
// whose bytes are not read (src-size 0), instead of an out-of-range one.
template <int VEC, bool GUARD>
__device__ __forceinline__ void async_copy(float *dst, const float *src, bool ok, const float *zero) {
  if constexpr (VEC == 4)
    cp16<GUARD>(dst, GUARD && !ok ? zero : src, ok);
  else
    cp4<GUARD>(dst, GUARD && !ok ? zero : src, ok);
}

// Separate loops for A and B; GUARD predicates every chunk against the matrix edges
// (with VEC 4, K % 4 == 0 and N % 4 == 0, so a quad is wholly inside or outside).
template <class G, bool GUARD, bool ASYNC>
__device__ __forceinline__ void move_split(float *as, float *bs, const Tile &t, const float *zero,
                                           int N, int K, const Lanes<G> &l) {
  using L = Lanes<G>;
  const float *pa = t.a + l.ra * K + l.kc;
  const float *pb = t.b + l.rb * N + l.nc;
  const bool nb = l.nc < t.nrem;
  if constexpr (ASYNC) {
#pragma unroll
    for (int i = 0; i < G::IA; pa += L::a_step(i, K), ++i)
      async_copy<G::VEC, GUARD>(as + l.a_dst(i), pa, l.a_in(i, t), zero);
#pragma unroll
    for (int i = 0; i < G::IB; ++i, pb += L::RB * N)
      async_copy<G::VEC, GUARD>(bs + l.b_dst(i), pb, nb && l.rb + i * L::RB < t.krem, zero);
  } else {
    float va[G::IA][G::VEC], vb[G::IB][G::VEC];
#pragma unroll
    for (int i = 0; i < G::IA; pa += L::a_step(i, K), ++i)
      load<G::VEC>(pa, !GUARD || l.a_in(i, t), va[i]);
#pragma unroll
    for (int i = 0; i < G::IB; ++i, pb += L::RB * N)
      load<G::VEC>(pb, !GUARD || (nb && l.rb + i * L::RB < t.krem), vb[i]);
#pragma unroll
    for (int i = 0; i < G::IA; ++i) store_a<G>(as, l.a_dst(i), va[i]);
#pragma unroll
    for (int i = 0; i < G::IB; ++i) store_b<G>(bs, l.b_dst(i), vb[i]);
  }
}

// Form 0: one loop, iteration i moves A chunk i and B chunk i, both predicated (IA == IB).
template <class G, bool ASYNC>
__device__ __forceinline__ void move_joint(float *as, float *bs, const Tile &t, const float *zero,
                                           int N, int K, const Lanes<G> &l) {
  static_assert(G::IA == G::IB, "staging form 0 needs A and B tiles of one size (BM == BN)");
  using L = Lanes<G>;
  const float *pa = t.a + l.ra * K + l.kc;
  const float *pb = t.b + l.rb * N + l.nc;
  const bool nb = l.nc < t.nrem;
  if constexpr (ASYNC) {
#pragma unroll
    for (int i = 0; i < G::IA; pa += L::a_step(i, K), pb += L::RB * N, ++i) {
      async_copy<G::VEC, true>(as + l.a_dst(i), pa, l.a_in(i, t), zero);
      async_copy<G::VEC, true>(bs + l.b_dst(i), pb, nb && l.rb + i * L::RB < t.krem, zero);
    }
  } else {
    float va[G::IA][G::VEC], vb[G::IB][G::VEC];
#pragma unroll
    for (int i = 0; i < G::IA; pa += L::a_step(i, K), pb += L::RB * N, ++i) {
      load<G::VEC>(pa, l.a_in(i, t), va[i]);
      load<G::VEC>(pb, nb && l.rb + i * L::RB < t.krem, vb[i]);
    }
#pragma unroll
    for (int i = 0; i < G::IA; ++i) {
      store_a<G>(as, l.a_dst(i), va[i]);
      store_b<G>(bs, l.b_dst(i), vb[i]);
    }
  }
}

template <class G, int STAGING, bool ASYNC>
__device__ __forceinline__ void stage(float *as, float *bs, const Tile &t, const float *zero, int N,
                                      int K, const Lanes<G> &l) {
  if constexpr (STAGING == 0) {
    move_joint<G, ASYNC>(as, bs, t, zero, N, K, l);
  } else if constexpr (STAGING == 1) {
    move_split<G, false, ASYNC>(as, bs, t, zero, N, K, l);
  } else {
    if (t.mrem >= G::BM && t.nrem >= G::BN && t.krem >= G::BK)
      move_split<G, false, ASYNC>(as, bs, t, zero, N, K, l);
    else
      move_split<G, true, ASYNC>(as, bs, t, zero, N, K, l);
  }
}

// ---- arithmetic on one staged K step.

__device__ __forceinline__ float lane4(const float4 &q, int j) {
  return j == 0 ? q.x : j == 1 ? q.y : j == 2 ? q.z : q.w;
}

// k steps unrolled per loop iteration. On an H200 (1024^3 and 4096^3), unrolling a whole
// step of BK >= 32 runs 1.3-1.7x slower than 8 (and compiles ~4x slower: the audit compiles
// every configuration); 16 runs a median 2% faster than 8 over the 80 fastest configurations
// (range -12% .. +4%) but compiles ~1.7x slower.
#ifndef TF_MM_KSTEPS
#define TF_MM_KSTEPS 8
#endif

// One slice of a staged step: KS = BK/KSLICE k, from k0 = slice*KS.
template <class G>
__device__ __forceinline__ void multiply(const float *as, const float *bs, float (&acc)[G::TM][G::TN],
                                         int row0, int col0, int k0) {
  constexpr int KSTEPS = TF_MM_KSTEPS < G::KS ? TF_MM_KSTEPS : G::KS;
  const float *bt = bs + k0 * G::SB + col0;
  if constexpr (G::AK) {
    const float *at = as + k0 * G::SA + row0;
#pragma unroll KSTEPS
    for (int k = 0; k < G::KS; ++k) {
      float a[G::TM], b[G::TN];
#pragma unroll
      for (int g = 0; g < G::TM / 4; ++g) {
        const float4 q = *reinterpret_cast<const float4 *>(at + k * G::SA + g * G::RS4);
        a[4 * g] = q.x, a[4 * g + 1] = q.y, a[4 * g + 2] = q.z, a[4 * g + 3] = q.w;
      }
#pragma unroll
      for (int g = 0; g < G::TN / 4; ++g) {
        const float4 q = *reinterpret_cast<const float4 *>(bt + k * G::SB + g * G::CS4);
        b[4 * g] = q.x, b[4 * g + 1] = q.y, b[4 * g + 2] = q.z, b[4 * g + 3] = q.w;
      }
#pragma unroll
      for (int i = 0; i < G::TM; ++i)
#pragma unroll
        for (int j = 0; j < G::TN; ++j) acc[i][j] = fmaf(a[i], b[j], acc[i][j]);
    }
  } else {
    const float *at = as + row0 * G::SA + k0;
#pragma unroll KSTEPS / 4
    for (int k = 0; k < G::KS; k += 4) {
      float4 a4[G::TM];
#pragma unroll
      for (int i = 0; i < G::TM; ++i)
        a4[i] = *reinterpret_cast<const float4 *>(at + i * G::RS * G::SA + k);
#pragma unroll
      for (int kk = 0; kk < 4; ++kk) {
        float b[G::TN];
#pragma unroll
        for (int g = 0; g < G::TN / 4; ++g) {
          const float4 q = *reinterpret_cast<const float4 *>(bt + (k + kk) * G::SB + g * G::CS4);
          b[4 * g] = q.x, b[4 * g + 1] = q.y, b[4 * g + 2] = q.z, b[4 * g + 3] = q.w;
        }
#pragma unroll
        for (int i = 0; i < G::TM; ++i) {
          const float a = lane4(a4[i], kk);
#pragma unroll
          for (int j = 0; j < G::TN; ++j) acc[i][j] = fmaf(a, b[j], acc[i][j]);
        }
      }
    }
  }
}

// ---- FRAG 1: two register buffers of operand fragments. One fragment of B is one k's TN
// values; one of A is one k's TM values (k-major A) or 4 k of each of the TM rows (row-major
// A, read as one float4 per row). Buffer indices are compile-time after unrolling: the loop
// runs P k per iteration, P a multiple of both buffers' periods.
template <class G>
struct Frag {
  enum : int { NA = G::AK ? G::TM / 4 : G::TM, NB = G::TN / 4 };
  enum : int { P = G::AK ? 2 : 8 };  // k per unrolled iteration: A buffers alternate every 1 or 4 k
  float4 a[2][NA], b[2][NB];
};

// A fragment of k (row-major A: of the quad of k starting at k) into buffer buf.
template <class G>
__device__ __forceinline__ void frag_a(Frag<G> &f, int buf, const float *as, int row0, int k) {
#pragma unroll
  for (int g = 0; g < Frag<G>::NA; ++g)
    f.a[buf][g] = G::AK ? *reinterpret_cast<const float4 *>(as + k * G::SA + row0 + g * G::RS4)
                        : *reinterpret_cast<const float4 *>(as + (row0 + g * G::RS) * G::SA + k);
}

template <class G>
__device__ __forceinline__ void frag_b(Frag<G> &f, int buf, const float *bs, int col0, int k) {
#pragma unroll
  for (int g = 0; g < Frag<G>::NB; ++g)
    f.b[buf][g] = *reinterpret_cast<const float4 *>(bs + k * G::SB + col0 + g * G::CS4);
}

// The FMAs of one k: A from buffer ab (lane kk of each row's quad when row-major), B from bb.
template <class G>
__device__ __forceinline__ void frag_fma(float (&acc)[G::TM][G::TN], const Frag<G> &f, int ab, int kk,
                                         int bb) {
#pragma unroll
  for (int i = 0; i < G::TM; ++i) {
    const float a = G::AK ? lane4(f.a[ab][i / 4], i % 4) : lane4(f.a[ab][i], kk);
#pragma unroll
    for (int j = 0; j < G::TN; ++j) acc[i][j] = fmaf(a, lane4(f.b[bb][j / 4], j % 4), acc[i][j]);
  }
}

// k = kb + j of a step (j < P, so the buffers are compile-time): load what k+1 needs from
// (as, bs) at kn, then multiply k. With row-major A the next quad of A is loaded at the last
// k of a quad.
template <class G, int J>
__device__ __forceinline__ void frag_k(float (&acc)[G::TM][G::TN], Frag<G> &f, const float *as,
                                       const float *bs, int row0, int col0, int kn, bool load) {
  constexpr int bb = J & 1, ab = G::AK ? J & 1 : (J / 4) & 1, kk = J % 4;
  if (load) {
    frag_b<G>(f, bb ^ 1, bs, col0, kn);
    if (G::AK || kk == 3) frag_a<G>(f, ab ^ 1, as, row0, kn);
  }
  frag_fma<G>(acc, f, ab, kk, bb);
}

template <class G, int J>
__device__ __forceinline__ void frag_block(float (&acc)[G::TM][G::TN], Frag<G> &f, const float *as,
                                           const float *bs, int row0, int col0, int kb) {
  if constexpr (J < Frag<G>::P) {
    frag_k<G, J>(acc, f, as, bs, row0, col0, kb + J + 1, true);
    frag_block<G, J + 1>(acc, f, as, bs, row0, col0, kb);
  }
}

template <class G, int J, class Next>
__device__ __forceinline__ void frag_block_last(float (&acc)[G::TM][G::TN], Frag<G> &f, const float *as,
                                                const float *bs, int row0, int col0, int kb, int k0,
                                                Next next) {
  if constexpr (J < Frag<G>::P - 1) {
    frag_k<G, J>(acc, f, as, bs, row0, col0, kb + J + 1, true);
    frag_block_last<G, J + 1>(acc, f, as, bs, row0, col0, kb, k0, next);
  } else {
    // J = P-1 is odd and, row-major, the last k of the second quad: the step's last k is in
    // buffers 1 and the next step's first k goes to buffers 0, where the loop starts.
    static_assert(J % 2 == 1 && (G::AK || J % 8 == 7), "the last k ends both buffer cycles");
    if (const float *nx = next()) {
      frag_b<G>(f, 0, nx + G::A_ELEMS + k0 * G::SB, col0, 0);
      frag_a<G>(f, 0, G::AK ? nx + k0 * G::SA : nx + k0, row0, 0);
    }
    frag_fma<G>(acc, f, 1, J % 4, 1);
  }
}

// One slice of a staged step, k in [k0, k0 + KS), with the first fragments already in buffer
// 0. next() is called before the last k's FMAs, when every fragment of the step is in
// registers: it passes the step barrier and returns the next step's tiles (nullptr after the
// last step), whose first fragments are then loaded into buffer 0.
template <class G, class Next>
__device__ __forceinline__ void multiply_frag(const float *as, const float *bs, float (&acc)[G::TM][G::TN],
                                              Frag<G> &f, int row0, int col0, int k0, Next next) {
  constexpr int P = Frag<G>::P;
  constexpr int UNROLL = TF_MM_KSTEPS / P > 1 ? TF_MM_KSTEPS / P : 1;
  static_assert(G::KS % P == 0, "a slice is whole blocks of P k");
  const float *a = G::AK ? as + k0 * G::SA : as + k0, *b = bs + k0 * G::SB;
#pragma unroll UNROLL
  for (int kb = 0; kb < G::KS - P; kb += P) frag_block<G, 0>(acc, f, a, b, row0, col0, kb);
  // The last block: its first P-1 k as above, then the step's last k.
  frag_block_last<G, 0>(acc, f, a, b, row0, col0, G::KS - P, k0, next);
}

// Where compute thread tid (0 <= tid < TC) of a slice has its register tile (Geo: row0, col0).
template <class G>
__device__ __forceinline__ void place(int tid, int &row0, int &col0) {
  if constexpr (G::WARP) {
    const int w = tid / 32, lane = tid % 32, ly = lane / G::LX, lx = lane % G::LX;
    row0 = (w / G::WX) * G::TM * G::LY + (G::AK ? ly * 4 : ly);
    col0 = (w % G::WX) * G::TN * G::LX + lx * 4;
  } else {
    const int tx = tid % G::NTX, ty = tid / G::NTX;
    row0 = G::AK ? ty * 4 : ty;
    col0 = tx * 4;
  }
}

// The slices' partial tiles meet in shared memory `x` (at least (KSLICE-1)*BM*BN floats, the
// pipeline's buffers, free after the last step): slice s > 0 stores, slice 0 adds. Element e
// of thread c lies at e*TC + c, so a warp's stores and loads are consecutive words.
template <class G>
__device__ __forceinline__ void gather_slices(float *x, float (&acc)[G::TM][G::TN], int slice, int c) {
  __syncthreads();  // every slice is done reading the staged tiles
  if (slice > 0) {
#pragma unroll
    for (int i = 0; i < G::TM; ++i)
#pragma unroll
      for (int j = 0; j < G::TN; ++j)
        x[((slice - 1) * G::TM * G::TN + i * G::TN + j) * G::TC + c] = acc[i][j];
  }
  __syncthreads();
  if (slice == 0) {
#pragma unroll
    for (int s = 1; s < G::KSLICE; ++s)
#pragma unroll
      for (int i = 0; i < G::TM; ++i)
#pragma unroll
        for (int j = 0; j < G::TN; ++j)
          acc[i][j] += x[((s - 1) * G::TM * G::TN + i * G::TN + j) * G::TC + c];
  }
}

// Row of the block tile that register row i holds (matches multiply's reads).
template <class G>
__device__ __forceinline__ int tile_row(int i, int row0) {
  return row0 + (G::AK ? (i / 4) * G::RS4 + i % 4 : i * G::RS);
}

}  // namespace tf_mm_tmpl

// __launch_bounds__(threads, 1): without the explicit 1, ptxas sometimes squeezes a
// configuration to 80 registers for a third resident block and spills to local memory;
// with it no accepted configuration spills (checked at 1024^3 with -Xptxas -v).
template <int BM, int BN, int BK, int TM, int TN, int AK, int VEC, int STAGING, int PIPE, int SPLITK,
          int WARP, int KSLICE, int FRAG>
__global__ void __launch_bounds__((BM / TM) * (BN / TN) * KSLICE, 1)
    tf_matmul(const float *__restrict__ A, const float *__restrict__ B, float *__restrict__ C, int M,
              int N, int K) {
  using G = tf_mm_tmpl::Geo<BM, BN, BK, TM, TN, AK, VEC, WARP, KSLICE>;
  static_assert(BM % TM == 0 && BN % TN == 0 && TM % 4 == 0 && TN % 4 == 0, "register tile");
  static_assert(G::T % 32 == 0 && G::T <= 1024, "whole warps");
  static_assert((BM * BK) % (G::T * VEC) == 0 && (BK * BN) % (G::T * VEC) == 0, "load loops");
  static_assert(G::T % G::BQ == 0 && (AK || G::T % G::AQ == 0), "a thread's chunks share one column");
  static_assert(!AK || (G::AQ % (8 / VEC) == 0 && BM % (32 * VEC / 8) == 0 &&
                        ((G::T / 32) % (G::AQ * VEC / 8) == 0 || (G::AQ * VEC / 8) % (G::T / 32) == 0)),
                "k-major staging patches of 32 bytes x 32/(8/VEC) rows must tile the A tile");
  static_assert(BK % 4 == 0 && (VEC == 1 || VEC == 4), "vector width");
  static_assert(PIPE == 0 || (PIPE >= 2 && PIPE <= 4), "pipeline depth");
  static_assert(!WARP || (BM % (4 * TM) == 0 && BN % (8 * TN) == 0), "warp tiles of 4x8 lanes");
  static_assert((KSLICE == 1 || KSLICE == 2) && G::KS % 4 == 0, "K slices of whole quads of k");
  static_assert(KSLICE == 1 || BM * BN <= (PIPE ? PIPE : 1) * G::STAGE, "slice exchange fits");
  static_assert(!(PIPE && AK && VEC == 4), "cp.async cannot transpose a 16-byte chunk");
  static_assert(!FRAG || (PIPE && G::KS % tf_mm_tmpl::Frag<G>::P == 0), "fragment pipeline");
  static_assert(STAGING >= 0 && STAGING <= 2 && SPLITK >= 0 && (FRAG == 0 || FRAG == 1), "knobs");
  constexpr bool STREAM = SPLITK == 0;  // stream-K
  static_assert(!STREAM || KSLICE == 1, "stream-K alone");

  const int tid = threadIdx.x, slice = tid / G::TC, k0 = slice * G::KS;
  int row0, col0;
  tf_mm_tmpl::place<G>(tid % G::TC, row0, col0);
  const tf_mm_tmpl::Lanes<G> lanes(tid);
  const int ks = (K + BK - 1) / BK, tn = (N + BN - 1) / BN;
  // Stream-K: the grid's blocks share the (tile, K step) pairs, tile after tile, in equal
  // contiguous runs [it, end); a block works through the pieces of tiles its run covers.
  long long it = 0, end = 0;
  if constexpr (STREAM) {
    const long long total = (long long)ks * tn * ((M + BM - 1) / BM);
    it = total * blockIdx.x / gridDim.x;
    end = total * (blockIdx.x + 1) / gridDim.x;
  }
  for (;;) {
    int m0, n0, t0, t1;  // this piece: the tile at (m0, n0), its K steps [t0, t1)
    bool add;            // adds into the zeroed C: other blocks hold the rest of its K steps
    if constexpr (STREAM) {
      if (it >= end) return;  // the whole block: no barrier is skipped by part of it
      const long long tl = it / ks;
      t0 = (int)(it - tl * ks);
      t1 = (int)min((long long)ks, t0 + (end - it));
      m0 = (int)(tl / tn) * BM;
      n0 = (int)(tl % tn) * BN;
      add = t0 > 0 || t1 < ks;
      it += t1 - t0;
    } else {
      // This block's K steps: all of them, or its split-K share.
      m0 = blockIdx.y * BM, n0 = blockIdx.x * BN, t0 = 0, t1 = ks, add = SPLITK > 1;
      if (SPLITK > 1) {
        const int per = (t1 + SPLITK - 1) / SPLITK;
        t0 = blockIdx.z * per;
        t1 = min(t1, t0 + per);
        if (t0 >= t1) return;  // the whole block: no barrier is skipped by part of it
      }
    }

    float acc[TM][TN];
#pragma unroll
    for (int i = 0; i < TM; ++i)
#pragma unroll
      for (int j = 0; j < TN; ++j) acc[i][j] = 0.f;

    const float *a0 = A + (long long)m0 * K;
    const float *b0 = B + n0;
    auto tile = [&](int t) {
      tf_mm_tmpl::Tile s;
      s.a = a0 + t * BK;
      s.b = b0 + (long long)t * BK * N;
      s.mrem = M - m0;
      s.nrem = N - n0;
      s.krem = K - t * BK;
      return s;
    };

    float *sm;  // the staged tiles; after the last step, the slices' exchange
    if constexpr (PIPE == 0) {
      __shared__ __align__(16) float tf_mm_tmpl_static[G::STAGE];
      sm = tf_mm_tmpl_static;
      float *const as = sm, *const bs = sm + G::A_ELEMS;
      for (int t = t0; t < t1; ++t) {
        tf_mm_tmpl::stage<G, STAGING, false>(as, bs, tile(t), A, N, K, lanes);
        __syncthreads();
        tf_mm_tmpl::multiply<G>(as, bs, acc, row0, col0, k0);
        __syncthreads();
      }
    } else if constexpr (FRAG) {
      extern __shared__ __align__(16) float tf_mm_tmpl_dyn[];
      sm = tf_mm_tmpl_dyn;
      const int nt = t1 - t0;
      // Prologue: every stage of the ring in flight, one commit group per step (empty past nt).
#pragma unroll
      for (int s = 0; s < PIPE; ++s) {
        if (s < nt)
          tf_mm_tmpl::stage<G, STAGING, true>(sm + s * G::STAGE, sm + s * G::STAGE + G::A_ELEMS,
                                              tile(t0 + s), A, N, K, lanes);
        tf_mm_tmpl::cp_commit();
      }
      tf_mm_tmpl::cp_wait<PIPE - 1>();
      __syncthreads();
      tf_mm_tmpl::Frag<G> f;
      tf_mm_tmpl::frag_b<G>(f, 0, sm + G::A_ELEMS + k0 * G::SB, col0, 0);
      tf_mm_tmpl::frag_a<G>(f, 0, AK ? sm + k0 * G::SA : sm + k0, row0, 0);
      int rd = 0;
      for (int t = 0; t < nt; ++t) {
        float *const cur = sm + rd * G::STAGE;
        // Called when step t is wholly in registers. Groups committed: PIPE+t (steps up to
        // t+PIPE-1); leaving PIPE-2 pending completes step t+1. After the barrier no thread
        // reads buffer rd again, so step t+PIPE's copies refill it.
        auto next = [&]() -> const float * {
          if (t + 1 == nt) return nullptr;
          tf_mm_tmpl::cp_wait<PIPE - 2>();
          __syncthreads();
          if (t + PIPE < nt)
            tf_mm_tmpl::stage<G, STAGING, true>(cur, cur + G::A_ELEMS, tile(t0 + t + PIPE), A, N, K,
                                                lanes);
          tf_mm_tmpl::cp_commit();
          rd = rd + 1 == PIPE ? 0 : rd + 1;
          return sm + rd * G::STAGE;
        };
        tf_mm_tmpl::multiply_frag<G>(cur, cur + G::A_ELEMS, acc, f, row0, col0, k0, next);
      }
      tf_mm_tmpl::cp_wait<0>();
    } else {
      extern __shared__ __align__(16) float tf_mm_tmpl_dyn[];
      sm = tf_mm_tmpl_dyn;
      const int nt = t1 - t0;
      // Prologue: the first PIPE-1 steps in flight, one commit group per step (empty past nt).
#pragma unroll
      for (int s = 0; s < PIPE - 1; ++s) {
        if (s < nt)
          tf_mm_tmpl::stage<G, STAGING, true>(sm + s * G::STAGE, sm + s * G::STAGE + G::A_ELEMS,
                                              tile(t0 + s), A, N, K, lanes);
        tf_mm_tmpl::cp_commit();
      }
      int rd = 0, wr = PIPE - 1;
      for (int t = 0; t < nt; ++t) {
        // Groups committed so far: PIPE-1+t; leaving PIPE-2 pending completes step t's group.
        tf_mm_tmpl::cp_wait<PIPE - 2>();
        // Every thread's copies of step t are visible, and every thread is done with the
        // buffer multiplied in step t-1, which the copies issued next overwrite.
        __syncthreads();
        if (t + PIPE - 1 < nt)
          tf_mm_tmpl::stage<G, STAGING, true>(sm + wr * G::STAGE, sm + wr * G::STAGE + G::A_ELEMS,
                                              tile(t0 + t + PIPE - 1), A, N, K, lanes);
        tf_mm_tmpl::cp_commit();
        tf_mm_tmpl::multiply<G>(sm + rd * G::STAGE, sm + rd * G::STAGE + G::A_ELEMS, acc, row0,
                                col0, k0);
        rd = rd + 1 == PIPE ? 0 : rd + 1;
        wr = wr + 1 == PIPE ? 0 : wr + 1;
      }
      tf_mm_tmpl::cp_wait<0>();
    }
    if constexpr (KSLICE > 1) {
      tf_mm_tmpl::gather_slices<G>(sm, acc, slice, tid % G::TC);
      if (slice > 0) return;  // after the exchange's last barrier
    }

    // Epilogue: 128-bit stores where the row allows them, scalars at the right edge;
    // split-K and stream-K's shared tiles add their partial sums into the zeroed C.
#pragma unroll
    for (int i = 0; i < TM; ++i) {
      const int row = m0 + tf_mm_tmpl::tile_row<G>(i, row0);
      if (row >= M) continue;
      float *crow = C + (long long)row * N;
#pragma unroll
      for (int g = 0; g < TN / 4; ++g) {
        const int col = n0 + col0 + g * G::CS4;
        const float *v = &acc[i][4 * g];
        if (add) {
#pragma unroll
          for (int j = 0; j < 4; ++j)
            if (col + j < N) atomicAdd(crow + col + j, v[j]);
        } else if ((N & 3) == 0 && col + 3 < N) {
          *reinterpret_cast<float4 *>(crow + col) = make_float4(v[0], v[1], v[2], v[3]);
        } else {
#pragma unroll
          for (int j = 0; j < 4; ++j)
            if (col + j < N) crow[col + j] = v[j];
        }
      }
    }
    if constexpr (!STREAM) return;
    __syncthreads();  // the next piece's copies overwrite the stages this one read
  }
}
