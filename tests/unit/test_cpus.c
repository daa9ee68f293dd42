/* Unit tests of worker/cpus.c: the cores beside a worker's binding, and OpenMP's threads
 * started there. */
#define _GNU_SOURCE
#include <omp.h>
#include <sched.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "worker/cpus.h"

/* A worker bound to core 1 of 4 (mpirun's binding with two ranks): its measure child runs
 * there, so the pool takes the other three. */
static void cpus_should_avoid_the_workers_cores(void **state) {
  (void)state;
  const unsigned char bound[4] = {0, 1, 0, 0};
  unsigned char use[4];
  memset(use, 7, sizeof use);
  cpus_beside(4, bound, use);
  const unsigned char want[4] = {1, 0, 1, 1};
  assert_memory_equal(use, want, sizeof want);
  const unsigned char two[4] = {1, 1, 0, 0};
  cpus_beside(4, two, use);
  const unsigned char want_two[4] = {0, 0, 1, 1};
  assert_memory_equal(use, want_two, sizeof want_two);
}

/* Not bound (or bound to every core): there is no core of its own to keep free. */
static void cpus_should_be_every_core_when_the_worker_is_not_bound(void **state) {
  (void)state;
  const unsigned char all[3] = {1, 1, 1}, none[3] = {0, 0, 0};
  unsigned char use[3];
  cpus_beside(3, all, use);
  assert_memory_equal(use, all, sizeof all);
  memset(use, 0, sizeof use);
  cpus_beside(3, none, use);
  assert_memory_equal(use, all, sizeof all);
}

/* A child bound to core 0 (its worker's) keeps that core, and OpenMP's other threads start on
 * the rest. Needs two cores. */
static void spread_should_keep_the_caller_and_move_openmp_threads(void **state) {
  (void)state;
  if (sysconf(_SC_NPROCESSORS_ONLN) < 2) skip();
  /* What a user may have set for other programs; libgomp read it at load, the spread reads
   * it now: unset, it asks for a thread per online CPU. */
  unsetenv("OMP_NUM_THREADS");
  unsetenv("OMP_PROC_BIND");
  unsetenv("OMP_PLACES");
  unsetenv("GOMP_CPU_AFFINITY");
  cpu_set_t core0, mine;
  CPU_ZERO(&core0);
  CPU_SET(0, &core0);
  assert_int_equal(sched_setaffinity(0, sizeof core0, &core0), 0);
  assert_int_equal(cpus_spread_openmp(), 0);
  assert_int_equal(sched_getaffinity(0, sizeof mine, &mine), 0);
  assert_true(CPU_EQUAL(&mine, &core0));
  int others = 0, on_core0 = 0;
#pragma omp parallel num_threads(2) reduction(+ : others, on_core0)
  if (omp_get_thread_num() != 0) {
    cpu_set_t t;
    others++;
    on_core0 += sched_getaffinity(0, sizeof t, &t) != 0 || CPU_ISSET(0, &t);
  }
  assert_true(others >= 1);
  assert_int_equal(on_core0, 0);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(cpus_should_avoid_the_workers_cores),
      cmocka_unit_test(cpus_should_be_every_core_when_the_worker_is_not_bound),
      cmocka_unit_test(spread_should_keep_the_caller_and_move_openmp_threads),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
