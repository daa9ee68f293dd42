/* Unit tests of worker/compile_pool.c's sizing: how many compiles run at once and on which
 * cores (the pool itself is run by tests/mpi/speculation.sh on the simulated device). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

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

/* A worker bound to core 1 of 4 (mpirun's binding with two ranks): its measure child runs
 * there, so the pool takes the other three. */
static void cpus_should_avoid_the_workers_cores(void **state) {
  (void)state;
  const unsigned char bound[4] = {0, 1, 0, 0};
  unsigned char use[4];
  memset(use, 7, sizeof use);
  compile_pool_cpus(4, bound, use);
  const unsigned char want[4] = {1, 0, 1, 1};
  assert_memory_equal(use, want, sizeof want);
  const unsigned char two[4] = {1, 1, 0, 0};
  compile_pool_cpus(4, two, use);
  const unsigned char want_two[4] = {0, 0, 1, 1};
  assert_memory_equal(use, want_two, sizeof want_two);
}

/* Not bound (or bound to every core): there is no core of its own to keep free. */
static void cpus_should_be_every_core_when_the_worker_is_not_bound(void **state) {
  (void)state;
  const unsigned char all[3] = {1, 1, 1}, none[3] = {0, 0, 0};
  unsigned char use[3];
  compile_pool_cpus(3, all, use);
  assert_memory_equal(use, all, sizeof all);
  memset(use, 0, sizeof use);
  compile_pool_cpus(3, none, use);
  assert_memory_equal(use, all, sizeof all);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(jobs_should_leave_a_core_per_worker),
      cmocka_unit_test(cpus_should_avoid_the_workers_cores),
      cmocka_unit_test(cpus_should_be_every_core_when_the_worker_is_not_bound),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
