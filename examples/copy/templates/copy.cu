// FP32 copy out = in of n floats: the floor of a kernel that reads and writes its bytes once.
template <int VEC> struct vec_of;
template <> struct vec_of<1> { typedef float t; };
template <> struct vec_of<2> { typedef float2 t; };
template <> struct vec_of<4> { typedef float4 t; };

template <int LOAD, typename V> __device__ __forceinline__ V load(const V *p) {
  return LOAD == 1 ? __ldg(p) : LOAD == 2 ? __ldcs(p) : *p;
}
template <int STORE, typename V> __device__ __forceinline__ void store(V *p, V v) {
  if (STORE == 1) __stcs(p, v);
  else if (STORE == 2) __stcg(p, v);
  else *p = v;
}

// A thread loads ITEMS vectors BLOCK apart (a warp's accesses contiguous), then stores them.
template <int BLOCK, int VEC, int ITEMS, int LOAD, int STORE>
__device__ void copy_lsu(const float *in, float *out, long long n) {
  typedef typename vec_of<VEC>::t vec;
  const vec *src = reinterpret_cast<const vec *>(in);
  vec *dst = reinterpret_cast<vec *>(out);
  const long long nv = n / VEC, tile = (long long)BLOCK * ITEMS;
  for (long long base = blockIdx.x * tile; base < nv; base += (long long)gridDim.x * tile) {
    vec v[ITEMS];
#pragma unroll
    for (int i = 0; i < ITEMS; i++)
      if (base + i * BLOCK + threadIdx.x < nv)
        v[i] = load<LOAD>(src + base + i * BLOCK + threadIdx.x);
#pragma unroll
    for (int i = 0; i < ITEMS; i++)
      if (base + i * BLOCK + threadIdx.x < nv)
        store<STORE>(dst + base + i * BLOCK + threadIdx.x, v[i]);
  }
}

// One thread moves tiles of TILE bytes (a multiple of 16, as bulk copies ask; n % 4 == 0 by the
// template's constraint) through shared memory: a bulk copy in, awaited on an mbarrier, and out.
template <int TILE> __device__ void copy_bulk(const float *in, float *out, long long n) {
  extern __shared__ __align__(128) unsigned char buf[];
  __shared__ __align__(8) unsigned long long bar;
  if (threadIdx.x != 0) return;
  const unsigned b = (unsigned)__cvta_generic_to_shared(&bar);
  const unsigned s = (unsigned)__cvta_generic_to_shared(buf);
  asm volatile("mbarrier.init.shared::cta.b64 [%0], 1;" ::"r"(b));
  asm volatile("fence.proxy.async.shared::cta;" ::: "memory");
  unsigned phase = 0;
  const long long total = 4 * n, step = (long long)gridDim.x * TILE;
  for (long long off = (long long)blockIdx.x * TILE; off < total; off += step) {
    const unsigned bytes = (unsigned)(total - off < TILE ? total - off : TILE);
    asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;" ::"r"(b), "r"(bytes)
                 : "memory");
    asm volatile("cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes"
                 " [%0], [%1], %2, [%3];" ::"r"(s), "l"((const char *)in + off), "r"(bytes), "r"(b)
                 : "memory");
    for (unsigned done = 0; !done;)
      asm volatile("{ .reg .pred p; mbarrier.try_wait.parity.shared::cta.b64 p, [%1], %2;"
                   " selp.u32 %0, 1, 0, p; }" : "=r"(done) : "r"(b), "r"(phase) : "memory");
    phase ^= 1;
    asm volatile("cp.async.bulk.global.shared::cta.bulk_group [%0], [%1], %2;"
                 ::"l"((char *)out + off), "r"(s), "r"(bytes) : "memory");
    asm volatile("cp.async.bulk.commit_group;" ::: "memory");
    asm volatile("cp.async.bulk.wait_group.read 0;" ::: "memory"); // the buffer is free again
  }
  asm volatile("cp.async.bulk.wait_group 0;" ::: "memory");
}

template <int BLOCK, int VEC, int ITEMS, int GRID, int LOAD, int STORE, int BULK>
__global__ void __launch_bounds__(BLOCK)
tf_copy(const float *__restrict__ in, float *__restrict__ out, long long n) {
  if (BULK) copy_bulk<4 * VEC * BLOCK * ITEMS>(in, out, n);
  else copy_lsu<BLOCK, VEC, ITEMS, LOAD, STORE>(in, out, n);
}
