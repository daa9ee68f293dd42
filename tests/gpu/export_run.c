/* The exported kernels (tunefarm export --name tf_mm / tf_ln) on the GPU against CPU
 * references of this test's own (double accumulation): fresh random inputs, the output
 * poisoned first, relative L2 error within the template's tolerance, 1e-5; nvcc's builds
 * first, then, given their paths (MM_CUBIN LN_CUBIN), the exported cubins through
 * NAME_use_cubin. Every size must be accepted by the export's check. Built by
 * tests/gpu/export.sh with nvcc, beside common/reference.c (the input generator). With
 * TF_BF (sm_90), also the wgmma example (tf_bf: BF16, two tensor maps, FP32 out) against
 * the product of the rounded inputs in double, as the template checks it (1e-3). */
#include <cuda_runtime.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/reference.h"
#include "tf_ln.h"
#include "tf_mm.h"
#ifdef TF_BF
#include "tf_bf.h"
#endif

#define CHECK(call)                                                                   \
  do {                                                                                \
    cudaError_t r_ = (call);                                                          \
    if (r_ != cudaSuccess) {                                                          \
      fprintf(stderr, "%s failed: %s (%s:%d)\n", #call, cudaGetErrorString(r_), __FILE__, \
              __LINE__);                                                              \
      exit(1);                                                                        \
    }                                                                                 \
  } while (0)

/* Device copies of host buffers (inputs filled, the output poisoned with NaN bytes). */
static float *upload(const float *h, size_t n) {
  float *d = NULL;
  CHECK(cudaMalloc((void **)&d, n * sizeof(float)));
  if (h) CHECK(cudaMemcpy(d, h, n * sizeof(float), cudaMemcpyHostToDevice));
  else CHECK(cudaMemset(d, 0xFF, n * sizeof(float)));
  return d;
}

static float *random_host(size_t n, unsigned long long seed) {
  float *h = (float *)malloc(n * sizeof(float));
  if (!h) exit(1);
  reference_fill(h, n, seed);
  return h;
}

/* C = A*B, row-major, in double. */
static void cpu_matmul(const float *A, const float *B, double *C, long long M, long long N,
                       long long K) {
  for (long long m = 0; m < M; m++) {
    double *c = C + m * N;
    for (long long n = 0; n < N; n++) c[n] = 0.0;
    for (long long k = 0; k < K; k++) {
      const double a = A[m * K + k];
      const float *b = B + k * N;
      for (long long n = 0; n < N; n++) c[n] += a * b[n];
    }
  }
}

/* y = (x - mean) / sqrt(var + eps) * gamma + beta per row, the biased variance, in double. */
static void cpu_layernorm(const float *x, const float *g, const float *b, double *y, long long R,
                          long long D, double eps) {
  for (long long r = 0; r < R; r++) {
    const float *row = x + r * D;
    double sum = 0.0, sq = 0.0;
    for (long long i = 0; i < D; i++) sum += row[i];
    const double mean = sum / (double)D;
    for (long long i = 0; i < D; i++) sq += (row[i] - mean) * (row[i] - mean);
    const double rstd = 1.0 / sqrt(sq / (double)D + eps);
    for (long long i = 0; i < D; i++) y[r * D + i] = (row[i] - mean) * rstd * g[i] + b[i];
  }
}

/* ||got - ref|| / ||ref|| of the device output; 1 when within tol (never for a NaN). */
static int compare(const char *what, const double *ref, const float *dout, size_t n, double tol) {
  float *got = (float *)malloc(n * sizeof(float));
  if (!got) exit(1);
  CHECK(cudaMemcpy(got, dout, n * sizeof(float), cudaMemcpyDeviceToHost));
  double num = 0.0, den = 0.0;
  for (size_t i = 0; i < n; i++) {
    const double d = got[i] - ref[i];
    num += d * d;
    den += ref[i] * ref[i];
  }
  const double err = den > 0.0 ? sqrt(num / den) : INFINITY;
  printf("%s: rel_err %.3g (tolerance %.3g)\n", what, err, tol);
  free(got);
  return err <= tol; /* false for NaN */
}

