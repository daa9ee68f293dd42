/* Unit tests of common/decide.c: both rules on constructed rounds, where the
 * right answer is known by construction. */
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
#include "common/rule.h"

/* A small, fixed, zero-mean scatter for "noisy" rounds (fractions). */
static const double wobble[8] = {0.004, -0.003, 0.001, -0.005, 0.002, -0.001, 0.003, -0.002};

static result *new_result(void) {
  result *r = calloc(1, sizeof *r);
  assert_non_null(r);
  r->status = RESULT_OK;
  r->correct = 1;
  return r;
}

/* Append a round; kernel times < 0 (unavailable) and no clocks unless set later. */
static round_rec *add_round(result *r, double best, double new_us, double control) {
  round_rec *rr = &r->rounds[r->nrounds++];
  memset(rr, 0, sizeof *rr);
  for (int a = 0; a < ARM_COUNT; a++) rr->order[a] = (a + r->nrounds) % ARM_COUNT;
  rr->us[ARM_BEST] = best;
  rr->us[ARM_NEW] = new_us;
  rr->us[ARM_CONTROL] = control;
  for (int a = 0; a < ARM_COUNT; a++) rr->kernel_us[a] = -1.0;
  return rr;
}

/* n rounds where new runs at `ratio` of best, with the fixed scatter on new. */
static void add_rounds(result *r, int n, double ratio) {
  for (int i = 0; i < n; i++)
    add_round(r, 100.0, 100.0 * ratio * (1.0 + wobble[i % 8]), 80.0);
}

static void set_clocks(round_rec *rr, double best, double new_mhz, double control) {
  rr->arm_mhz[ARM_BEST] = best;
  rr->arm_mhz[ARM_NEW] = new_mhz;
  rr->arm_mhz[ARM_CONTROL] = control;
}

static decide_opts opts(const char *rule) {
  decide_opts o;
  decide_defaults(&o);
  snprintf(o.rule, sizeof o.rule, "%s", rule);
  return o;
}

static measure_opts measure(int rounds) {
  measure_opts m;
  memset(&m, 0, sizeof m);
  m.rounds = rounds;
  m.burn_in = 4;
  m.samples = 10;
  return m;
}

static decision run(const char *rule, const result *r) {
  decide_opts o = opts(rule);
  decision d;
  assert_int_equal(decide(&o, r, &d), 0);
  return d;
}

static void assert_reason_has(const decision *d, const char *part) {
  if (!strstr(d->reason, part)) fail_msg("reason '%s' lacks '%s'", d->reason, part);
}

/* ---- defaults and helpers ---- */

static void defaults_should_match_the_documented_values(void **state) {
  (void)state;
  decide_opts o;
  decide_defaults(&o);
  assert_string_equal(o.rule, "sequential");
  assert_true(o.min_gain == 0.01);
  assert_true(o.drift_tolerance == 0.03);
  assert_int_equal(o.max_requeue, 2);
  assert_true(*decide_param(&o, "alpha") == 0.01);
  assert_true(*decide_param(&o, "beta") == 0.05);
  assert_true(*decide_param(&o, "min_rounds") == 4);
  assert_true(o.clock_skew == 0.02);
  assert_true(o.throttle_mhz == 0.0);
  assert_int_equal(o.max_screened, 4);
}

static void stats_median_should_handle_odd_even_and_empty(void **state) {
  (void)state;
  double odd[] = {3.0, 1.0, 2.0}, even[] = {4.0, 1.0, 3.0, 2.0};
  assert_true(stats_median(odd, 3) == 2.0);
  assert_true(stats_median(even, 4) == 2.5);
  assert_true(isnan(stats_median(odd, 0)));
  assert_true(odd[0] == 3.0); /* the input is not reordered */
}

/* NaNs (a round without one instrument) are left out, not sorted among the values. */
static void stats_median_finite_should_leave_out_what_is_not_a_number(void **state) {
  (void)state;
  double x[40], clean[30], m, lo, hi, want_lo, want_hi;
  int n = 0;
  for (int i = 0; i < 40; i++) {
    x[i] = i % 4 == 1 ? NAN : 1.0 + 0.001 * (double)((i * 7) % 40);
    if (!isnan(x[i])) clean[n++] = x[i];
  }
  stats_median_finite(x, 40, &m, &lo, &hi);
  stats_median_interval(clean, n, &want_lo, &want_hi);
  assert_true(m == stats_median(clean, n));
  assert_true(lo == want_lo && hi == want_hi && isfinite(lo) && lo < m && m < hi);
  double none[3] = {NAN, NAN, INFINITY};
  stats_median_finite(none, 3, &m, &lo, &hi);
  assert_true(isnan(m) && !isfinite(lo) && !isfinite(hi));
}

/* The largest k with P(Bin(n, 1/2) <= k - 1) <= 0.025, summed in logarithms: another way
 * than the one under test. */
static int reference_rank(int n) {
  double cdf = 0.0;
  int k = 0;
  for (int i = 0; i < n; i++) {
    double p = exp(lgamma(n + 1.0) - lgamma(i + 1.0) - lgamma(n - i + 1.0) - n * log(2.0));
    if (cdf + p > 0.025) break;
    cdf += p;
    k = i + 1;
  }
  return k;
}

/* Order statistics k and n + 1 - k of 1..n: the exact rank up to 1,000 values, within one
 * of it past that, and an interval for any number of rounds (a report's A/A process can
 * have thousands). */
static void stats_median_interval_should_take_the_binomial_ranks(void **state) {
  (void)state;
  static double x[6000];
  double lo, hi;
  for (int n = 1; n <= 6000; n += n < 1100 ? 1 : 487) {
    for (int i = 0; i < n; i++) x[i] = (double)(1 + (i * 7919L) % n); /* 1..n, scrambled */
    stats_median_interval(x, n, &lo, &hi);
    int want = n < 6 ? 0 : reference_rank(n);
    if (want < 1) {
      assert_true(isinf(lo) && isinf(hi));
      continue;
    }
    if (n <= 1000 && (lo != want || hi != n + 1 - want))
      fail_msg("n %d: [%g, %g], want [%d, %d]", n, lo, hi, want, n + 1 - want);
    if (fabs(lo - want) > 1 || lo + hi != n + 1)
      fail_msg("n %d: [%g, %g], want about [%d, %d]", n, lo, hi, want, n + 1 - want);
  }
}

