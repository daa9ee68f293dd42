/* devcheck: the gate's comparisons on the device (worker/devcheck.h).
 *
 * The compare kernel reads each element as double exactly as reference_get does (f16 with the
 * PTX conversion, bf16 as the top half of a float: both exact), judges it as reference_compare
 * does, and leaves per block the sums of squares, the first failing index and whether a
 * non-finite element failed. The block count is fixed by n alone, so the sums come out the
 * same on every run. */
#include "worker/devcheck.h"

#include <limits.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "compile/compile.h"  /* defines: compile_program, compile_release */
#include "worker/cuda_util.h" /* defines: CUDA_CHECK */

#define DC_THREADS 256
#define DC_BLOCKS 1024 /* about 8 blocks a multiprocessor on the largest GPUs: enough to stream */
#define DC_NONE ULLONG_MAX

/* A block's part of one comparison; the kernel's struct has the same layout. */
typedef struct dc_part {
  double num, den;
  unsigned long long bad; /* DC_NONE: none */
  int nonfinite, pad;
} dc_part;

const char *const devcheck_kernels[2] = {"tf_check_compare", "tf_check_same"};

/* The element types' codes are reference.h's, written in by devcheck_source. */
static const char body[] =
    "struct tf_check_part { double num, den; unsigned long long bad; int nonfinite, pad; };\n"
    "__device__ double tf_check_get(int t, const void *p, unsigned long long i) {\n"
    "  switch (t) {\n"
    "    case TF_F32: return ((const float *)p)[i];\n"
    "    case TF_F64: return ((const double *)p)[i];\n"
    "    case TF_F16: {\n"
    "      unsigned short h = ((const unsigned short *)p)[i];\n"
    "      float f;\n"
    "      asm(\"cvt.f32.f16 %0, %1;\" : \"=f\"(f) : \"h\"(h));\n"
    "      return f;\n"
    "    }\n"
    "    case TF_BF16: return __uint_as_float((unsigned)((const unsigned short *)p)[i] << 16);\n"
    "    case TF_I8: return ((const signed char *)p)[i];\n"
    "    case TF_U8: return ((const unsigned char *)p)[i];\n"
    "    case TF_I32: return ((const int *)p)[i];\n"
    "    case TF_U32: return ((const unsigned *)p)[i];\n"
    "    case TF_I64: return (double)((const long long *)p)[i];\n"
    "  }\n"
    "  return __longlong_as_double(0x7ff8000000000000LL);\n"
    "}\n"
    "__global__ void tf_check_compare(const void *got, int gt, const void *ref, int rt,\n"
    "                                 unsigned long long n, int kind, double rtol, double atol,\n"
    "                                 int allow_nonfinite, tf_check_part *out) {\n"
    "  __shared__ double snum[TF_THREADS], sden[TF_THREADS];\n"
    "  __shared__ unsigned long long sbad[TF_THREADS];\n"
    "  __shared__ int snf[TF_THREADS];\n"
    "  double num = 0.0, den = 0.0;\n"
    "  unsigned long long bad = ~0ULL;\n"
    "  int nf = 0;\n"
    "  const unsigned long long stride = (unsigned long long)gridDim.x * blockDim.x;\n"
    "  for (unsigned long long i = (unsigned long long)blockIdx.x * blockDim.x + threadIdx.x;\n"
    "       i < n; i += stride) {\n"
    "    const double g = tf_check_get(gt, got, i), r = tf_check_get(rt, ref, i);\n"
    "    int b;\n"
    "    if (!isfinite(g) || !isfinite(r)) {\n"
    "      const int same = (isnan(g) && isnan(r)) || g == r;\n"
    "      b = !(allow_nonfinite && same);\n"
    "      nf |= b;\n"
    "    } else {\n"
    "      const double d = g - r;\n"
    "      num += d * d;\n"
    "      den += r * r;\n"
    "      b = kind == TF_CHECK_TOL ? !(fabs(d) <= atol + rtol * fabs(r))\n"
    "          : kind == TF_CHECK_EXACT ? g != r : 0;\n"
    "    }\n"
    "    if (b && i < bad) bad = i;\n"
    "  }\n"
    "  const int t = threadIdx.x;\n"
    "  snum[t] = num, sden[t] = den, sbad[t] = bad, snf[t] = nf;\n"
    "  __syncthreads();\n"
    "  for (int h = TF_THREADS / 2; h > 0; h /= 2) {\n"
    "    if (t < h) {\n"
    "      snum[t] += snum[t + h];\n"
    "      sden[t] += sden[t + h];\n"
    "      if (sbad[t + h] < sbad[t]) sbad[t] = sbad[t + h];\n"
    "      snf[t] |= snf[t + h];\n"
    "    }\n"
    "    __syncthreads();\n"
    "  }\n"
    "  if (t == 0) {\n"
    "    tf_check_part p = {snum[0], sden[0], sbad[0], snf[0], 0};\n"
    "    out[blockIdx.x] = p;\n"
    "  }\n"
    "}\n"
    "__global__ void tf_check_same(const unsigned char *a, const unsigned char *b,\n"
    "                              unsigned long long n, int *differ) {\n"
    "  const unsigned long long stride = (unsigned long long)gridDim.x * blockDim.x;\n"
    "  const unsigned long long first = (unsigned long long)blockIdx.x * blockDim.x + threadIdx.x;\n"
    "  const uint4 *x = (const uint4 *)a, *y = (const uint4 *)b;\n"
    "  int d = 0;\n"
    "  for (unsigned long long i = first; i < n / 16; i += stride) {\n"
    "    const uint4 p = x[i], q = y[i];\n"
    "    d |= (p.x != q.x) | (p.y != q.y) | (p.z != q.z) | (p.w != q.w);\n"
    "  }\n"
    "  for (unsigned long long i = n / 16 * 16 + first; i < n; i += stride) d |= a[i] != b[i];\n"
    "  if (d) *differ = 1;\n"
    "}\n";

