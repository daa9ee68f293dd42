#include "common/numfmt.h"

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

typedef unsigned __int128 u128;

/* 10^n for 0 <= n <= 22 (a constant table: numfmt_g may run on several threads at once) */
static const uint64_t p10[20] = {
    1ull, 10ull, 100ull, 1000ull, 10000ull, 100000ull, 1000000ull, 10000000ull, 100000000ull,
    1000000000ull, 10000000000ull, 100000000000ull, 1000000000000ull, 10000000000000ull,
    100000000000000ull, 1000000000000000ull, 10000000000000000ull, 100000000000000000ull,
    1000000000000000000ull, 10000000000000000000ull};

static u128 pow10_u128(int n) { return n < 20 ? p10[n] : (u128)p10[19] * p10[n - 19]; }

/* floor(m * 2^e * 10^s) for s >= 0 and a product below 2^128; *up: whether rounding it to
 * the nearest integer, ties to even, adds one. */
static u128 scaled(uint64_t m, int e, int s, int *up) {
  u128 num = (u128)m * pow10_u128(s);
  *up = 0;
  if (e >= 0) return num << e;
  int sh = -e; /* <= 72 in the fast path's range */
  u128 q = num >> sh, r = num & (((u128)1 << sh) - 1), half = (u128)1 << (sh - 1);
  *up = r > half || (r == half && (q & 1));
  return q;
}

/* The decimal digits of d (at most 17), most significant first, into out; their count. */
static int digits_of(uint64_t d, char *out) {
  char tmp[24];
  int n = 0;
  do {
    tmp[n++] = (char)('0' + (int)(d % 10));
    d /= 10;
  } while (d);
  for (int i = 0; i < n; i++) out[i] = tmp[n - 1 - i];
  return n;
}

/* %g's layout of the P digits dig (v rounded to them is dig * 10^(x - P + 1)): fixed when
 * -4 <= x < P, else with an exponent; trailing zeros of the fraction and a bare point go. */
static int layout(char *buf, int neg, const char *dig, int p, int x) {
  int last = p; /* digits kept: drop trailing zeros */
  while (last > 1 && dig[last - 1] == '0') last--;
  char *o = buf;
  if (neg) *o++ = '-';
  if (x < -4 || x >= p) {
    *o++ = dig[0];
    if (last > 1) {
      *o++ = '.';
      memcpy(o, dig + 1, (size_t)(last - 1));
      o += last - 1;
    }
    int ax = x < 0 ? -x : x;
    *o++ = 'e';
    *o++ = x < 0 ? '-' : '+';
    if (ax >= 100) *o++ = (char)('0' + ax / 100);
    *o++ = (char)('0' + ax / 10 % 10);
    *o++ = (char)('0' + ax % 10);
  } else if (x >= 0) {
    memcpy(o, dig, (size_t)(x + 1)); /* x + 1 <= p digits before the point */
    o += x + 1;
    if (last > x + 1) {
      *o++ = '.';
      memcpy(o, dig + x + 1, (size_t)(last - x - 1));
      o += last - x - 1;
    }
  } else {
    *o++ = '0';
    *o++ = '.';
    for (int i = 0; i < -x - 1; i++) *o++ = '0';
    memcpy(o, dig, (size_t)last);
    o += last;
  }
  *o = '\0';
  return (int)(o - buf);
}

int numfmt_lld(char *buf, long long v) {
  /* the magnitude as unsigned: -LLONG_MIN does not fit a long long */
  unsigned long long m = v < 0 ? 0ull - (unsigned long long)v : (unsigned long long)v;
  char tmp[24];
  int n = 0, k = 0;
  do {
    tmp[n++] = (char)('0' + (int)(m % 10));
    m /= 10;
  } while (m);
  if (v < 0) buf[k++] = '-';
  while (n) buf[k++] = tmp[--n];
  buf[k] = '\0';
  return k;
}

int numfmt_g(char *buf, double v, int precision) {
  double a = fabs(v);
  if (!(a >= 1e-6 && a < 1e17) || precision < 1 || precision > 17)
    return snprintf(buf, NUMFMT_MAX, "%.*g", precision, v);
  uint64_t bits;
  memcpy(&bits, &a, sizeof bits);
  uint64_t m = (bits & ((1ull << 52) - 1)) | (1ull << 52); /* normal: the range has no others */
  int e = (int)(bits >> 52) - 1075;                           /* a = m * 2^e exactly */
  int p = precision;
  /* x, the exponent: 10^x <= a < 10^(x+1) exactly, i.e. floor(a * 10^(p-1-x)) has p digits */
  int x = (int)floor((e + 52) * 0.30102999566398120), up = 0; /* within one of it */
  u128 lo = pow10_u128(p - 1), hi = lo * 10, d = 0;
  for (int tries = 0;; tries++) {
    int s = p - 1 - x; /* m < 2^53 and s <= 22: m * 10^s < 2^127 */
    if (tries == 3 || s < 0 || s > 22) return snprintf(buf, NUMFMT_MAX, "%.*g", precision, v);
    d = scaled(m, e, s, &up);
    if (d >= hi) x++;        /* the guess was low */
    else if (d < lo) x--;    /* the guess was high */
    else break;
  }
  d += (u128)up; /* rounded to p digits; a carry into one more makes it 10^(x+1) */
  if (d == hi) d = lo, x++;
  char dig[40];
  digits_of((uint64_t)d, dig); /* d < 10^17 < 2^64 */
  return layout(buf, v < 0, dig, p, x);
}
