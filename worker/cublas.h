/* cublas: libcublas loaded at run time, for the cuda backend's GEMM arm (ARM_LIBRARY_GEMM,
 * a campaign's peer row in `tunefarm bench`).
 *
 * Linking libcublas would make the binary need it (and the driver under it) just to start,
 * on CI machines too, so, as worker/nvml.h does for NVML, libcublas.so.13, then .so.12, then
 * libcublas.so is opened with dlopen and the five functions used are found with dlsym; their
 * prototypes and the few enum values are declared here with cuBLAS's names and values
 * (cublas_api.h). Loading never fails: the handle says in `why` what is missing.
 *
 * The arm itself is an arm of the cuda backend (worker/cuda_backend.c): its buffers, inputs,
 * CPU reference, check and sampler are the ones every kernel arm goes through; this module
 * only makes the call, row-major C[M][N] = A[M][K] * B with B stored K x N or N x K, the sum
 * in FP32, on a handle in CUBLAS_DEFAULT_MATH: all-FP32 operands through cublasSgemm_v2 (TF32
 * is never used unless the mode asks for it), FP16 and BF16 inputs through cublasGemmEx with
 * CUBLAS_COMPUTE_32F (the tensor cores).
 *
 * Errors: CUBLAS_CHECK fills *e and returns -1. Ownership: a tf_cublas is a caller-owned
 * value (cublas_load fills it, cublas_unload closes the library); handles made from it must
 * be destroyed before it is unloaded. */
#ifndef TF_CUBLAS_H
#define TF_CUBLAS_H

#include <cuda_runtime_api.h>
#include <library_types.h> /* cudaDataType_t */

#include "common/err.h"

/* cuBLAS's own names and values (cublas_api.h, stable since cuBLAS 11). */
typedef int cublasStatus_t; /* an enum in cuBLAS; 0 is success */
typedef struct cublasContext *cublasHandle_t;
enum { TF_CUBLAS_STATUS_SUCCESS = 0, TF_CUBLAS_OP_N = 0, TF_CUBLAS_OP_T = 1 };
enum { TF_CUBLAS_COMPUTE_32F = 68, TF_CUBLAS_GEMM_DEFAULT = -1 };
enum { TF_CUBLAS_DEFAULT_MATH = 0, TF_CUBLAS_PEDANTIC_MATH = 2 };

typedef struct tf_cublas {
  void *lib;          /* dlopen handle, NULL when not loaded */
  int ok;             /* 1: the library and every function below were found */
  char soname[32];    /* the name that opened, e.g. "libcublas.so.13" */
  char why[512];      /* when ok == 0: why not */
  /* Named as cuBLAS names them, so that CUBLAS_CHECK's message names the call. */
  cublasStatus_t (*cublasCreate_v2)(cublasHandle_t *handle);
  cublasStatus_t (*cublasDestroy_v2)(cublasHandle_t handle);
  cublasStatus_t (*cublasSetStream_v2)(cublasHandle_t handle, cudaStream_t stream);
  cublasStatus_t (*cublasSetMathMode)(cublasHandle_t handle, int mode);
  cublasStatus_t (*cublasSgemm_v2)(cublasHandle_t handle, int transa, int transb, int m, int n,
                                   int k, const float *alpha, const float *A, int lda,
                                   const float *B, int ldb, const float *beta, float *C, int ldc);
  cublasStatus_t (*cublasGemmEx)(cublasHandle_t handle, int transa, int transb, int m, int n,
                                 int k, const void *alpha, const void *A, cudaDataType_t Atype,
                                 int lda, const void *B, cudaDataType_t Btype, int ldb,
                                 const void *beta, void *C, cudaDataType_t Ctype, int ldc,
                                 int computeType, int algo);
} tf_cublas;

/* Open the first of libcublas.so.13, .so.12, .so that loads. Never fails: b->ok says. */
void cublas_load(tf_cublas *b);
/* The same from a NULL-terminated list of names (tests use names that do not exist). */
void cublas_load_from(tf_cublas *b, const char *const *names);
void cublas_unload(tf_cublas *b);

/* One check for every cuBLAS call: fills *e with "<call> failed: <status name> (<n>)
 * [file:line]" and returns -1 unless r is success. */
int cublas_check(cublasStatus_t r, const char *call, const char *file, int line, tf_err *e);
#define CUBLAS_CHECK(call, e) cublas_check((call), #call, __FILE__, __LINE__, (e))

/* A row-major GEMM: C[m][n] = A[m][k] * B, B[k][n] or (b_nk) B[n][k], on h's stream; m, n, k
 * in [1, INT_MAX]; types as cudaDataType_t (CUDA_R_32F, CUDA_R_16F, CUDA_R_16BF). */
typedef struct cublas_gemm_args {
  long long m, n, k;
  int b_nk;
  cudaDataType_t ab_type, c_type;
  const void *A, *B;
  void *C;
} cublas_gemm_args;
int cublas_gemm_rowmajor(const tf_cublas *b, cublasHandle_t h, const cublas_gemm_args *g,
                         tf_err *e);

#endif
