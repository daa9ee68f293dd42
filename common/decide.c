/* decide: keep or reject a generation from its recorded rounds (common/decide.h).
 *
 * One order of tests for every rule (docs/design.md): a fault or error rejects; an
 * incorrect result rejects with its error; a control that drifted over the
 * rounds the rule used is refused as noisy; then the rule judges the paired
 * per-round ratios new/best. The rules themselves are rows of the registry
 * (common/rule.h, one file each in common/rules/); this file holds the gates,
 * the steps they share (words, ratios, drift, the clock screen), the entry
 * points that dispatch to a rule, and the canary. docs/design.md states the
 * rules, their defaults and the study that measured them.
 *
 * Ownership: decision.stats is a cJSON object owned by the decision. */
// defines: decision_names, decide, decision_release, decide_enough,
//          decide_screen_round, decide_rule_known, decide_fixed_rounds, stats_median,
//          and the shared steps of common/rule.h
#include "common/decide.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/rule.h"

const char *const decision_names[] = {"keep", "reject", "refused", "ambiguous", NULL};

/* ---- statistics ---- */

static int cmp_double(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return (x > y) - (x < y);
}

double stats_median(const double *x, int n) {
  if (n <= 0) return NAN;
  double local[MSG_MAX_ROUNDS];
  double *buf = n <= MSG_MAX_ROUNDS ? local : malloc((size_t)n * sizeof *buf);
  if (!buf) return NAN;
  memcpy(buf, x, (size_t)n * sizeof *buf);
  qsort(buf, (size_t)n, sizeof *buf, cmp_double);
  double m = n % 2 ? buf[n / 2] : 0.5 * (buf[n / 2 - 1] + buf[n / 2]);
  if (buf != local) free(buf);
  return m;
}

/* Normal-consistent MAD with the small-sample factors of Croux & Rousseeuw (1992). */
double stats_mad_sigma(const double *x, int n, double med) {
  static const double small[] = {0, 0, 1.196, 1.495, 1.363, 1.206, 1.200, 1.140, 1.129, 1.107};
  if (n < 2) return 0.0;
  double dev[MSG_MAX_ROUNDS];
  for (int i = 0; i < n; i++) dev[i] = fabs(x[i] - med);
  double b = n <= 9 ? small[n] : (double)n / ((double)n - 0.8);
  return 1.4826 * b * stats_median(dev, n);
}

/* ---- words ---- */

void decision_say(decision *d, const char *fmt, ...) {
  size_t used = strlen(d->reason);
  if (used >= sizeof d->reason - 1) return;
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(d->reason + used, sizeof d->reason - used, fmt, ap);
  va_end(ap);
}

/* Decimals for two percentages: one, or more (up to four) where one would print them alike
 * though they differ, so that a keep does not read "1.0% faster (needed > 1.0%)". Two that
 * are alike to four decimals (within 0.00005 points) read at one decimal, as a tie. */
static int pct_digits(double a, double b) {
  char x[32], y[32];
  for (int p = 1; p <= 4; p++) {
    snprintf(x, sizeof x, "%.*f", p, a);
    snprintf(y, sizeof y, "%.*f", p, b);
    if (strcmp(x, y) != 0) return p;
  }
  return 1;
}

/* "new is 1.6% faster than best" / "... slower ..." / "new is as fast as best"; a gain is
 * written to the decimals that tell it from min_gain (0: none to compare with), which the
 * return value gives for "(needed > ...)". */
int decision_say_change(decision *d, double ratio, double min_gain) {
  int p = ratio < 1.0 && min_gain > 0.0 ? pct_digits((1.0 - ratio) * 100.0, min_gain * 100.0) : 1;
  if (ratio < 1.0)
    decision_say(d, "new is %.*f%% faster than best", p, (1.0 - ratio) * 100.0);
  else if (ratio > 1.0)
    decision_say(d, "new is %.1f%% slower than best", (ratio - 1.0) * 100.0);
  else
    decision_say(d, "new is as fast as best");
  return p;
}

void decision_stat(decision *d, const char *key, double v) {
  if (isfinite(v))
    cJSON_AddNumberToObject(d->stats, key, v);
  else
    cJSON_AddNullToObject(d->stats, key);
}

/* ---- shared steps ---- */

/* The clock screen, for rules that screen: a round whose arms ran at SM clocks more than
 * clock_skew apart, or below throttle_mhz. */
