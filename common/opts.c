/* opts: the options a job carries (common/opts.h). */
#include "common/opts.h"

#include <stdio.h>
#include <string.h>

const char *const measure_layout_names[] = {"shared", "per_arm", "swap", NULL};
const char *const measure_code_names[] = {"shared", "per_arm", NULL};
const char *const measure_order_names[] = {"rotate", "fixed", NULL};

void decide_defaults(decide_opts *o) {
  memset(o, 0, sizeof *o);
  snprintf(o->rule, sizeof o->rule, "sequential");
  o->min_gain = 0.01;
  o->drift_tolerance = 0.03;
  o->max_requeue = 2;
  o->alpha = 0.01;
  o->beta = 0.05;
  o->min_rounds = 4;
  o->clock_skew = 0.02;
  o->throttle_mhz = 0.0;
  o->max_screened = 4;
}
