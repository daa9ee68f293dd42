/* The exported kernels (tunefarm export --name tf_mm / tf_ln) on the GPU against the CPU
 * reference: fresh random inputs, the output poisoned first, relative error within the
 * template's tolerance; nvcc's builds first, then, given their paths (MM_CUBIN LN_CUBIN), the
 * exported cubins through NAME_use_cubin. Built by tests/gpu/export.sh with nvcc, beside
 * kernels/reference.c. */
#include <cuda_runtime.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kernels/reference.h"
#include "tf_ln.h"
#include "tf_mm.h"

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

/* rel_err of the device output against the family's reference; 1 when within tol. */
static int compare(const char *family, int ndims, const char **dim_names, const long long *dims,
                   int nbuf, const char **names, const float **bufs, const long long *counts,
                   const float *dout, size_t nout, double tol) {
  reference_io io = {family, ndims, dim_names, dims, nbuf, names, bufs, counts};
  double *ref = (double *)malloc(nout * sizeof(double));
  float *got = (float *)malloc(nout * sizeof(float));
  tf_err e;
  memset(&e, 0, sizeof e);
  if (!ref || !got || reference_compute(&io, ref, &e)) {
    fprintf(stderr, "reference: %s\n", e.msg);
    exit(1);
  }
  CHECK(cudaMemcpy(got, dout, nout * sizeof(float), cudaMemcpyDeviceToHost));
  double err = reference_rel_err(got, ref, nout);
  printf("%s", family);
  for (int d = 0; d < ndims; d++) printf(" %s=%lld", dim_names[d], dims[d]);
  printf(": rel_err %.3g (tolerance %.3g)\n", err, tol);
  free(ref);
  free(got);
  return err <= tol;
}

static int matmul(long long M, long long N, long long K, unsigned long long seed) {
  if (tf_mm_check(M, N, K)) {
    printf("matmul M=%lld N=%lld K=%lld refused: %s\n", M, N, K, tf_mm_check(M, N, K));
    return 1;
  }
  float *a = random_host((size_t)(M * K), seed), *b = random_host((size_t)(K * N), seed + 1);
  float *da = upload(a, (size_t)(M * K)), *db = upload(b, (size_t)(K * N)),
        *dc = upload(NULL, (size_t)(M * N));
  CHECK(tf_mm_launch(da, db, dc, M, N, K, 0));
  CHECK(cudaDeviceSynchronize());
  const char *dn[] = {"M", "N", "K"}, *bn[] = {"A", "B", "C"};
  long long dims[] = {M, N, K}, counts[] = {M * K, K * N, M * N};
  const float *bufs[] = {a, b, NULL};
  int ok = compare("matmul", 3, dn, dims, 3, bn, bufs, counts, dc, (size_t)(M * N), 1e-4);
  cudaFree(da), cudaFree(db), cudaFree(dc), free(a), free(b);
  return ok;
}

static int layernorm(long long R, long long D, unsigned long long seed) {
  if (tf_ln_check(R, D)) {
    printf("layernorm R=%lld D=%lld refused: %s\n", R, D, tf_ln_check(R, D));
    return 1;
  }
  float *x = random_host((size_t)(R * D), seed), *g = random_host((size_t)D, seed + 1),
        *b = random_host((size_t)D, seed + 2);
  float *dx = upload(x, (size_t)(R * D)), *dg = upload(g, (size_t)D), *db = upload(b, (size_t)D),
        *dy = upload(NULL, (size_t)(R * D));
  CHECK(tf_ln_launch(dx, dg, db, dy, R, D, 0));
  CHECK(cudaDeviceSynchronize());
  const char *dn[] = {"R", "D"}, *bn[] = {"x", "gamma", "beta", "y"};
  long long dims[] = {R, D}, counts[] = {R * D, D, D, R * D};
  const float *bufs[] = {x, g, b, NULL};
  int ok = compare("layernorm", 2, dn, dims, 4, bn, bufs, counts, dy, (size_t)(R * D), 1e-5);
  cudaFree(dx), cudaFree(dg), cudaFree(db), cudaFree(dy), free(x), free(g), free(b);
  return ok;
}

/* The tuned sizes, and others the configurations accept or refuse at run time. */
static int suite(unsigned long long seed) {
  int ok = 1;
  ok &= matmul(1024, 1024, 1024, seed);
  ok &= matmul(512, 768, 256, seed + 1);
  ok &= layernorm(4096, 768, seed + 2);
  ok &= layernorm(1001, 768, seed + 3);
  ok &= layernorm(37, 4096, seed + 4);
  ok &= tf_mm_launch(NULL, NULL, NULL, 0, 1, 1, 0) == cudaErrorInvalidValue;
  return ok;
}

int main(int argc, char **argv) {
  printf("nvcc's builds:\n");
  int ok = suite(11);
  if (argc == 3) {
    printf("the exported cubins:\n");
    /* a missing file, and a cubin without this kernel, are refused; the nvcc build stays */
    ok &= tf_mm_use_cubin("/nonexistent.cubin") != cudaSuccess;
    ok &= tf_mm_use_cubin(argv[2]) != cudaSuccess;
    (void)cudaGetLastError();
    CHECK(tf_mm_use_cubin(argv[1]));
    CHECK(tf_ln_use_cubin(argv[2]));
    ok &= suite(21);
    CHECK(tf_mm_use_cubin(NULL));
    ok &= matmul(256, 256, 256, 31);
  }
  printf("%s\n", ok ? "ok: every exported launch matched the CPU reference" : "FAILED");
  return ok ? 0 : 1;
}