const char *devcheck_source(void) {
  static char text[sizeof body + 512];
  if (!text[0])
    snprintf(text, sizeof text,
             "/* tunefarm's gate on the device (worker/devcheck.c) */\n"
             "#define TF_THREADS %d\n#define TF_CHECK_TOL %d\n#define TF_CHECK_EXACT %d\n"
             "#define TF_F32 %d\n#define TF_F64 %d\n#define TF_F16 %d\n#define TF_BF16 %d\n"
             "#define TF_I8 %d\n#define TF_U8 %d\n#define TF_I32 %d\n#define TF_U32 %d\n"
             "#define TF_I64 %d\n%s",
             DC_THREADS, REFERENCE_CHECK_TOL, REFERENCE_CHECK_EXACT, REFERENCE_F32, REFERENCE_F64,
             REFERENCE_F16, REFERENCE_BF16, REFERENCE_I8, REFERENCE_U8, REFERENCE_I32,
             REFERENCE_U32, REFERENCE_I64, body);
  return text;
}

int devcheck_open(devcheck *d, const char *arch, const char *cache_dir, tf_err *e) {
  memset(d, 0, sizeof *d);
  compile_result cr;
  const compile_req req = {.text = devcheck_source(), .text_name = "tunefarm's device check",
                           .name_exprs = devcheck_kernels, .nexprs = 2, .arch = arch,
                           .cache_dir = cache_dir};
  if (compile_program(&req, &cr, e)) {
    if (e->code == TF_COMPILE_REFUSED) e->code = TF_EXIT_FAIL; /* ours, not the user's */
    compile_release(&cr);
    return tf_wrap(e, "the device check");
  }
  int rc = CUDA_CHECK(cudaLibraryLoadData(&d->lib, cr.cubin, NULL, NULL, 0, NULL, NULL, 0), e);
  if (rc == 0) d->open = 1;
  if (rc == 0) rc = CUDA_CHECK(cudaLibraryGetKernel(&d->compare, d->lib, cr.lowered[0]), e);
  if (rc == 0) rc = CUDA_CHECK(cudaLibraryGetKernel(&d->same, d->lib, cr.lowered[1]), e);
  compile_release(&cr);
  if (rc == 0) rc = CUDA_CHECK(cudaMalloc(&d->parts, DC_BLOCKS * sizeof(dc_part)), e);
  if (rc == 0)
    rc = CUDA_CHECK(cudaMallocHost(&d->parts_host, DC_BLOCKS * sizeof(dc_part) + 16), e);
  if (rc && e->code != TF_STICKY) devcheck_close(d);
  return rc ? tf_wrap(e, "the device check") : 0;
}

void devcheck_close(devcheck *d) {
  if (d->parts) (void)cudaFree(d->parts);
  if (d->parts_host) (void)cudaFreeHost(d->parts_host);
  if (d->open) (void)cudaLibraryUnload(d->lib);
  memset(d, 0, sizeof *d);
}

