/* Unit tests of common/reference.c: the input generator, the element types and the checks.
 * Standalone: gcc -std=c11 -I. common/err.c common/reference.c tests/unit/test_reference.c -lcmocka -lm */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "common/reference.h"

/* ---------------------------------------------------------------- generator */

static void fill_should_be_deterministic_per_seed_and_differ_across_seeds(void **state) {
  (void)state;
  enum { N = 4096 };
  float *a = malloc(N * sizeof *a), *b = malloc(N * sizeof *b), *c = malloc(N * sizeof *c);
  assert_non_null(a);
  assert_non_null(b);
  assert_non_null(c);
  reference_fill(a, N, 42);
  reference_fill(b, N, 42);
  reference_fill(c, N, 43);
  assert_memory_equal(a, b, N * sizeof *a);
  int same = 0;
  for (int i = 0; i < N; i++) same += a[i] == c[i];
  assert_true(same < N / 100);
  /* seeds one generator step apart must not give shifted copies of one stream */
  reference_fill(c, N, 42 + 0x9e3779b97f4a7c15ULL);
  same = 0;
  for (int i = 0; i + 1 < N; i++) same += a[i + 1] == c[i];
  assert_true(same < N / 100);
  free(a);
  free(b);
  free(c);
}

static void fill_should_stay_in_range_and_never_be_all_zeros(void **state) {
  (void)state;
  enum { N = 100000 };
  float *x = malloc(N * sizeof *x);
  assert_non_null(x);
  for (unsigned long long seed = 0; seed < 4; seed++) {
    reference_fill(x, N, seed);
    double sum = 0.0, sq = 0.0;
    int nonzero = 0;
    float lo = 1.0f, hi = -1.0f;
    for (int i = 0; i < N; i++) {
      assert_true(x[i] >= -1.0f && x[i] < 1.0f);
      nonzero += x[i] != 0.0f;
      lo = fminf(lo, x[i]), hi = fmaxf(hi, x[i]);
      sum += x[i], sq += (double)x[i] * x[i];
    }
    assert_true(nonzero > N - 10);
    assert_true(lo < -0.99f && hi > 0.99f);
    assert_true(fabs(sum / N) < 0.02);            /* uniform on [-1, 1): mean 0 */
    assert_true(fabs(sq / N - 1.0 / 3.0) < 0.02); /* and variance 1/3 */
  }
  for (unsigned long long seed = 0; seed < 64; seed++) { /* even a single element */
    float one;
    reference_fill(&one, 1, seed);
    assert_true(one != 0.0f);
  }
  free(x);
}

/* Ledgers record results on inputs from these seeds: the values must never change. */
static void input_seed_should_keep_its_values_and_differ_per_set_and_buffer(void **state) {
  (void)state;
  assert_true(reference_input_seed(1, 0, 0) == 0x910a2dec89025cc1ULL);
  assert_true(reference_input_seed(1, 1, 2) == 0x6775dc7701564f61ULL);
  assert_true(reference_input_seed(7, 0, 1) == 0x044c3cd7f43c661cULL);
  assert_true(reference_input_seed(1, 0, 1) != reference_input_seed(1, 1, 1));
  assert_true(reference_input_seed(1, 0, 0) != reference_input_seed(1, 0, 1));
}

/* ---------------------------------------------------------------- element types */

