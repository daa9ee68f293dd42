/* cublas: cuBLAS SGEMM as one arm of `tunefarm bench`, with libcublas loaded at run time.
 *
 * Linking libcublas would make the binary need it (and the driver under it) just to start,
 * on CI machines too, so, as worker/nvml.h does for NVML, libcublas.so.13, then .so.12, then
 * libcublas.so is opened with dlopen and the five functions used are found with dlsym; their
 * prototypes and the few enum values are declared here with cuBLAS's names and values
 * (cublas_api.h). Loading never fails: the handle says in `why` what is missing.
 *
 * The SGEMM arm follows the cuda backend's protocol (worker/backend.h), so that its row of the
 * bench table compares with the kernels' rows: row-major C[M][N] = A[M][K] * B[K][N] in FP32,
 * inputs from reference_fill seeded by reference_input_seed with the template's buffer
 * indices of A and B (the same inputs the kernels get), one stream, one handle in
 * CUBLAS_DEFAULT_MATH (FP32 SGEMM: TF32 is never used unless the mode asks for it).
 *   check:  re-upload A and B, poison C (0xFF bytes are NaN floats), one SGEMM, relative
 *           error against kernels/reference.c's double reference.
 *   sample: per launch, a memset of a flush buffer of twice the device's L2, an event, the
 *           SGEMM, an event; the median of the spans. Kernel-only time comes from the
 *           process's CUPTI timer (worker/cupti_timer.h) when it is open (the cuda backend
 *           opens it), as the sum of the kernels of one SGEMM call; -1 otherwise.
 *
 * Errors: CUBLAS_CHECK for cuBLAS statuses and CUDA_CHECK for the runtime fill *e and return
 * -1; e->code is TF_STICKY after an error that leaves the CUDA context unusable.
 * Ownership: a tf_cublas is a caller-owned value (cublas_load fills it, cublas_unload closes
 * the library). cublas_sgemm_open allocates the arm and everything it uses (host inputs and
 * references, device buffers, stream, events, handle); cublas_sgemm_close frees all of it.
 * The arm borrows the tf_cublas, which must outlive it. */
#ifndef TF_CUBLAS_H
#define TF_CUBLAS_H

#include <cuda_runtime_api.h>

#include "common/err.h"

/* cuBLAS's own names and values (cublas_api.h, stable since cuBLAS 11). */
typedef int cublasStatus_t; /* an enum in cuBLAS; 0 is success */
typedef struct cublasContext *cublasHandle_t;
enum { TF_CUBLAS_STATUS_SUCCESS = 0, TF_CUBLAS_OP_N = 0 };
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

/* What the SGEMM arm computes and from which inputs. */
typedef struct cublas_sgemm_opts {
  int ordinal;              /* visible device index */
  long long m, n, k;        /* C[m][n] = A[m][k] * B[k][n], each at most 2^31 - 1 */
  int input_sets;           /* 1..8, as the job's measure.input_sets */
  unsigned long long seed;  /* the job's measure.seed */
  int buffer_a, buffer_b;   /* A's and B's indices in the template's buffer list (input seeds) */
  int math_mode;            /* TF_CUBLAS_DEFAULT_MATH or TF_CUBLAS_PEDANTIC_MATH */
} cublas_sgemm_opts;

typedef struct cublas_sgemm cublas_sgemm;

/* Allocate and fill everything (computes the CPU reference of every input set). */
int cublas_sgemm_open(cublas_sgemm **out, const tf_cublas *lib, const cublas_sgemm_opts *o,
                      tf_err *e);
/* Poison C, one SGEMM on input set `set`, *rel_err against the reference (inf if not finite). */
int cublas_sgemm_check(cublas_sgemm *s, int set, double *rel_err, tf_err *e);
/* `samples` flushed and timed SGEMMs on `set`: medians in microseconds (*kernel_us < 0 when
 * there is no kernel-only time). */
int cublas_sgemm_sample(cublas_sgemm *s, int set, int samples, double *us, double *kernel_us,
                        tf_err *e);
void cublas_sgemm_close(cublas_sgemm *s);

#endif
