/* median: the baseline rule, exactly as DESIGN.md states it. Every recorded round gives
 * ratio_r = new_r / best_r; keep iff the median ratio < 1 - min_gain. It judges the fixed
 * number of rounds the protocol asks for (measure.rounds), screens none, and has no
 * parameters of its own. */
#include "common/rule.h"

static void median_judge(const decide_opts *o, const result *r, decision *d) {
  int n = r->nrounds < MSG_MAX_ROUNDS ? r->nrounds : MSG_MAX_ROUNDS;
  int idx[MSG_MAX_ROUNDS];
  for (int i = 0; i < n; i++) idx[i] = i;
  decide_fill_ratios(r, idx, n, d);
  double threshold = 1.0 - o->min_gain;
  cJSON_AddNumberToObject(d->stats, "rounds_used", n);
  decision_stat(d, "median_ratio", d->median_ratio);
  decision_stat(d, "threshold", threshold);
  decision_stat(d, "kernel_median_ratio", d->kernel_median_ratio);
  decision_stat(d, "control_drift", d->control_drift);
  if (decide_drift_refuses(o, d)) return;
  d->kind = d->median_ratio < threshold ? DECISION_KEEP : DECISION_REJECT;
  int p = decision_say_change(d, d->median_ratio, o->min_gain);
  if (d->median_ratio < 1.0) decision_say(d, " (needed > %.*f%%)", p, o->min_gain * 100.0);
}

const decide_rule rule_median = {
    .name = "median",
    .summary = "keep iff the median of the per-round ratios new/best < 1 - min_gain",
    .judge = median_judge,
    .fixed_rounds = 1,
    .baseline = 1,
};
