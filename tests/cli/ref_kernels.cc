// The shipped reference kernels run on the host, one simulated thread after another, at the
// launch geometry their template's JSON gives, against loops of this file's own. A reference
// is the oracle of every check on a GPU; this shows that its indexing and arithmetic are right
// where no GPU is. Every output starts poisoned (NaN, or 0xFF bytes), so an element a
// reference leaves unwritten fails. Built and run by ref_kernels.sh.
#include <cmath>
#include <cstddef>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>

namespace host {
struct dim { unsigned x = 1, y = 1, z = 1; };
}  // namespace host
static host::dim blockIdx, threadIdx, blockDim, gridDim;
#define __global__ static
// Threads run one after another, so an atomic is a plain read-modify-write.
static unsigned atomicAdd(unsigned *p, unsigned v) {
  unsigned old = *p;
  *p = old + v;
  return old;
}

#include "examples/copy/templates/ref_copy.cu"
#include "examples/histogram/templates/ref_histogram.cu"
#include "examples/matmul_bf16/templates/ref_matmul_bf16.cu"  // cuda_bf16.h: the shim of ref_kernels.sh
#include "examples/softmax/templates/ref_softmax.cu"
#include "examples/transpose/templates/ref_transpose.cu"
#include "templates/ref_layernorm.cu"
#include "templates/ref_matmul.cu"
#include "templates/ref_scale2.cu"

static int failures = 0;

static void expect(bool ok, const char *what, long long i, double got, double want) {
  if (ok) return;
  if (failures++ < 10)
    std::printf("FAIL: %s: element %lld is %.17g, want %.17g\n", what, i, got, want);
}

// Every thread of every block, in order: what a launch of grid x block computes when threads
// do not talk to each other (a reference's form).
template <class F> static void launch(host::dim grid, host::dim block, F kernel) {
  gridDim = grid, blockDim = block;
  for (unsigned bz = 0; bz < grid.z; bz++)
    for (unsigned by = 0; by < grid.y; by++)
      for (unsigned bx = 0; bx < grid.x; bx++)
        for (unsigned tz = 0; tz < block.z; tz++)
          for (unsigned ty = 0; ty < block.y; ty++)
            for (unsigned tx = 0; tx < block.x; tx++) {
              blockIdx = {bx, by, bz}, threadIdx = {tx, ty, tz};
              kernel();
            }
}

static unsigned ceil_div(long long a, long long b) { return (unsigned)((a + b - 1) / b); }

static std::vector<float> uniform(size_t n, unsigned seed) {
  std::vector<float> v(n);
  std::srand(seed);
  for (auto &x : v) x = (float)std::rand() / (float)RAND_MAX * 2.0f - 1.0f;
  return v;
}

// templates/matmul.json: grid (ceil_div(N, 16), ceil_div(M, 16)), block 16 x 16. Sizes that
// are no multiple of 16 leave threads past the edges.
static void matmul(int M, int N, int K) {
  auto A = uniform((size_t)M * K, 1), B = uniform((size_t)K * N, 2);
  std::vector<float> C((size_t)M * N, NAN);
  launch({ceil_div(N, 16), ceil_div(M, 16), 1}, {16, 16, 1},
         [&] { ref_matmul(A.data(), B.data(), C.data(), M, N, K); });
  for (int m = 0; m < M; m++)
    for (int n = 0; n < N; n++) {
      double want = 0.0;
      for (int k = 0; k < K; k++) want += (double)A[(size_t)m * K + k] * B[(size_t)k * N + n];
      const float got = C[(size_t)m * N + n];
      expect(got == (float)want, "ref_matmul", (long long)m * N + n, got, want);
    }
}

// templates/layernorm.json: grid ceil_div(R, 128), block 128; eps is the template's 1e-5f.
static void layernorm(int R, int D) {
  auto x = uniform((size_t)R * D, 3), g = uniform((size_t)D, 4), b = uniform((size_t)D, 5);
  std::vector<float> y((size_t)R * D, NAN);
  launch({ceil_div(R, 128), 1, 1}, {128, 1, 1},
         [&] { ref_layernorm(x.data(), g.data(), b.data(), y.data(), R, D, 1e-5f); });
  for (int r = 0; r < R; r++) {
    double mean = 0.0, var = 0.0;
    for (int i = 0; i < D; i++) mean += x[(size_t)r * D + i];
    mean /= D;
    for (int i = 0; i < D; i++) {
      const double d = x[(size_t)r * D + i] - mean;
      var += d * d;
    }
    var /= D;
    for (int i = 0; i < D; i++) {
      const double want = (x[(size_t)r * D + i] - mean) / std::sqrt(var + 1e-5) * g[i] + b[i];
      const float got = y[(size_t)r * D + i];
      expect(std::fabs(got - want) <= 1e-6 * (1.0 + std::fabs(want)), "ref_layernorm",
             (long long)r * D + i, got, want);
    }
  }
}

// templates/chain.json and faulty.json: grid ceil_div(N, 256), block 256.
static void scale2(int N) {
  auto x = uniform((size_t)N, 6);
  std::vector<float> y((size_t)N, NAN);
  launch({ceil_div(N, 256), 1, 1}, {256, 1, 1}, [&] { ref_scale2(x.data(), y.data(), N); });
  for (int i = 0; i < N; i++) expect(y[i] == 2.0f * x[i], "ref_scale2", i, y[i], 2.0 * x[i]);
}

