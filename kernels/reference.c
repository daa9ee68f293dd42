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

/* ---------------------------------------------------------------- element types */

static const char *const type_names[REFERENCE_NTYPES] = {"f32", "f64", "f16", "bf16", "i8",
                                                         "u8",  "i32", "u32", "i64"};
static const unsigned char type_sizes[REFERENCE_NTYPES] = {4, 8, 2, 2, 1, 1, 4, 4, 8};

const char *reference_type_name(int type) {
  return type >= 0 && type < REFERENCE_NTYPES ? type_names[type] : NULL;
}

int reference_type_of(const char *name) {
  for (int t = 0; name && t < REFERENCE_NTYPES; t++)
    if (!strcmp(type_names[t], name)) return t;
  return -1;
}

size_t reference_type_size(int type) {
  return type >= 0 && type < REFERENCE_NTYPES ? type_sizes[type] : 0;
}

int reference_type_is_float(int type) { return type >= REFERENCE_F32 && type <= REFERENCE_BF16; }

void reference_type_range(int type, double *lo, double *hi) {
  switch (type) {
    case REFERENCE_I8: *lo = -128, *hi = 127; break;
    case REFERENCE_U8: *lo = 0, *hi = 255; break;
    case REFERENCE_I32: *lo = -2147483648.0, *hi = 2147483647.0; break;
    case REFERENCE_U32: *lo = 0, *hi = 4294967295.0; break;
    case REFERENCE_I64: *lo = -9007199254740992.0, *hi = 9007199254740992.0; break;
    default: *lo = -INFINITY, *hi = INFINITY; break;
  }
}

static uint32_t f32_bits(float f) {
  uint32_t x;
  memcpy(&x, &f, sizeof x);
  return x;
}

static float bits_f32(uint32_t x) {
  float f;
  memcpy(&f, &x, sizeof f);
  return f;
}

/* Round q (the kept bits) by rem, the dropped bits, of which `half` is the halfway value: to
 * nearest, ties to even. A carry out of the mantissa moves into the exponent, which is the
 * right result (up to infinity). */
static uint32_t round_even(uint32_t q, uint32_t rem, uint32_t half) {
  return rem > half || (rem == half && (q & 1u)) ? q + 1u : q;
}

unsigned short reference_f32_to_f16(float f) {
  const uint32_t x = f32_bits(f), sign = (x >> 16) & 0x8000u, ax = x & 0x7fffffffu;
  if (ax > 0x7f800000u) return (unsigned short)(sign | 0x7e00u | ((ax >> 13) & 0x3ffu)); /* NaN */
  if (ax >= 0x47800000u) return (unsigned short)(sign | 0x7c00u); /* 2^16 and beyond: inf */
  if (ax >= 0x38800000u) /* a normal half: rebias the exponent, keep 10 mantissa bits */
    return (unsigned short)(sign | round_even((ax >> 13) - (112u << 10), ax & 0x1fffu, 0x1000u));
  const int e = (int)(ax >> 23);
  if (e < 102) return (unsigned short)sign; /* below 2^-25: rounds to zero */
  const uint32_t m = (ax & 0x7fffffu) | 0x800000u, shift = (uint32_t)(126 - e); /* 14..24 */
  return (unsigned short)(sign | round_even(m >> shift, m & ((1u << shift) - 1u),
                                            1u << (shift - 1u)));
}

float reference_f16_to_f32(unsigned short h) {
  const uint32_t sign = (uint32_t)(h & 0x8000u) << 16, e = (h >> 10) & 0x1fu, m = h & 0x3ffu;
  if (e == 0) {
    float v = ldexpf((float)m, -24);
    return sign ? -v : v;
  }
  if (e == 31) return bits_f32(sign | 0x7f800000u | (m << 13));
  return bits_f32(sign | ((e + 112u) << 23) | (m << 13));
}

