/* Unit tests of worker/placement.c (where each arm's code and buffers sit), the canary's
 * verdict (common/decide.c) and the simulated device's placement term: a placement bias
 * cancels in the shared layout, follows the buffers in the swap layout, and the canary
 * catches it in the per-arm one. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "common/decide.h"
#include "tests/unit/testutil.h"
#include "worker/backend.h"
#include "worker/placement.h"
#include "worker/sim_noise.h"

static measure_opts opts(int layout, int code, int sets) {
  measure_opts m;
  memset(&m, 0, sizeof m);
  m.layout = layout;
  m.code = code;
  m.input_sets = sets;
  return m;
}

static void shared_layout_should_give_every_arm_the_same_buffers(void **state) {
  (void)state;
  measure_opts m = opts(LAYOUT_SHARED, CODE_SHARED, 2);
  for (int round = 0; round < 8; round++)
    for (int a = 0; a < ARM_COUNT; a++) {
      placement p = placement_of(&m, round, a);
      assert_int_equal(p.arm, a);
      assert_int_equal(p.bufs, 0);
      assert_int_equal(p.code, 0);
    }
  job j;
  memset(&j, 0, sizeof j);
  j.measure = m;
  assert_int_equal(placement_slots(&j), 1);
  assert_int_equal(placement_copies(&j), 1);
  j.canary_rounds = 16; /* the canary's copy needs a second module */
  assert_int_equal(placement_copies(&j), 2);
}

static void per_arm_layout_should_keep_each_arm_in_its_slot(void **state) {
  (void)state;
  measure_opts m = opts(LAYOUT_PER_ARM, CODE_PER_ARM, 2);
  for (int round = 0; round < 8; round++) {
    assert_int_equal(placement_of(&m, round, ARM_BEST).bufs, ARM_BEST);
    assert_int_equal(placement_of(&m, round, ARM_NEW).bufs, ARM_NEW);
    assert_int_equal(placement_of(&m, round, ARM_NEW).code, 1);
    assert_int_equal(placement_of(&m, round, ARM_BEST).code, 0);
  }
}

/* Rounds 0..3 with two input sets: sets 0, 1, 0, 1; phases 0, 0, 1, 1. The swap happens on
 * the same input set's buffers, so each pair of allocations is exchanged. */
static void swap_layout_should_exchange_buffers_once_every_set_was_used(void **state) {
  (void)state;
  measure_opts m = opts(LAYOUT_SWAP, CODE_SHARED, 2);
  static const int best_slot[4] = {0, 0, 1, 1};
  for (int round = 0; round < 4; round++) {
    assert_int_equal(placement_phase(&m, round), round / 2);
    assert_int_equal(placement_of(&m, round, ARM_BEST).bufs, best_slot[round]);
    assert_int_equal(placement_of(&m, round, ARM_NEW).bufs, 1 - best_slot[round]);
    assert_int_equal(placement_of(&m, round, ARM_CONTROL).bufs, ARM_CONTROL);
  }
}

static void canary_should_run_best_in_news_place_from_a_second_module(void **state) {
  (void)state;
  measure_opts m = opts(LAYOUT_PER_ARM, CODE_SHARED, 2);
  placement a = placement_canary(&m, 0, 0), b = placement_canary(&m, 0, 1);
  assert_int_equal(a.arm, ARM_BEST);
  assert_int_equal(b.arm, ARM_BEST);
  assert_int_equal(a.bufs, ARM_BEST);
  assert_int_equal(b.bufs, ARM_NEW);
  assert_int_equal(a.code, 0);
  assert_int_equal(b.code, 1);
}

/* ---- the canary's verdict ---- */

/* n canary rounds; round i's copy/best ratio is ratio_of[i % 2] (the two input sets) times a
 * small fixed wobble; kernel times follow the event spans. */