static void unknown_rule_should_be_refused(void **state) {
  (void)state;
  assert_false(decide_rule_known("mean"));
  assert_false(decide_rule_known(NULL));
  assert_true(decide_rule_known("median"));
  assert_true(decide_rule_known("sequential"));
  result *r = new_result();
  add_rounds(r, 8, 0.95);
  decide_opts o = opts("mean");
  decision d;
  assert_int_equal(decide(&o, r, &d), -1);
  assert_reason_has(&d, "unknown decision rule 'mean'");
  decision_release(&d);
  free(r);
}

/* ---- the gates before any rule ---- */

static void fault_should_be_rejected_with_its_cause(void **state) {
  (void)state;
  result *r = new_result();
  r->status = RESULT_FAULT;
  snprintf(r->detail, sizeof r->detail, "child killed by signal 11 (Segmentation fault)");
  for (int s = 0; s < 2; s++) {
    decision d = run(s ? "sequential" : "median", r);
    assert_int_equal(d.kind, DECISION_REJECT);
    assert_false(d.noisy);
    assert_string_equal(d.reason, "fault: child killed by signal 11 (Segmentation fault)");
    decision_release(&d);
  }
  free(r);
}

static void incorrect_result_should_be_rejected_with_its_error(void **state) {
  (void)state;
  result *r = new_result();
  r->correct = 0;
  r->rel_err[ARM_NEW] = 0.5;
  add_rounds(r, 8, 0.90); /* fast but wrong: speed must not matter */
  for (int s = 0; s < 2; s++) {
    decision d = run(s ? "sequential" : "median", r);
    assert_int_equal(d.kind, DECISION_REJECT);
    assert_reason_has(&d, "incorrect result");
    assert_reason_has(&d, "new 0.5");
    decision_release(&d);
  }
  free(r);
}

static void drifting_control_should_be_refused_as_noisy(void **state) {
  (void)state;
  result *r = new_result();
  for (int i = 0; i < 8; i++) add_round(r, 100.0, 95.0, 80.0 * (1.0 + 0.02 * i)); /* 2% a round */
  for (int s = 0; s < 2; s++) {
    decision d = run(s ? "sequential" : "median", r);
    assert_int_equal(d.kind, DECISION_REFUSED);
    assert_true(d.noisy);
    assert_reason_has(&d, "control drifted");
    assert_true(d.control_drift > 1.03);
    decision_release(&d);
  }
  free(r);
}

/* ---- the baseline ---- */

static void median_should_keep_a_clear_gain_with_its_reason(void **state) {
  (void)state;
  result *r = new_result();
  for (int i = 0; i < 8; i++) add_round(r, 100.0, 98.4, 80.0);
  decision d = run("median", r);
  assert_int_equal(d.kind, DECISION_KEEP);
  assert_int_equal(d.nratios, 8);
  assert_true(fabs(d.median_ratio - 0.984) < 1e-12);
  assert_string_equal(d.reason, "new is 1.6% faster than best (needed > 1.0%)");
  assert_true(isnan(d.kernel_median_ratio));
  decision_release(&d);
  free(r);
}

/* Eight rounds of best at 100 us, new at new_us and the control at 80 us, but for round 4's
 * control at control4: the median rule's decision and its whole reason. */
static void median_should_say(double new_us, double control4, decision_kind kind,
                              const char *reason) {
  result *r = new_result();
  for (int i = 0; i < 8; i++) add_round(r, 100.0, new_us, i == 3 ? control4 : 80.0);
  decision d = run("median", r);
  assert_int_equal(d.kind, kind);
  assert_string_equal(d.reason, reason);
  decision_release(&d);
  free(r);
}

static void median_should_say_slower_in_words(void **state) {
  (void)state;
  median_should_say(100.4, 80.0, DECISION_REJECT, "new is 0.4% slower than best");
}

static void median_tie_at_the_threshold_should_reject(void **state) {
  (void)state;
  result *r = new_result();
  decide_opts o = opts("median");
  for (int i = 0; i < 8; i++) add_round(r, 64.0, 64.0 * (1.0 - o.min_gain), 80.0);
  decision d;
  assert_int_equal(decide(&o, r, &d), 0);
  assert_true(d.median_ratio == 1.0 - o.min_gain);
  assert_int_equal(d.kind, DECISION_REJECT);
  assert_reason_has(&d, "(needed > 1.0%)");
  decision_release(&d);
  free(r);
}

/* A gain just over min_gain, and a drift just over the tolerance, are written to the decimals
 * that tell them from their limits: the record never reads "1.0% (needed > 1.0%)". */
static void reasons_should_tell_a_figure_from_its_limit(void **state) {
  (void)state;
  median_should_say(98.96, 80.0, DECISION_KEEP, "new is 1.04% faster than best (needed > 1.00%)");
  median_should_say(100.0, 80.0 * 1.0304, DECISION_REFUSED,
                    "control drifted 3.04% over 8 rounds (tolerance 3.00%): too noisy to judge");
}

static void median_should_not_be_carried_by_a_boosted_new_round(void **state) {
  (void)state;
  result *r = new_result();
  add_rounds(r, 8, 1.0);
  r->rounds[2].us[ARM_NEW] = 100.0 / 1.1; /* the excursion lands on new */
  decision d = run("median", r);
  assert_int_equal(d.kind, DECISION_REJECT);
  decision_release(&d);
  free(r);
}

static void median_should_keep_a_gain_despite_a_boosted_best_round(void **state) {
  (void)state;
  result *r = new_result();
  add_rounds(r, 8, 0.97);
  r->rounds[5].us[ARM_BEST] = 100.0 / 1.1; /* the excursion lands on best */
  decision d = run("median", r);
  assert_int_equal(d.kind, DECISION_KEEP);
  decision_release(&d);
  free(r);
}

