/* Unit tests of worker/cublas.c that need no GPU: loading libcublas degrades to a reason,
 * status codes become messages naming the call, and the GEMM call refuses a shape cuBLAS's
 * int API cannot take before it touches the library. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <string.h>

#include "worker/cublas.h"

static void load_should_say_why_when_no_library_opens(void **state) {
  (void)state;
  static const char *const names[] = {"libtf-no-such-cublas.so.99", "libtf-nor-this.so", NULL};
  tf_cublas b;
  cublas_load_from(&b, names);
  assert_int_equal(b.ok, 0);
  assert_null(b.lib);
  assert_non_null(strstr(b.why, "libtf-no-such-cublas.so.99, libtf-nor-this.so"));
  cublas_unload(&b);
}

static void load_should_refuse_a_library_without_the_functions(void **state) {
  (void)state;
  static const char *const names[] = {"libm.so.6", NULL}; /* opens, but is not cuBLAS */
  tf_cublas b;
  cublas_load_from(&b, names);
  assert_int_equal(b.ok, 0);
  assert_null(b.lib);
  assert_non_null(strstr(b.why, "libm.so.6 lacks"));
}

static void check_should_name_the_call_and_the_status(void **state) {
  (void)state;
  tf_err e = {0};
  assert_int_equal(CUBLAS_CHECK(TF_CUBLAS_STATUS_SUCCESS, &e), 0);
  assert_int_equal(CUBLAS_CHECK(13, &e), -1);
  assert_int_equal(e.code, TF_EXIT_FAIL);
  assert_non_null(strstr(e.msg, "CUBLAS_STATUS_EXECUTION_FAILED (13)"));
  assert_non_null(strstr(e.msg, "test_cublas.c"));
}

static void gemm_should_refuse_a_shape_cublas_cannot_take(void **state) {
  (void)state;
  tf_cublas b;
  memset(&b, 0, sizeof b); /* never called: the shape is checked before the library */
  tf_err e = {0};
  float x = 0.0f;
  cublas_gemm_args g = {.m = 1LL << 31, .n = 4, .k = 4, .ab_type = CUDA_R_32F,
                        .c_type = CUDA_R_32F, .A = &x, .B = &x, .C = &x};
  assert_int_equal(cublas_gemm_rowmajor(&b, NULL, &g, &e), -1);
  assert_int_equal(e.code, TF_EXIT_INPUT);
  assert_non_null(strstr(e.msg, "M, N and K"));
  g.m = 4, g.n = 0, g.ab_type = CUDA_R_16BF;
  assert_int_equal(cublas_gemm_rowmajor(&b, NULL, &g, &e), -1);
  assert_int_equal(e.code, TF_EXIT_INPUT);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(load_should_say_why_when_no_library_opens),
      cmocka_unit_test(load_should_refuse_a_library_without_the_functions),
      cmocka_unit_test(check_should_name_the_call_and_the_status),
      cmocka_unit_test(gemm_should_refuse_a_shape_cublas_cannot_take),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
