/* Unit tests of worker/simcost.c: the simulated device's cost function and its
 * known optimum, on specs built by hand (flops and bytes absent). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "worker/simcost.h"

static void add_knob(spec *s, const char *name, int n, const long long *values) {
  spec_knob *k = &s->knobs[s->nknobs++];
  snprintf(k->name, sizeof k->name, "%s", name);
  k->nvalues = n;
  for (int i = 0; i < n; i++) k->values[i] = values[i];
}

/* A spec with no knobs yet and room for SPEC_MAX_KNOBS, its table after it: one free. */
static spec *bare_spec(void) {
  spec *s = calloc(1, sizeof *s + SPEC_MAX_KNOBS * sizeof(spec_knob));
  assert_non_null(s);
  s->knobs = (spec_knob *)(void *)(s + 1);
  return s;
}

/* BM, BN in {32, 64, 128, 256}; BK in {8, 16, 32}; WARPS in {2, 4}. */
static spec *matmul_spec(void) {
  spec *s = bare_spec();
  snprintf(s->name, sizeof s->name, "matmul");
  static const long long tiles[] = {32, 64, 128, 256}, bk[] = {8, 16, 32}, warps[] = {2, 4};
  add_knob(s, "BM", 4, tiles);
  add_knob(s, "BN", 4, tiles);
  add_knob(s, "BK", 3, bk);
  add_knob(s, "WARPS", 2, warps);
  return s; /* flops and bytes NULL: the base is the launch floor */
}

/* The configuration at the given value indices. */
static config at(const spec *s, const int *idx) {
  config c;
  memset(&c, 0, sizeof c);
  c.n = s->nknobs;
  for (int k = 0; k < s->nknobs; k++) c.v[k] = s->knobs[k].values[idx[k]];
  return c;
}

static void optimum_indices(const spec *s, unsigned long long seed, int *idx) {
  for (int k = 0; k < s->nknobs; k++) {
    double p;
    simcost_knob(s, k, seed, &idx[k], &p);
    assert_true(idx[k] >= 0 && idx[k] < s->knobs[k].nvalues);
    assert_true(p >= 0.02 && p <= 0.06);
  }
}

static void base_should_follow_the_stated_rates(void **state) {
  (void)state;
  assert_true(simcost_base_us(0, 0) == SIMCOST_LAUNCH_US);
  /* 50 TFLOP: one second of compute at 50 TFLOP/s */
  assert_true(fabs(simcost_base_us(50e12, 0) - (1e6 + 3.0)) < 1e-6);
  /* memory-bound: 4 GB at 4 TB/s is 1 ms, more than 1 GFLOP's 20 us */
  assert_true(fabs(simcost_base_us(1e9, 4e9) - (1000.0 + 3.0)) < 1e-9);
}

static void cost_should_be_deterministic_in_the_seed(void **state) {
  (void)state;
  spec *s = matmul_spec();
  int idx[] = {1, 2, 0, 1};
  config c = at(s, idx);
  assert_true(simcost_us(s, NULL, &c, 7) == simcost_us(s, NULL, &c, 7));
  int differ = 0, o7[SPEC_MAX_KNOBS], o;
  optimum_indices(s, 7, o7);
  for (unsigned long long seed = 1; seed < 20; seed++) {
    int other[SPEC_MAX_KNOBS];
    optimum_indices(s, seed, other);
    for (o = 0; o < s->nknobs; o++) differ += other[o] != o7[o];
  }
  assert_true(differ > 0); /* the optimum moves with the seed */
  free(s);
}

static void optimum_should_be_the_drawn_indices_at_the_base(void **state) {
  (void)state;
  spec *s = matmul_spec();
  for (unsigned long long seed = 1; seed <= 5; seed++) {
    int idx[4];
    optimum_indices(s, seed, idx);
    config want = at(s, idx), best;
    double us = 0;
    assert_int_equal(simcost_optimum(s, NULL, seed, NULL, NULL, &best, &us), 4 * 4 * 3 * 2);
    assert_int_equal(best.n, want.n);
    assert_memory_equal(best.v, want.v, sizeof want.v);
    assert_true(fabs(us - SIMCOST_LAUNCH_US) < 1e-12);
    assert_true(simcost_us(s, NULL, &want, seed) == us);
  }
  free(s);
}

static void each_step_away_should_cost_its_penalty(void **state) {
  (void)state;
  spec *s = matmul_spec();
  unsigned long long seed = 3;
  int opt[4], a, b;
  optimum_indices(s, seed, opt);
  simcost_pair(s, seed, &a, &b);
  for (int k = 0; k < 4; k++) {
    if (k == a || k == b) continue;
    int idx[4];
    memcpy(idx, opt, sizeof idx);
    idx[k] = opt[k] > 0 ? opt[k] - 1 : opt[k] + 1;
    config c = at(s, idx);
    double p;
    int o;
    simcost_knob(s, k, seed, &o, &p);
    assert_true(fabs(simcost_us(s, NULL, &c, seed) - SIMCOST_LAUNCH_US * (1.0 + p)) < 1e-12);
  }
  free(s);
}