static void median_should_report_kernel_ratios_when_measured(void **state) {
  (void)state;
  result *r = new_result();
  for (int i = 0; i < 8; i++) {
    round_rec *rr = add_round(r, 100.0, 97.0, 80.0);
    rr->kernel_us[ARM_BEST] = 90.0;
    rr->kernel_us[ARM_NEW] = 87.3;
    rr->kernel_us[ARM_CONTROL] = 72.0;
  }
  decision d = run("median", r);
  assert_true(fabs(d.kernel_median_ratio - 0.97) < 1e-12);
  assert_true(fabs(d.kernel_ratios[3] - 0.97) < 1e-12);
  decision_release(&d);
  r->rounds[4].kernel_us[ARM_NEW] = -1.0; /* one round without the instrument: none */
  d = run("median", r);
  assert_true(isnan(d.kernel_median_ratio));
  decision_release(&d);
  free(r);
}

static void single_round_should_decide_under_median_and_not_keep_under_sequential(void **state) {
  (void)state;
  result *r = new_result();
  add_round(r, 100.0, 95.0, 80.0);
  decision d = run("median", r);
  assert_int_equal(d.kind, DECISION_KEEP);
  assert_int_equal(d.nratios, 1);
  decision_release(&d);
  d = run("sequential", r); /* one round can never pass the sign gate */
  assert_int_equal(d.kind, DECISION_REJECT);
  assert_reason_has(&d, "sign p");
  decision_release(&d);
  decide_opts o = opts("median");
  measure_opts m = measure(8);
  assert_false(decide_enough(&o, &m, r->rounds, 1));
  o = opts("sequential");
  assert_false(decide_enough(&o, &m, r->rounds, 1));
  free(r);
}

/* ---- the sequential rule ---- */

static void sequential_should_keep_a_true_gain_and_stop_early(void **state) {
  (void)state;
  result *r = new_result();
  add_rounds(r, 8, 0.95);
  decide_opts o = opts("sequential");
  measure_opts m = measure(8);
  assert_false(decide_enough(&o, &m, r->rounds, 3)); /* never before min_rounds */
  assert_true(decide_enough(&o, &m, r->rounds, 4));  /* well before the cap of 8 */
  r->nrounds = 4;
  decision d = run("sequential", r);
  assert_int_equal(d.kind, DECISION_KEEP);
  assert_int_equal(d.nratios, 4);
  assert_reason_has(&d, "sequential test");
  const cJSON *stop = cJSON_GetObjectItemCaseSensitive(d.stats, "stopped_by");
  assert_string_equal(cJSON_GetStringValue(stop), "keep boundary");
  const char *keys[] = {"llr", "upper", "lower", "sigma", "sign_p", "sign_faster", "screened",
                        "rounds_used"};
  for (size_t i = 0; i < sizeof keys / sizeof keys[0]; i++)
    if (!cJSON_GetObjectItemCaseSensitive(d.stats, keys[i])) fail_msg("stats lack '%s'", keys[i]);
  double llr = cJSON_GetNumberValue(cJSON_GetObjectItemCaseSensitive(d.stats, "llr"));
  double upper = cJSON_GetNumberValue(cJSON_GetObjectItemCaseSensitive(d.stats, "upper"));
  assert_true(llr >= upper);
  assert_true(fabs(upper - log(0.95 / 0.01)) < 1e-12);
  decision_release(&d);
  free(r);
}

static void sequential_should_replay_and_ignore_rounds_after_its_stop(void **state) {
  (void)state;
  result *r = new_result();
  add_rounds(r, 8, 0.95);
  decision d = run("sequential", r);
  assert_int_equal(d.kind, DECISION_KEEP);
  assert_int_equal(d.nratios, 4);
  const cJSON *ign = cJSON_GetObjectItemCaseSensitive(d.stats, "rounds_ignored");
  assert_int_equal((int)cJSON_GetNumberValue(ign), 4);
  decision_release(&d);
  free(r);
}

static void sequential_should_reject_an_a_a_pair(void **state) {
  (void)state;
  result *r = new_result();
  add_rounds(r, 8, 1.0);
  decide_opts o = opts("sequential");
  measure_opts m = measure(8);
  assert_true(decide_enough(&o, &m, r->rounds, 4));
  decision d = run("sequential", r);
  assert_int_equal(d.kind, DECISION_REJECT);
  assert_reason_has(&d, "LLR");
  decision_release(&d);
  free(r);
}

static void sequential_should_not_be_carried_by_a_boosted_new_round(void **state) {
  (void)state;
  result *r = new_result(); /* no clocks: the robust statistics alone must hold */
  add_rounds(r, 8, 1.0);
  r->rounds[0].us[ARM_NEW] = 100.0 / 1.1;
  decision d = run("sequential", r);
  assert_int_equal(d.kind, DECISION_REJECT);
  decision_release(&d);
  free(r);
}

static void sequential_should_keep_a_gain_despite_a_boosted_best_round(void **state) {
  (void)state;
  result *r = new_result();
  add_rounds(r, 8, 0.95);
  r->rounds[1].us[ARM_BEST] = 100.0 / 1.1; /* ratio 1.045 in round 2 */
  decision d = run("sequential", r);
  assert_int_equal(d.kind, DECISION_KEEP);
  decision_release(&d);
  free(r);
}

static void sequential_should_screen_rounds_by_clock(void **state) {
  (void)state;
  result *r = new_result();
  add_rounds(r, 8, 1.0);
  for (int i = 0; i < 8; i++) set_clocks(&r->rounds[i], 1980, 1980, 1980);
  r->rounds[0].us[ARM_NEW] = 100.0 / 1.1; /* a boost the clock shows */
  set_clocks(&r->rounds[0], 1980, 2178, 1980);
  r->rounds[2].us[ARM_BEST] = 100.0 / 1.1;
  set_clocks(&r->rounds[2], 2178, 1980, 1980);
  decide_opts o = opts("sequential");
  assert_true(decide_screen_round(&o, &r->rounds[0]));
  assert_false(decide_screen_round(&o, &r->rounds[1]));
  decision d = run("sequential", r);
  assert_int_equal(d.screened, 2);
  assert_int_equal(d.kind, DECISION_REJECT);
  for (int i = 0; i < d.nratios; i++) assert_true(fabs(d.ratios[i] - 1.0) < 0.01);
  decision_release(&d);
  free(r);
}

