/* decide: keep or reject a generation from its recorded rounds (common/decide.h).
 *
 * Two rules, one order of tests (docs/design.md): a fault or error rejects; an
 * incorrect result rejects with its error; a control that drifted over the
 * rounds the rule used is refused as noisy; then the rule judges the paired
 * per-round ratios new/best. docs/design.md states both rules, their
 * defaults and the study that measured them.
 *
 * "median" (the baseline, exactly as docs/design.md states it): every recorded
 * round, ratio_r = new_r / best_r, keep iff the median ratio < 1 - min_gain.
 *
 * "sequential" (issue 6), in brief:
 *  - Clock screen: a round whose arms ran at SM clocks more than clock_skew
 *    apart, or below throttle_mhz, is not used (and the child runs another);
 *    more than max_screened such rounds: refused as noisy.
 *  - A sequential probability ratio test (Wald) on x_r = log(new_r / best_r):
 *    H0: mean 0 (no gain) against H1: mean mu1 = 2 log(1 - min_gain) (a gain
 *    of about twice the minimum). The midpoint mu1/2 = log(1 - min_gain) is the
 *    keep threshold of the baseline, so the test leans to keep exactly where
 *    the baseline would, and a true gain of min_gain is a coin toss for both.
 *    With a location m and a scale s of the n rounds so far,
 *        LLR_n = n (mu1 m - mu1^2 / 2) / s^2,
 *    the Gaussian log-likelihood ratio, with two robust substitutions:
 *      m: a Huber M-estimate (k = 1.5 s) instead of the mean, so a boosted
 *         round on either arm moves it by at most 1.5 s / n: one excursion
 *         cannot cross a boundary (the plain SPRT is carried by a single 10%
 *         round, which is the field note's failure over again);
 *      s: the larger of two estimates, each floored at min_gain: the MAD
 *         (x 1.4826, with Croux & Rousseeuw's small-sample factors), robust
 *         but inefficient (four rounds' MAD is often far below the truth),
 *         and the standard deviation of the rounds winsorized at the Huber
 *         bounds, efficient and still bounded against excursions; then
 *         times sqrt((n + 1) / (n - 1)), an allowance for a scale estimated
 *         from few rounds (the LLR grows as 1/s^2: an underestimate is what
 *         turns luck into a keep). The floor: four rounds can agree by luck,
 *         and noise below the minimum gain need not be resolved finer than
 *         the minimum gain itself.
 *    Wald's boundaries: keep when LLR >= log((1 - beta) / alpha), reject when
 *    LLR <= log(beta / (1 - alpha)), looked at from min_rounds on.
 *  - Sign-test gate: a keep also needs the count of rounds with ratio < 1 to
 *    be significant, one-sided binomial p = P(Bin(n', 1/2) >= k) <= 0.10
 *    (n' the rounds with ratio != 1). A crossed keep boundary with the gate
 *    failing does not stop the measurement: the next round may settle it.
 *  - Cap: at measure.rounds used rounds without a boundary, the median rule
 *    decides (median < 1 - min_gain), still behind the sign gate.
 *  - AMBIGUOUS: when both instruments measured every used round and the
 *    kernel-time median ratio contradicts the verdict by more than half the
 *    minimum gain: a keep whose kernel ratio is not below 1 - min_gain/2, or a
 *    reject whose kernel ratio is below 1 - 1.5 min_gain. Their raw distance
 *    is not the test: on a short kernel the event span carries a launch
 *    overhead and timer granularity that dilute every ratio (seen on the
 *    H200: a 13 us layernorm read 2-6% apart on every generation, gains and
 *    losses alike), so only a disagreement that would change the verdict
 *    counts. The distance is recorded in stats.instrument_gap. A reject whose instruments read 0.999 and 1.001 is not
 *    ambiguous: both say there is no gain worth keeping.
 * decide() replays the stopping rule over the rounds in order, so a record
 * recomputes to the same decision; rounds after the stop are ignored (there
 * are none when the child honoured decide_enough).
 *
 * Ownership: decision.stats is a cJSON object owned by the decision. */
// defines: decision_names, decide, decision_release, decide_enough,
//          decide_screen_round, decide_rule_known, decide_defaults, stats_median
#include "common/decide.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

const char *const decision_names[] = {"keep", "reject", "refused", "ambiguous", NULL};