int decide_clock_screened(const decide_opts *o, const round_rec *r) {
  double clk[ARM_COUNT + 2];
  int n = 0;
  for (int a = 0; a < ARM_COUNT; a++)
    if (r->arm_mhz[a] > 0.0) clk[n++] = r->arm_mhz[a];
  if (n == 0) /* no per-arm clocks: the readings before and after the round */
    for (int i = 0; i < 2; i++)
      if (r->sm_mhz[i] > 0.0) clk[n++] = r->sm_mhz[i];
  if (n == 0) return 0;
  double lo = clk[0], hi = clk[0];
  for (int i = 1; i < n; i++) {
    if (clk[i] < lo) lo = clk[i];
    if (clk[i] > hi) hi = clk[i];
  }
  if (o->throttle_mhz > 0.0 && lo < o->throttle_mhz) return 1;
  return hi / lo - 1.0 > o->clock_skew;
}

static int round_valid(const round_rec *r) {
  for (int a = 0; a < ARM_COUNT; a++)
    if (!(r->us[a] > 0.0) || !isfinite(r->us[a])) return 0;
  return 1;
}

/* Fault, correctness and sanity of the numbers; 1 if the decision is made. */
static int decide_gates(const result *r, decision *d) {
  static const char *const status_words[] = {"", "fault", "compile error", "error"};
  if (r->status != RESULT_OK) {
    int s = (int)r->status;
    d->kind = DECISION_REJECT;
    decision_say(d, "%s: %s", s > 0 && s <= 3 ? status_words[s] : "error",
               r->detail[0] ? r->detail : "(no detail)");
    return 1;
  }
  if (!r->correct) {
    d->kind = DECISION_REJECT;
    decision_say(d, "incorrect result: relative error");
    for (int a = 0; a < ARM_COUNT; a++)
      decision_say(d, "%s %s %.3g", a ? "," : "", arm_names[a], r->rel_err[a]);
    decision_say(d, " (worst over the input sets, against the CPU reference)");
    return 1;
  }
  if (r->nrounds <= 0) {
    d->kind = DECISION_REJECT;
    decision_say(d, "no recorded rounds to judge");
    return 1;
  }
  for (int i = 0; i < r->nrounds && i < MSG_MAX_ROUNDS; i++) {
    if (!round_valid(&r->rounds[i])) {
      d->kind = DECISION_REJECT;
      decision_say(d, "round %d: a time that is not a positive number", i + 1);
      return 1;
    }
  }
  return 0;
}

/* max/min of one arm's values over the used rounds; NAN if none. */
static double spread(const result *r, const int *idx, int n, int arm) {
  double lo = INFINITY, hi = 0.0;
  for (int i = 0; i < n; i++) {
    double v = r->rounds[idx[i]].us[arm];
    if (v < lo) lo = v;
    if (v > hi) hi = v;
  }
  return n > 0 ? hi / lo : NAN;
}

/* Ratios, kernel ratios, control drift and the arms' spreads over the used rounds
 * (idx[0..n)). */
void decide_fill_ratios(const result *r, const int *idx, int n, decision *d) {
  int kernel_ok = n > 0;
  for (int i = 0; i < n; i++) {
    const round_rec *rr = &r->rounds[idx[i]];
    d->ratios[i] = rr->us[ARM_NEW] / rr->us[ARM_BEST];
    if (rr->kernel_us[ARM_NEW] > 0.0 && rr->kernel_us[ARM_BEST] > 0.0)
      d->kernel_ratios[i] = rr->kernel_us[ARM_NEW] / rr->kernel_us[ARM_BEST];
    else
      kernel_ok = 0;
  }
  d->nratios = n;
  d->median_ratio = stats_median(d->ratios, n);
  d->kernel_median_ratio = kernel_ok ? stats_median(d->kernel_ratios, n) : NAN;
  if (!kernel_ok)
    for (int i = 0; i < n; i++) d->kernel_ratios[i] = NAN;
  d->control_drift = spread(r, idx, n, ARM_CONTROL);
  d->best_spread = spread(r, idx, n, ARM_BEST);
  d->new_spread = spread(r, idx, n, ARM_NEW);
}

/* Refused as noisy when the control drifted; 1 if so. */
int decide_drift_refuses(const decide_opts *o, decision *d) {
  if (!(d->control_drift > 1.0 + o->drift_tolerance)) return 0;
  d->kind = DECISION_REFUSED;
  d->noisy = 1;
  double drift = (d->control_drift - 1.0) * 100.0, tolerance = o->drift_tolerance * 100.0;
  int p = pct_digits(drift, tolerance);
  decision_say(d, "control drifted %.*f%% over %d rounds (tolerance %.*f%%): too noisy to judge",
               p, drift, d->nratios, p, tolerance);
  return 1;
}

