/* Unit tests of common/doorbell.c: a ring wakes the waiter at once, rings before the wait
 * count, rings coalesce, and no ring means the wait runs its time. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <time.h>
#include <unistd.h>

#include "common/doorbell.h"

static double now_s(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

static int setup(void **state) {
  (void)state;
  doorbell_block();
  while (doorbell_wait(0)) { /* a ring left by an earlier test */
  }
  return 0;
}

static void block_should_arm_the_doorbell(void **state) {
  (void)state;
  assert_int_equal(doorbell_armed(), 1);
}

static void ring_before_the_wait_should_end_it_at_once(void **state) {
  (void)state;
  doorbell_ring(getpid());
  double t0 = now_s();
  assert_int_equal(doorbell_wait(5.0), 1);
  assert_true(now_s() - t0 < 1.0);
}

static void rings_should_coalesce_and_be_consumed(void **state) {
  (void)state;
  doorbell_ring(getpid());
  doorbell_ring(getpid());
  assert_int_equal(doorbell_wait(1.0), 1);
  assert_int_equal(doorbell_wait(0.02), 0);
}

static void wait_without_a_ring_should_run_its_time(void **state) {
  (void)state;
  double t0 = now_s();
  assert_int_equal(doorbell_wait(0.05), 0);
  assert_true(now_s() - t0 >= 0.045);
}

static void ring_of_no_process_should_do_nothing(void **state) {
  (void)state;
  doorbell_ring(0);
  doorbell_ring(-1);
  assert_int_equal(doorbell_wait(0.01), 0);
}

static void space_should_be_stable(void **state) {
  (void)state;
  assert_true(doorbell_space() == doorbell_space());
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test_setup(block_should_arm_the_doorbell, setup),
      cmocka_unit_test_setup(ring_before_the_wait_should_end_it_at_once, setup),
      cmocka_unit_test_setup(rings_should_coalesce_and_be_consumed, setup),
      cmocka_unit_test_setup(wait_without_a_ring_should_run_its_time, setup),
      cmocka_unit_test_setup(ring_of_no_process_should_do_nothing, setup),
      cmocka_unit_test_setup(space_should_be_stable, setup),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
