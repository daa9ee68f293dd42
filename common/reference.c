/* reference: seeded fills, element types and the comparison of outputs with their
 * reference's. The contract is common/reference.h. */
#include "common/reference.h"

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