static result *canary_result(int n, const double ratio_of[2]) {
  static const double wobble[8] = {0.0004, -0.0003, 0.0001, -0.0005, 0.0002, -0.0001, 0.0003,
                                   -0.0002};
  result *r = calloc(1, sizeof *r);
  assert_non_null(r);
  r->child = 3;
  r->ncanary = n;
  for (int i = 0; i < n; i++) {
    canary_round *c = &r->canary[i];
    c->us[0] = 13.0;
    c->us[1] = 13.0 * ratio_of[i % 2] * (1.0 + wobble[i % 8]);
    c->kernel_us[0] = 9.0;
    c->kernel_us[1] = 9.0 * ratio_of[i % 2] * (1.0 + wobble[(i + 3) % 8]);
  }
  return r;
}

static void canary_should_clear_a_process_without_bias(void **state) {
  (void)state;
  const double none[2] = {1.0, 1.0};
  result *r = canary_result(16, none);
  canary_verdict v;
  decide_canary(0.0025, 2, r, &v);
  assert_false(v.biased);
  assert_int_equal(v.child, 3);
  assert_true(fabs(v.ratio[0] - 1.0) < 0.001 && fabs(v.ratio[1] - 1.0) < 0.001);
  assert_true(v.lo[0] < 1.0 && v.hi[0] > 1.0);
  assert_non_null(strstr(v.reason, "no bias beyond the threshold"));
  free(r);
}

/* One set's buffers favour the copy by 2%, the other's favour best by 1%: the rounds are
 * two clusters, and the process is biased by +0.5% on average, as a generation alternating
 * the sets would be. A pooled median interval would straddle both clusters and clear it. */
static void canary_should_catch_a_bias_that_differs_between_input_sets(void **state) {
  (void)state;
  const double split[2] = {1.02, 0.99};
  result *r = canary_result(16, split);
  canary_verdict v;
  decide_canary(0.0025, 2, r, &v);
  assert_true(v.biased);
  assert_true(fabs(v.ratio[0] - 1.005) < 0.001);
  assert_true(v.lo[0] > 1.0);
  assert_non_null(strstr(v.reason, "decides nothing"));
  free(r);
}

static void canary_should_not_flag_a_bias_below_the_threshold(void **state) {
  (void)state;
  const double small[2] = {1.0015, 1.0015}; /* real, but smaller than min_gain / 4 */
  result *r = canary_result(16, small);
  canary_verdict v;
  decide_canary(0.0025, 2, r, &v);
  assert_false(v.biased);
  free(r);
}

static void untrusted_decision_should_say_why(void **state) {
  (void)state;
  const double split[2] = {1.03, 1.03};
  result *r = canary_result(16, split);
  canary_verdict v;
  decide_canary(0.0025, 2, r, &v);
  decision d;
  memset(&d, 0, sizeof d);
  decide_untrusted(&d, &v, r->child);
  assert_int_equal(d.kind, DECISION_REFUSED);
  assert_non_null(strstr(d.reason, "not decided: canary of measure process 3"));
  decide_untrusted(&d, NULL, 5);
  assert_non_null(strstr(d.reason, "measure process 5, which no canary has cleared"));
  free(r);
}

/* ---- the simulated device's placement term ---- */

static void sim_placement_should_be_fixed_per_process_and_buffer(void **state) {
  (void)state;
  sim_noise_params p;
  sim_noise_defaults(&p);
  assert_true(sim_noise_place(&p, 1, 0, 1, 1, 0) == 1.0); /* off by default */
  p.place = 0.02;
  double a = sim_noise_place(&p, 1, 0, 1, 0, 0), b = sim_noise_place(&p, 1, 0, 1, 1, 0);
  assert_true(a == sim_noise_place(&p, 1, 0, 1, 0, 0)); /* fixed for the process */
  assert_true(a != b);                                   /* other buffers, another factor */
  assert_true(a != sim_noise_place(&p, 1, 0, 2, 0, 0)); /* another process, another draw */
  assert_true(a != sim_noise_place(&p, 1, 0, 1, 0, 1)); /* another input set's buffers */
}

/* Noise off but placement on: the A/A ratio new/best of a round is exactly the placement's
 * doing, so the layouts can be compared exactly. */
