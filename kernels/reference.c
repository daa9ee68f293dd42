/* reference: the CPU references every kernel output is checked against, in double, and the
 * seeded input generator. The contract is kernels/reference.h.
 *
 * matmul is blocked (below: 128 rows of C by 256 columns to a task, 256-deep panels of B),
 * and its tasks are shared among OpenMP threads (OMP_NUM_THREADS; by default one per CPU the
 * process may run on when it starts; a measure child's, worker/cpus.h). */
#include "kernels/reference.h"

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

/* ---------------------------------------------------------------- generator */

static uint64_t splitmix64(uint64_t *state) {
  uint64_t z = (*state += 0x9e3779b97f4a7c15ULL);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
  return z ^ (z >> 31);
}

void reference_fill(float *x, size_t n, unsigned long long seed) {
  /* Mix the seed once, so that seeds s and s + the generator's increment do not give
   * shifted copies of one stream. */
  uint64_t state = seed;
  state = splitmix64(&state);
  int nonzero = 0;
  for (size_t i = 0; i < n; i++) {
    /* 24 random bits -> k/2^23 - 1 in [-1, 1), exactly representable in float. */
    int32_t k = (int32_t)(splitmix64(&state) >> 40);
    x[i] = (float)(k - (1 << 23)) * 0x1p-23f;
    nonzero |= x[i] != 0.0f;
  }
  if (n > 0 && !nonzero) x[0] = 0.5f; /* all zeros would hide unwritten outputs */
}

/* splitmix64's finaliser over (set, buffer): the inputs recorded in ledgers depend on it, so
 * it must not change. */
unsigned long long reference_input_seed(unsigned long long seed, int set, int buffer) {
  uint64_t z = seed + 0x9E3779B97F4A7C15ULL * (uint64_t)(set * REFERENCE_SEED_STRIDE + buffer + 1);
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
  return z ^ (z >> 31);
}

/* ---------------------------------------------------------------- layouts */

/* What each family's reference reads and writes, by name: spec_load checks a spec against it
 * (reference_layout), so a template the reference cannot check is refused when it is loaded,
 * on every path (check, audit, the simulated device), not first on a GPU. */
typedef struct family_desc {
  const char *name;
  const char *dims[4];   /* NULL-terminated */
  const char *inputs[4]; /* NULL-terminated */
  const char *output;
} family_desc;

static const family_desc families[] = {
    {"matmul", {"M", "N", "K", NULL}, {"A", "B", NULL}, "C"},
    {"layernorm", {"R", "D", NULL}, {"x", "gamma", "beta", NULL}, "y"},
    {"scale2", {"N", NULL}, {"x", NULL}, "y"},
};
#define NFAMILIES (sizeof families / sizeof families[0])

static const family_desc *family_find(const char *name) {
  for (size_t i = 0; name && i < NFAMILIES; i++)
    if (!strcmp(families[i].name, name)) return &families[i];
  return NULL;
}

static int name_in(const char *name, int n, const char *const *names) {
  for (int i = 0; i < n; i++)
    if (names[i] && !strcmp(names[i], name)) return i;
  return -1;
}

int reference_layout(const char *family, int ndims, const char *const *dim_names, int nbuffers,
                     const char *const *buf_names, const int *outputs, const char **key,
                     tf_err *e) {
  const family_desc *f = family_find(family);
  *key = "family";
  if (!f) {
    char known[128] = "";
    for (size_t i = 0; i < NFAMILIES; i++)
      snprintf(known + strlen(known), sizeof known - strlen(known), "%s%s", i ? ", " : "",
               families[i].name);
    return tf_fail(e, TF_EXIT_INPUT, "unknown family '%s': no CPU reference checks it (known: %s)",
                   family ? family : "(null)", known);
  }
  *key = "problem";
  for (int i = 0; f->dims[i]; i++)
    if (name_in(f->dims[i], ndims, dim_names) < 0)
      return tf_fail(e, TF_EXIT_INPUT, "family '%s' needs dimension '%s'", f->name, f->dims[i]);
  *key = "buffers";
  for (int i = 0; f->inputs[i]; i++) {
    int b = name_in(f->inputs[i], nbuffers, buf_names);
    if (b < 0 || outputs[b])
      return tf_fail(e, TF_EXIT_INPUT, "family '%s' needs an input buffer '%s'", f->name,
                     f->inputs[i]);
  }
  int b = name_in(f->output, nbuffers, buf_names);
  if (b < 0 || !outputs[b])
    return tf_fail(e, TF_EXIT_INPUT, "family '%s' needs an output buffer '%s'", f->name,
                   f->output);
  return 0;
}

static int buffer_index(const reference_io *io, const char *name) {
  for (int i = 0; i < io->nbuffers; i++)
    if (io->buf_names[i] && !strcmp(io->buf_names[i], name)) return i;
  return -1;
}

