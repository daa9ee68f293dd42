// bench/launch_gaps.cu: does matmul_regtile's time at 3072x2048x1536 depend on how long the
// host left the GPU idle before a round? Not part of tunefarm: the diagnostic behind "An
// Control drift" in docs/design.md, where the farm's (NVRTC) build of this control
// measured 40 or 80 us slower in 14% of its rounds while best and new did not move.
//
//   nvcc -O2 -arch=sm_90 -std=c++17 -o launch_gaps bench/launch_gaps.cu && ./launch_gaps [ROUNDS]
//
// Rounds of 10 launches, each after an L2 flush (a memset of twice the L2) and between two CUDA
// events, as the measure child times them; before each round the host sleeps 0 to 20 ms (or a
// 2-ms spin kernel runs). Per gap: the fastest launch, the median and the largest of the round
// medians, how many round medians were 25 us above the fastest launch, and how many launches
// at each index of a round were. The output is checked first: C poisoned with NaN, one launch,
// 512 random entries against a double-precision dot product (relative error at most 1e-5).
#include <cstdio>
#include <cstdlib>
#include <vector>
#include <algorithm>
#include <unistd.h>
#include <cmath>
#include "../kernels/matmul_regtile.cu"
#define CK(x) do { cudaError_t e_ = (x); if (e_ != cudaSuccess) { printf("%s: %s\n", #x, cudaGetErrorString(e_)); exit(1);} } while (0)
__global__ void spin(long long cycles) { long long t0 = clock64(); while (clock64() - t0 < cycles) {} }
int main(int argc, char **argv) {
  int M = 3072, N = 2048, K = 1536, S = 10, R = argc > 1 ? atoi(argv[1]) : 40;
  if (R < 3) R = 3; /* three rounds are printed */
  std::vector<float> h((size_t)M * K > (size_t)K * N ? (size_t)M * K : (size_t)K * N);
  unsigned x = 1; for (auto &v : h) { x = x * 1664525u + 1013904223u; v = (x >> 8) / 16777216.0f - 0.5f; }
  float *A, *B, *C; char *fl;
  CK(cudaMalloc(&A, 4ull * M * K)); CK(cudaMalloc(&B, 4ull * K * N)); CK(cudaMalloc(&C, 4ull * M * N));
  CK(cudaMemcpy(A, h.data(), 4ull * M * K, cudaMemcpyHostToDevice));
  for (auto &v : h) { x = x * 1664525u + 1013904223u; v = (x >> 8) / 16777216.0f - 0.5f; } /* B's own */
  CK(cudaMemcpy(B, h.data(), 4ull * K * N, cudaMemcpyHostToDevice));
  cudaDeviceProp p; CK(cudaGetDeviceProperties(&p, 0));
  int clock_khz = 0; CK(cudaDeviceGetAttribute(&clock_khz, cudaDevAttrClockRate, 0)); size_t fb = 2ull * p.l2CacheSize; CK(cudaMalloc(&fl, fb));
  cudaStream_t st; CK(cudaStreamCreate(&st));
  std::vector<cudaEvent_t> ev(2 * S); for (auto &e : ev) CK(cudaEventCreate(&e));
  dim3 grid((N + 127) / 128, (M + 127) / 128), block(256);
  // modes: gap in microseconds before each round; pre: 1 = a 2 ms spin kernel right before the round
  struct Mode { int gap_us; int pre; const char *name; } modes[] = {
    {0, 0, "no gap"}, {300, 0, "0.3 ms gap"}, {1000, 0, "1 ms gap"}, {5000, 0, "5 ms gap"}, {20000, 0, "20 ms gap"},
    {5000, 1, "5 ms gap, 2 ms spin first"}, {0, 0, "no gap (again)"}};
  // correctness first: poisoned output, one launch, sampled double-precision reference
  CK(cudaMemset(C, 0xFF, 4ull * M * N));
  tf_matmul_regtile<<<grid, block, 0, st>>>(A, B, C, M, N, K);
  CK(cudaGetLastError());
  CK(cudaStreamSynchronize(st));
  std::vector<float> hA((size_t)M * K), hB((size_t)K * N), hC((size_t)M * N);
  CK(cudaMemcpy(hA.data(), A, 4ull * M * K, cudaMemcpyDeviceToHost));
  CK(cudaMemcpy(hB.data(), B, 4ull * K * N, cudaMemcpyDeviceToHost));
  CK(cudaMemcpy(hC.data(), C, 4ull * M * N, cudaMemcpyDeviceToHost));
  double num = 0, den = 0;
  for (int t = 0; t < 512; t++) {
    x = x * 1664525u + 1013904223u; int i = (int)(x % (unsigned)M);
    x = x * 1664525u + 1013904223u; int j = (int)(x % (unsigned)N);
    double ref = 0;
    for (int k = 0; k < K; k++) ref += (double)hA[(size_t)i * K + k] * hB[(size_t)k * N + j];
    double d = hC[(size_t)i * N + j] - ref;
    num += d * d; den += ref * ref;
  }
  double rel = std::sqrt(num / den);
  printf("check: 512 entries of C, relative L2 error %.2e (tolerance 1e-5)\n", rel);
  if (!(rel <= 1e-5)) { printf("check failed\n"); return 1; }
  for (int warm = 0; warm < 20; warm++) tf_matmul_regtile<<<grid, block, 0, st>>>(A, B, C, M, N, K);
  CK(cudaStreamSynchronize(st));
  int flushv = 0;
  for (auto &m : modes) {
    std::vector<double> meds; std::vector<int> slow_at(S, 0); int slow_rounds = 0; double base = 1e30;
    std::vector<std::vector<double>> all;
    for (int r = 0; r < R; r++) {
      if (m.gap_us) usleep(m.gap_us);
      if (m.pre) spin<<<p.multiProcessorCount, 32, 0, st>>>((long long)(2e-3 * clock_khz * 1e3));
      for (int i = 0; i < S; i++) {
        CK(cudaMemsetAsync(fl, (flushv++) & 0xff, fb, st));
        CK(cudaEventRecord(ev[2 * i], st));
        tf_matmul_regtile<<<grid, block, 0, st>>>(A, B, C, M, N, K);
        CK(cudaGetLastError());
        CK(cudaEventRecord(ev[2 * i + 1], st));
      }
      CK(cudaStreamSynchronize(st));
      std::vector<double> t(S);
      for (int i = 0; i < S; i++) { float ms; CK(cudaEventElapsedTime(&ms, ev[2 * i], ev[2 * i + 1])); t[i] = 1000.0 * ms; }
      all.push_back(t);
      std::vector<double> s = t; std::sort(s.begin(), s.end()); meds.push_back(0.5 * (s[S / 2 - 1] + s[S / 2]));
      base = std::min(base, s[0]);
    }
    for (auto &t : all) {
      std::vector<double> s = t; std::sort(s.begin(), s.end());
      if (0.5 * (s[S / 2 - 1] + s[S / 2]) > base + 25) slow_rounds++;
      for (int i = 0; i < S; i++) if (t[i] > base + 25) slow_at[i]++;
    }
    std::vector<double> s = meds; std::sort(s.begin(), s.end());
    printf("%-28s min %.1f us, round medians: median %.1f max %.1f; rounds with median > min+25: %d of %d; slow launches by index:",
           m.name, base, s[R / 2], s[R - 1], slow_rounds, R);
    for (int i = 0; i < S; i++) printf(" %d", slow_at[i]);
    printf("\n   first 3 rounds:");
    for (int r = 0; r < 3; r++) { printf(" |"); for (int i = 0; i < S; i++) printf(" %.0f", all[r][i]); }
    printf("\n");
  }
  return 0;
}