// examples/softmax: grid ceil_div(R, 128), block 128; rows sum to 1 and lse is log sum exp.
static void softmax(int R, int D) {
  auto x = uniform((size_t)R * D, 7);
  for (auto &v : x) v *= 40.0f;  // exp of the raw values would overflow without the max
  std::vector<float> y((size_t)R * D, NAN), lse((size_t)R, NAN);
  launch({ceil_div(R, 128), 1, 1}, {128, 1, 1},
         [&] { ref_softmax(x.data(), y.data(), lse.data(), R, D); });
  for (int r = 0; r < R; r++) {
    double m = -INFINITY, s = 0.0, sum = 0.0;
    for (int i = 0; i < D; i++) m = std::fmax(m, x[(size_t)r * D + i]);
    for (int i = 0; i < D; i++) s += std::exp(x[(size_t)r * D + i] - m);
    for (int i = 0; i < D; i++) {
      const double want = std::exp(x[(size_t)r * D + i] - m) / s;
      const float got = y[(size_t)r * D + i];
      sum += got;
      expect(std::fabs(got - want) <= 1e-6 * want + 1e-30, "ref_softmax y", (long long)r * D + i,
             got, want);
    }
    expect(std::fabs(sum - 1.0) < 1e-5, "ref_softmax row sum", r, sum, 1.0);
    expect(std::fabs(lse[r] - (m + std::log(s))) <= 1e-6 * std::fabs(m + std::log(s)),
           "ref_softmax lse", r, lse[r], m + std::log(s));
  }
}

// examples/transpose: grid ceil_div(R*C, 256), block 256; values move exactly.
static void transpose(int R, int C) {
  auto in = uniform((size_t)R * C, 8);
  std::vector<float> out((size_t)R * C, NAN);
  launch({ceil_div((long long)R * C, 256), 1, 1}, {256, 1, 1},
         [&] { ref_transpose(in.data(), out.data(), R, C); });
  for (int r = 0; r < R; r++)
    for (int c = 0; c < C; c++)
      expect(out[(size_t)c * R + r] == in[(size_t)r * C + c], "ref_transpose",
             (long long)c * R + r, out[(size_t)c * R + r], in[(size_t)r * C + c]);
}

// examples/copy: grid ceil_div(N, 256), block 256; values move exactly.
static void copy(long long N) {
  auto in = uniform((size_t)N, 10);
  std::vector<float> out((size_t)N, NAN);
  launch({ceil_div(N, 256), 1, 1}, {256, 1, 1}, [&] { ref_copy(in.data(), out.data(), N); });
  for (long long i = 0; i < N; i++) expect(out[i] == in[i], "ref_copy", i, out[i], in[i]);
}

// examples/matmul_bf16: grid ceil_div(M*N, 256), block 256; A is M x K and B is N x K (both
// K-contiguous), as matmul_bf16.json's buffers say; products and sum in double.
static void matmul_bf16(int M, int N, int K) {
  auto a = uniform((size_t)M * K, 11), b = uniform((size_t)N * K, 12);
  std::vector<__nv_bfloat16> A(a.size()), B(b.size());
  for (size_t i = 0; i < a.size(); i++) A[i] = __float2bfloat16(a[i]);
  for (size_t i = 0; i < b.size(); i++) B[i] = __float2bfloat16(b[i]);
  std::vector<float> C((size_t)M * N, NAN);
  launch({ceil_div((long long)M * N, 256), 1, 1}, {256, 1, 1},
         [&] { ref_matmul_bf16(A.data(), B.data(), C.data(), M, N, K); });
  for (int m = 0; m < M; m++)
    for (int n = 0; n < N; n++) {
      double want = 0.0;
      for (int k = 0; k < K; k++)
        want += (double)__bfloat162float(A[(size_t)m * K + k]) *
                (double)__bfloat162float(B[(size_t)n * K + k]);
      const float got = C[(size_t)m * N + n];
      expect(got == (float)want, "ref_matmul_bf16", (long long)m * N + n, got, want);
    }
}

// examples/histogram: grid ceil_div(N, 256), block 256; the bins start zeroed (scratch-like
// output the reference adds into) and count every value below nbins.
static void histogram(unsigned N, int nbins) {
  std::vector<unsigned char> x(N);
  std::srand(9);
  for (auto &v : x) v = (unsigned char)(std::rand() % 256);
  std::vector<unsigned> bins((size_t)nbins, 0), want((size_t)nbins, 0);
  launch({ceil_div(N, 256), 1, 1}, {256, 1, 1},
         [&] { ref_histogram(x.data(), bins.data(), N, nbins); });
  for (unsigned i = 0; i < N; i++)
    if (x[i] < nbins) want[x[i]]++;
  for (int b = 0; b < nbins; b++) expect(bins[b] == want[b], "ref_histogram", b, bins[b], want[b]);
}

int main() {
  matmul(37, 53, 61);
  matmul(16, 16, 1);
  layernorm(130, 77);
  layernorm(1, 1024);
  scale2(1000);
  softmax(129, 100);
  transpose(37, 300);
  histogram(5000, 200);
  copy(1000);
  matmul_bf16(37, 53, 61);
  if (failures) {
    std::printf("%d elements wrong\n", failures);
    return 1;
  }
  std::printf("ok: every reference kernel matches this test's loops at its template's launch\n");
  return 0;
}