static void f16_should_round_to_nearest_even_and_keep_inf_and_nan(void **state) {
  (void)state;
  assert_int_equal(reference_f32_to_f16(1.0f), 0x3c00);
  assert_int_equal(reference_f32_to_f16(-2.0f), 0xc000);
  assert_int_equal(reference_f32_to_f16(65504.0f), 0x7bff);   /* the largest half */
  assert_int_equal(reference_f32_to_f16(65520.0f), 0x7c00);   /* halfway to 2^16: inf */
  assert_int_equal(reference_f32_to_f16(65519.0f), 0x7bff);
  assert_int_equal(reference_f32_to_f16(1e10f), 0x7c00);
  assert_int_equal(reference_f32_to_f16(-INFINITY), 0xfc00);
  assert_true((reference_f32_to_f16(NAN) & 0x7c00) == 0x7c00 && (reference_f32_to_f16(NAN) & 0x3ff));
  /* 1 + 2^-11 lies halfway between 1 and 1 + 2^-10: ties go to the even one, 1 */
  assert_int_equal(reference_f32_to_f16(1.0f + 0x1p-11f), 0x3c00);
  /* 1 + 3*2^-11 lies halfway between 1 + 2^-10 (odd) and 1 + 2^-9 (even) */
  assert_int_equal(reference_f32_to_f16(1.0f + 3 * 0x1p-11f), 0x3c02);
  assert_int_equal(reference_f32_to_f16(1.0f + 0x1p-11f + 0x1p-20f), 0x3c01); /* above half */
  assert_int_equal(reference_f32_to_f16(0x1p-24f), 0x0001);  /* the smallest subnormal */
  assert_int_equal(reference_f32_to_f16(0x1p-25f), 0x0000);  /* halfway to it: even, zero */
  assert_int_equal(reference_f32_to_f16(0x1.8p-24f), 0x0002); /* 1.5 units: even, 2 */
  assert_int_equal(reference_f32_to_f16(0x1p-14f), 0x0400);  /* the smallest normal */
  assert_int_equal(reference_f32_to_f16(-0.0f), 0x8000);
  assert_true(reference_f16_to_f32(0x3c00) == 1.0f);
  assert_true(reference_f16_to_f32(0x0001) == 0x1p-24f);
  assert_true(reference_f16_to_f32(0x7bff) == 65504.0f);
  assert_true(isinf(reference_f16_to_f32(0xfc00)) && reference_f16_to_f32(0xfc00) < 0);
  assert_true(isnan(reference_f16_to_f32(0x7e00)));
  for (unsigned h = 0; h < 0x10000; h++) /* every finite half survives the round trip */
    if ((h & 0x7c00) != 0x7c00)
      assert_int_equal(reference_f32_to_f16(reference_f16_to_f32((unsigned short)h)), h);
}

static void bf16_should_round_to_nearest_even_and_keep_inf_and_nan(void **state) {
  (void)state;
  assert_int_equal(reference_f32_to_bf16(1.0f), 0x3f80);
  assert_int_equal(reference_f32_to_bf16(1.0f + 0x1p-8f), 0x3f80);  /* tie: even */
  assert_int_equal(reference_f32_to_bf16(1.0f + 3 * 0x1p-8f), 0x3f82); /* tie: even, up */
  assert_int_equal(reference_f32_to_bf16(1.0f + 0x1p-8f + 0x1p-20f), 0x3f81);
  assert_int_equal(reference_f32_to_bf16(INFINITY), 0x7f80);
  assert_int_equal(reference_f32_to_bf16(3.4e38f), 0x7f80); /* rounds past the largest: inf */
  assert_true(isnan(reference_bf16_to_f32(reference_f32_to_bf16(NAN))));
  assert_true(reference_bf16_to_f32(0xc040) == -3.0f);
}

static void types_should_be_named_and_sized(void **state) {
  (void)state;
  static const char *const names[] = {"f32", "f64", "f16", "bf16", "i8", "u8", "i32", "u32", "i64"};
  static const size_t sizes[] = {4, 8, 2, 2, 1, 1, 4, 4, 8};
  for (int t = 0; t < REFERENCE_NTYPES; t++) {
    assert_int_equal(reference_type_of(names[t]), t);
    assert_string_equal(reference_type_name(t), names[t]);
    assert_int_equal(reference_type_size(t), sizes[t]);
  }
  assert_int_equal(reference_type_of("f31"), -1);
  unsigned char b[8];
  reference_put(REFERENCE_I8, b, 0, 300.0); /* saturated */
  assert_true(reference_get(REFERENCE_I8, b, 0) == 127.0);
  reference_put(REFERENCE_U8, b, 0, -3.0);
  assert_true(reference_get(REFERENCE_U8, b, 0) == 0.0);
  reference_put(REFERENCE_I32, b, 0, -7.9); /* toward zero */
  assert_true(reference_get(REFERENCE_I32, b, 0) == -7.0);
}

