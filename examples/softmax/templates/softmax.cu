// Row softmax in FP32 over the R rows of x[R][D]: y = exp(x - max) / sum(exp(x - max)) and
// lse = max + log(sum), the row's log-sum-exp. BLOCK threads own a row (blockDim.x), ROWS rows
// share a block (blockDim.y); thread t of a row takes chunks t, t+BLOCK, ... of VEC floats.
// Three passes over the row (max, sum, write), each reduced by warp shuffles and, with more
// than one warp per row, one exchange through shared memory. Rows past R take part in the
// barriers and touch no memory.

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

template <int VEC>
__device__ void tf_unpack(const typename tf_vec<VEC>::t &c, float *f) {
  const float *p = reinterpret_cast<const float *>(&c);
  for (int i = 0; i < VEC; i++) f[i] = p[i];
}

template <int BLOCK, int VEC, int ROWS>
__global__ void __launch_bounds__(BLOCK * ROWS)
tf_softmax(const float *__restrict__ x, float *__restrict__ y, float *__restrict__ lse, int R,
           int D) {
  typedef typename tf_vec<VEC>::t V;
  __shared__ float sh[ROWS][32];
  const int row = blockIdx.x * ROWS + threadIdx.y;
  const bool live = row < R;
  const int chunks = D / VEC;
  const V *xr = reinterpret_cast<const V *>(x + (size_t)(live ? row : 0) * D);
  V *yr = reinterpret_cast<V *>(y + (size_t)(live ? row : 0) * D);

  float m = -__int_as_float(0x7f800000);
  for (int c = threadIdx.x; live && c < chunks; c += BLOCK) {
    float f[VEC];
    tf_unpack<VEC>(xr[c], f);
    for (int i = 0; i < VEC; i++) m = fmaxf(m, f[i]);
  }
  m = tf_row_reduce<BLOCK, true>(m, sh);

  float s = 0.0f;
  for (int c = threadIdx.x; live && c < chunks; c += BLOCK) {
    float f[VEC];
    tf_unpack<VEC>(xr[c], f);
    for (int i = 0; i < VEC; i++) s += expf(f[i] - m);
  }
  s = tf_row_reduce<BLOCK, false>(s, sh);

  const float inv = 1.0f / s;
  for (int c = threadIdx.x; live && c < chunks; c += BLOCK) {
    V v = xr[c];
    float *p = reinterpret_cast<float *>(&v);
    for (int i = 0; i < VEC; i++) p[i] = expf(p[i] - m) * inv;
    yr[c] = v;
  }
  if (live && threadIdx.x == 0) lse[row] = m + logf(s);
}