int reference_output_index(const reference_io *io) {
  const family_desc *f = io ? family_find(io->family) : NULL;
  return f ? buffer_index(io, f->output) : -1;
}

static int dim_get(const reference_io *io, const char *name, long long *v, tf_err *e) {
  for (int i = 0; i < io->ndims; i++)
    if (io->dim_names[i] && !strcmp(io->dim_names[i], name)) {
      if (io->dims[i] < 1)
        return tf_fail(e, TF_EXIT_INPUT, "reference '%s': dimension '%s' is %lld, must be positive",
                       io->family, name, io->dims[i]);
      *v = io->dims[i];
      return 0;
    }
  return tf_fail(e, TF_EXIT_INPUT, "reference '%s': no dimension named '%s'", io->family, name);
}

/* Buffer `name` with exactly `want` elements; inputs must have host data. */
static int buf_get(const reference_io *io, const char *name, long long want, int input,
                   const float **p, tf_err *e) {
  int i = buffer_index(io, name);
  if (i < 0) return tf_fail(e, TF_EXIT_INPUT, "reference '%s': no buffer named '%s'", io->family, name);
  if (io->counts[i] != want)
    return tf_fail(e, TF_EXIT_INPUT, "reference '%s': buffer '%s' holds %lld elements, expected %lld",
                   io->family, name, io->counts[i], want);
  if (input && !io->bufs[i])
    return tf_fail(e, TF_EXIT_INPUT, "reference '%s': input buffer '%s' has no data", io->family, name);
  if (p) *p = io->bufs[i];
  return 0;
}

/* ---------------------------------------------------------------- matmul */

enum { MM_ROWS = 4, MM_COLS = 256, MM_DEPTH = 256, MM_GROUP = 128 };

/* c[0..n) += a * b[0..n), products and sums in double. A full panel's width is a constant,
 * which lets gcc vectorize the loop at -O2 too (its cheapest cost model accepts no
 * remainder loop); a ragged last panel takes the general loop. */
static void axpy(double *restrict c, double a, const float *restrict b, size_t n) {
  if (n == MM_COLS)
    for (size_t j = 0; j < MM_COLS; j++) c[j] += a * (double)b[j];
  else
    for (size_t j = 0; j < n; j++) c[j] += a * (double)b[j];
}

/* A task is MM_GROUP rows of C by MM_COLS columns. Each MM_DEPTH-deep panel of B (256 KB)
 * is read from memory once per task and then from L2 by MM_ROWS rows of C at a time, whose
 * 8 KB stay in L1: at 4096x3072x6144 that is 2.4 GB of B read per input set instead of the
 * 77 GB of streaming B once per MM_ROWS rows. Every C element is summed from zero in
 * ascending k by whichever thread owns its task (a product of two floats is exact in
 * double), so the result is bit-identical for any number of OpenMP threads, and to a plain
 * triple loop in that order. */
static void matmul(const float *A, const float *B, double *C, size_t M, size_t N, size_t K) {
  const long long groups = (long long)((M + MM_GROUP - 1) / MM_GROUP);
  const long long panels = (long long)((N + MM_COLS - 1) / MM_COLS);
#pragma omp parallel for schedule(dynamic, 1)
  for (long long t = 0; t < groups * panels; t++) {
    const size_t g0 = (size_t)(t / panels) * MM_GROUP, j0 = (size_t)(t % panels) * MM_COLS;
    const size_t g1 = M - g0 < MM_GROUP ? M : g0 + MM_GROUP;
    const size_t nj = N - j0 < MM_COLS ? N - j0 : MM_COLS;
    for (size_t i = g0; i < g1; i++) memset(C + i * N + j0, 0, nj * sizeof(double));
    for (size_t k0 = 0; k0 < K; k0 += MM_DEPTH) {
      const size_t k1 = K - k0 < MM_DEPTH ? K : k0 + MM_DEPTH;
      for (size_t i0 = g0; i0 < g1; i0 += MM_ROWS) {
        const size_t i1 = g1 - i0 < MM_ROWS ? g1 : i0 + MM_ROWS;
        for (size_t k = k0; k < k1; k++)
          for (size_t i = i0; i < i1; i++) axpy(C + i * N + j0, A[i * K + k], B + k * N + j0, nj);
      }
    }
  }
}

static int matmul_io(const reference_io *io, double *out, tf_err *e) {
  long long M, N, K;
  const float *A, *B;
  if (dim_get(io, "M", &M, e) || dim_get(io, "N", &N, e) || dim_get(io, "K", &K, e)) return -1;
  if (buf_get(io, "A", M * K, 1, &A, e) || buf_get(io, "B", K * N, 1, &B, e) ||
      buf_get(io, "C", M * N, 0, NULL, e))
    return -1;
  matmul(A, B, out, (size_t)M, (size_t)N, (size_t)K);
  return 0;
}