/* must: the size is the one tuned, which the export's check must accept */
static int matmul(long long M, long long N, long long K, unsigned long long seed, int must) {
  if (tf_mm_check(M, N, K)) {
    printf("matmul M=%lld N=%lld K=%lld refused: %s\n", M, N, K, tf_mm_check(M, N, K));
    return !must;
  }
  float *a = random_host((size_t)(M * K), seed), *b = random_host((size_t)(K * N), seed + 1);
  float *da = upload(a, (size_t)(M * K)), *db = upload(b, (size_t)(K * N)),
        *dc = upload(NULL, (size_t)(M * N));
  CHECK(tf_mm_launch(da, db, dc, M, N, K, 0));
  CHECK(cudaDeviceSynchronize());
  double *ref = (double *)malloc((size_t)(M * N) * sizeof(double));
  if (!ref) exit(1);
  cpu_matmul(a, b, ref, M, N, K);
  char what[96];
  snprintf(what, sizeof what, "matmul M=%lld N=%lld K=%lld", M, N, K);
  int ok = compare(what, ref, dc, (size_t)(M * N), 1e-5);
  cudaFree(da), cudaFree(db), cudaFree(dc), free(a), free(b), free(ref);
  return ok;
}

static int layernorm(long long R, long long D, unsigned long long seed, int must) {
  if (tf_ln_check(R, D)) {
    printf("layernorm R=%lld D=%lld refused: %s\n", R, D, tf_ln_check(R, D));
    return !must;
  }
  float *x = random_host((size_t)(R * D), seed), *g = random_host((size_t)D, seed + 1),
        *b = random_host((size_t)D, seed + 2);
  float *dx = upload(x, (size_t)(R * D)), *dg = upload(g, (size_t)D), *db = upload(b, (size_t)D),
        *dy = upload(NULL, (size_t)(R * D));
  CHECK(tf_ln_launch(dx, dg, db, dy, R, D, 0));
  CHECK(cudaDeviceSynchronize());
  double *ref = (double *)malloc((size_t)(R * D) * sizeof(double));
  if (!ref) exit(1);
  cpu_layernorm(x, g, b, ref, R, D, 1e-5f); /* the template's eps, a float argument */
  char what[96];
  snprintf(what, sizeof what, "layernorm R=%lld D=%lld", R, D);
  int ok = compare(what, ref, dy, (size_t)(R * D), 1e-5);
  cudaFree(dx), cudaFree(dg), cudaFree(db), cudaFree(dy), free(x), free(g), free(b), free(ref);
  return ok;
}

#ifdef TF_BF
/* n uniform values rounded to BF16: f holds their values, the result their bits. */
static unsigned short *bf16_host(float *f, size_t n) {
  unsigned short *h = (unsigned short *)malloc(n * sizeof *h);
  if (!h) exit(1);
  for (size_t i = 0; i < n; i++) {
    h[i] = reference_f32_to_bf16(f[i]);
    unsigned int u = (unsigned int)h[i] << 16;
    memcpy(&f[i], &u, sizeof u);
  }
  return h;
}