static void typed_fill_should_be_deterministic_in_range_and_never_all_zeros(void **state) {
  (void)state;
  enum { N = 4096 };
  static float f32[N], ref[N];
  /* f32 with the default fill is reference_fill: the inputs of every ledger so far */
  reference_fill_typed(f32, REFERENCE_F32, N, NULL, 77);
  reference_fill(ref, N, 77);
  assert_memory_equal(f32, ref, sizeof f32);
  static int32_t a[N], b[N];
  const reference_init idx = {REFERENCE_INIT_INT, 0, 99};
  reference_fill_typed(a, REFERENCE_I32, N, &idx, 5);
  reference_fill_typed(b, REFERENCE_I32, N, &idx, 5);
  assert_memory_equal(a, b, sizeof a);
  int seen_lo = 0, seen_hi = 0;
  for (int i = 0; i < N; i++) {
    assert_true(a[i] >= 0 && a[i] <= 99);
    seen_lo |= a[i] == 0, seen_hi |= a[i] == 99;
  }
  assert_true(seen_lo && seen_hi);
  reference_fill_typed(b, REFERENCE_I32, N, &idx, 6);
  assert_memory_not_equal(a, b, sizeof a);
  /* integer default: [REFERENCE_INT_LO, REFERENCE_INT_HI] */
  static uint8_t u[N];
  reference_fill_typed(u, REFERENCE_U8, N, NULL, 9);
  for (int i = 0; i < N; i++) assert_true(u[i] <= REFERENCE_INT_HI);
  /* a draw of only zeros is replaced: one element of [0, 1] is 1 whatever the seed */
  const reference_init bit = {REFERENCE_INIT_INT, 0, 1};
  for (unsigned long long seed = 0; seed < 16; seed++) {
    uint8_t z = 0;
    reference_fill_typed(&z, REFERENCE_U8, 1, &bit, seed);
    assert_int_equal(z, 1);
  }
  /* normal: mean and spread about right, in f16 */
  static unsigned short h[N];
  const reference_init nrm = {REFERENCE_INIT_NORMAL, 3.0, 0.5};
  reference_fill_typed(h, REFERENCE_F16, N, &nrm, 11);
  double sum = 0, sq = 0;
  for (int i = 0; i < N; i++) {
    double v = reference_f16_to_f32(h[i]);
    sum += v, sq += v * v;
  }
  double mean = sum / N, sd = sqrt(sq / N - mean * mean);
  assert_true(fabs(mean - 3.0) < 0.05 && fabs(sd - 0.5) < 0.05);
  /* uniform in [lo, hi), bf16 */
  const reference_init uni = {REFERENCE_INIT_UNIFORM, -4.0, 4.0};
  reference_fill_typed(h, REFERENCE_BF16, N, &uni, 12);
  for (int i = 0; i < N; i++) {
    float v = reference_bf16_to_f32(h[i]);
    assert_true(v >= -4.0f && v <= 4.0f);
  }
  const reference_init k = {REFERENCE_INIT_CONST, 2.5, 0};
  static double d[8];
  reference_fill_typed(d, REFERENCE_F64, 8, &k, 1);
  for (int i = 0; i < 8; i++) assert_true(d[i] == 2.5);
}