/* Constants of the sequential rule (stated in docs/design.md). */
#define SEQ_HUBER_K 1.5     /* Huber's tuning constant, in units of the scale */
#define SEQ_SIGN_LEVEL 0.10 /* the sign-test gate's one-sided level */
#define SEQ_MIN_FLOOR 1e-4  /* the scale floor when min_gain is 0 */



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
static double stats_mad_sigma(const double *x, int n, double med) {
  static const double small[] = {0, 0, 1.196, 1.495, 1.363, 1.206, 1.200, 1.140, 1.129, 1.107};
  if (n < 2) return 0.0;
  double dev[MSG_MAX_ROUNDS];
  for (int i = 0; i < n; i++) dev[i] = fabs(x[i] - med);
  double b = n <= 9 ? small[n] : (double)n / ((double)n - 0.8);
  return 1.4826 * b * stats_median(dev, n);
}

/* Huber M-estimate of location with a fixed scale, from the median by iterated reweighting. */
static double stats_huber(const double *x, int n, double scale) {
  double mu = stats_median(x, n);
  double c = SEQ_HUBER_K * scale;
  if (!(c > 0.0)) return mu;
  for (int it = 0; it < 100; it++) {
    double sw = 0.0, swx = 0.0;
    for (int i = 0; i < n; i++) {
      double r = fabs(x[i] - mu);
      double w = r <= c ? 1.0 : c / r;
      sw += w;
      swx += w * x[i];
    }
    double next = swx / sw;
    if (fabs(next - mu) <= 1e-12 * scale) return next;
    mu = next;
  }
  return mu;
}

/* Standard deviation of x winsorized at loc +- c, made consistent at the
 * normal for c = SEQ_HUBER_K sigma: E[min(z^2, 1.5^2)] = 0.7785. */
static double stats_winsorized_sd(const double *x, int n, double loc, double c) {
  double ss = 0.0;
  for (int i = 0; i < n; i++) {
    double r = x[i] - loc;
    if (r > c) r = c;
    if (r < -c) r = -c;
    ss += r * r;
  }
  return sqrt(ss / ((double)n - 1.0) / 0.7785);
}

/* One-sided sign test: P(Bin(n, 1/2) >= k). */
static double sign_p(int k, int n) {
  if (k <= 0) return 1.0;
  if (k > n) return 0.0;
  double pmf = ldexp(1.0, -n), tail = 0.0;
  for (int i = 0; i <= n; i++) {
    if (i >= k) tail += pmf;
    pmf *= (double)(n - i) / (double)(i + 1);
  }
  return tail > 1.0 ? 1.0 : tail;
}

/* ---- words ---- */