static void screen_should_use_clocks_around_the_round_and_the_throttle(void **state) {
  (void)state;
  decide_opts o = opts("sequential");
  round_rec rr;
  memset(&rr, 0, sizeof rr);
  assert_false(decide_screen_round(&o, &rr)); /* no clocks known: nothing to screen on */
  rr.sm_mhz[0] = 1980;
  rr.sm_mhz[1] = 1755; /* 12.8% apart */
  assert_true(decide_screen_round(&o, &rr));
  rr.sm_mhz[1] = 1965;
  assert_false(decide_screen_round(&o, &rr));
  o.throttle_mhz = 1970;
  assert_true(decide_screen_round(&o, &rr));
  decide_opts m = opts("median"); /* the baseline never screens */
  rr.sm_mhz[1] = 1000;
  assert_false(decide_screen_round(&m, &rr));
}

static void too_many_screened_rounds_should_be_refused_as_noisy(void **state) {
  (void)state;
  result *r = new_result();
  add_rounds(r, 8, 0.95);
  for (int i = 0; i < 8; i++) set_clocks(&r->rounds[i], 1980, i < 5 ? 2178 : 1980, 1980);
  decide_opts o = opts("sequential");
  measure_opts m = measure(8);
  assert_false(decide_enough(&o, &m, r->rounds, 4)); /* four screened: at the limit */
  assert_true(decide_enough(&o, &m, r->rounds, 5));  /* five: over it */
  decision d = run("sequential", r);
  assert_int_equal(d.kind, DECISION_REFUSED);
  assert_int_equal(d.noisy, 1);
  assert_int_equal(d.screened, 5);
  assert_reason_has(&d, "screened by clock");
  decision_release(&d);
  free(r);
}

static void instruments_disagreeing_should_be_ambiguous(void **state) {
  (void)state;
  result *r = new_result();
  add_rounds(r, 8, 0.97);
  for (int i = 0; i < 8; i++) {
    r->rounds[i].kernel_us[ARM_BEST] = 90.0;
    r->rounds[i].kernel_us[ARM_NEW] = 90.0 * 0.997; /* the kernel says 0.3%, the span 3% */
    r->rounds[i].kernel_us[ARM_CONTROL] = 72.0;
  }
  decision d = run("sequential", r);
  assert_int_equal(d.kind, DECISION_AMBIGUOUS);
  assert_reason_has(&d, "instruments disagree");
  assert_reason_has(&d, "would keep");
  decision_release(&d);
  for (int i = 0; i < 8; i++) /* agreeing instruments: kept */
    r->rounds[i].kernel_us[ARM_NEW] = 90.0 * r->rounds[i].us[ARM_NEW] / 100.0;
  d = run("sequential", r);
  assert_int_equal(d.kind, DECISION_KEEP);
  decision_release(&d);
  for (int i = 0; i < 8; i++) /* diluted but backing: the kernel says 2%, the span 3% */
    r->rounds[i].kernel_us[ARM_NEW] = 90.0 * 0.98;
  d = run("sequential", r);
  assert_int_equal(d.kind, DECISION_KEEP);
  decision_release(&d);
  free(r);
}

static void instruments_both_saying_slower_should_not_be_ambiguous(void **state) {
  (void)state;
  result *r = new_result();
  add_rounds(r, 8, 1.05); /* the span says 5% slower */
  for (int i = 0; i < 8; i++) {
    r->rounds[i].kernel_us[ARM_BEST] = 90.0;
    r->rounds[i].kernel_us[ARM_NEW] = 90.0 * 1.09; /* the kernel 9% slower */
    r->rounds[i].kernel_us[ARM_CONTROL] = 72.0;
  }
  decision d = run("sequential", r);
  assert_int_equal(d.kind, DECISION_REJECT);
  decision_release(&d);
  for (int i = 0; i < 8; i++) r->rounds[i].kernel_us[ARM_NEW] = 90.0 * 0.97; /* kernel: 3% faster */
  d = run("sequential", r);
  assert_int_equal(d.kind, DECISION_AMBIGUOUS);
  assert_reason_has(&d, "would reject");
  decision_release(&d);
  free(r);
}

static void sequential_at_the_cap_should_decide_by_the_median(void **state) {
  (void)state;
  result *r = new_result(); /* a 1.5% gain with 2% scatter: no boundary in 8 rounds */
  static const double scatter[8] = {0.02, -0.02, 0.015, -0.015, 0.01, -0.01, 0.0, -0.005};
  for (int i = 0; i < 8; i++) add_round(r, 100.0, 98.5 * (1.0 + scatter[i]), 80.0);
  decide_opts o = opts("sequential");
  measure_opts m = measure(8);
  for (int n = 1; n < 8; n++) assert_false(decide_enough(&o, &m, r->rounds, n));
  assert_true(decide_enough(&o, &m, r->rounds, 8));
  decision d = run("sequential", r);
  const cJSON *stop = cJSON_GetObjectItemCaseSensitive(d.stats, "stopped_by");
  assert_string_equal(cJSON_GetStringValue(stop), "cap");
  assert_reason_has(&d, "the median decides");
  decision_release(&d);
  free(r);
}

static void median_rule_should_need_all_its_rounds(void **state) {
  (void)state;
  result *r = new_result();
  add_rounds(r, 8, 0.9);
  decide_opts o = opts("median");
  measure_opts m = measure(8);
  assert_false(decide_enough(&o, &m, r->rounds, 7));
  assert_true(decide_enough(&o, &m, r->rounds, 8));
  free(r);
}

/* A round with a time that is not positive is refused, named by its number from 1. */
static void a_bad_round_should_be_named_by_its_number(void **state) {
  (void)state;
  result *r = new_result();
  add_rounds(r, 3, 0.9);
  r->rounds[1].us[ARM_NEW] = 0.0;
  decision d = run("median", r);
  assert_int_equal(d.kind, DECISION_REJECT);
  assert_reason_has(&d, "round 2: a time that is not a positive number");
  decision_release(&d);
  free(r);
}

/* With min_gain 0 a gain is written to one decimal: there is no limit to tell it from. */
static void a_gain_without_a_limit_should_be_written_to_one_decimal(void **state) {
  (void)state;
  result *r = new_result();
  add_round(r, 100.0, 99.96, 80.0);
  decide_opts o = opts("median");
  o.min_gain = 0.0;
  decision d;
  assert_int_equal(decide(&o, r, &d), 0);
  assert_reason_has(&d, "new is 0.0% faster than best");
  decision_release(&d);
  free(r);
}

