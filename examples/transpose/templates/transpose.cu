// Transpose in FP32: out[C][R] = in[R][C]^T. A block of TILE x (TILE/ROWS) threads moves one
// TILE x TILE tile through shared memory, each thread ROWS rows of it, TILE/ROWS apart: a warp
// reads a row of the tile from global memory and writes a row of the transposed tile, both
// coalesced. Read back by columns, a tile of TILE floats a row puts a column's elements in one
// shared-memory bank where TILE is a multiple of 32; PAD 1 widens each row by one float, so
// that they fall in distinct banks. Elements outside the matrix are neither read nor written.
template <int TILE, int ROWS, int PAD>
__global__ void __launch_bounds__(TILE * TILE / ROWS)
tf_transpose(const float *__restrict__ in, float *__restrict__ out, int R, int C) {
  __shared__ float tile[TILE][TILE + PAD];
  const int c0 = blockIdx.x * TILE, r0 = blockIdx.y * TILE;
  const int tx = threadIdx.x, ty = threadIdx.y;
#pragma unroll
  for (int i = 0; i < ROWS; i++) {
    const int r = r0 + ty + i * (TILE / ROWS), c = c0 + tx;
    if (r < R && c < C) tile[ty + i * (TILE / ROWS)][tx] = in[(size_t)r * C + c];
  }
  __syncthreads();
#pragma unroll
  for (int i = 0; i < ROWS; i++) {
    const int c = c0 + ty + i * (TILE / ROWS), r = r0 + tx; // out's row c, column r
    if (c < C && r < R) out[(size_t)c * R + r] = tile[tx][ty + i * (TILE / ROWS)];
  }
}
