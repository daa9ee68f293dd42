/* cublas: libcublas through dlopen, and the SGEMM call; see cublas.h for why. */
#include "worker/cublas.h"

#include <dlfcn.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- the library ------------------------------------------------------------------------ */

static const char *const cublas_names[] = {"libcublas.so.13", "libcublas.so.12", "libcublas.so",
                                           NULL};

/* dlsym's void * to a function pointer is what POSIX guarantees works. */
#define CUBLAS_SYM(b, field) ((b)->field = (__typeof__((b)->field))dlsym((b)->lib, #field))

static void cublas_unusable(tf_cublas *b) {
  if (b->lib) dlclose(b->lib);
  b->lib = NULL;
  b->ok = 0;
}

void cublas_load_from(tf_cublas *b, const char *const *names) {
  memset(b, 0, sizeof *b);
  char tried[160] = "";
  const char *last = "no name given";
  for (int i = 0; names[i] && !b->lib; i++) {
    b->lib = dlopen(names[i], RTLD_NOW | RTLD_LOCAL);
    if (b->lib) {
      snprintf(b->soname, sizeof b->soname, "%s", names[i]);
      break;
    }
    const char *why = dlerror();
    last = why ? why : names[i];
    size_t n = strlen(tried);
    snprintf(tried + n, sizeof tried - n, "%s%s", n ? ", " : "", names[i]);
  }
  if (!b->lib) {
    snprintf(b->why, sizeof b->why, "cannot open libcublas (tried %s; last: %s)", tried, last);
    return;
  }
  CUBLAS_SYM(b, cublasCreate_v2);
  CUBLAS_SYM(b, cublasDestroy_v2);
  CUBLAS_SYM(b, cublasSetStream_v2);
  CUBLAS_SYM(b, cublasSetMathMode);
  CUBLAS_SYM(b, cublasSgemm_v2);
  CUBLAS_SYM(b, cublasGemmEx);
  if (!b->cublasCreate_v2 || !b->cublasDestroy_v2 || !b->cublasSetStream_v2 ||
      !b->cublasSetMathMode || !b->cublasSgemm_v2 || !b->cublasGemmEx) {
    snprintf(b->why, sizeof b->why, "%s lacks one of cublasCreate_v2, cublasDestroy_v2, "
             "cublasSetStream_v2, cublasSetMathMode, cublasSgemm_v2, cublasGemmEx", b->soname);
    cublas_unusable(b);
    return;
  }
  b->ok = 1;
}

void cublas_load(tf_cublas *b) { cublas_load_from(b, cublas_names); }

void cublas_unload(tf_cublas *b) {
  if (!b) return;
  if (b->lib) dlclose(b->lib);
  b->lib = NULL;
  b->ok = 0;
}

static const char *cublas_status_name(cublasStatus_t r) {
  switch (r) {
  case 0: return "CUBLAS_STATUS_SUCCESS";
  case 1: return "CUBLAS_STATUS_NOT_INITIALIZED";
  case 3: return "CUBLAS_STATUS_ALLOC_FAILED";
  case 7: return "CUBLAS_STATUS_INVALID_VALUE";
  case 8: return "CUBLAS_STATUS_ARCH_MISMATCH";
  case 11: return "CUBLAS_STATUS_MAPPING_ERROR";
  case 13: return "CUBLAS_STATUS_EXECUTION_FAILED";
  case 14: return "CUBLAS_STATUS_INTERNAL_ERROR";
  case 15: return "CUBLAS_STATUS_NOT_SUPPORTED";
  case 16: return "CUBLAS_STATUS_LICENSE_ERROR";
  default: return "unknown cuBLAS status";
  }
}

int cublas_check(cublasStatus_t r, const char *call, const char *file, int line, tf_err *e) {
  if (r == TF_CUBLAS_STATUS_SUCCESS) return 0;
  return tf_fail(e, TF_EXIT_FAIL, "%s failed: %s (%d) [%s:%d]", call, cublas_status_name(r),
                 (int)r, file, line);
}

/* ---- the call -------------------------------------------------------------------------- */

/* Row-major C = A*B is column-major C^T = B^T * A^T: cuBLAS sees B as the left operand. B[k][n]
 * read column-major is B^T already (op N, leading dimension n); B[n][k] read column-major is
 * B, so it is transposed (op T, leading dimension k). */
int cublas_gemm_rowmajor(const tf_cublas *b, cublasHandle_t h, const cublas_gemm_args *g,
                         tf_err *e) {
  const float one = 1.0f, zero = 0.0f;
  if (g->m < 1 || g->n < 1 || g->k < 1 || g->m > INT_MAX || g->n > INT_MAX || g->k > INT_MAX)
    return tf_fail(e, TF_EXIT_INPUT, "cublas gemm: M, N and K must be in [1, %d]", INT_MAX);
  int m = (int)g->m, n = (int)g->n, k = (int)g->k;
  int opb = g->b_nk ? TF_CUBLAS_OP_T : TF_CUBLAS_OP_N, ldb = g->b_nk ? k : n;
  if (g->ab_type == CUDA_R_32F && g->c_type == CUDA_R_32F)
    return CUBLAS_CHECK(b->cublasSgemm_v2(h, opb, TF_CUBLAS_OP_N, n, m, k, &one, g->B, ldb, g->A,
                                          k, &zero, g->C, n),
                        e);
  return CUBLAS_CHECK(b->cublasGemmEx(h, opb, TF_CUBLAS_OP_N, n, m, k, &one, g->B, g->ab_type,
                                      ldb, g->A, g->ab_type, k, &zero, g->C,
                                      g->c_type, n, TF_CUBLAS_COMPUTE_32F,
                                      TF_CUBLAS_GEMM_DEFAULT),
                      e);
}