/* The record holds at most MSG_MAX_ROUNDS rounds: every rule has enough there; an unknown rule
 * screens nothing. */
static void rounds_should_stop_at_the_records_capacity(void **state) {
  (void)state;
  result *r = new_result();
  add_rounds(r, MSG_MAX_ROUNDS, 1.0);
  measure_opts m = measure(2 * MSG_MAX_ROUNDS);
  decide_opts o = opts("median");
  assert_false(decide_enough(&o, &m, r->rounds, MSG_MAX_ROUNDS - 1));
  assert_true(decide_enough(&o, &m, r->rounds, MSG_MAX_ROUNDS));
  decide_opts none = opts("nonesuch");
  set_clocks(&r->rounds[0], 1000.0, 1400.0, 1000.0);
  assert_int_equal(decide_screen_round(&none, &r->rounds[0]), 0);
  free(r);
}

/* ---- exact figures the rules and the canary report ---- */

static double stat_of(const decision *d, const char *key) {
  const cJSON *v = cJSON_GetObjectItemCaseSensitive(d->stats, key);
  if (!cJSON_IsNumber(v)) fail_msg("stats has no number '%s'", key);
  return v->valuedouble;
}

/* Each gate names the status it rejects, and a detail of one character is a detail. */
static void gates_should_name_the_status_and_keep_a_short_detail(void **state) {
  (void)state;
  static const struct {
    result_status status;
    const char *detail, *want;
  } cases[] = {{RESULT_FAULT, "x", "fault: x"},
               {RESULT_COMPILE_ERROR, "y", "compile error: y"},
               {RESULT_ERROR, "", "error: (no detail)"}};
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
    result *r = new_result();
    r->status = cases[i].status;
    snprintf(r->detail, sizeof r->detail, "%s", cases[i].detail);
    decision d = run("median", r);
    assert_int_equal(d.kind, DECISION_REJECT);
    assert_string_equal(d.reason, cases[i].want);
    decision_release(&d);
    free(r);
  }
}

/* A refusal for drift sets the flag to 1, as every refusal for noise does. */
static void a_noisy_refusal_should_set_the_flag_to_one(void **state) {
  (void)state;
  result *r = new_result();
  for (int i = 0; i < 8; i++) add_round(r, 100.0, 95.0, 80.0 * (1.0 + 0.02 * i));
  for (int s = 0; s < 2; s++) {
    decision d = run(s ? "sequential" : "median", r);
    assert_int_equal(d.noisy, 1);
    decision_release(&d);
  }
  free(r);
}

/* Rounds well inside the Huber bound: the location is their mean log ratio, over the rounds
 * used and no other value. */
static void sequential_location_should_be_the_mean_inside_the_huber_bound(void **state) {
  (void)state;
  result *r = new_result();
  add_rounds(r, 8, 0.97);
  decision d = run("sequential", r);
  double sum = 0.0;
  for (int i = 0; i < d.nratios; i++) sum += log(d.ratios[i]);
  double want = exp(sum / d.nratios);
  if (fabs(stat_of(&d, "location_ratio") - want) > 1e-12)
    fail_msg("location %.15g, want %.15g", stat_of(&d, "location_ratio"), want);
  decision_release(&d);
  free(r);
}

/* Two identical rounds: both scale estimates are 0, so the scale is the floor (min_gain) times
 * the small-sample allowance sqrt((n + 1) / (n - 1)) = sqrt(3). */
static void sequential_scale_should_carry_the_allowance_from_two_rounds(void **state) {
  (void)state;
  result *r = new_result();
  add_round(r, 100.0, 90.0, 80.0);
  add_round(r, 100.0, 90.0, 80.0);
  decide_opts o = opts("sequential");
  *decide_param(&o, "min_rounds") = 2;
  decision d;
  assert_int_equal(decide(&o, r, &d), 0);
  assert_int_equal(d.nratios, 2);
  assert_true(fabs(stat_of(&d, "sigma") - 0.01 * sqrt(3.0)) < 1e-15);
  assert_true(stat_of(&d, "sigma_floor") == 0.01);
  /* two of two faster: sign p 0.25 fails the gate, so no keep on the boundary */
  assert_true(stat_of(&d, "sign_p") == 0.25);
  decision_release(&d);
  free(r);
}

/* A reject whose kernel ratio sits exactly at 1 - 1.5 min_gain is not contradicted: only a
 * kernel gain beyond that makes it ambiguous. */
static void a_reject_at_the_kernel_bound_should_not_be_ambiguous(void **state) {
  (void)state;
  result *r = new_result();
  add_rounds(r, 8, 1.0);
  double bound = 1.0 - 1.5 * 0.01;
  for (int i = 0; i < 8; i++) {
    r->rounds[i].kernel_us[ARM_BEST] = 1.0;
    r->rounds[i].kernel_us[ARM_NEW] = bound;
  }
  decision d = run("sequential", r);
  assert_int_equal(d.kind, DECISION_REJECT);
  assert_true(d.kernel_median_ratio == bound);
  decision_release(&d);
  for (int i = 0; i < 8; i++) r->rounds[i].kernel_us[ARM_NEW] = 0.98;
  d = run("sequential", r);
  assert_int_equal(d.kind, DECISION_AMBIGUOUS);
  if (strstr(d.reason, "instruments disagree: event span says new is ") != d.reason)
    fail_msg("reason '%s'", d.reason);
  decision_release(&d);
  free(r);
}

/* Clock-event reasons are recorded for the audit; they screen nothing by themselves. */
static void clock_reasons_alone_should_not_screen_a_round(void **state) {
  (void)state;
  result *r = new_result();
  add_rounds(r, 1, 1.0);
  round_rec *rr = &r->rounds[0];
  set_clocks(rr, 1980.0, 1980.0, 1980.0);
  rr->reasons[0] = 4;
  rr->reasons[1] = 0x4000000000000000ULL;
  decide_opts o = opts("sequential");
  assert_int_equal(decide_screen_round(&o, rr), 0);
  set_clocks(rr, 0.0, 0.0, 0.0);
  rr->sm_mhz[0] = rr->sm_mhz[1] = 1980.0;
  assert_int_equal(decide_screen_round(&o, rr), 0);
  free(r);
}