static double sim_ratio(void *self, const measure_opts *m, int round) {
  double b, n, k;
  tf_err e;
  tf_err_clear(&e);
  placement pb = placement_of(m, round, ARM_BEST), pn = placement_of(m, round, ARM_NEW);
  int set = round % m->input_sets;
  assert_int_equal(backend_sim.sample(self, &pb, set, 5, &b, &k, NULL, &e), 0);
  assert_int_equal(backend_sim.sample(self, &pn, set, 5, &n, &k, NULL, &e), 0);
  return n / b;
}

static void sim_placement_should_cancel_shared_and_flip_with_swap(void **state) {
  (void)state;
  setenv("TUNEFARM_SIM_NOISE", "jitter=0,round=0,boost_p=0,drift=0,cold=0,kjitter=0,place=0.02",
         1);
  void *self = NULL;
  tf_err e;
  tf_err_clear(&e);
  backend_opts o = {.ordinal = 0, .cache_dir = NULL, .instance = 4};
  assert_int_equal(backend_sim.open(&self, &o, &e), 0);
  unsetenv("TUNEFARM_SIM_NOISE");
  job *j = calloc(1, sizeof *j);
  assert_non_null(j);
  /* every arm the same configuration of the chain template: the same noiseless time */
  snprintf(j->root, sizeof j->root, "%s", source_dir());
  snprintf(j->specs[0], SPEC_PATH, "templates/chain.json");
  j->nsources = 1;
  j->ndims = 1;
  j->dims[0] = 1 << 20;
  for (int a = 0; a < ARM_COUNT; a++) {
    j->arm[a].from_template = 1;
    j->arm[a].cfg = (config){1, {1000}};
  }
  j->measure.input_sets = 2;
  j->measure.seed = 1;
  for (int layout = LAYOUT_SHARED; layout <= LAYOUT_SWAP; layout++) {
    j->measure.layout = layout;
    assert_int_equal(backend_sim.prepare(self, j, NULL, &e), 0);
    double r[4];
    for (int round = 0; round < 4; round++) r[round] = sim_ratio(self, &j->measure, round);
    if (layout == LAYOUT_SHARED) {
      for (int round = 0; round < 4; round++) assert_true(fabs(r[round] - 1.0) < 1e-12);
    } else if (layout == LAYOUT_PER_ARM) { /* a bias, the same in both phases of a set */
      assert_true(fabs(r[0] - 1.0) > 1e-4);
      assert_true(fabs(r[0] - r[2]) < 1e-12 && fabs(r[1] - r[3]) < 1e-12);
    } else { /* swap: the same buffers exchanged, so the bias flips and cancels in pairs */
      assert_true(fabs(r[0] * r[2] - 1.0) < 1e-12 && fabs(r[1] * r[3] - 1.0) < 1e-12);
    }
    backend_sim.finish(self);
  }
  backend_sim.close(self);
  free(j);
}

int main(void) {
  /* These test the measurement machinery on made-up jobs: the simulated device compiles
   * nothing (its NVRTC compile is tested by tests/cli/sim_compile.sh). */
  setenv("TUNEFARM_SIM_COMPILE", "0", 1);
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(shared_layout_should_give_every_arm_the_same_buffers),
      cmocka_unit_test(per_arm_layout_should_keep_each_arm_in_its_slot),
      cmocka_unit_test(swap_layout_should_exchange_buffers_once_every_set_was_used),
      cmocka_unit_test(canary_should_run_best_in_news_place_from_a_second_module),
      cmocka_unit_test(canary_should_clear_a_process_without_bias),
      cmocka_unit_test(canary_should_catch_a_bias_that_differs_between_input_sets),
      cmocka_unit_test(canary_should_not_flag_a_bias_below_the_threshold),
      cmocka_unit_test(untrusted_decision_should_say_why),
      cmocka_unit_test(sim_placement_should_be_fixed_per_process_and_buffer),
      cmocka_unit_test(sim_placement_should_cancel_shared_and_flip_with_swap),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
