/* decide: keep or reject a generation from its recorded rounds.
 *
 * A decision is a pure function of the decide options and the result (its
 * rounds, correctness and status), so anyone can recompute every ledger record
 * from the record itself. The order of the tests is fixed (docs/design.md): fault
 * or error -> reject; incorrect -> reject with the error; control drift over
 * tolerance -> refused as noisy; otherwise the rule judges the per-round
 * ratios new/best.
 *
 * Rules are selected by name (decide_opts.rule) from the registry
 * (common/rule.h): one row each, in common/rules/ ("median", the baseline;
 * "sequential", clock-screened rounds and a sequential test).
 * A rule also says when the child may stop measuring (decide_enough): the
 * child calls it after each recorded round with the rounds so far. */
#ifndef TF_DECIDE_H
#define TF_DECIDE_H

#include <cjson/cJSON.h>

#include "common/msg.h"
#include "common/opts.h"

typedef enum {
  DECISION_KEEP = 0,
  DECISION_REJECT,
  DECISION_REFUSED,   /* noisy (drift, too many screened rounds) or statically invalid */
  DECISION_AMBIGUOUS  /* the instruments disagree: neither kept nor counted as a loss */
} decision_kind;

extern const char *const decision_names[]; /* "keep", "reject", "refused", "ambiguous", NULL */

typedef struct decision {
  decision_kind kind;
  int noisy;                     /* refused for noise: the coordinator may measure it again */
  char reason[512];              /* in words, for the ledger and the progress line */
  char rule[16];
  int nratios;                   /* ratios over the rounds the rule used (screened ones excluded) */
  double ratios[MSG_MAX_ROUNDS]; /* new/best event span per used round */
  double kernel_ratios[MSG_MAX_ROUNDS];
  double median_ratio;           /* event span; NAN if no rounds */
  double kernel_median_ratio;    /* CUPTI kernel time; NAN if unavailable */
  double control_drift;          /* max/min of the control's round values; NAN if no rounds */
  double best_spread, new_spread; /* the same of best's and of new's, over the same rounds: when
                                   * the control drifted and these did not, the control alone
                                   * moved (the run's summary counts such refusals) */
  int screened;                  /* rounds the clock screen rejected */
  cJSON *stats;                  /* rule-specific statistics (owned; decision_release) */
} decision;

/* What `run`'s summary and `report` add when the control alone moved (its drift refused the
 * generation, best and new held within the tolerance) in at least a fifth of the measured
 * generations: then the control, not the GPU, is what is unsteady at this shape. */
#define DECIDE_UNSTEADY_CONTROL                                                          \
  " (the control itself is unsteady here: another control, campaign key 'control', would " \
  "waste fewer generations)"
#define decide_control_unsteady(alone, measured) (5 * (long)(alone) >= (long)(measured))

/* Decide; fills *d (caller calls decision_release). Returns 0, or -1 for an unknown rule. */
int decide(const decide_opts *o, const result *r, decision *d);
void decision_release(decision *d);

/* May the child stop measuring after these rounds? 1 yes, 0 no. The baseline
 * stops at o->rounds... (caps come from measure_opts.rounds). */
int decide_enough(const decide_opts *o, const measure_opts *m, const round_rec *rounds, int n);

/* Is this round rejected by the clock screen (always 0 for rules that do not screen)? */
int decide_screen_round(const decide_opts *o, const round_rec *r);

/* The event span of the shortest kernel at which both rules' false-keep rates were measured
 * on a GPU (docs/results.md); `run` warns below it. */
#define DECIDE_MEASURED_FLOOR_US 5.9

/* Known rule name? */
int decide_rule_known(const char *name);

/* Does the rule judge a fixed number of rounds (measure.rounds), so that their noise, not more
 * rounds, must carry its false-keep rate? Then the measure process raises the samples per
 * round from the launches' spread (worker/protocol.h, protocol_samples). The sequential rule
 * measures more rounds instead: 0. */
int decide_fixed_rounds(const decide_opts *o);


/* The canary's verdict on one measure process (docs/design.md, "The canary"): on each
 * instrument, the mean over the input sets of each set's median ratio copy/best, with a 95%
 * interval. The process is biased when, on either instrument, the estimate is further from 1
 * than `threshold` AND the interval excludes 1 (the bias is real, and large enough to matter:
 * a restart costs a second, a biased process costs wrong verdicts). */
typedef struct canary_verdict {
  int child;                  /* the measure process (result.child) */
  int n;                      /* rounds */
  double ratio[2];            /* [0] event span, [1] kernel time (NAN when not measured) */
  double lo[2], hi[2];        /* each estimate's 95% interval */
  double threshold;
  int biased;
  char reason[512];
} canary_verdict;

void decide_canary(double threshold, int input_sets, const result *r, canary_verdict *v);
/* Turn *d into the refusal of a result that may not be decided: its process's canary found a
 * bias (cv biased), or no canary has cleared its process (cv NULL or without rounds). The
 * coordinator measures such a candidate again; `tunefarm verify` recomputes the same words. */
void decide_untrusted(decision *d, const canary_verdict *cv, int child);

/* Statistics helpers, exposed for tests. */
double stats_median(const double *x, int n); /* copies; NAN for n == 0 */
/* The distribution-free interval of the median of x[0..n) at 95%: order statistics k and
 * n + 1 - k with P(Bin(n, 1/2) < k) <= 0.025 (past 1,000 values, k from the normal
 * approximation). -inf and inf when n < 6. */
void stats_median_interval(const double *x, int n, double *lo, double *hi);
/* stats_median and stats_median_interval over the finite values of x alone: a round without
 * one instrument's time holds NAN there, which has no order to sort by. *m is NAN when none
 * is finite (or out of memory). */
void stats_median_finite(const double *x, int n, double *m, double *lo, double *hi);
/* The relative spread of positive values: 1.4826 x their median absolute deviation over their
 * median (a standard deviation's estimate at the normal, robust to outliers). 0 for n < 2,
 * NAN when the median is not positive. */
double stats_rel_spread(const double *x, int n);

#endif
