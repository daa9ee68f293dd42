/* cublas: libcublas through dlopen, and the bench's SGEMM arm; see cublas.h for why. */
#include "worker/cublas.h"

#include <dlfcn.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/decide.h"      /* defines: stats_median */
#include "common/spec.h"        /* defines: SPEC_MAX_ELEMENTS */
#include "kernels/reference.h"  /* defines: reference_fill, reference_input_seed, reference_... */
#include "worker/backend.h"     /* defines: TF_STICKY */
#include "worker/cuda_util.h"   /* defines: CUDA_CHECK */
#include "worker/cupti_timer.h" /* defines: cupti_timer_begin, cupti_timer_collect */

#define SG_MAX_SETS 8
#define SG_MAX_SAMPLES 100000
#define SG_MAX_KERNELS_PER_CALL 4 /* cuBLAS may add a split-K reduction or a setup kernel */
#define SG_FLUSH_MIN (1u << 20)

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
  if (!b->cublasCreate_v2 || !b->cublasDestroy_v2 || !b->cublasSetStream_v2 ||
      !b->cublasSetMathMode || !b->cublasSgemm_v2) {
    snprintf(b->why, sizeof b->why, "%s lacks one of cublasCreate_v2, cublasDestroy_v2, "
             "cublasSetStream_v2, cublasSetMathMode, cublasSgemm_v2", b->soname);
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

/* ---- the SGEMM arm ---------------------------------------------------------------------- */

enum { SG_A, SG_B, SG_C };

struct cublas_sgemm {
  const tf_cublas *lib;
  cublas_sgemm_opts o;
  size_t count[3];                  /* elements of A, B, C */
  float *host[SG_MAX_SETS][2];      /* A and B of every input set */
  double *ref[SG_MAX_SETS];         /* the double reference of C per set */
  float *dev[SG_MAX_SETS][3];
  float *out;                       /* C copied back for the check */
  void *flush;
  size_t flush_bytes;
  unsigned flush_value;
  cudaStream_t stream;
  int have_stream;
  cublasHandle_t handle;
  int have_handle;
  sample_pool pool;                 /* kept for later batches; kern holds every kernel record */
  int sticky;                       /* the context is unusable: touch the device no more */
};

static int sg_failed(cublas_sgemm *s, tf_err *e) {
  if (e && e->code == TF_STICKY) s->sticky = 1;
  return -1;
}

static int sg_validate(const cublas_sgemm_opts *o, tf_err *e) {
  if (o->m < 1 || o->n < 1 || o->k < 1 || o->m > INT_MAX || o->n > INT_MAX || o->k > INT_MAX)
    return tf_fail(e, TF_EXIT_INPUT, "cublas sgemm: M, N and K must be in [1, %d]", INT_MAX);
  if (o->m * o->k > SPEC_MAX_ELEMENTS || o->k * o->n > SPEC_MAX_ELEMENTS ||
      o->m * o->n > SPEC_MAX_ELEMENTS)
    return tf_fail(e, TF_EXIT_INPUT, "cublas sgemm: a matrix of more than 2^32 elements");
  if (o->input_sets < 1 || o->input_sets > SG_MAX_SETS)
    return tf_fail(e, TF_EXIT_INPUT, "cublas sgemm: input_sets must be in [1, %d]", SG_MAX_SETS);
  return 0;
}

/* Inputs of one set, seeded as the cuda backend seeds them, and their double reference. */
static int sg_host_set(cublas_sgemm *s, int set, tf_err *e) {
  const int bufidx[2] = {s->o.buffer_a, s->o.buffer_b};
  for (int i = 0; i < 2; i++) {
    s->host[set][i] = malloc(s->count[i] * sizeof(float));
    if (!s->host[set][i]) return tf_fail(e, TF_EXIT_FAIL, "cublas sgemm: out of host memory");
    reference_fill(s->host[set][i], s->count[i],
                   reference_input_seed(s->o.seed, set, bufidx[i]));
  }
  s->ref[set] = malloc(s->count[SG_C] * sizeof(double));
  if (!s->ref[set]) return tf_fail(e, TF_EXIT_FAIL, "cublas sgemm: out of host memory");
  static const char *const dim_names[3] = {"M", "N", "K"};
  static const char *const buf_names[3] = {"A", "B", "C"};
  const long long dims[3] = {s->o.m, s->o.n, s->o.k};
  const long long counts[3] = {(long long)s->count[SG_A], (long long)s->count[SG_B],
                               (long long)s->count[SG_C]};
  const float *bufs[3] = {s->host[set][0], s->host[set][1], NULL};
  reference_io io = {.family = "matmul", .ndims = 3, .dim_names = dim_names, .dims = dims,
                     .nbuffers = 3, .buf_names = buf_names, .bufs = bufs, .counts = counts};
  if (reference_compute(&io, s->ref[set], e)) return tf_wrap(e, "cublas sgemm, input set %d", set);
  return 0;
}

static int sg_upload(cublas_sgemm *s, int set, tf_err *e) {
  for (int i = 0; i < 2; i++)
    if (CUDA_CHECK(cudaMemcpyAsync(s->dev[set][i], s->host[set][i], s->count[i] * sizeof(float),
                                   cudaMemcpyHostToDevice, s->stream), e))
      return -1;
  return 0;
}

static int sg_device(cublas_sgemm *s, tf_err *e) {
  int l2 = 0;
  if (CUDA_CHECK(cudaSetDevice(s->o.ordinal), e) ||
      CUDA_CHECK(cudaStreamCreateWithFlags(&s->stream, cudaStreamNonBlocking), e))
    return -1;
  s->have_stream = 1;
  for (int set = 0; set < s->o.input_sets; set++) {
    for (int i = 0; i < 3; i++)
      if (CUDA_CHECK(cudaMalloc((void **)&s->dev[set][i], s->count[i] * sizeof(float)), e))
        return -1;
    if (sg_upload(s, set, e)) return -1;
  }
  /* Twice the L2, as the cuda backend flushes: no operand survives from the previous launch. */
  if (CUDA_CHECK(cudaDeviceGetAttribute(&l2, cudaDevAttrL2CacheSize, s->o.ordinal), e)) return -1;
  s->flush_bytes = 2 * (size_t)(l2 > 0 ? l2 : 0);
  if (s->flush_bytes < SG_FLUSH_MIN) s->flush_bytes = SG_FLUSH_MIN;
  if (CUDA_CHECK(cudaMalloc(&s->flush, s->flush_bytes), e)) return -1;
  const tf_cublas *b = s->lib;
  if (CUBLAS_CHECK(b->cublasCreate_v2(&s->handle), e)) return -1;
  s->have_handle = 1;
  if (CUBLAS_CHECK(b->cublasSetStream_v2(s->handle, s->stream), e) ||
      CUBLAS_CHECK(b->cublasSetMathMode(s->handle, s->o.math_mode), e))
    return -1;
  return CUDA_CHECK(cudaStreamSynchronize(s->stream), e);
}

int cublas_sgemm_open(cublas_sgemm **out, const tf_cublas *lib, const cublas_sgemm_opts *o,
                      tf_err *e) {
  *out = NULL;
  if (!lib || !lib->ok)
    return tf_fail(e, TF_EXIT_FAIL, "cublas: %s", lib ? lib->why : "not loaded");
  if (sg_validate(o, e)) return -1;
  cublas_sgemm *s = calloc(1, sizeof *s);
  if (!s) return tf_fail(e, TF_EXIT_FAIL, "cublas sgemm: out of memory");
  s->lib = lib;
  s->o = *o;
  s->count[SG_A] = (size_t)(o->m * o->k);
  s->count[SG_B] = (size_t)(o->k * o->n);
  s->count[SG_C] = (size_t)(o->m * o->n);
  s->out = malloc(s->count[SG_C] * sizeof(float));
  int rc = s->out ? 0 : tf_fail(e, TF_EXIT_FAIL, "cublas sgemm: out of host memory");
  for (int set = 0; rc == 0 && set < o->input_sets; set++) rc = sg_host_set(s, set, e);
  if (rc == 0 && sg_device(s, e)) rc = sg_failed(s, e);
  if (rc) {
    cublas_sgemm_close(s);
    return -1;
  }
  *out = s;
  return 0;
}

/* Row-major C = A*B is column-major C^T = B^T * A^T: cuBLAS sees B as the left operand. */
static int sg_gemm(cublas_sgemm *s, int set, tf_err *e) {
  const float one = 1.0f, zero = 0.0f;
  const int m = (int)s->o.m, n = (int)s->o.n, k = (int)s->o.k;
  if (CUBLAS_CHECK(s->lib->cublasSgemm_v2(s->handle, TF_CUBLAS_OP_N, TF_CUBLAS_OP_N, n, m, k,
                                           &one, s->dev[set][SG_B], n, s->dev[set][SG_A], k,
                                           &zero, s->dev[set][SG_C], n),
                   e) == 0)
    return 0;
  /* A failed execution usually leaves a sticky CUDA error behind: classify it as the runtime
   * does, so that the bench stops touching the device. */
  tf_err ce;
  tf_err_clear(&ce);
  if (CUDA_CHECK(cudaStreamSynchronize(s->stream), &ce) && ce.code == TF_STICKY) *e = ce;
  return -1;
}

static int sg_usable(const cublas_sgemm *s, int set, tf_err *e) {
  if (s->sticky)
    return tf_fail(e, TF_STICKY, "cublas sgemm: the CUDA context is unusable after an "
                                      "earlier error");
  if (set < 0 || set >= s->o.input_sets)
    return tf_fail(e, TF_EXIT_FAIL, "cublas sgemm: no input set %d", set);
  return 0;
}

int cublas_sgemm_check(cublas_sgemm *s, int set, double *rel_err, tf_err *e) {
  *rel_err = 0.0;
  if (sg_usable(s, set, e)) return -1;
  size_t bytes = s->count[SG_C] * sizeof(float);
  if (sg_upload(s, set, e) ||
      CUDA_CHECK(cudaMemsetAsync(s->dev[set][SG_C], 0xFF, bytes, s->stream), e) ||
      sg_gemm(s, set, e) ||
      CUDA_CHECK(cudaMemcpyAsync(s->out, s->dev[set][SG_C], bytes, cudaMemcpyDeviceToHost,
                                 s->stream), e) ||
      CUDA_CHECK(cudaStreamSynchronize(s->stream), e)) {
    sg_failed(s, e);
    return tf_wrap(e, "check of cublasSgemm_v2, input set %d", set);
  }
  *rel_err = reference_rel_err(s->out, s->ref[set], s->count[SG_C]);
  return 0;
}

static int sg_enqueue(cublas_sgemm *s, int set, int n, tf_err *e) {
  for (int i = 0; i < n; i++)
    if (CUDA_CHECK(cudaMemsetAsync(s->flush, (int)(s->flush_value++ & 0xFFu), s->flush_bytes,
                                   s->stream), e) ||
        CUDA_CHECK(cudaEventRecord(s->pool.ev[2 * i], s->stream), e) || sg_gemm(s, set, e) ||
        CUDA_CHECK(cudaEventRecord(s->pool.ev[2 * i + 1], s->stream), e))
      return -1;
  return CUDA_CHECK(cudaStreamSynchronize(s->stream), e);
}

/* Median kernel time per call from the batch's CUPTI records, or -1 when they do not divide
 * evenly into the n calls (cuBLAS may launch more than one kernel per call: they are summed). */
static double sg_kernel_median(cublas_sgemm *s, int n) {
  tf_err ce = {0};
  int max = n * SG_MAX_KERNELS_PER_CALL;
  int got = cupti_timer_collect(s->pool.kern, max, &ce);
  if (got < n || got > max || got % n != 0) return -1.0;
  int per = got / n;
  for (int i = 0; i < n; i++) { /* in place: call i's records lie at i*per and after */
    double sum = 0.0;
    for (int j = 0; j < per; j++) sum += s->pool.kern[i * per + j];
    s->pool.kern[i] = sum;
  }
  return stats_median(s->pool.kern, n) / 1000.0;
}

int cublas_sgemm_sample(cublas_sgemm *s, int set, int samples, double *us, double *kernel_us,
                        tf_err *e) {
  *us = 0.0;
  *kernel_us = -1.0;
  if (sg_usable(s, set, e)) return -1;
  if (samples < 1 || samples > SG_MAX_SAMPLES)
    return tf_fail(e, TF_EXIT_FAIL, "cublas sgemm: %d samples (allowed: 1 to %d)", samples,
                   SG_MAX_SAMPLES);
  if (sample_pool_reserve(&s->pool, samples, SG_MAX_KERNELS_PER_CALL, e))
    return sg_failed(s, e);
  tf_err ce = {0};
  int timed = cupti_timer_begin(&ce) == 0; /* not open: no kernel-only time, not an error */
  if (sg_enqueue(s, set, samples, e)) {
    sg_failed(s, e);
    return tf_wrap(e, "sampling cublasSgemm_v2, input set %d", set);
  }
  for (int i = 0; i < samples; i++) {
    float ms = 0.0f;
    if (CUDA_CHECK(cudaEventElapsedTime(&ms, s->pool.ev[2 * i], s->pool.ev[2 * i + 1]), e))
      return sg_failed(s, e);
    s->pool.span[i] = 1000.0 * (double)ms;
  }
  *us = stats_median(s->pool.span, samples);
  if (timed) *kernel_us = sg_kernel_median(s, samples);
  return 0;
}

void cublas_sgemm_close(cublas_sgemm *s) {
  if (!s) return;
  if (!s->sticky) { /* after a sticky error the process ends anyway; never touch the device */
    if (s->have_stream) (void)cudaStreamSynchronize(s->stream);
    if (s->have_handle) (void)s->lib->cublasDestroy_v2(s->handle);
    for (int set = 0; set < SG_MAX_SETS; set++)
      for (int i = 0; i < 3; i++)
        if (s->dev[set][i]) (void)cudaFree(s->dev[set][i]);
    if (s->flush) (void)cudaFree(s->flush);
    sample_pool_release(&s->pool, 1);
    if (s->have_stream) (void)cudaStreamDestroy(s->stream);
    (void)cudaGetLastError();
  }
  for (int set = 0; set < SG_MAX_SETS; set++) {
    free(s->host[set][0]);
    free(s->host[set][1]);
    free(s->ref[set]);
  }
  free(s->out);
  sample_pool_release(&s->pool, 0); /* frees only after a sticky error; else already released */
  free(s);
}