unsigned short reference_f32_to_bf16(float f) {
  const uint32_t x = f32_bits(f);
  if ((x & 0x7fffffffu) > 0x7f800000u) return (unsigned short)((x >> 16) | 0x40u); /* quiet NaN */
  return (unsigned short)(round_even(x >> 16, x & 0xffffu, 0x8000u));
}

float reference_bf16_to_f32(unsigned short h) { return bits_f32((uint32_t)h << 16); }

double reference_get(int type, const void *p, size_t i) {
  switch (type) {
    case REFERENCE_F32: return ((const float *)p)[i];
    case REFERENCE_F64: return ((const double *)p)[i];
    case REFERENCE_F16: return reference_f16_to_f32(((const unsigned short *)p)[i]);
    case REFERENCE_BF16: return reference_bf16_to_f32(((const unsigned short *)p)[i]);
    case REFERENCE_I8: return ((const int8_t *)p)[i];
    case REFERENCE_U8: return ((const uint8_t *)p)[i];
    case REFERENCE_I32: return ((const int32_t *)p)[i];
    case REFERENCE_U32: return ((const uint32_t *)p)[i];
    case REFERENCE_I64: return (double)((const int64_t *)p)[i];
    default: return NAN;
  }
}

/* v toward zero, within [lo, hi]; NaN reads 0. */
static double saturate(double v, double lo, double hi) {
  if (v != v) return 0.0;
  v = trunc(v);
  return v < lo ? lo : v > hi ? hi : v;
}

void reference_put(int type, void *p, size_t i, double v) {
  double lo, hi;
  reference_type_range(type, &lo, &hi);
  switch (type) {
    case REFERENCE_F32: ((float *)p)[i] = (float)v; break;
    case REFERENCE_F64: ((double *)p)[i] = v; break;
    case REFERENCE_F16: ((unsigned short *)p)[i] = reference_f32_to_f16((float)v); break;
    case REFERENCE_BF16: ((unsigned short *)p)[i] = reference_f32_to_bf16((float)v); break;
    case REFERENCE_I8: ((int8_t *)p)[i] = (int8_t)saturate(v, lo, hi); break;
    case REFERENCE_U8: ((uint8_t *)p)[i] = (uint8_t)saturate(v, lo, hi); break;
    case REFERENCE_I32: ((int32_t *)p)[i] = (int32_t)saturate(v, lo, hi); break;
    case REFERENCE_U32: ((uint32_t *)p)[i] = (uint32_t)saturate(v, lo, hi); break;
    case REFERENCE_I64: ((int64_t *)p)[i] = (int64_t)saturate(v, lo, hi); break;
    default: break;
  }
}

/* One draw of the fill: `r` and `r2` two of the generator's outputs (r2 only for a normal). */
static double fill_value(const reference_init *in, uint64_t r, uint64_t r2) {
  switch (in->kind) {
    case REFERENCE_INIT_UNIFORM: /* 24 random bits, as reference_fill */
      return in->a + (in->b - in->a) * ((double)(r >> 40) * 0x1p-24);
    case REFERENCE_INIT_NORMAL: { /* Box-Muller; u1 is never 0 */
      const double u1 = ((double)(r >> 11) + 0.5) * 0x1p-53, u2 = (double)(r2 >> 11) * 0x1p-53;
      return in->a + in->b * sqrt(-2.0 * log(u1)) * cos(6.283185307179586 * u2);
    }
    case REFERENCE_INIT_INT: { /* [a, b] inclusive by a multiply-shift of 64 random bits */
      const uint64_t span = (uint64_t)(in->b - in->a) + 1u;
      return in->a + (double)(uint64_t)(((unsigned __int128)r * span) >> 64);
    }
    default: return in->a;
  }
}

