// The reference of layernorm.cu (and of the committed layernorm kernels): per row of x,
// y = (x - mean) / sqrt(var + eps) * gamma + beta with the biased variance, in double, two
// passes over the row, rounded to float once. One thread per row; it takes the template's
// arguments (x, gamma, beta, y, R, D, eps).
__global__ void ref_layernorm(const float *x, const float *gamma, const float *beta, float *y,
                              int R, int D, float eps) {
  const long long r = (long long)blockIdx.x * blockDim.x + threadIdx.x;
  if (r >= R) return;
  const float *row = x + r * D;
  double sum = 0.0;
  for (int i = 0; i < D; i++) sum += row[i];
  const double mean = sum / D;
  double sq = 0.0;
  for (int i = 0; i < D; i++) sq += (row[i] - mean) * (row[i] - mean);
  const double rstd = 1.0 / sqrt(sq / D + (double)eps);
  for (int i = 0; i < D; i++) y[r * D + i] = (float)((row[i] - mean) * rstd * gamma[i] + beta[i]);
}