static void compare_should_apply_each_outputs_check(void **state) {
  (void)state;
  const float ref[4] = {1.0f, 2.0f, -4.0f, 0.0f};
  float got[4] = {1.0f, 2.0f, -4.0f, 0.0f};
  reference_verdict v;
  const reference_check l2 = {REFERENCE_CHECK_L2, 0, 0, 0};
  const reference_check tol = {REFERENCE_CHECK_TOL, 1e-3, 1e-6, 0};
  const reference_check exact = {REFERENCE_CHECK_EXACT, 0, 0, 0};
  reference_compare(got, REFERENCE_F32, ref, REFERENCE_F32, 4, &exact, 1e-5, &v);
  assert_true(v.pass && v.rel_err == 0.0 && v.bad == -1);
  got[2] = -4.002f; /* 5e-4 relative: inside rtol 1e-3, outside exact */
  reference_compare(got, REFERENCE_F32, ref, REFERENCE_F32, 4, &tol, 1e-5, &v);
  assert_true(v.pass);
  assert_true(reference_verdict_error(&v, 1e-5) <= 1e-5); /* judged by its own check */
  reference_compare(got, REFERENCE_F32, ref, REFERENCE_F32, 4, &exact, 1e-5, &v);
  assert_false(v.pass);
  assert_int_equal(v.bad, 2);
  assert_true(reference_verdict_error(&v, 1e-5) > 1e-5);
  got[2] = nextafterf(-4.0f, 0.0f); /* one ulp: far inside the tolerance, not exact */
  reference_compare(got, REFERENCE_F32, ref, REFERENCE_F32, 4, &exact, 1e-5, &v);
  assert_false(v.pass);
  assert_true(isinf(reference_verdict_error(&v, 1e-5))); /* a failed check fails the arm */
  got[2] = -4.002f;
  char text[256];
  reference_verdict_text(&v, "lse", text, sizeof text);
  assert_non_null(strstr(text, "output 'lse'"));
  assert_non_null(strstr(text, "element 2"));
  reference_compare(got, REFERENCE_F32, ref, REFERENCE_F32, 4, &l2, 1e-5, &v);
  assert_false(v.pass); /* 4.5e-4 relative L2 > 1e-5 */
  got[2] = -4.01f; /* 2.5e-3 relative: outside rtol */
  reference_compare(got, REFERENCE_F32, ref, REFERENCE_F32, 4, &tol, 1e-5, &v);
  assert_false(v.pass);
  got[2] = -4.0f;
  got[3] = 1e-7f; /* the reference is 0: atol decides */
  reference_compare(got, REFERENCE_F32, ref, REFERENCE_F32, 4, &tol, 1e-5, &v);
  assert_true(v.pass);
  got[3] = 1e-5f;
  reference_compare(got, REFERENCE_F32, ref, REFERENCE_F32, 4, &tol, 1e-5, &v);
  assert_false(v.pass);
  /* non-finite: a failure unless allowed and the reference has the same */
  const float nref[2] = {INFINITY, NAN};
  float ngot[2] = {INFINITY, NAN};
  reference_compare(ngot, REFERENCE_F32, nref, REFERENCE_F32, 2, &tol, 1e-5, &v);
  assert_false(v.pass);
  assert_true(isinf(v.rel_err));
  const reference_check allow = {REFERENCE_CHECK_TOL, 1e-3, 0, 1};
  reference_compare(ngot, REFERENCE_F32, nref, REFERENCE_F32, 2, &allow, 1e-5, &v);
  assert_true(v.pass);
  ngot[0] = -INFINITY;
  reference_compare(ngot, REFERENCE_F32, nref, REFERENCE_F32, 2, &allow, 1e-5, &v);
  assert_false(v.pass);
  const float fine[2] = {1.0f, 2.0f};
  float nan_got[2] = {1.0f, NAN};
  reference_compare(nan_got, REFERENCE_F32, fine, REFERENCE_F32, 2, &l2, 1e-5, &v);
  assert_false(v.pass);
  assert_true(isinf(reference_verdict_error(&v, 1e-5)));
  /* integers, exactly, against a reference of another type */
  const int32_t ig[3] = {1, 2, 3};
  const double id[3] = {1, 2, 3};
  reference_compare(ig, REFERENCE_I32, id, REFERENCE_F64, 3, &exact, 0, &v);
  assert_true(v.pass);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(fill_should_be_deterministic_per_seed_and_differ_across_seeds),
      cmocka_unit_test(fill_should_stay_in_range_and_never_be_all_zeros),
      cmocka_unit_test(input_seed_should_keep_its_values_and_differ_per_set_and_buffer),
      cmocka_unit_test(f16_should_round_to_nearest_even_and_keep_inf_and_nan),
      cmocka_unit_test(bf16_should_round_to_nearest_even_and_keep_inf_and_nan),
      cmocka_unit_test(types_should_be_named_and_sized),
      cmocka_unit_test(typed_fill_should_be_deterministic_in_range_and_never_all_zeros),
      cmocka_unit_test(compare_should_apply_each_outputs_check),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
