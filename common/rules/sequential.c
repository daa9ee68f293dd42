/* sequential: clock-screened rounds, a sequential test with early stopping and a cap, a
 * sign-test gate, AMBIGUOUS when the two instruments disagree. docs/design.md states the
 * rule, its defaults and the study that measured it. In brief:
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
 *    overhead and timer granularity that dilute every ratio, gains and losses
 *    alike, so only a disagreement that would change the verdict counts. The
 *    distance is recorded in stats.instrument_gap. A reject whose instruments
 *    read 0.999 and 1.001 is not ambiguous: both say there is no gain worth
 *    keeping.
 * The judge replays the stopping rule over the rounds in order, so a record
 * recomputes to the same decision; rounds after the stop are ignored (there
 * are none when the child honoured decide_enough). */
#include "common/rule.h"

#include <math.h>
#include <string.h>

/* The rule's parameters, in the order of decide_opts.param[]. */
enum { SEQ_ALPHA, SEQ_BETA, SEQ_MIN_ROUNDS };
static const rule_param seq_params[] = {
    [SEQ_ALPHA] = {"alpha", 0, 0.01, 1e-6, 0.5, "the false-keep rate the test is built for"},
    [SEQ_BETA] = {"beta", 0, 0.05, 1e-6, 0.5, "the false-reject rate the test is built for"},
    [SEQ_MIN_ROUNDS] = {"min_rounds", 1, 4, 1, 200, "never stop before this many used rounds"},
};

#define SEQ_HUBER_K 1.5     /* Huber's tuning constant, in units of the scale */
#define SEQ_SIGN_LEVEL 0.10 /* the sign-test gate's one-sided level */
#define SEQ_MIN_FLOOR 1e-4  /* the scale floor when min_gain is 0 */

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
  s->upper = log((1.0 - o->param[SEQ_BETA]) / o->param[SEQ_ALPHA]);
  s->lower = log(o->param[SEQ_BETA] / (1.0 - o->param[SEQ_ALPHA]));
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
  if (r->screened || decide_clock_screened(o, r)) {
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
  int min_rounds = (int)o->param[SEQ_MIN_ROUNDS];
  if (min_rounds < 1) min_rounds = 1;
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
  decision_stat(d, "llr", s->llr);
  decision_stat(d, "upper", s->upper);
  decision_stat(d, "lower", s->lower);
  decision_stat(d, "sigma", s->scale);
  decision_stat(d, "sigma_mad", s->mad);
  decision_stat(d, "sigma_winsorized", s->wsd);
  decision_stat(d, "sigma_floor", s->floor);
  decision_stat(d, "location_ratio", exp(s->loc));
  decision_stat(d, "h1_ratio", exp(s->mu1));
  decision_stat(d, "median_ratio", d->median_ratio);
  decision_stat(d, "kernel_median_ratio", d->kernel_median_ratio);
  decision_stat(d, "control_drift", d->control_drift);
  cJSON_AddNumberToObject(st, "sign_faster", s->faster);
  cJSON_AddNumberToObject(st, "sign_n", s->nsign);
  decision_stat(d, "sign_p", s->sign_p);
  decision_stat(d, "sign_level", SEQ_SIGN_LEVEL);
  decision_stat(d, "alpha", s->o->param[SEQ_ALPHA]);
  decision_stat(d, "beta", s->o->param[SEQ_BETA]);
  cJSON_AddNumberToObject(st, "min_rounds", s->o->param[SEQ_MIN_ROUNDS]);
  decision_stat(d, "huber_k", SEQ_HUBER_K);
}

