/* Unit tests of worker/backend.c: the list of backends is the one place that knows them by
 * name, whether they are simulated and which one a measure child opens when not told. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <string.h>

#include "worker/backend.h"

static void find_should_return_each_row_by_its_name_only(void **state) {
  (void)state;
  assert_ptr_equal(backend_find("cuda"), &backend_cuda);
  assert_ptr_equal(backend_find("sim"), &backend_sim);
  assert_null(backend_find("Sim"));
  assert_null(backend_find("simulated"));
  assert_null(backend_find(""));
  assert_null(backend_find(NULL));
}

static void simulated_should_follow_the_row_and_doubt_unknown_names(void **state) {
  (void)state;
  assert_int_equal(backend_cuda.simulated, 0);
  assert_int_equal(backend_sim.simulated, 1);
  assert_int_equal(backend_simulated("cuda"), 0);
  assert_int_equal(backend_simulated("sim"), 1);
  assert_int_equal(backend_simulated("gpu9000"), 1); /* a name this build does not know */
  assert_int_equal(backend_simulated(NULL), 1);
}

static void every_row_should_probe_and_sim_should_serve_anywhere(void **state) {
  (void)state;
  char why[256] = "unchanged";
  assert_non_null(backend_cuda.probe);
  assert_int_equal(backend_sim.probe(why, sizeof why), 1);
  int gpu = backend_cuda.probe(why, sizeof why);
  if (!gpu) assert_true(why[0] != '\0' && strcmp(why, "unchanged") != 0);
}

static void default_should_be_cuda_with_a_gpu_else_sim_with_why(void **state) {
  (void)state;
  char probe[256] = "", why[256] = "x";
  int gpu = backend_cuda.probe(probe, sizeof probe);
  const backend_ops *b = backend_default(why, sizeof why);
  if (gpu) {
    assert_ptr_equal(b, &backend_cuda);
    assert_string_equal(why, "");
  } else {
    assert_ptr_equal(b, &backend_sim);
    assert_string_equal(why, probe); /* the first row's reason */
  }
}

static void names_should_list_every_row_for_a_message(void **state) {
  (void)state;
  char buf[128], small[6];
  backend_names(buf, sizeof buf);
  assert_string_equal(buf, "cuda, sim or replay");
  backend_names(small, sizeof small); /* cut short, still terminated */
  assert_true(strlen(small) < sizeof small);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(find_should_return_each_row_by_its_name_only),
      cmocka_unit_test(simulated_should_follow_the_row_and_doubt_unknown_names),
      cmocka_unit_test(every_row_should_probe_and_sim_should_serve_anywhere),
      cmocka_unit_test(default_should_be_cuda_with_a_gpu_else_sim_with_why),
      cmocka_unit_test(names_should_list_every_row_for_a_message),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
