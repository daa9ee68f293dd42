/* reference: CPU references, accumulated in double, that every kernel output is
 * checked against, and the seeded input generator.
 *
 * Families and their buffer layouts (all float32, row-major):
 *   "matmul":    A[M*K], B[K*N] -> C[M*N] = A*B              dims M, N, K
 *   "layernorm": x[R*D], gamma[D], beta[D] -> y[R*D]          dims R (rows), D (width)
 *                y = (x - mean) / sqrt(var + eps) * gamma + beta, var the biased variance,
 *                eps = REFERENCE_LN_EPS.
 *   "scale2":    x[N] -> y[N] = 2*x (tests)                 dim N
 * Buffers are passed in the spec's buffer order; the reference knows which are
 * inputs by name (A, B, C / x, gamma, beta, y). */
#ifndef TF_REFERENCE_H
#define TF_REFERENCE_H

#include <stddef.h>

#include "common/err.h"

#define REFERENCE_LN_EPS 1e-5

/* Fill n floats with uniform values in [-1, 1) from a seeded generator (never zeros-only). */
void reference_fill(float *x, size_t n, unsigned long long seed);

/* The seed of one input buffer: buffer `buffer` (its index in the spec's buffer list) of input
 * set `set` in a job seeded with `seed`. Independent streams per (seed, set, buffer). Every
 * path that feeds a kernel (the cuda backend's arms, the bench's cuBLAS arm) fills with
 * reference_fill(x, n, reference_input_seed(...)), so they all see the same inputs. */
unsigned long long reference_input_seed(unsigned long long seed, int set, int buffer);
/* The stride of `set` in those seeds: a spec's most buffers (SPEC_MAX_BUFFERS, which
 * common/spec.c checks it equals), so that no two (set, buffer) pairs share a stream. */
#define REFERENCE_SEED_STRIDE 8

/* The family's output for the given inputs. `bufs` and `names` list every buffer
 * (inputs and outputs) of the job; the output buffer(s) are written as double into `out`
 * (same element count as the output buffer). Returns -1 for an unknown family or a
 * buffer layout that does not match it. */
typedef struct reference_io {
  const char *family;
  int ndims;
  const char *const *dim_names;
  const long long *dims;
  int nbuffers;
  const char *const *buf_names;
  const float *const *bufs;  /* host copies of every buffer (outputs ignored) */
  const long long *counts;
} reference_io;

/* Does a kernel with these dimensions and buffers (outputs[i]: buffer i is written) fit the
 * family's reference: a known family, its dimensions, its input and output buffers by name?
 * On failure *key is the spec key at fault ("family", "problem" or "buffers") and e says
 * why (TF_EXIT_INPUT); the caller names the file. */
int reference_layout(const char *family, int ndims, const char *const *dim_names, int nbuffers,
                     const char *const *buf_names, const int *outputs, const char **key,
                     tf_err *e);

/* Index of the buffer the reference writes, or -1. */
int reference_output_index(const reference_io *io);
int reference_compute(const reference_io *io, double *out, tf_err *e);

/* ||got - ref||_2 / ||ref||_2 in double; INFINITY if any got is not finite. */
double reference_rel_err(const float *got, const double *ref, size_t n);

#endif