static void stats_rel_spread_should_take_two_values(void **state) {
  (void)state;
  double x[] = {1.0, 3.0}, one[] = {5.0};
  assert_true(fabs(stats_rel_spread(x, 2) - 1.4826 * 1.0 / 2.0) < 1e-15);
  assert_true(stats_rel_spread(one, 1) == 0.0);
  double neg[] = {-1.0, -3.0};
  assert_true(isnan(stats_rel_spread(neg, 2)));
}

/* ---- the canary ---- */

static result *canary_result(int n, const double *ratio, const double *kratio) {
  result *r = new_result();
  r->child = 7;
  r->ncanary = n;
  for (int i = 0; i < n; i++) {
    r->canary[i].us[0] = 100.0;
    r->canary[i].us[1] = 100.0 * ratio[i];
    r->canary[i].kernel_us[0] = kratio ? 50.0 : -1.0;
    r->canary[i].kernel_us[1] = kratio ? 50.0 * kratio[i] : -1.0;
  }
  return r;
}

/* The half width of the interval of a set of m equal values: the floor threshold/2 as sigma,
 * the median's error 1.2533 sigma / sqrt(m), the t factor at df degrees of freedom. */
static double canary_half(double var, int used, int df) {
  double z = 1.959964, t = z + (z * z * z + z) / (4.0 * df);
  return t * sqrt(var) / used;
}

static void canary_should_estimate_and_bound_one_set(void **state) {
  (void)state;
  double ratio[8], kratio[8];
  for (int i = 0; i < 8; i++) ratio[i] = 1.01, kratio[i] = 0.995;
  result *r = canary_result(8, ratio, kratio);
  canary_verdict v;
  decide_canary(0.0025, 1, r, &v);
  assert_int_equal(v.child, 7);
  assert_int_equal(v.n, 8);
  assert_true(v.threshold == 0.0025);
  double se = 1.2533 * 0.00125 / sqrt(8.0);
  double half = canary_half(se * se, 1, 7);
  assert_true(fabs(v.ratio[0] - 1.01) < 1e-12);
  assert_true(fabs(v.ratio[1] - 0.995) < 1e-12);
  assert_true(fabs(v.lo[0] - (1.01 - half)) < 1e-12 && fabs(v.hi[0] - (1.01 + half)) < 1e-12);
  assert_true(fabs(v.lo[1] - (0.995 - half)) < 1e-12 && fabs(v.hi[1] - (0.995 + half)) < 1e-12);
  assert_int_equal(v.biased, 1);
  if (!strstr(v.reason, "canary of measure process 7: a copy of best in new's place reads "
                        "+1.00% [95%: ") ||
      !strstr(v.reason, "(event span), -0.50% [95%: ") ||
      !strstr(v.reason, "(kernel time) over 8 rounds; a bias beyond the threshold, so this "
                        "process decides nothing"))
    fail_msg("reason '%s'", v.reason);
  free(r);
}

/* Two input sets: the estimate is the mean of the sets' medians, each set its own error; a set
 * without rounds adds nothing. */
static void canary_should_average_the_input_sets(void **state) {
  (void)state;
  double ratio[6] = {1.02, 0.99, 1.02, 0.99, 1.02, 0.99};
  result *r = canary_result(6, ratio, NULL);
  canary_verdict v;
  decide_canary(0.0025, 2, r, &v);
  double se = 1.2533 * 0.00125 / sqrt(3.0);
  double half = canary_half(2 * se * se, 2, 4);
  assert_true(fabs(v.ratio[0] - 1.005) < 1e-12);
  assert_true(fabs(v.hi[0] - v.ratio[0] - half) < 1e-12);
  assert_true(isnan(v.ratio[1]) && isinf(v.lo[1]) && isinf(v.hi[1]));
  assert_int_equal(v.biased, 1);
  if (!strstr(v.reason, "(event span), not measured (kernel time) over 6 rounds"))
    fail_msg("reason '%s'", v.reason);
  free(r);
  /* three sets for two rounds: the third has none and is left out; one round a set leaves no
   * degree of freedom, so no bound */
  r = canary_result(2, ratio, NULL);
  decide_canary(0.0025, 3, r, &v);
  assert_true(fabs(v.ratio[0] - 1.005) < 1e-12);
  assert_true(isinf(v.lo[0]) && isinf(v.hi[0]));
  assert_int_equal(v.biased, 0);
  free(r);
}

static void canary_should_clear_a_process_within_the_threshold_or_the_noise(void **state) {
  (void)state;
  double small[8], noisy[8];
  for (int i = 0; i < 8; i++) {
    small[i] = 1.002;
    noisy[i] = 1.01 + (i % 2 ? 0.05 : -0.05) * (1 + i / 2);
  }
  result *r = canary_result(8, small, NULL);
  canary_verdict v;
  decide_canary(0.0025, 1, r, &v);
  assert_int_equal(v.biased, 0);
  if (!strstr(v.reason, "; no bias beyond the threshold")) fail_msg("reason '%s'", v.reason);
  free(r);
  r = canary_result(8, noisy, NULL);
  decide_canary(0.0025, 1, r, &v);
  assert_true(v.lo[0] < 1.0 && v.hi[0] > 1.0);
  assert_int_equal(v.biased, 0);
  free(r);
}

/* A kernel time of 0 (or none) on either copy in any round: the kernel time is not measured. */
static void canary_kernel_time_should_need_every_round_positive(void **state) {
  (void)state;
  double ratio[6] = {1, 1, 1, 1, 1, 1}, kratio[6] = {1, 1, 1, 1, 1, 1};
  for (int which = 0; which < 2; which++) {
    result *r = canary_result(6, ratio, kratio);
    r->canary[3].kernel_us[which] = 0.0;
    canary_verdict v;
    decide_canary(0.0025, 1, r, &v);
    assert_true(isnan(v.ratio[1]));
    assert_true(fabs(v.ratio[0] - 1.0) < 1e-12);
    free(r);
  }
  result *r = canary_result(0, ratio, NULL);
  canary_verdict v;
  decide_canary(0.0025, 1, r, &v);
  assert_true(isnan(v.ratio[0]) && isnan(v.ratio[1]));
  assert_int_equal(v.biased, 0);
  if (!strstr(v.reason, "not measured (event span), not measured (kernel time) over 0 rounds"))
    fail_msg("reason '%s'", v.reason);
  free(r);
}