static void add_reason(decision *d, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void add_reason(decision *d, const char *fmt, ...) {
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
static int say_change(decision *d, double ratio, double min_gain) {
  int p = ratio < 1.0 && min_gain > 0.0 ? pct_digits((1.0 - ratio) * 100.0, min_gain * 100.0) : 1;
  if (ratio < 1.0)
    add_reason(d, "new is %.*f%% faster than best", p, (1.0 - ratio) * 100.0);
  else if (ratio > 1.0)
    add_reason(d, "new is %.1f%% slower than best", (ratio - 1.0) * 100.0);
  else
    add_reason(d, "new is as fast as best");
  return p;
}

static void stat_num(cJSON *o, const char *key, double v) {
  if (isfinite(v))
    cJSON_AddNumberToObject(o, key, v);
  else
    cJSON_AddNullToObject(o, key);
}

/* ---- shared steps ---- */

/* The clock screen of the sequential rule: a round whose arms ran at SM clocks more than
 * clock_skew apart, or below throttle_mhz. */
static int screen_clocks(const decide_opts *o, const round_rec *r) {
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
    add_reason(d, "%s: %s", s > 0 && s <= 3 ? status_words[s] : "error",
               r->detail[0] ? r->detail : "(no detail)");
    return 1;
  }
  if (!r->correct) {
    d->kind = DECISION_REJECT;
    add_reason(d, "incorrect result: relative error");
    for (int a = 0; a < ARM_COUNT; a++)
      add_reason(d, "%s %s %.3g", a ? "," : "", arm_names[a], r->rel_err[a]);
    add_reason(d, " (worst over the input sets, against the CPU reference)");
    return 1;
  }
  if (r->nrounds <= 0) {
    d->kind = DECISION_REJECT;
    add_reason(d, "no recorded rounds to judge");
    return 1;
  }
  for (int i = 0; i < r->nrounds && i < MSG_MAX_ROUNDS; i++) {
    if (!round_valid(&r->rounds[i])) {
      d->kind = DECISION_REJECT;
      add_reason(d, "round %d: a time that is not a positive number", i + 1);
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
static void fill_ratios(const result *r, const int *idx, int n, decision *d) {
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
static int drift_refuses(const decide_opts *o, decision *d) {
  if (!(d->control_drift > 1.0 + o->drift_tolerance)) return 0;
  d->kind = DECISION_REFUSED;
  d->noisy = 1;
  double drift = (d->control_drift - 1.0) * 100.0, tolerance = o->drift_tolerance * 100.0;
  int p = pct_digits(drift, tolerance);
  add_reason(d, "control drifted %.*f%% over %d rounds (tolerance %.*f%%): too noisy to judge", p,
             drift, d->nratios, p, tolerance);
  return 1;
}

/* ---- the baseline ---- */

static void rule_median(const decide_opts *o, const result *r, decision *d) {
  int n = r->nrounds < MSG_MAX_ROUNDS ? r->nrounds : MSG_MAX_ROUNDS;
  int idx[MSG_MAX_ROUNDS];
  for (int i = 0; i < n; i++) idx[i] = i;
  fill_ratios(r, idx, n, d);
  double threshold = 1.0 - o->min_gain;
  cJSON_AddNumberToObject(d->stats, "rounds_used", n);
  stat_num(d->stats, "median_ratio", d->median_ratio);
  stat_num(d->stats, "threshold", threshold);
  stat_num(d->stats, "kernel_median_ratio", d->kernel_median_ratio);
  stat_num(d->stats, "control_drift", d->control_drift);
  if (drift_refuses(o, d)) return;
  d->kind = d->median_ratio < threshold ? DECISION_KEEP : DECISION_REJECT;
  int p = say_change(d, d->median_ratio, o->min_gain);
  if (d->median_ratio < 1.0) add_reason(d, " (needed > %.*f%%)", p, o->min_gain * 100.0);
}

/* ---- the sequential rule ---- */

typedef enum { SEQ_RUNNING, SEQ_KEEP, SEQ_REJECT, SEQ_DRIFT, SEQ_SCREENED } seq_stop;
static const char *const seq_stop_names[] = {"cap", "keep boundary", "reject boundary", "drift",
                                             "screened"};

typedef struct seq_state {
  const decide_opts *o;
  int seen, used, screened;
  int idx[MSG_MAX_ROUNDS];   /* indices of the used rounds */
  double x[MSG_MAX_ROUNDS];  /* log ratios of the used rounds */
  double cmin, cmax;         /* control extremes over the used rounds */
  double mu1, upper, lower;  /* the test's alternative and Wald's boundaries */
  /* the last evaluation */
  double mad, wsd, scale, floor, loc, llr;
  int faster, nsign;
  double sign_p;
  seq_stop stop;
} seq_state;

static void seq_init(seq_state *s, const decide_opts *o) {
  memset(s, 0, sizeof *s);
  s->o = o;
  s->cmin = INFINITY;
  s->mu1 = o->min_gain > 0.0 && o->min_gain < 1.0 ? 2.0 * log(1.0 - o->min_gain) : 0.0;
  s->upper = log((1.0 - o->beta) / o->alpha);
  s->lower = log(o->beta / (1.0 - o->alpha));
  s->floor = o->min_gain > SEQ_MIN_FLOOR ? o->min_gain : SEQ_MIN_FLOOR;
  s->llr = NAN;
  s->mad = NAN;
  s->wsd = NAN;
  s->scale = NAN;
  s->loc = NAN;
  s->sign_p = NAN;
}

static void seq_evaluate(seq_state *s) {
  int n = s->used;
  double med = stats_median(s->x, n);
  s->mad = stats_mad_sigma(s->x, n, med);
  double s0 = s->mad > s->floor ? s->mad : s->floor;
  s->wsd = n >= 2 ? stats_winsorized_sd(s->x, n, stats_huber(s->x, n, s0), SEQ_HUBER_K * s0)
                  : 0.0;
  s->scale = s->wsd > s0 ? s->wsd : s0;
  if (n >= 2) s->scale *= sqrt((double)(n + 1) / (double)(n - 1));
  s->loc = stats_huber(s->x, n, s->scale);
  s->llr = (double)n * (s->mu1 * s->loc - 0.5 * s->mu1 * s->mu1) / (s->scale * s->scale);
  s->faster = 0;
  s->nsign = 0;
  for (int i = 0; i < n; i++) {
    if (s->x[i] != 0.0) s->nsign++;
    if (s->x[i] < 0.0) s->faster++;
  }
  s->sign_p = sign_p(s->faster, s->nsign);
}

static int seq_gate(const seq_state *s) { return s->sign_p <= SEQ_SIGN_LEVEL; }

/* Take round i (rounds[i]) into the state; sets s->stop when the rule stops. */
static void seq_add(seq_state *s, const round_rec *rounds, int i) {
  const decide_opts *o = s->o;
  const round_rec *r = &rounds[i];
  s->seen++;
  if (r->screened || screen_clocks(o, r)) {
    if (++s->screened > o->max_screened) s->stop = SEQ_SCREENED;
    return;
  }
  if (s->used >= MSG_MAX_ROUNDS) return;
  s->idx[s->used] = i;
  s->x[s->used] = log(r->us[ARM_NEW] / r->us[ARM_BEST]);
  s->used++;
  if (r->us[ARM_CONTROL] < s->cmin) s->cmin = r->us[ARM_CONTROL];
  if (r->us[ARM_CONTROL] > s->cmax) s->cmax = r->us[ARM_CONTROL];
  if (s->cmax / s->cmin > 1.0 + o->drift_tolerance) {
    s->stop = SEQ_DRIFT;
    return;
  }
  int min_rounds = o->min_rounds > 1 ? o->min_rounds : 1;
  if (s->used < min_rounds) return;
  seq_evaluate(s);
  if (s->llr >= s->upper && seq_gate(s))
    s->stop = SEQ_KEEP;
  else if (s->llr <= s->lower)
    s->stop = SEQ_REJECT;
}

/* Replay rounds[0..n) in order until the rule stops. */
static void seq_run(seq_state *s, const decide_opts *o, const round_rec *rounds, int n) {
  seq_init(s, o);
  for (int i = 0; i < n && i < MSG_MAX_ROUNDS && s->stop == SEQ_RUNNING; i++)
    seq_add(s, rounds, i);
}

static void seq_stats(const seq_state *s, const result *r, decision *d) {
  cJSON *st = d->stats;
  cJSON_AddStringToObject(st, "stopped_by", seq_stop_names[s->stop]);
  cJSON_AddNumberToObject(st, "rounds_used", s->used);
  cJSON_AddNumberToObject(st, "rounds_seen", s->seen);
  cJSON_AddNumberToObject(st, "rounds_ignored", r->nrounds - s->seen);
  cJSON_AddNumberToObject(st, "screened", s->screened);
  stat_num(st, "llr", s->llr);
  stat_num(st, "upper", s->upper);
  stat_num(st, "lower", s->lower);
  stat_num(st, "sigma", s->scale);
  stat_num(st, "sigma_mad", s->mad);
  stat_num(st, "sigma_winsorized", s->wsd);
  stat_num(st, "sigma_floor", s->floor);
  stat_num(st, "location_ratio", exp(s->loc));
  stat_num(st, "h1_ratio", exp(s->mu1));
  stat_num(st, "median_ratio", d->median_ratio);
  stat_num(st, "kernel_median_ratio", d->kernel_median_ratio);
  stat_num(st, "control_drift", d->control_drift);
  cJSON_AddNumberToObject(st, "sign_faster", s->faster);
  cJSON_AddNumberToObject(st, "sign_n", s->nsign);
  stat_num(st, "sign_p", s->sign_p);
  stat_num(st, "sign_level", SEQ_SIGN_LEVEL);
  stat_num(st, "alpha", s->o->alpha);
  stat_num(st, "beta", s->o->beta);
  cJSON_AddNumberToObject(st, "min_rounds", s->o->min_rounds);
  stat_num(st, "huber_k", SEQ_HUBER_K);
}

/* How far the two instruments read the same rounds apart, as a fraction of best's kernel
 * time: the median over the used rounds of ((kn - kb) - (en - eb)) / kb, with k the CUPTI
 * kernel times and e the event spans of new and best (NAN without kernel times). The event
 * span is the kernel plus a launch overhead common to both arms, so the two instruments
 * must agree on the time saved, not on the ratio: comparing ratios would call every gain
 * on a short kernel ambiguous, because the overhead dilutes the event-span ratio (seen on
 * the H200: a 13 us layernorm, 3 us of overhead, 10 of 12 generations ambiguous). */
static double instrument_gap(const result *r, const int *idx, int n) {
  double g[MSG_MAX_ROUNDS];
  for (int i = 0; i < n; i++) {
    const round_rec *rr = &r->rounds[idx[i]];
    double kb = rr->kernel_us[ARM_BEST], kn = rr->kernel_us[ARM_NEW];
    if (!(kb > 0) || !(kn > 0)) return NAN;
    g[i] = ((kn - kb) - (rr->us[ARM_NEW] - rr->us[ARM_BEST])) / kb;
  }
  return stats_median(g, n);
}

/* The instruments' check on a keep or a reject; 1 if it made the decision ambiguous.
 * Ambiguous when the kernel-time median ratio would not back the verdict by half the
 * minimum gain: a keep whose kernel time shows less than half the needed gain (or a loss),
 * or a reject whose kernel time shows a gain half as large again as the one needed. Both
 * instruments saying "slower" is never ambiguous, however far apart they read. */
static int seq_ambiguous(const decide_opts *o, decision *d, double gap) {
  double ev = d->median_ratio, k = d->kernel_median_ratio, g = o->min_gain;
  stat_num(d->stats, "instrument_gap", gap);
  if (!isfinite(k)) return 0;
  int keep_unbacked = d->kind == DECISION_KEEP && !(k < 1.0 - 0.5 * g);
  int reject_contradicted = d->kind == DECISION_REJECT && k < 1.0 - 1.5 * g;
  if (!keep_unbacked && !reject_contradicted) return 0;
  const char *was = decision_names[d->kind];
  d->kind = DECISION_AMBIGUOUS;
  d->reason[0] = '\0';
  add_reason(d, "instruments disagree: event span says ");
  say_change(d, ev, 0.0);
  add_reason(d, ", kernel time says ");
  say_change(d, k, 0.0);
  add_reason(d, "; the event span alone would %s, the kernel time %s", was,
             keep_unbacked ? "shows less than half the needed gain"
                           : "shows half as much again as the needed gain");
  return 1;
}

static void rule_sequential(const decide_opts *o, const result *r, decision *d) {
  seq_state s;
  seq_run(&s, o, r->rounds, r->nrounds);
  if (s.stop == SEQ_RUNNING && s.used > 0) seq_evaluate(&s); /* the cap, or the data's end */
  d->screened = s.screened;
  fill_ratios(r, s.idx, s.used, d);
  seq_stats(&s, r, d);
  if (s.stop == SEQ_SCREENED) {
    d->kind = DECISION_REFUSED;
    d->noisy = 1;
    add_reason(d, "%d of %d rounds screened by clock (at most %d allowed): the clock is unsteady",
               s.screened, s.seen, o->max_screened);
    return;
  }
  if (s.used == 0) {
    d->kind = DECISION_REFUSED;
    d->noisy = 1;
    add_reason(d, "every round was screened by clock: nothing to judge");
    return;
  }
  if (drift_refuses(o, d)) return;
  double threshold = 1.0 - o->min_gain;
  int p = say_change(d, d->median_ratio, o->min_gain);
  if (s.stop == SEQ_KEEP) {
    d->kind = DECISION_KEEP;
    add_reason(d, " (sequential test: LLR %.2f >= %.2f after %d rounds; %d of %d rounds faster, "
                  "sign p %.3f)",
               s.llr, s.upper, s.used, s.faster, s.nsign, s.sign_p);
  } else if (s.stop == SEQ_REJECT) {
    d->kind = DECISION_REJECT;
    add_reason(d, " (sequential test: LLR %.2f <= %.2f after %d rounds)", s.llr, s.lower,
               s.used);
  } else if (!(d->median_ratio < threshold)) {
    d->kind = DECISION_REJECT;
    if (d->median_ratio < 1.0) add_reason(d, " (needed > %.*f%%)", p, o->min_gain * 100.0);
    add_reason(d, "; no boundary after %d rounds (LLR %.2f), the median decides", s.used, s.llr);
  } else if (!seq_gate(&s)) {
    d->kind = DECISION_REJECT;
    add_reason(d, " by the median after %d rounds, but only %d of %d rounds were faster "
                  "(sign p %.3f > %.2f)",
               s.used, s.faster, s.nsign, s.sign_p, SEQ_SIGN_LEVEL);
  } else {
    d->kind = DECISION_KEEP;
    add_reason(d, " (needed > %.*f%%); no boundary after %d rounds (LLR %.2f), the median "
                  "decides; %d of %d rounds faster, sign p %.3f",
               p, o->min_gain * 100.0, s.used, s.llr, s.faster, s.nsign, s.sign_p);
  }
  seq_ambiguous(o, d, instrument_gap(r, s.idx, s.used));
}

/* ---- the rules ---- */

static int screen_none(const decide_opts *o, const round_rec *r) {
  (void)o;
  (void)r;
  return 0;
}

/* The baseline measures every recorded round the protocol asks for. */
static int enough_all(const decide_opts *o, const measure_opts *m, const round_rec *rounds,
                      int n) {
  (void)o;
  (void)rounds;
  return n >= m->rounds;
}

static int enough_sequential(const decide_opts *o, const measure_opts *m,
                             const round_rec *rounds, int n) {
  seq_state s;
  seq_run(&s, o, rounds, n);
  return s.stop != SEQ_RUNNING || s.used >= m->rounds;
}

/* What a rule is: how it judges, when the child may stop, which rounds it screens. */
typedef struct decide_rule {
  const char *name;
  void (*judge)(const decide_opts *o, const result *r, decision *d);
  int (*enough)(const decide_opts *o, const measure_opts *m, const round_rec *rounds, int n);
  int (*screen)(const decide_opts *o, const round_rec *r);
  int fixed_rounds; /* judges exactly measure.rounds rounds (decide_fixed_rounds) */
} decide_rule;

static const decide_rule decide_rules[] = {
    {.name = "median", .judge = rule_median, .enough = enough_all, .screen = screen_none,
     .fixed_rounds = 1},
    {.name = "sequential", .judge = rule_sequential, .enough = enough_sequential,
     .screen = screen_clocks},
};

static const decide_rule *rule_of(const char *name) {
  for (size_t i = 0; i < sizeof decide_rules / sizeof decide_rules[0]; i++)
    if (strcmp(decide_rules[i].name, name) == 0) return &decide_rules[i];
  return NULL;
}

int decide_rule_known(const char *name) { return name && rule_of(name) != NULL; }

int decide_fixed_rounds(const decide_opts *o) {
  const decide_rule *rule = rule_of(o->rule);
  return rule && rule->fixed_rounds;
}

/* ---- entry points ---- */

int decide(const decide_opts *o, const result *r, decision *d) {
  const decide_rule *rule = rule_of(o->rule);
  memset(d, 0, sizeof *d);
  d->median_ratio = NAN;
  d->kernel_median_ratio = NAN;
  d->control_drift = NAN;
  d->best_spread = d->new_spread = NAN;
  d->kind = DECISION_REJECT;
  snprintf(d->rule, sizeof d->rule, "%s", o->rule);
  d->stats = cJSON_CreateObject();
  if (!rule) {
    add_reason(d, "unknown decision rule '%s' (known: median, sequential)", o->rule);
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

int decide_enough(const decide_opts *o, const measure_opts *m, const round_rec *rounds, int n) {
  const decide_rule *rule = rule_of(o->rule);
  if (n >= MSG_MAX_ROUNDS) return 1;
  return rule ? rule->enough(o, m, rounds, n) : enough_all(o, m, rounds, n);
}

int decide_screen_round(const decide_opts *o, const round_rec *r) {
  const decide_rule *rule = rule_of(o->rule);
  return rule ? rule->screen(o, r) : 0;
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
 * its own buffers, and a placement bias can differ between them (seen on the H200: +4.5% on
 * one set, -2.3% on the other, in one process). So the rounds are taken per set: each set's
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
