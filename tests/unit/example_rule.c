/* trimmed: keep when the trimmed mean of the per-round ratios new/best is below
 * 1 - min_gain. The fraction `trim` of the rounds is dropped at each end first, so that a
 * round or two disturbed by a boost or a stall does not carry the verdict. */
#include <stdlib.h>
#include <string.h>

#include "common/rule.h"

enum { TRIM }; /* the place of each parameter in decide_opts.param[] */
static const rule_param trimmed_params[] = {
    [TRIM] = {"trim", 0, 0.1, 0.0, 0.45, "the fraction of the rounds dropped at each end"},
};

static int cmp_ratio(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return (x > y) - (x < y);
}

static void trimmed_judge(const decide_opts *o, const result *r, decision *d) {
  int n = r->nrounds < MSG_MAX_ROUNDS ? r->nrounds : MSG_MAX_ROUNDS;
  int idx[MSG_MAX_ROUNDS];
  for (int i = 0; i < n; i++) idx[i] = i;
  decide_fill_ratios(r, idx, n, d);
  if (decide_drift_refuses(o, d)) return;
  double sorted[MSG_MAX_ROUNDS], sum = 0.0;
  memcpy(sorted, d->ratios, (size_t)n * sizeof *sorted);
  qsort(sorted, (size_t)n, sizeof *sorted, cmp_ratio);
  int cut = (int)(o->param[TRIM] * n); /* trim <= 0.45 leaves at least one round */
  for (int i = cut; i < n - cut; i++) sum += sorted[i];
  double mean = sum / (n - 2 * cut);
  decision_stat(d, "trimmed_mean_ratio", mean);
  d->kind = mean < 1.0 - o->min_gain ? DECISION_KEEP : DECISION_REJECT;
  int p = decision_say_change(d, mean, o->min_gain);
  decision_say(d, " by the mean of %d rounds, %d dropped at each end (needed > %.*f%%)",
               n - 2 * cut, cut, p, o->min_gain * 100.0);
}

const decide_rule rule_trimmed = {
    .name = "trimmed",
    .summary = "keep iff the trimmed mean of the per-round ratios new/best < 1 - min_gain",
    RULE_PARAMS(trimmed_params),
    .judge = trimmed_judge,
    .fixed_rounds = 1,
};
