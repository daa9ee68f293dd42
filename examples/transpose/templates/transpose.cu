// Transpose in FP32: out[C][R] = in[R][C]^T. A block of (TILE/VEC) x (TILE/ROWS) threads moves
// one TILE x TILE tile through shared memory, each thread ROWS rows of it, TILE/ROWS apart: a
// warp reads a row of the tile from global memory and writes a row of the transposed tile, both
// coalesced, VEC consecutive floats a thread as one vector access (fewer instructions and more
// bytes in flight a thread; the template asks that VEC divide R and C, so every vector is
// aligned and lies wholly inside or outside the matrix). Read back by columns, a tile of TILE
// floats a row puts a column's elements in one shared-memory bank where TILE is a multiple of
// 32; PAD 1 widens each row by one float, so that they fall in distinct banks. Elements
// outside the matrix are neither read nor written.
template <int VEC> struct vec_of;
template <> struct vec_of<1> { typedef float t; };
template <> struct vec_of<2> { typedef float2 t; };
template <> struct vec_of<4> { typedef float4 t; };

template <int TILE, int ROWS, int PAD, int VEC>
__global__ void __launch_bounds__(TILE * TILE / ROWS / VEC)
tf_transpose(const float *__restrict__ in, float *__restrict__ out, int R, int C) {
  typedef typename vec_of<VEC>::t vec;
  __shared__ float tile[TILE][TILE + PAD];
  const int c0 = blockIdx.x * TILE, r0 = blockIdx.y * TILE;
  const int tx = threadIdx.x, ty = threadIdx.y;
#pragma unroll
  for (int i = 0; i < ROWS; i++) {
    const int y = ty + i * (TILE / ROWS), r = r0 + y, c = c0 + tx * VEC;
    if (r < R && c < C) {
      const vec v = *reinterpret_cast<const vec *>(in + (size_t)r * C + c);
      const float *f = reinterpret_cast<const float *>(&v);
#pragma unroll
      for (int k = 0; k < VEC; k++) tile[y][tx * VEC + k] = f[k];
    }
  }
  __syncthreads();
#pragma unroll
  for (int i = 0; i < ROWS; i++) {
    const int x = ty + i * (TILE / ROWS), c = c0 + x, r = r0 + tx * VEC; // out's row c, column r
    if (c < C && r < R) {
      vec v;
      float *f = reinterpret_cast<float *>(&v);
#pragma unroll
      for (int k = 0; k < VEC; k++) f[k] = tile[tx * VEC + k][x];
      *reinterpret_cast<vec *>(out + (size_t)c * R + r) = v;
    }
  }
}
