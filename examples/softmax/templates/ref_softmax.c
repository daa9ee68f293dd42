/* The CPU reference of softmax.cu as a shared library (include/tunefarm_ref.h), for
 * softmax_cpu.json: per row of x[R][D], in double, y = exp(x - max) / sum(exp(x - max)) and
 * lse = max + log(sum). Build it from the repository's root:
 *   mkdir -p examples/softmax/templates/lib && cc -shared -fPIC -O2 -Iinclude \
 *     -o examples/softmax/templates/lib/libref_softmax.so examples/softmax/templates/ref_softmax.c -lm
 */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "tunefarm_ref.h"

int tunefarm_ref_abi_version(void) { return TUNEFARM_REF_ABI_VERSION; }

static const tf_ref_buffer *buffer(const tf_ref_args *a, const char *name) {
  for (int i = 0; i < a->nbuffers; i++)
    if (strcmp(a->buffers[i].name, name) == 0) return &a->buffers[i];
  return NULL;
}

static long long dim(const tf_ref_args *a, const char *name) {
  for (int i = 0; i < a->ndims; i++)
    if (strcmp(a->dims[i].name, name) == 0) return a->dims[i].value.i;
  return -1;
}

/* One row: m its largest element, s the sum of exp(x - m). */
static void row(const float *x, double *y, double *lse, long long D) {
  double m = x[0], s = 0.0;
  for (long long i = 1; i < D; i++) m = x[i] > m ? x[i] : m;
  for (long long i = 0; i < D; i++) s += exp((double)x[i] - m);
  for (long long i = 0; i < D; i++) y[i] = exp((double)x[i] - m) / s;
  *lse = m + log(s);
}

int tunefarm_reference(const tf_ref_args *a, char *err, size_t errlen) {
  const tf_ref_buffer *x = buffer(a, "x"), *y = buffer(a, "y"), *lse = buffer(a, "lse");
  const long long R = dim(a, "R"), D = dim(a, "D");
  if (!x || !y || !lse || R < 1 || D < 1 || x->type != TF_REF_F32 || !x->in ||
      y->out_type != TF_REF_F64 || lse->out_type != TF_REF_F64 ||
      x->count != (uint64_t)(R * D) || y->count != x->count || lse->count != (uint64_t)R) {
    snprintf(err, errlen, "ref_softmax needs f32 x[R*D] in, y[R*D] and lse[R] out, dims R, D");
    return 1;
  }
  const float *xs = x->in;
  double *ys = y->out, *ls = lse->out;
  for (long long r = 0; r < R; r++) row(xs + r * D, ys + r * D, ls + r, D);
  return 0;
}
