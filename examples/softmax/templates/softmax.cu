// Row softmax in FP32 over the R rows of x[R][D]: y = exp(x - max) / sum(exp(x - max)) and
// lse = max + log(sum), the row's log-sum-exp. BLOCK threads own a row (blockDim.x), ROWS rows
// share a block (blockDim.y); thread t of a row takes chunks t, t+BLOCK, ... of VEC floats.
// HOLD 0 makes three passes over the row in memory (max, sum, write); HOLD h > 0 loads each
// thread's chunks once into h registers of VEC floats (the row must fit: D/VEC <= BLOCK*h) and
// keeps exp(x - max) there for the write, so x is read from memory once. Each reduction is
// warp shuffles and, with more than one warp per row, one exchange through shared memory.
// LOAD 1 reads x with the streaming hint (ld.global.cs, evict first): x is read once. Rows
// past R take part in the barriers and touch no memory.

template <int BLOCK, bool MAX>
__device__ float tf_row_reduce(float v, float (*sh)[32]) {
  for (int o = 16; o > 0; o >>= 1) {
    float w = __shfl_xor_sync(0xffffffffu, v, o);
    v = MAX ? fmaxf(v, w) : v + w;
  }
  if (BLOCK == 32) return v;
  const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
  __syncthreads(); // the previous reduction's readers are done with sh
  if (lane == 0) sh[threadIdx.y][warp] = v;
  __syncthreads();
  const float none = MAX ? -__int_as_float(0x7f800000) : 0.0f;
  v = lane < BLOCK / 32 ? sh[threadIdx.y][lane] : none;
  for (int o = 16; o > 0; o >>= 1) {
    float w = __shfl_xor_sync(0xffffffffu, v, o);
    v = MAX ? fmaxf(v, w) : v + w;
  }
  return v;
}

template <int VEC> struct tf_vec;
template <> struct tf_vec<1> { typedef float t; };
template <> struct tf_vec<2> { typedef float2 t; };
template <> struct tf_vec<4> { typedef float4 t; };

template <int LOAD, class V> __device__ __forceinline__ V tf_load(const V *p) {
  if (LOAD) return __ldcs(p);
  return *p;
}

template <int VEC>
__device__ void tf_unpack(const typename tf_vec<VEC>::t &c, float *f) {
  const float *p = reinterpret_cast<const float *>(&c);
  for (int i = 0; i < VEC; i++) f[i] = p[i];
}

// One pass from registers: chunk threadIdx.x + i*BLOCK of the row is v[i].
template <int BLOCK, int VEC, int ROWS, int HOLD, int LOAD>
__device__ void tf_softmax_held(const typename tf_vec<VEC>::t *xr, typename tf_vec<VEC>::t *yr,
                                float *lse, int row, bool live, int chunks, float (*sh)[32]) {
  typename tf_vec<VEC>::t v[HOLD > 0 ? HOLD : 1];
  float m = -__int_as_float(0x7f800000);
#pragma unroll
  for (int h = 0; h < HOLD; h++) {
    const int c = threadIdx.x + h * BLOCK;
    if (live && c < chunks) {
      v[h] = tf_load<LOAD>(xr + c);
      float *p = reinterpret_cast<float *>(&v[h]);
      for (int i = 0; i < VEC; i++) m = fmaxf(m, p[i]);
    }
  }
  m = tf_row_reduce<BLOCK, true>(m, sh);
  float s = 0.0f;
#pragma unroll
  for (int h = 0; h < HOLD; h++)
    if (live && threadIdx.x + h * BLOCK < chunks) {
      float *p = reinterpret_cast<float *>(&v[h]);
      for (int i = 0; i < VEC; i++) s += (p[i] = expf(p[i] - m));
    }
  s = tf_row_reduce<BLOCK, false>(s, sh);
  const float inv = 1.0f / s;
#pragma unroll
  for (int h = 0; h < HOLD; h++) {
    const int c = threadIdx.x + h * BLOCK;
    if (live && c < chunks) {
      float *p = reinterpret_cast<float *>(&v[h]);
      for (int i = 0; i < VEC; i++) p[i] *= inv;
      yr[c] = v[h];
    }
  }
  if (live && threadIdx.x == 0) lse[row] = m + logf(s);
}

// Three passes over the row in memory.
template <int BLOCK, int VEC, int ROWS, int LOAD>
__device__ void tf_softmax_passes(const typename tf_vec<VEC>::t *xr,
                                  typename tf_vec<VEC>::t *yr, float *lse, int row, bool live,
                                  int chunks, float (*sh)[32]) {
  typedef typename tf_vec<VEC>::t V;
  float m = -__int_as_float(0x7f800000);
  for (int c = threadIdx.x; live && c < chunks; c += BLOCK) {
    float f[VEC];
    tf_unpack<VEC>(tf_load<LOAD>(xr + c), f);
    for (int i = 0; i < VEC; i++) m = fmaxf(m, f[i]);
  }
  m = tf_row_reduce<BLOCK, true>(m, sh);

  float s = 0.0f;
  for (int c = threadIdx.x; live && c < chunks; c += BLOCK) {
    float f[VEC];
    tf_unpack<VEC>(tf_load<LOAD>(xr + c), f);
    for (int i = 0; i < VEC; i++) s += expf(f[i] - m);
  }
  s = tf_row_reduce<BLOCK, false>(s, sh);

  const float inv = 1.0f / s;
  for (int c = threadIdx.x; live && c < chunks; c += BLOCK) {
    V v = tf_load<LOAD>(xr + c);
    float *p = reinterpret_cast<float *>(&v);
    for (int i = 0; i < VEC; i++) p[i] = expf(p[i] - m) * inv;
    yr[c] = v;
  }
  if (live && threadIdx.x == 0) lse[row] = m + logf(s);
}

template <int BLOCK, int VEC, int ROWS, int HOLD, int LOAD>
__global__ void __launch_bounds__(BLOCK * ROWS)
tf_softmax(const float *__restrict__ x, float *__restrict__ y, float *__restrict__ lse, int R,
           int D) {
  typedef typename tf_vec<VEC>::t V;
  __shared__ float sh[ROWS][32];
  const int row = blockIdx.x * ROWS + threadIdx.y;
  const bool live = row < R;
  const V *xr = reinterpret_cast<const V *>(x + (size_t)(live ? row : 0) * D);
  V *yr = reinterpret_cast<V *>(y + (size_t)(live ? row : 0) * D);
  if (HOLD > 0)
    tf_softmax_held<BLOCK, VEC, ROWS, HOLD, LOAD>(xr, yr, lse, row, live, D / VEC, sh);
  else
    tf_softmax_passes<BLOCK, VEC, ROWS, LOAD>(xr, yr, lse, row, live, D / VEC, sh);
}