static void untrusted_should_say_which_canary_or_which_process(void **state) {
  (void)state;
  decision d;
  memset(&d, 0, sizeof d);
  d.noisy = 1;
  decide_untrusted(&d, NULL, 5);
  assert_int_equal(d.kind, DECISION_REFUSED);
  assert_int_equal(d.noisy, 0);
  assert_string_equal(d.reason, "not decided: measured by measure process 5, which no canary "
                                "has cleared; measured again after one");
  canary_verdict cv;
  memset(&cv, 0, sizeof cv);
  snprintf(cv.reason, sizeof cv.reason, "biased");
  decide_untrusted(&d, &cv, 6); /* a verdict without rounds cleared nothing */
  assert_string_equal(d.reason, "not decided: measured by measure process 6, which no canary "
                                "has cleared; measured again after one");
  cv.n = 1;
  decide_untrusted(&d, &cv, 6);
  assert_string_equal(d.reason, "not decided: biased; measured again in a fresh process");
}

/* ---- boundaries of the shared steps and of the rules ---- */

static int stat_is_null(const decision *d, const char *key) {
  return cJSON_IsNull(cJSON_GetObjectItemCaseSensitive(d->stats, key));
}

/* A clock exactly at throttle_mhz is not throttled; only one below it is. */
static void a_clock_at_the_throttle_should_not_screen(void **state) {
  (void)state;
  decide_opts o = opts("sequential");
  round_rec rr;
  memset(&rr, 0, sizeof rr);
  rr.sm_mhz[0] = rr.sm_mhz[1] = 1965;
  o.throttle_mhz = 1965;
  assert_false(decide_screen_round(&o, &rr));
  o.throttle_mhz = 1965.5;
  assert_true(decide_screen_round(&o, &rr));
}

/* A kernel time of 0 on either arm is no measurement: the kernel ratios are then unknown. */
static void a_zero_kernel_time_should_count_as_unmeasured(void **state) {
  (void)state;
  result *r = new_result();
  for (int i = 0; i < 4; i++) {
    round_rec *rr = add_round(r, 100.0, 97.0, 80.0);
    rr->kernel_us[ARM_BEST] = 90.0;
    rr->kernel_us[ARM_NEW] = 87.3;
  }
  for (int a = 0; a < 2; a++) {
    int arm = a ? ARM_BEST : ARM_NEW;
    r->rounds[2].kernel_us[arm] = 0.0;
    decision d = run("median", r);
    assert_true(isnan(d.kernel_median_ratio));
    decision_release(&d);
    r->rounds[2].kernel_us[arm] = a ? 90.0 : 87.3;
  }
  free(r);
}

/* No input sets given reads as one set: the same estimate and interval. */
static void canary_without_input_sets_should_read_as_one_set(void **state) {
  (void)state;
  double ratio[6] = {1.02, 0.99, 1.03, 0.98, 1.01, 1.00};
  result *r = canary_result(6, ratio, NULL);
  canary_verdict none, one;
  decide_canary(0.0025, 0, r, &none);
  decide_canary(0.0025, 1, r, &one);
  assert_true(isfinite(one.ratio[0]) && isfinite(one.lo[0]));
  assert_true(none.ratio[0] == one.ratio[0]);
  assert_true(none.lo[0] == one.lo[0] && none.hi[0] == one.hi[0]);
  free(r);
}

/* A single round is evaluated as the data's end: its statistics are known. */
static void sequential_should_evaluate_a_single_round(void **state) {
  (void)state;
  result *r = new_result();
  add_round(r, 100.0, 95.0, 80.0);
  decision d = run("sequential", r);
  assert_true(stat_of(&d, "sign_p") == 0.5);
  assert_true(isfinite(stat_of(&d, "llr")));
  decision_release(&d);
  free(r);
}

/* Two rounds apart: their winsorized spread counts, not only the floor. */
static void sequential_should_take_the_winsorized_spread_of_two_rounds(void **state) {
  (void)state;
  result *r = new_result();
  add_round(r, 100.0, 90.0, 80.0);
  add_round(r, 100.0, 80.0, 80.0);
  decision d = run("sequential", r);
  assert_true(stat_of(&d, "sigma_winsorized") > 0.01);
  decision_release(&d);
  free(r);
}

/* Sub-microsecond kernel times are measurements; a round without them leaves the instruments'
 * gap unknown, whichever round it is. */
static void instrument_gap_should_take_every_used_round(void **state) {
  (void)state;
  result *r = new_result();
  for (int i = 0; i < 6; i++) {
    round_rec *rr = add_round(r, 10.0, 9.0, 8.0);
    rr->kernel_us[ARM_BEST] = 0.8;
    rr->kernel_us[ARM_NEW] = 0.7;
  }
  decision d = run("sequential", r);
  assert_true(fabs(stat_of(&d, "instrument_gap") - (-0.1 + 1.0) / 0.8) < 1e-12);
  decision_release(&d);
  r->rounds[0].kernel_us[ARM_NEW] = -1.0;
  d = run("sequential", r);
  assert_true(stat_is_null(&d, "instrument_gap"));
  decision_release(&d);
  free(r);
}

/* Rounds all screened, but no more than max_screened: nothing to judge, refused as noisy. */
static void sequential_with_every_round_screened_should_be_noisy(void **state) {
  (void)state;
  result *r = new_result();
  add_rounds(r, 2, 0.95);
  for (int i = 0; i < 2; i++) set_clocks(&r->rounds[i], 1980, 2178, 1980);
  decision d = run("sequential", r);
  assert_int_equal(d.kind, DECISION_REFUSED);
  assert_int_equal(d.noisy, 1);
  assert_reason_has(&d, "every round was screened");
  decision_release(&d);
  free(r);
}

/* A median ratio of exactly 1 is no gain: no "needed" figure follows it. */
static void median_at_a_ratio_of_one_should_not_name_the_needed_gain(void **state) {
  (void)state;
  result *r = new_result();
  for (int i = 0; i < 8; i++) add_round(r, 100.0, 100.0, 80.0);
  decision d = run("median", r);
  assert_int_equal(d.kind, DECISION_REJECT);
  if (strstr(d.reason, "needed")) fail_msg("reason '%s'", d.reason);
  decision_release(&d);
  free(r);
}