/* The init a buffer of `type` gets: the default made explicit. */
static reference_init init_of(int type, const reference_init *init) {
  reference_init d = init ? *init : (reference_init){0};
  if (d.kind != REFERENCE_INIT_DEFAULT) return d;
  if (reference_type_is_float(type)) return (reference_init){REFERENCE_INIT_UNIFORM, -1.0, 1.0};
  return (reference_init){REFERENCE_INIT_INT, REFERENCE_INT_LO, REFERENCE_INT_HI};
}

void reference_fill_typed(void *x, int type, size_t n, const reference_init *init,
                          unsigned long long seed) {
  if (type == REFERENCE_F32 && (!init || init->kind == REFERENCE_INIT_DEFAULT)) {
    reference_fill(x, n, seed); /* the inputs every f32 ledger was measured on */
    return;
  }
  const reference_init in = init_of(type, init);
  uint64_t state = seed;
  state = splitmix64(&state);
  int nonzero = 0;
  for (size_t i = 0; i < n; i++) {
    const uint64_t r = splitmix64(&state);
    const uint64_t r2 = in.kind == REFERENCE_INIT_NORMAL ? splitmix64(&state) : 0;
    reference_put(type, x, i, fill_value(&in, r, r2));
    nonzero |= reference_get(type, x, i) != 0.0;
  }
  if (n == 0 || nonzero || in.kind == REFERENCE_INIT_CONST) return;
  /* all zeros would hide unwritten outputs: the range's far end instead */
  const double far = in.kind == REFERENCE_INIT_NORMAL ? in.a + in.b
                     : in.kind == REFERENCE_INIT_UNIFORM ? (in.a != 0.0 ? in.a
                                                                         : 0.5 * in.b)
                     : (in.b != 0.0 ? in.b : in.a);
  reference_put(type, x, 0, far);
}

/* ---------------------------------------------------------------- per-output checks */

void reference_compare(const void *got, int got_type, const void *ref, int ref_type, size_t n,
                       const reference_check *c, double tolerance, reference_verdict *v) {
  double num = 0.0, den = 0.0;
  int nonfinite = 0, failed = 0;
  memset(v, 0, sizeof *v);
  v->bad = -1;
  for (size_t i = 0; i < n; i++) {
    const double g = reference_get(got_type, got, i), r = reference_get(ref_type, ref, i);
    int bad;
    if (!isfinite(g) || !isfinite(r)) {
      const int same = (isnan(g) && isnan(r)) || g == r;
      bad = !(c->allow_nonfinite && same);
      nonfinite |= bad;
    } else {
      const double d = g - r;
      num += d * d;
      den += r * r;
      bad = c->kind == REFERENCE_CHECK_TOL     ? !(fabs(d) <= c->atol + c->rtol * fabs(r))
            : c->kind == REFERENCE_CHECK_EXACT ? g != r
                                               : 0;
    }
    if (bad && !failed) {
      failed = 1;
      v->bad = (long long)i;
      v->got = g;
      v->want = r;
    }
  }
  v->rel_err = nonfinite ? INFINITY : den == 0.0 ? (num == 0.0 ? 0.0 : INFINITY) : sqrt(num / den);
  v->pass = c->kind == REFERENCE_CHECK_L2 ? v->rel_err <= tolerance && !nonfinite : !failed;
}

double reference_verdict_error(const reference_verdict *v, double tolerance) {
  if (!v->pass) return v->rel_err > tolerance ? v->rel_err : INFINITY;
  return v->rel_err > tolerance ? tolerance : v->rel_err;
}

void reference_verdict_text(const reference_verdict *v, const char *output, char *buf,
                            size_t len) {
  if (v->pass)
    snprintf(buf, len, "output '%s' passes (relative error %.3g)", output, v->rel_err);
  else if (v->bad >= 0)
    snprintf(buf, len, "output '%s' fails its check: element %lld is %.9g, the reference %.9g "
             "(relative error %.3g)", output, v->bad, v->got, v->want, v->rel_err);
  else
    snprintf(buf, len, "output '%s' fails its check: relative error %.3g", output, v->rel_err);
}