/* How far the two instruments read the same rounds apart, as a fraction of best's kernel
 * time: the median over the used rounds of ((kn - kb) - (en - eb)) / kb, with k the CUPTI
 * kernel times and e the event spans of new and best (NAN without kernel times). The event
 * span is the kernel plus a launch overhead common to both arms, so the two instruments
 * must agree on the time saved, not on the ratio: comparing ratios would call every gain
 * on a short kernel ambiguous, because the overhead dilutes the event-span ratio. */
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
  decision_stat(d, "instrument_gap", gap);
  if (!isfinite(k)) return 0;
  int keep_unbacked = d->kind == DECISION_KEEP && !(k < 1.0 - 0.5 * g);
  int reject_contradicted = d->kind == DECISION_REJECT && k < 1.0 - 1.5 * g;
  if (!keep_unbacked && !reject_contradicted) return 0;
  const char *was = decision_names[d->kind];
  d->kind = DECISION_AMBIGUOUS;
  d->reason[0] = '\0';
  decision_say(d, "instruments disagree: event span says ");
  decision_say_change(d, ev, 0.0);
  decision_say(d, ", kernel time says ");
  decision_say_change(d, k, 0.0);
  decision_say(d, "; the event span alone would %s, the kernel time %s", was,
             keep_unbacked ? "shows less than half the needed gain"
                           : "shows half as much again as the needed gain");
  return 1;
}

static void sequential_judge(const decide_opts *o, const result *r, decision *d) {
  seq_state s;
  seq_run(&s, o, r->rounds, r->nrounds);
  if (s.stop == SEQ_RUNNING && s.used > 0) seq_evaluate(&s); /* the cap, or the data's end */
  d->screened = s.screened;
  decide_fill_ratios(r, s.idx, s.used, d);
  seq_stats(&s, r, d);
  if (s.stop == SEQ_SCREENED) {
    d->kind = DECISION_REFUSED;
    d->noisy = 1;
    decision_say(d, "%d of %d rounds screened by clock (at most %d allowed): the clock is unsteady",
               s.screened, s.seen, o->max_screened);
    return;
  }
  if (s.used == 0) {
    d->kind = DECISION_REFUSED;
    d->noisy = 1;
    decision_say(d, "every round was screened by clock: nothing to judge");
    return;
  }
  if (decide_drift_refuses(o, d)) return;
  double threshold = 1.0 - o->min_gain;
  int p = decision_say_change(d, d->median_ratio, o->min_gain);
  if (s.stop == SEQ_KEEP) {
    d->kind = DECISION_KEEP;
    decision_say(d, " (sequential test: LLR %.2f >= %.2f after %d rounds; %d of %d rounds faster, "
                  "sign p %.3f)",
               s.llr, s.upper, s.used, s.faster, s.nsign, s.sign_p);
  } else if (s.stop == SEQ_REJECT) {
    d->kind = DECISION_REJECT;
    decision_say(d, " (sequential test: LLR %.2f <= %.2f after %d rounds)", s.llr, s.lower,
               s.used);
  } else if (!(d->median_ratio < threshold)) {
    d->kind = DECISION_REJECT;
    if (d->median_ratio < 1.0) decision_say(d, " (needed > %.*f%%)", p, o->min_gain * 100.0);
    decision_say(d, "; no boundary after %d rounds (LLR %.2f), the median decides", s.used, s.llr);
  } else if (!seq_gate(&s)) {
    d->kind = DECISION_REJECT;
    decision_say(d, " by the median after %d rounds, but only %d of %d rounds were faster "
                  "(sign p %.3f > %.2f)",
               s.used, s.faster, s.nsign, s.sign_p, SEQ_SIGN_LEVEL);
  } else {
    d->kind = DECISION_KEEP;
    decision_say(d, " (needed > %.*f%%); no boundary after %d rounds (LLR %.2f), the median "
                  "decides; %d of %d rounds faster, sign p %.3f",
               p, o->min_gain * 100.0, s.used, s.llr, s.faster, s.nsign, s.sign_p);
  }
  seq_ambiguous(o, d, instrument_gap(r, s.idx, s.used));
}

static int sequential_enough(const decide_opts *o, const measure_opts *m,
                             const round_rec *rounds, int n) {
  seq_state s;
  seq_run(&s, o, rounds, n);
  return s.stop != SEQ_RUNNING || s.used >= m->rounds;
}

const decide_rule rule_sequential = {
    .name = "sequential",
    .summary = "a robust sequential test on the log ratios, behind a sign-test gate; the median "
               "decides at the cap",
    RULE_PARAMS(seq_params),
    .judge = sequential_judge,
    .enough = sequential_enough,
    .screens = 1,
};