/* C = A B^T, A[M][K] and B[N][K] in BF16. */
static int matmul_bf16(long long M, long long N, long long K, unsigned long long seed) {
  if (tf_bf_check(M, N, K)) {
    printf("bf16 M=%lld N=%lld K=%lld refused: %s\n", M, N, K, tf_bf_check(M, N, K));
    return 0;
  }
  float *a = random_host((size_t)(M * K), seed), *b = random_host((size_t)(N * K), seed + 1);
  unsigned short *ha = bf16_host(a, (size_t)(M * K)), *hb = bf16_host(b, (size_t)(N * K));
  void *da = NULL, *db = NULL;
  CHECK(cudaMalloc(&da, (size_t)(M * K) * 2));
  CHECK(cudaMalloc(&db, (size_t)(N * K) * 2));
  CHECK(cudaMemcpy(da, ha, (size_t)(M * K) * 2, cudaMemcpyHostToDevice));
  CHECK(cudaMemcpy(db, hb, (size_t)(N * K) * 2, cudaMemcpyHostToDevice));
  float *dc = upload(NULL, (size_t)(M * N));
  CHECK(tf_bf_launch(da, db, dc, M, N, K, 0));
  CHECK(cudaDeviceSynchronize());
  double *ref = (double *)malloc((size_t)(M * N) * sizeof(double));
  if (!ref) exit(1);
  for (long long m = 0; m < M; m++)
    for (long long n = 0; n < N; n++) {
      double c = 0.0;
      for (long long k = 0; k < K; k++) c += (double)a[m * K + k] * b[n * K + k];
      ref[m * N + n] = c;
    }
  char what[96];
  snprintf(what, sizeof what, "bf16 M=%lld N=%lld K=%lld", M, N, K);
  int ok = compare(what, ref, dc, (size_t)(M * N), 1e-3);
  cudaFree(da), cudaFree(db), cudaFree(dc), free(a), free(b), free(ha), free(hb), free(ref);
  return ok;
}

/* The tuned size is accepted (too large to check on a CPU here); K 4092 makes rows TMA cannot
 * map: refused by the check, and nothing launched. */
static int suite_bf16(unsigned long long seed) {
  int ok = tf_bf_check(4096, 4096, 4096) == NULL;
  ok &= matmul_bf16(256, 384, 512, seed);
  ok &= matmul_bf16(255, 257, 136, seed + 1);
  ok &= matmul_bf16(130, 200, 72, seed + 2);
  const char *why = tf_bf_check(512, 512, 4092);
  printf("bf16 K=4092: %s\n", why ? why : "accepted");
  ok &= why != NULL && tf_bf_launch(NULL, NULL, NULL, 512, 512, 4092, 0) == cudaErrorInvalidValue;
  return ok;
}
#endif

/* The tuned sizes, and others the configurations accept or refuse at run time. */
static int suite(unsigned long long seed) {
  int ok = 1;
  ok &= matmul(1024, 1024, 1024, seed, 1);
  ok &= matmul(512, 768, 256, seed + 1, 0);
  ok &= layernorm(4096, 768, seed + 2, 1);
  ok &= layernorm(1001, 768, seed + 3, 0);
  ok &= layernorm(37, 4096, seed + 4, 0);
  ok &= tf_mm_launch(NULL, NULL, NULL, 0, 1, 1, 0) == cudaErrorInvalidValue;
  return ok;
}

int main(int argc, char **argv) {
  printf("nvcc's builds:\n");
  int ok = suite(11);
#ifdef TF_BF
  ok &= suite_bf16(41);
  if (argc == 4) {
    CHECK(tf_bf_use_cubin(argv[3]));
    printf("the exported bf16 cubin:\n");
    ok &= suite_bf16(51);
  }
#endif
  if (argc >= 3) {
    printf("the exported cubins:\n");
    /* a missing file, and a cubin without this kernel, are refused; the nvcc build stays */
    ok &= tf_mm_use_cubin("/nonexistent.cubin") != cudaSuccess;
    ok &= tf_mm_use_cubin(argv[2]) != cudaSuccess;
    (void)cudaGetLastError();
    CHECK(tf_mm_use_cubin(argv[1]));
    CHECK(tf_ln_use_cubin(argv[2]));
    ok &= suite(21);
    CHECK(tf_mm_use_cubin(NULL));
    ok &= matmul(256, 256, 256, 31, 0);
  }
  printf("%s\n", ok ? "ok: every exported launch matched the CPU reference" : "FAILED");
  return ok ? 0 : 1;
}