/* ---------------------------------------------------------------- layernorm */

static void layernorm(const float *x, const float *gamma, const float *beta, double *y, size_t R,
                      size_t D) {
  for (size_t r = 0; r < R; r++) {
    const float *xr = x + r * D;
    double sum = 0.0, sq = 0.0;
    for (size_t i = 0; i < D; i++) sum += xr[i];
    const double mean = sum / (double)D;
    for (size_t i = 0; i < D; i++) {
      const double d = xr[i] - mean;
      sq += d * d;
    }
    const double rstd = 1.0 / sqrt(sq / (double)D + REFERENCE_LN_EPS);
    for (size_t i = 0; i < D; i++) y[r * D + i] = (xr[i] - mean) * rstd * gamma[i] + beta[i];
  }
}

static int layernorm_io(const reference_io *io, double *out, tf_err *e) {
  long long R, D;
  const float *x, *gamma, *beta;
  if (dim_get(io, "R", &R, e) || dim_get(io, "D", &D, e)) return -1;
  if (buf_get(io, "x", R * D, 1, &x, e) || buf_get(io, "gamma", D, 1, &gamma, e) ||
      buf_get(io, "beta", D, 1, &beta, e) || buf_get(io, "y", R * D, 0, NULL, e))
    return -1;
  layernorm(x, gamma, beta, out, (size_t)R, (size_t)D);
  return 0;
}

/* ---------------------------------------------------------------- scale2 */

static int scale2_io(const reference_io *io, double *out, tf_err *e) {
  long long N;
  const float *x;
  if (dim_get(io, "N", &N, e)) return -1;
  if (buf_get(io, "x", N, 1, &x, e) || buf_get(io, "y", N, 0, NULL, e)) return -1;
  for (long long i = 0; i < N; i++) out[i] = 2.0 * (double)x[i];
  return 0;
}

/* ---------------------------------------------------------------- entry points */

int reference_compute(const reference_io *io, double *out, tf_err *e) {
  if (!io || !out) return tf_fail(e, TF_EXIT_FAIL, "reference: no job or no output space");
  const family_desc *f = family_find(io->family);
  if (!f)
    return tf_fail(e, TF_EXIT_INPUT, "reference: unknown family '%s'",
                   io->family ? io->family : "(null)");
  if (!strcmp(f->name, "matmul")) return matmul_io(io, out, e);
  if (!strcmp(f->name, "layernorm")) return layernorm_io(io, out, e);
  return scale2_io(io, out, e);
}

/* Four partial sums, so that the adds do not wait on each other: the gate runs this over every
 * arm's output on every input set of every generation (a million elements at matmul 1024), and
 * one chain of dependent adds made it three times slower. A non-finite element makes its sum
 * NaN or infinite, which the end catches, so no test is needed per element. These are the
 * sums of (got - ref)^2 and ref^2 over [lo, hi). */
static void rel_err_chunk(const float *got, const double *ref, size_t lo, size_t hi, double *num,
                          double *den) {
  double nk[4] = {0.0, 0.0, 0.0, 0.0}, dk[4] = {0.0, 0.0, 0.0, 0.0};
  size_t i = lo;
  for (; i + 4 <= hi; i += 4)
    for (int k = 0; k < 4; k++) {
      const double d = (double)got[i + k] - ref[i + k];
      nk[k] += d * d;
      dk[k] += ref[i + k] * ref[i + k];
    }
  for (; i < hi; i++) {
    const double d = (double)got[i] - ref[i];
    nk[0] += d * d;
    dk[0] += ref[i] * ref[i];
  }
  *num = (nk[0] + nk[1]) + (nk[2] + nk[3]);
  *den = (dk[0] + dk[1]) + (dk[2] + dk[3]);
}

enum { REL_CHUNKS = 64 };

/* The output is cut into REL_CHUNKS fixed chunks whose sums are added in order, so the
 * figure is the same for any number of OpenMP threads; threads share the chunks only for
 * outputs of millions of elements, where one core takes tens of milliseconds a check. */
double reference_rel_err(const float *got, const double *ref, size_t n) {
  double num[REL_CHUNKS], den[REL_CHUNKS];
#pragma omp parallel for schedule(static) if (n >= ((size_t)1 << 20))
  for (int c = 0; c < REL_CHUNKS; c++)
    rel_err_chunk(got, ref, n * (size_t)c / REL_CHUNKS, n * (size_t)(c + 1) / REL_CHUNKS, &num[c],
                  &den[c]);
  double sn = 0.0, sd = 0.0;
  for (int c = 0; c < REL_CHUNKS; c++) {
    sn += num[c];
    sd += den[c];
  }
  if (!isfinite(sn)) return INFINITY;
  if (sd == 0.0) return sn == 0.0 ? 0.0 : INFINITY;
  return sqrt(sn / sd);
}