static unsigned dc_blocks(size_t n) {
  size_t b = (n + DC_THREADS - 1) / DC_THREADS;
  return b < 1 ? 1 : b > DC_BLOCKS ? DC_BLOCKS : (unsigned)b;
}

/* Element `i` of the device arrays got and ref, as reference_get reads them. */
static int dc_element(devcheck *d, cudaStream_t s, const void *got, int got_type, const void *ref,
                      int ref_type, size_t i, reference_verdict *v, tf_err *e) {
  const size_t gs = reference_type_size(got_type), rs = reference_type_size(ref_type);
  unsigned char *h = (unsigned char *)d->parts_host + DC_BLOCKS * sizeof(dc_part);
  if (CUDA_CHECK(cudaMemcpyAsync(h, (const char *)got + i * gs, gs, cudaMemcpyDeviceToHost, s), e) ||
      CUDA_CHECK(cudaMemcpyAsync(h + 8, (const char *)ref + i * rs, rs, cudaMemcpyDeviceToHost, s),
                 e) ||
      CUDA_CHECK(cudaStreamSynchronize(s), e))
    return -1;
  v->got = reference_get(got_type, h, 0);
  v->want = reference_get(ref_type, h + 8, 0);
  return 0;
}

int devcheck_compare(devcheck *d, cudaStream_t s, const void *got, int got_type, const void *ref,
                     int ref_type, size_t n, const reference_check *c, double tolerance,
                     reference_verdict *v, tf_err *e) {
  memset(v, 0, sizeof *v);
  v->bad = -1;
  unsigned long long count = n;
  int kind = c->kind, allow = c->allow_nonfinite;
  double rtol = c->rtol, atol = c->atol;
  void *args[] = {(void *)&got, &got_type, (void *)&ref, &ref_type, &count, &kind, &rtol, &atol,
                  &allow, &d->parts};
  const unsigned blocks = dc_blocks(n);
  if (CUDA_CHECK(cudaLaunchKernel((const void *)d->compare, (dim3){blocks, 1, 1}, (dim3){DC_THREADS, 1, 1}, args,
                                  0, s), e) ||
      CUDA_CHECK(cudaMemcpyAsync(d->parts_host, d->parts, blocks * sizeof(dc_part),
                                 cudaMemcpyDeviceToHost, s), e) ||
      CUDA_CHECK(cudaStreamSynchronize(s), e))
    return -1;
  const dc_part *p = d->parts_host;
  double num = 0.0, den = 0.0;
  unsigned long long bad = DC_NONE;
  int nonfinite = 0;
  for (unsigned b = 0; b < blocks; b++) {
    num += p[b].num;
    den += p[b].den;
    if (p[b].bad < bad) bad = p[b].bad;
    nonfinite |= p[b].nonfinite;
  }
  if (bad != DC_NONE) {
    v->bad = (long long)bad;
    if (dc_element(d, s, got, got_type, ref, ref_type, (size_t)bad, v, e)) return -1;
  }
  v->rel_err = nonfinite ? INFINITY : den == 0.0 ? (num == 0.0 ? 0.0 : INFINITY) : sqrt(num / den);
  v->pass = c->kind == REFERENCE_CHECK_L2 ? v->rel_err <= tolerance && !nonfinite : bad == DC_NONE;
  return 0;
}

int devcheck_same(devcheck *d, cudaStream_t s, const void *a, const void *b, size_t bytes,
                  int *same, tf_err *e) {
  if (((uintptr_t)a | (uintptr_t)b) & 15u)
    return tf_fail(e, TF_EXIT_FAIL, "the device check compares whole buffers (16-byte aligned)");
  unsigned long long n = bytes;
  void *args[] = {(void *)&a, (void *)&b, &n, &d->parts};
  int *flag = d->parts_host;
  if (CUDA_CHECK(cudaMemsetAsync(d->parts, 0, sizeof(int), s), e) ||
      CUDA_CHECK(cudaLaunchKernel((const void *)d->same, (dim3){dc_blocks(bytes / 16 + 1), 1, 1},
                                  (dim3){DC_THREADS, 1, 1}, args, 0, s), e) ||
      CUDA_CHECK(cudaMemcpyAsync(flag, d->parts, sizeof(int), cudaMemcpyDeviceToHost, s), e) ||
      CUDA_CHECK(cudaStreamSynchronize(s), e))
    return -1;
  *same = *flag == 0;
  return 0;
}
