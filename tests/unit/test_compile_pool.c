/* Unit tests of worker/compile_pool.c's sizing: how many compiles run at once (the pool
 * itself is run by tests/mpi/speculation.sh on the simulated device; its cores are
 * tests/unit/test_cpus.c's). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "worker/compile_pool.h"

static void jobs_should_leave_a_core_per_worker(void **state) {
  (void)state;
  assert_int_equal(compile_pool_jobs(6, 16, 1), 6);   /* asked */
  assert_int_equal(compile_pool_jobs(0, 16, 1), 0);   /* asked for none */
  assert_int_equal(compile_pool_jobs(-1, 16, 1), 15); /* auto */
  assert_int_equal(compile_pool_jobs(-1, 32, 2), 15);
  assert_int_equal(compile_pool_jobs(-1, 2, 1), 1);   /* at least one */
  assert_int_equal(compile_pool_jobs(-1, 4, 8), 1);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(jobs_should_leave_a_core_per_worker),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