/* ---- entry points ---- */

int decide_rule_known(const char *name) { return rule_find(name) != NULL; }

int decide_fixed_rounds(const decide_opts *o) {
  const decide_rule *rule = rule_find(o->rule);
  return rule && rule->fixed_rounds;
}

int decide(const decide_opts *o, const result *r, decision *d) {
  const decide_rule *rule = rule_find(o->rule);
  memset(d, 0, sizeof *d);
  d->median_ratio = NAN;
  d->kernel_median_ratio = NAN;
  d->control_drift = NAN;
  d->best_spread = d->new_spread = NAN;
  d->kind = DECISION_REJECT;
  snprintf(d->rule, sizeof d->rule, "%s", o->rule);
  d->stats = cJSON_CreateObject();
  if (!rule) {
    char known[256];
    rule_names(known, sizeof known);
    decision_say(d, "unknown decision rule '%s' (known: %s)", o->rule, known);
    return -1;
  }
  cJSON_AddStringToObject(d->stats, "rule", o->rule);
  if (decide_gates(r, d)) return 0;
  rule->judge(o, r, d);
  return 0;
}

void decision_release(decision *d) {
  if (!d) return;
  cJSON_Delete(d->stats);
  d->stats = NULL;
}

/* A rule without an `enough` measures every recorded round the protocol asks for. */
int decide_enough(const decide_opts *o, const measure_opts *m, const round_rec *rounds, int n) {
  const decide_rule *rule = rule_find(o->rule);
  if (n >= MSG_MAX_ROUNDS) return 1;
  return rule && rule->enough ? rule->enough(o, m, rounds, n) : n >= m->rounds;
}

int decide_screen_round(const decide_opts *o, const round_rec *r) {
  const decide_rule *rule = rule_find(o->rule);
  return rule && rule->screens ? decide_clock_screened(o, r) : 0;
}

/* ---- the canary ---- */

/* The largest k with P(Bin(n, 1/2) <= k - 1) <= 0.025, or 0: summed from 2^-n up, which stays
 * a normal double to n = 1022; past STATS_EXACT_N the normal approximation, whose k is within
 * one of the exact one there. */
#define STATS_EXACT_N 1000
static int median_rank(int n) {
  if (n > STATS_EXACT_N) return (int)floor(0.5 * (double)n - 0.98 * sqrt((double)n));
  double cdf = 0.0, pmf = ldexp(1.0, -n);
  int k = 0;
  for (int i = 0; i < n && cdf + pmf <= 0.025; i++) {
    cdf += pmf;
    pmf *= (double)(n - i) / (double)(i + 1);
    k = i + 1;
  }
  return k;
}

void stats_median_interval(const double *x, int n, double *lo, double *hi) {
  *lo = -INFINITY;
  *hi = INFINITY;
  int k = n < 6 ? 0 : median_rank(n);
  if (k < 1) return;
  double local[MSG_MAX_ROUNDS];
  double *buf = n <= MSG_MAX_ROUNDS ? local : malloc((size_t)n * sizeof *buf);
  if (!buf) return;
  memcpy(buf, x, (size_t)n * sizeof *buf);
  qsort(buf, (size_t)n, sizeof *buf, cmp_double);
  *lo = buf[k - 1];
  *hi = buf[n - k];
  if (buf != local) free(buf);
}

double stats_rel_spread(const double *x, int n) {
  if (n < 2) return 0.0;
  double m = stats_median(x, n);
  if (!(m > 0)) return NAN;
  double *dev = malloc(sizeof *dev * (size_t)n);
  if (!dev) return NAN;
  for (int i = 0; i < n; i++) dev[i] = fabs(x[i] - m);
  double mad = stats_median(dev, n);
  free(dev);
  return 1.4826 * mad / m;
}

void stats_median_finite(const double *x, int n, double *m, double *lo, double *hi) {
  *m = NAN;
  *lo = -INFINITY;
  *hi = INFINITY;
  double *f = malloc((size_t)(n > 0 ? n : 1) * sizeof *f);
  if (!f) return;
  int k = 0;
  for (int i = 0; i < n; i++)
    if (isfinite(x[i])) f[k++] = x[i];
  *m = stats_median(f, k);
  stats_median_interval(f, k, lo, hi);
  free(f);
}

