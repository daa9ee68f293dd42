/* Unit tests of common/numfmt.c: numfmt_lld writes what snprintf's "%lld" writes, and numfmt_g
 * what "%.Pg" writes, byte for byte: random values across numfmt_g's fast path and beyond it,
 * values next to powers of ten (where the exponent changes), and exact ties at the last digit
 * (where printf rounds to even). Fixed seeds: a failure repeats. */
#include <float.h>
#include <limits.h>
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "common/numfmt.h"
#include "tests/unit/testutil.h"

static uint64_t rng = 0x9E3779B97F4A7C15ull;

static uint64_t next(void) { return test_xorshift64(&rng); }

static double uniform01(void) { return (double)(next() >> 11) / 9007199254740992.0; }

static void same_as_printf(double v, int p) {
  char want[64], got[NUMFMT_MAX];
  snprintf(want, sizeof want, "%.*g", p, v);
  int n = numfmt_g(got, v, p);
  if (strcmp(want, got) != 0 || n != (int)strlen(want))
    fail_msg("%%.%dg of %a: printf '%s', numfmt '%s' (%d)", p, v, want, got, n);
}

static void every_precision(double v) {
  for (int p = 1; p <= 17; p++) same_as_printf(v, p);
}

/* Log-uniform magnitudes from 1e-9 to 1e20 (both sides of the fast path's range), both signs. */
static void numfmt_should_print_random_values_as_printf(void **state) {
  (void)state;
  for (int i = 0; i < 200000; i++) {
    double v = pow(10.0, -9.0 + 29.0 * uniform01());
    same_as_printf(i & 1 ? -v : v, 17);
    same_as_printf(v, 15);
    if (i % 50 == 0) every_precision(v);
  }
}

/* Random bit patterns: every exponent and mantissa, NaN and infinities among them. */
static void numfmt_should_print_any_bits_as_printf(void **state) {
  (void)state;
  for (int i = 0; i < 100000; i++) {
    uint64_t b = next();
    double v;
    memcpy(&v, &b, sizeof v);
    same_as_printf(v, 17);
    same_as_printf(v, 15);
  }
  double special[] = {0.0, -0.0, 1.0, -1.0, 1e-6, 1e17, DBL_MIN, DBL_MAX, DBL_TRUE_MIN,
                      INFINITY, -INFINITY, NAN, 0.1, 0.3, 2.0 / 3.0, 123456789012345678.0};
  for (size_t i = 0; i < sizeof special / sizeof special[0]; i++) every_precision(special[i]);
}

/* The doubles next to each power of ten in the range, and the power itself when exact. */
static void numfmt_should_find_the_exponent_next_to_powers_of_ten(void **state) {
  (void)state;
  for (int k = -7; k <= 18; k++) {
    double t = pow(10.0, k), v = t;
    for (int j = 0; j < 40; j++) v = nextafter(v, 0.0);
    for (int j = 0; j < 80; j++, v = nextafter(v, INFINITY)) every_precision(v);
    /* values that round up to the next power at low precision: 9.999...e(k-1) */
    for (int j = 1; j <= 17; j++) every_precision(t * (1.0 - pow(10.0, -j) / 2.0));
  }
}

/* a / 2^k with a odd has exactly k digits after the point, the last a 5: at 17 (or P)
 * significant digits such values are exact ties, which printf rounds to even. */
static void numfmt_should_round_ties_to_even(void **state) {
  (void)state;
  for (int k = 1; k <= 60; k++) {
    for (int i = 0; i < 400; i++) {
      uint64_t a = (next() >> (11 + (next() % 40))) | 1;
      double v = ldexp((double)a, -k);
      every_precision(v);
    }
  }
  /* in [1, 10): 17 significant digits are 16 decimals; a / 2^17 has 17, ending in 5 */
  for (int i = 0; i < 20000; i++) {
    uint64_t a = (131072 + next() % (1310720 - 131072)) | 1;
    same_as_printf(ldexp((double)a, -17), 17);
  }
}

/* numfmt_lld against "%lld": random bit patterns, every length of digits, and the ends. */
static void numfmt_should_print_integers_as_printf(void **state) {
  (void)state;
  static long long v[200000 + 8] = {0, 1, -1, 9, 10, -10, LLONG_MAX, LLONG_MIN};
  int n = 8;
  for (int i = 0; i < 200000; i++) {
    uint64_t b = next() >> (next() % 64);
    v[n++] = (long long)(i & 1 ? 0 - b : b);
  }
  for (int i = 0; i < n; i++) {
    char want[32], got[NUMFMT_MAX];
    snprintf(want, sizeof want, "%lld", v[i]);
    int k = numfmt_lld(got, v[i]);
    if (strcmp(want, got) != 0 || k != (int)strlen(want))
      fail_msg("%%lld of %lld: printf '%s', numfmt '%s' (%d)", v[i], want, got, k);
  }
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(numfmt_should_print_integers_as_printf),
      cmocka_unit_test(numfmt_should_print_random_values_as_printf),
      cmocka_unit_test(numfmt_should_print_any_bits_as_printf),
      cmocka_unit_test(numfmt_should_find_the_exponent_next_to_powers_of_ten),
      cmocka_unit_test(numfmt_should_round_ties_to_even),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
