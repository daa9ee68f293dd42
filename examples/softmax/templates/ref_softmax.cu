// The reference of softmax.cu: one thread per row, in double, written as float. It takes the
// template's arguments (x, y, lse, R, D) and runs once per input set, so its speed does not
// matter.
__global__ void ref_softmax(const float *x, float *y, float *lse, int R, int D) {
  const int row = blockIdx.x * blockDim.x + threadIdx.x;
  if (row >= R) return;
  const float *xr = x + (size_t)row * D;
  double m = xr[0];
  for (int i = 1; i < D; i++) m = xr[i] > m ? xr[i] : m;
  double s = 0.0;
  for (int i = 0; i < D; i++) s += exp((double)xr[i] - m);
  for (int i = 0; i < D; i++) y[(size_t)row * D + i] = (float)(exp((double)xr[i] - m) / s);
  lse[row] = (float)(m + log(s));
}