/* "+0.41% [+0.30%, +0.52%]" */
static void say_bias(char *buf, size_t len, double ratio, double lo, double hi) {
  if (isfinite(lo) && isfinite(hi))
    snprintf(buf, len, "%+.2f%% [95%%: %+.2f%%, %+.2f%%]", 100.0 * (ratio - 1.0),
             100.0 * (lo - 1.0), 100.0 * (hi - 1.0));
  else
    snprintf(buf, len, "%+.2f%%", 100.0 * (ratio - 1.0));
}

/* The canary's estimate on one instrument: rounds cycle through the input sets, each set has
 * its own buffers, and a placement bias can differ between them, even in sign, within one
 * process (docs/design.md, "The canary"). So the rounds are taken per set: each set's
 * median ratio, and its standard error from the MAD (floored at threshold/2: noise, or a timer
 * tick, finer than that need not be resolved); the estimate is the mean over sets, as a
 * generation alternates its sets, and its interval is +-t * the combined error. */
static void canary_estimate(const double *x, int n, int sets, double threshold, double *est,
                            double *lo, double *hi) {
  double sum = 0.0, var = 0.0, xs[MSG_MAX_CANARY];
  int used = 0, df = 0;
  for (int s = 0; s < sets; s++) {
    int m = 0;
    for (int i = s; i < n; i += sets) xs[m++] = x[i];
    if (m == 0) continue;
    double med = stats_median(xs, m);
    double sigma = m > 1 ? stats_mad_sigma(xs, m, med) : 0.0;
    if (!(sigma >= threshold / 2)) sigma = threshold / 2;
    double se = 1.2533 * sigma / sqrt((double)m); /* the median's error at the normal */
    sum += med;
    var += se * se;
    df += m - 1;
    used++;
  }
  *est = used ? sum / used : NAN;
  double z = 1.959964, t = df > 0 ? z + (z * z * z + z) / (4.0 * df) : INFINITY;
  double half = used ? t * sqrt(var) / used : INFINITY;
  *lo = *est - half;
  *hi = *est + half;
}

void decide_canary(double threshold, int input_sets, const result *r, canary_verdict *v) {
  memset(v, 0, sizeof *v);
  v->child = r->child;
  v->n = r->ncanary;
  v->threshold = threshold;
  double x[2][MSG_MAX_CANARY];
  int kernel_ok = r->ncanary > 0;
  for (int i = 0; i < r->ncanary; i++) {
    const canary_round *c = &r->canary[i];
    x[0][i] = c->us[1] / c->us[0];
    x[1][i] = c->kernel_us[0] > 0 && c->kernel_us[1] > 0 ? c->kernel_us[1] / c->kernel_us[0] : NAN;
    kernel_ok = kernel_ok && isfinite(x[1][i]);
  }
  char words[2][96];
  static const char *const inst[2] = {"event span", "kernel time"};
  int sets = input_sets > 0 ? input_sets : 1;
  for (int k = 0; k < 2; k++) {
    v->ratio[k] = NAN;
    v->lo[k] = -INFINITY;
    v->hi[k] = INFINITY;
    snprintf(words[k], sizeof words[k], "not measured");
    if (r->ncanary == 0 || (k == 1 && !kernel_ok)) continue;
    canary_estimate(x[k], r->ncanary, sets, threshold, &v->ratio[k], &v->lo[k], &v->hi[k]);
    say_bias(words[k], sizeof words[k], v->ratio[k], v->lo[k], v->hi[k]);
    if (fabs(v->ratio[k] - 1.0) > threshold && (v->lo[k] > 1.0 || v->hi[k] < 1.0)) v->biased = 1;
  }
  snprintf(v->reason, sizeof v->reason,
           "canary of measure process %d: a copy of best in new's place reads %s (%s), %s (%s) "
           "over %d rounds; %s", v->child, words[0], inst[0], words[1], inst[1], v->n,
           v->biased ? "a bias beyond the threshold, so this process decides nothing"
                     : "no bias beyond the threshold");
}

void decide_untrusted(decision *d, const canary_verdict *cv, int child) {
  d->kind = DECISION_REFUSED;
  d->noisy = 0;
  if (cv && cv->n > 0)
    snprintf(d->reason, sizeof d->reason, "not decided: %.400s; measured again in a fresh "
             "process", cv->reason);
  else
    snprintf(d->reason, sizeof d->reason, "not decided: measured by measure process %d, which "
             "no canary has cleared; measured again after one", child);
}
