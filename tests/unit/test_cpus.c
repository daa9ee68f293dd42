/* Unit tests of worker/cpus.c: a worker's share of the cores, the cores beside a binding
 * mpirun placed, a confined worker's mask. */
#define _GNU_SOURCE
#include <sched.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
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

/* Every worker on every core shares them all; workers on cores of their own share none;
 * masks that overlap share as many as must to fit on the node. */
static void share_should_count_who_uses_the_same_cores(void **state) {
  (void)state;
  cpus_share s = cpus_share_of(64, 64, 0, 4); /* srun -c 16 without binding */
  assert_int_equal(s.cpus, 64);
  assert_int_equal(s.sharers, 4);
  assert_int_equal(cpus_per_worker(&s), 16);
  s = cpus_share_of(8, 64, 0, 4); /* srun -c 8 --cpu-bind=cores */
  assert_int_equal(s.sharers, 1);
  assert_int_equal(cpus_per_worker(&s), 8);
  s = cpus_share_of(32, 64, 0, 4); /* a socket each of two */
  assert_int_equal(s.sharers, 2);
  assert_int_equal(cpus_per_worker(&s), 16);
  s = cpus_share_of(1, 2, 0, 1); /* taskset -c 0 */
  assert_int_equal(s.cpus, 1);
  assert_int_equal(cpus_per_worker(&s), 1);
  s = cpus_share_of(1, 16, 1, 2); /* mpirun's core: the node's, shared */
  assert_int_equal(s.cpus, 16);
  assert_int_equal(s.sharers, 2);
  assert_int_equal(cpus_per_worker(&s), 8);
  s = cpus_share_of(0, 8, 0, 0); /* unreadable mask, no count */
  assert_int_equal(s.cpus, 8);
  assert_int_equal(s.sharers, 1);
}

/* A worker confined to core 0 by something other than mpirun (taskset, srun --cpu-bind) keeps
 * its helpers there; in a child, so that this process keeps its cores. Needs two cores. */
static void helpers_should_stay_in_a_mask_mpirun_did_not_place(void **state) {
  (void)state;
  if (sysconf(_SC_NPROCESSORS_ONLN) < 2) skip();
  pid_t pid = fork();
  if (pid == 0) {
    cpu_set_t core0, beside, mine;
    CPU_ZERO(&core0);
    CPU_SET(0, &core0);
    unsetenv("OMPI_MCA_orte_bound_at_launch");
    unsetenv("OMP_PROC_BIND");
    if (sched_setaffinity(0, sizeof core0, &core0) != 0) _exit(10);
    cpus_beside_mine(&beside);
    if (!CPU_EQUAL(&beside, &core0)) _exit(11);
    if (sched_getaffinity(0, sizeof mine, &mine) != 0 || !CPU_EQUAL(&mine, &core0)) _exit(13);
    _exit(0);
  }
  int status = -1;
  assert_true(pid > 0);
  assert_int_equal(waitpid(pid, &status, 0), pid);
  assert_true(WIFEXITED(status));
  assert_int_equal(WEXITSTATUS(status), 0);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(cpus_should_avoid_the_workers_cores),
      cmocka_unit_test(cpus_should_be_every_core_when_the_worker_is_not_bound),
      cmocka_unit_test(share_should_count_who_uses_the_same_cores),
      cmocka_unit_test(helpers_should_stay_in_a_mask_mpirun_did_not_place),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
