/* Unit tests of worker/compile_pool.c's sizing: how many compiles run at once (the pool
 * itself is run by tests/mpi/speculation.sh on the simulated device, and under a one-core
 * mask by tests/mpi/affinity.sh; its cores are tests/unit/test_cpus.c's). */
#define _GNU_SOURCE
#include <sched.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>

#include "worker/compile_pool.h"

static int jobs(int asked, int mask, long online, int placed, int workers) {
  cpus_share s = cpus_share_of(mask, online, placed, workers);
  return compile_pool_jobs(asked, &s);
}

static void jobs_should_leave_a_core_per_worker(void **state) {
  (void)state;
  assert_int_equal(jobs(6, 16, 16, 0, 1), 6);   /* asked */
  assert_int_equal(jobs(0, 16, 16, 0, 1), 0);   /* asked for none */
  assert_int_equal(jobs(-1, 16, 16, 0, 1), 15); /* auto, every core */
  assert_int_equal(jobs(-1, 32, 32, 0, 2), 15); /* two workers on every core: half each */
  assert_int_equal(jobs(-1, 2, 2, 0, 1), 1);
  assert_int_equal(jobs(-1, 4, 4, 0, 8), 1);    /* at least one */
}

/* srun -c 8 --cpu-bind=cores: 4 workers on a 64-core node, each on 8 cores of its own. */
static void jobs_should_count_a_workers_own_cores(void **state) {
  (void)state;
  assert_int_equal(jobs(-1, 8, 64, 0, 4), 7);
  assert_int_equal(jobs(-1, 32, 64, 0, 4), 15); /* a socket each, two workers per socket */
  assert_int_equal(jobs(-1, 1, 64, 0, 4), 0);   /* one core: the measure child's */
  assert_int_equal(jobs(3, 1, 64, 0, 4), 3);    /* asked: beside it anyway */
}

/* mpirun's own binding (a core each for one or two ranks) places the measure child; the
 * worker's share is still the node's. */
static void jobs_should_share_the_node_under_mpiruns_binding(void **state) {
  (void)state;
  assert_int_equal(jobs(-1, 1, 16, 1, 1), 15);
  assert_int_equal(jobs(-1, 16, 64, 1, 4), 15);
}

/* In a child bound to one core (as by taskset -c 0 or srun -c 1): auto is 0, no pool; the
 * same child marked as bound by mpirun gets the node's cores less one. */
static int auto_jobs_on_core0(int placed) {
  pid_t pid = fork();
  if (pid == 0) {
    cpu_set_t one;
    CPU_ZERO(&one);
    CPU_SET(0, &one);
    if (placed) setenv("OMPI_MCA_orte_bound_at_launch", "1", 1);
    else unsetenv("OMPI_MCA_orte_bound_at_launch");
    if (sched_setaffinity(0, sizeof one, &one) != 0) _exit(100);
    cpus_share s = cpus_share_mine(1);
    _exit(compile_pool_jobs(-1, &s));
  }
  int status = 0;
  assert_true(pid > 0);
  assert_int_equal(waitpid(pid, &status, 0), pid);
  assert_true(WIFEXITED(status));
  return WEXITSTATUS(status);
}

static void auto_should_follow_the_affinity_mask(void **state) {
  (void)state;
  long online = sysconf(_SC_NPROCESSORS_ONLN);
  if (online < 2 || online > 99) skip();
  assert_int_equal(auto_jobs_on_core0(0), 0);
  assert_int_equal(auto_jobs_on_core0(1), online - 1);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(jobs_should_leave_a_core_per_worker),
      cmocka_unit_test(jobs_should_count_a_workers_own_cores),
      cmocka_unit_test(jobs_should_share_the_node_under_mpiruns_binding),
      cmocka_unit_test(auto_should_follow_the_affinity_mask),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