static void pair_should_need_a_two_knob_move(void **state) {
  (void)state;
  spec *s = matmul_spec();
  int found = 0;
  for (unsigned long long seed = 1; seed < 200 && !found; seed++) {
    int opt[4], a, b;
    optimum_indices(s, seed, opt);
    simcost_pair(s, seed, &a, &b);
    assert_true(a >= 0 && b >= 0 && a != b);
    for (int dir = -1; dir <= 1 && !found; dir += 2) {
      int ia = opt[a] + dir, ib = opt[b] + dir;
      if (ia < 0 || ib < 0 || ia >= s->knobs[a].nvalues || ib >= s->knobs[b].nvalues) continue;
      int both[4], only_a[4], only_b[4];
      memcpy(both, opt, sizeof both);
      both[a] = ia;
      both[b] = ib;
      memcpy(only_a, both, sizeof only_a);
      only_a[a] = opt[a]; /* move a alone back to its optimum */
      memcpy(only_b, both, sizeof only_b);
      only_b[b] = opt[b];
      config cb = at(s, both), ca = at(s, only_a), cc = at(s, only_b), co = at(s, opt);
      double t = simcost_us(s, NULL, &cb, seed);
      assert_true(simcost_us(s, NULL, &ca, seed) > t); /* single moves are slower */
      assert_true(simcost_us(s, NULL, &cc, seed) > t);
      assert_true(simcost_us(s, NULL, &co, seed) < t); /* the two-knob move is faster */
      found = 1;
    }
  }
  assert_true(found);
  free(s);
}

/* Refuse BM * BN > 128 * 64: a stand-in for a shared-memory constraint. */
static int small_tiles(void *ctx, const config *c) {
  (void)ctx;
  return c->v[0] * c->v[1] <= 128 * 64;
}

static void optimum_should_respect_the_accept_callback(void **state) {
  (void)state;
  spec *s = matmul_spec();
  for (unsigned long long seed = 1; seed <= 10; seed++) {
    config best;
    double us = 0;
    int n = simcost_optimum(s, NULL, seed, small_tiles, NULL, &best, &us);
    assert_true(n > 0 && n < 96);
    assert_true(small_tiles(NULL, &best));
    double brute = INFINITY; /* every accepted configuration, by hand */
    int idx[4];
    for (idx[0] = 0; idx[0] < 4; idx[0]++)
      for (idx[1] = 0; idx[1] < 4; idx[1]++)
        for (idx[2] = 0; idx[2] < 3; idx[2]++)
          for (idx[3] = 0; idx[3] < 2; idx[3]++) {
            config c = at(s, idx);
            if (small_tiles(NULL, &c) && simcost_us(s, NULL, &c, seed) < brute)
              brute = simcost_us(s, NULL, &c, seed);
          }
    assert_true(us == brute);
  }
  free(s);
}

static int accept_none(void *ctx, const config *c) {
  (void)ctx, (void)c;
  return 0;
}

static void optimum_should_report_empty_and_huge_spaces(void **state) {
  (void)state;
  spec *s = matmul_spec();
  config best;
  memset(&best, 0, sizeof best);
  double us = -1;
  assert_int_equal(simcost_optimum(s, NULL, 1, accept_none, NULL, &best, &us), 0);
  assert_true(us == -1);
  free(s);
  spec *h = bare_spec();
  long long v[16];
  for (int i = 0; i < 16; i++) v[i] = i;
  for (int k = 0; k < 8; k++) {
    char name[8];
    snprintf(name, sizeof name, "K%d", k);
    add_knob(h, name, 16, v);
  }
  assert_int_equal(simcost_optimum(h, NULL, 1, NULL, NULL, &best, &us), -1);
  free(h);
}

static void no_knobs_should_cost_the_base(void **state) {
  (void)state;
  spec *s = calloc(1, sizeof *s);
  assert_non_null(s);
  snprintf(s->name, sizeof s->name, "control");
  config c;
  memset(&c, 0, sizeof c);
  assert_true(simcost_us(s, NULL, &c, 9) == SIMCOST_LAUNCH_US);
  int a, b;
  simcost_pair(s, 9, &a, &b);
  assert_int_equal(a, -1);
  assert_int_equal(b, -1);
  config best;
  double us = 0;
  assert_int_equal(simcost_optimum(s, NULL, 9, NULL, NULL, &best, &us), 1);
  free(s);
}

static void value_outside_the_domain_should_cost_more_than_the_far_end(void **state) {
  (void)state;
  spec *s = matmul_spec();
  int opt[4];
  optimum_indices(s, 2, opt);
  int far[4];
  memcpy(far, opt, sizeof far);
  far[3] = opt[3] == 0 ? 1 : 0; /* WARPS has two values */
  config cf = at(s, far), cx = at(s, opt);
  cx.v[3] = 3; /* not in {2, 4} */
  assert_true(simcost_us(s, NULL, &cx, 2) > simcost_us(s, NULL, &cf, 2));
  free(s);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(base_should_follow_the_stated_rates),
      cmocka_unit_test(cost_should_be_deterministic_in_the_seed),
      cmocka_unit_test(optimum_should_be_the_drawn_indices_at_the_base),
      cmocka_unit_test(each_step_away_should_cost_its_penalty),
      cmocka_unit_test(pair_should_need_a_two_knob_move),
      cmocka_unit_test(optimum_should_respect_the_accept_callback),
      cmocka_unit_test(optimum_should_report_empty_and_huge_spaces),
      cmocka_unit_test(no_knobs_should_cost_the_base),
      cmocka_unit_test(value_outside_the_domain_should_cost_more_than_the_far_end),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