/* The median judges measure.rounds rounds; the sequential rule stops on its own. */
static void only_the_median_should_judge_a_fixed_number_of_rounds(void **state) {
  (void)state;
  decide_opts o = opts("median");
  assert_true(decide_fixed_rounds(&o));
  o = opts("sequential");
  assert_false(decide_fixed_rounds(&o));
}

/* The first round is checked as every other one. */
static void a_bad_first_round_should_be_named(void **state) {
  (void)state;
  result *r = new_result();
  add_rounds(r, 8, 0.9);
  r->rounds[0].us[ARM_CONTROL] = 0.0;
  decision d = run("median", r);
  assert_int_equal(d.kind, DECISION_REJECT);
  assert_reason_has(&d, "round 1: a time that is not a positive number");
  decision_release(&d);
  free(r);
}

/* One value has no spread, whatever its sign. */
static void stats_rel_spread_of_one_value_should_be_zero(void **state) {
  (void)state;
  double x[1] = {-2.0};
  assert_true(stats_rel_spread(x, 1) == 0.0);
}

/* A canary ratio exactly at the threshold is no bias, however narrow its interval. */
static void canary_at_the_threshold_should_not_be_biased(void **state) {
  (void)state;
  double ratio[8];
  for (int i = 0; i < 8; i++) ratio[i] = 1.25;
  result *r = canary_result(8, ratio, NULL);
  canary_verdict v;
  decide_canary(0.25, 1, r, &v);
  assert_true(v.ratio[0] == 1.25 && v.lo[0] > 1.0);
  assert_int_equal(v.biased, 0);
  decide_canary(0.24, 1, r, &v);
  assert_int_equal(v.biased, 1);
  free(r);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(gates_should_name_the_status_and_keep_a_short_detail),
      cmocka_unit_test(a_noisy_refusal_should_set_the_flag_to_one),
      cmocka_unit_test(sequential_location_should_be_the_mean_inside_the_huber_bound),
      cmocka_unit_test(sequential_scale_should_carry_the_allowance_from_two_rounds),
      cmocka_unit_test(a_reject_at_the_kernel_bound_should_not_be_ambiguous),
      cmocka_unit_test(clock_reasons_alone_should_not_screen_a_round),
      cmocka_unit_test(stats_rel_spread_should_take_two_values),
      cmocka_unit_test(canary_should_estimate_and_bound_one_set),
      cmocka_unit_test(canary_should_average_the_input_sets),
      cmocka_unit_test(canary_should_clear_a_process_within_the_threshold_or_the_noise),
      cmocka_unit_test(canary_kernel_time_should_need_every_round_positive),
      cmocka_unit_test(untrusted_should_say_which_canary_or_which_process),
      cmocka_unit_test(a_bad_round_should_be_named_by_its_number),
      cmocka_unit_test(a_gain_without_a_limit_should_be_written_to_one_decimal),
      cmocka_unit_test(rounds_should_stop_at_the_records_capacity),
      cmocka_unit_test(defaults_should_match_the_documented_values),
      cmocka_unit_test(stats_median_should_handle_odd_even_and_empty),
      cmocka_unit_test(stats_median_finite_should_leave_out_what_is_not_a_number),
      cmocka_unit_test(stats_median_interval_should_take_the_binomial_ranks),
      cmocka_unit_test(unknown_rule_should_be_refused),
      cmocka_unit_test(fault_should_be_rejected_with_its_cause),
      cmocka_unit_test(incorrect_result_should_be_rejected_with_its_error),
      cmocka_unit_test(drifting_control_should_be_refused_as_noisy),
      cmocka_unit_test(median_should_keep_a_clear_gain_with_its_reason),
      cmocka_unit_test(median_should_say_slower_in_words),
      cmocka_unit_test(median_tie_at_the_threshold_should_reject),
      cmocka_unit_test(reasons_should_tell_a_figure_from_its_limit),
      cmocka_unit_test(median_should_not_be_carried_by_a_boosted_new_round),
      cmocka_unit_test(median_should_keep_a_gain_despite_a_boosted_best_round),
      cmocka_unit_test(median_should_report_kernel_ratios_when_measured),
      cmocka_unit_test(single_round_should_decide_under_median_and_not_keep_under_sequential),
      cmocka_unit_test(sequential_should_keep_a_true_gain_and_stop_early),
      cmocka_unit_test(sequential_should_replay_and_ignore_rounds_after_its_stop),
      cmocka_unit_test(sequential_should_reject_an_a_a_pair),
      cmocka_unit_test(sequential_should_not_be_carried_by_a_boosted_new_round),
      cmocka_unit_test(sequential_should_keep_a_gain_despite_a_boosted_best_round),
      cmocka_unit_test(sequential_should_screen_rounds_by_clock),
      cmocka_unit_test(screen_should_use_clocks_around_the_round_and_the_throttle),
      cmocka_unit_test(too_many_screened_rounds_should_be_refused_as_noisy),
      cmocka_unit_test(instruments_disagreeing_should_be_ambiguous),
      cmocka_unit_test(instruments_both_saying_slower_should_not_be_ambiguous),
      cmocka_unit_test(sequential_at_the_cap_should_decide_by_the_median),
      cmocka_unit_test(median_rule_should_need_all_its_rounds),
      cmocka_unit_test(a_bad_first_round_should_be_named),
      cmocka_unit_test(stats_rel_spread_of_one_value_should_be_zero),
      cmocka_unit_test(canary_at_the_threshold_should_not_be_biased),
      cmocka_unit_test(a_clock_at_the_throttle_should_not_screen),
      cmocka_unit_test(a_zero_kernel_time_should_count_as_unmeasured),
      cmocka_unit_test(canary_without_input_sets_should_read_as_one_set),
      cmocka_unit_test(sequential_should_evaluate_a_single_round),
      cmocka_unit_test(sequential_should_take_the_winsorized_spread_of_two_rounds),
      cmocka_unit_test(instrument_gap_should_take_every_used_round),
      cmocka_unit_test(sequential_with_every_round_screened_should_be_noisy),
      cmocka_unit_test(median_at_a_ratio_of_one_should_not_name_the_needed_gain),
      cmocka_unit_test(only_the_median_should_judge_a_fixed_number_of_rounds),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
