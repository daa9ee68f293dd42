/* test_trust: whether a device's measure processes may decide (coordinator/trust.h), driven
 * by hand: the canary's schedule, fresh processes, and the end after too many biased ones. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <string.h>

#include "coordinator/trust.h"

static trust made(int rounds, int every, int max_restarts, int fresh_every) {
  canary_opts k = {.rounds = rounds, .every = every, .max_restarts = max_restarts,
                   .threshold = 0.0025};
  trust t;
  trust_init(&t, &k, fresh_every);
  return t;
}

/* The facts of a generation measured as t asked, in process `child`, its canary's verdict v. */
static trust_fact as_asked(const trust *t, int child, trust_canary v) {
  trust_fact f = {.status = RESULT_OK, .correct = 1, .child = child,
                  .canary = t->canary_due ? v : TRUST_NO_CANARY,
                  .asked_canary = t->canary_due, .asked_fresh = t->fresh_due};
  f.untrusted = !trust_allows(t, &f);
  return f;
}

static void trust_should_run_the_canary_first_and_every_n(void **state) {
  (void)state;
  trust t = made(16, 3, 2, 0);
  assert_int_equal(t.canary_due, 1);
  int due[7];
  for (int g = 0; g < 7; g++) {
    due[g] = t.canary_due;
    trust_fact f = as_asked(&t, 1, TRUST_CANARY_OK);
    assert_false(f.untrusted);
    trust_apply(&t, &f);
  }
  static const int want[7] = {1, 0, 0, 1, 0, 0, 1};
  assert_memory_equal(due, want, sizeof due);
  assert_int_equal(t.canaries, 3);
  assert_int_equal(t.vetted_child, 1);
}

static void trust_should_allow_only_the_process_a_canary_cleared(void **state) {
  (void)state;
  trust t = made(16, 0, 2, 0);
  trust_fact f = {.status = RESULT_OK, .correct = 1, .child = 1};
  assert_false(trust_allows(&t, &f)); /* no canary yet */
  f.canary = TRUST_CANARY_OK;
  assert_true(trust_allows(&t, &f));
  trust_apply(&t, &f);
  f.canary = TRUST_NO_CANARY;
  assert_true(trust_allows(&t, &f)); /* the process it cleared */
  f.child = 2;
  assert_false(trust_allows(&t, &f));
  f.status = RESULT_FAULT; /* a fault stands as it is */
  assert_true(trust_allows(&t, &f));
  trust_begin_run(&t);
  f = (trust_fact){.status = RESULT_OK, .correct = 1, .child = 1};
  assert_false(trust_allows(&t, &f)); /* a new run: no process is vetted */
  trust off = made(0, 0, 2, 0);
  assert_true(trust_allows(&off, &f)); /* no canary at all: every process is trusted */
}

static void trust_should_ask_for_a_fresh_process_every_n_and_after_a_bias(void **state) {
  (void)state;
  trust t = made(16, 0, 5, 4);
  int fresh[6], canary[6];
  for (int g = 0; g < 6; g++) {
    fresh[g] = t.fresh_due;
    canary[g] = t.canary_due;
    trust_fact f = as_asked(&t, 1 + g / 4, TRUST_CANARY_OK);
    assert_false(f.untrusted);
    trust_apply(&t, &f);
  }
  static const int want_fresh[6] = {0, 0, 0, 0, 1, 0}, want_canary[6] = {1, 0, 0, 0, 1, 0};
  assert_memory_equal(fresh, want_fresh, sizeof fresh);     /* fresh_every 4 */
  assert_memory_equal(canary, want_canary, sizeof canary); /* a fresh process is vetted */
  trust b = made(16, 0, 5, 0);
  trust_fact f = as_asked(&b, 1, TRUST_CANARY_BIASED);
  assert_true(f.untrusted);
  trust_apply(&b, &f);
  assert_int_equal(b.fresh_due, 1);
  assert_int_equal(b.canary_due, 1);
  assert_int_equal(b.vetted_child, 0);
  assert_int_equal(b.untrusted, 1);
}

static void trust_should_give_up_after_max_restarts_biased_processes_in_a_row(void **state) {
  (void)state;
  trust t = made(16, 0, 2, 0);
  for (int i = 0; i < 3; i++) {
    assert_false(t.given_up);
    trust_fact f = as_asked(&t, i + 1, TRUST_CANARY_BIASED);
    trust_apply(&t, &f);
  }
  assert_true(t.given_up);
  assert_int_equal(t.biased, 3);
  char why[200];
  trust_why(&t, why, sizeof why);
  assert_non_null(strstr(why, "3 measure processes in a row biased beyond 0.25%"));
}

/* Every bound at its smallest, 1: a canary of one round still runs, a canary every generation
 * runs every generation, and a fresh process every generation is one every generation (with
 * its canary). */
static void trust_bounds_of_one_should_count(void **state) {
  (void)state;
  trust t = made(1, 1, 2, 0);
  for (int g = 0; g < 3; g++) {
    assert_int_equal(t.canary_due, 1);
    assert_int_equal(t.fresh_due, 0);
    trust_fact f = as_asked(&t, 1, TRUST_CANARY_OK);
    trust_apply(&t, &f);
  }
  trust u = made(1, 0, 2, 1);
  trust_fact f = as_asked(&u, 1, TRUST_CANARY_OK);
  trust_apply(&u, &f);
  for (int g = 0; g < 2; g++) {
    assert_int_equal(u.fresh_due, 1);
    assert_int_equal(u.canary_due, 1);
    f = as_asked(&u, 2 + g, TRUST_CANARY_OK);
    trust_apply(&u, &f);
  }
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(trust_should_run_the_canary_first_and_every_n),
      cmocka_unit_test(trust_should_allow_only_the_process_a_canary_cleared),
      cmocka_unit_test(trust_should_ask_for_a_fresh_process_every_n_and_after_a_bias),
      cmocka_unit_test(trust_should_give_up_after_max_restarts_biased_processes_in_a_row),
      cmocka_unit_test(trust_bounds_of_one_should_count),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
