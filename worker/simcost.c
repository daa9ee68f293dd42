/* simcost: the simulated device's cost function (worker/simcost.h). */
// defines: simcost_base_us, simcost_us, simcost_optimum, simcost_knob, simcost_pair
#include "worker/simcost.h"

#include <math.h>
#include <string.h>

#include "common/mix.h" /* defines: tf_mix64 */

/* FNV-1a of a string, folded into h. */
static unsigned long long hash_str(unsigned long long h, const char *s) {
  unsigned long long f = 0xcbf29ce484222325ULL;
  for (; *s; s++) f = (f ^ (unsigned char)*s) * 0x100000001b3ULL;
  return tf_mix64(h ^ f);
}

static unsigned long long knob_hash(const spec *s, const char *what, unsigned long long seed) {
  return hash_str(hash_str(tf_mix64(seed ^ 0x5c0571ULL), s->name), what);
}

double simcost_base_us(double flops, double bytes) {
  double compute = flops > 0.0 ? flops / SIMCOST_FLOPS : 0.0;
  double memory = bytes > 0.0 ? bytes / SIMCOST_BYTES : 0.0;
  return SIMCOST_LAUNCH_US + 1e6 * (compute > memory ? compute : memory);
}

void simcost_knob(const spec *s, int k, unsigned long long seed, int *opt, double *penalty) {
  const spec_knob *kn = &s->knobs[k];
  unsigned long long h = knob_hash(s, kn->name, seed);
  *opt = kn->nvalues > 0 ? (int)(h % (unsigned long long)kn->nvalues) : 0;
  *penalty = 0.02 + 0.04 * ((double)(h >> 40) / (double)(1ULL << 24));
}

void simcost_pair(const spec *s, unsigned long long seed, int *a, int *b) {
  int choice[SPEC_MAX_KNOBS], n = 0;
  for (int k = 0; k < s->nknobs && k < SPEC_MAX_KNOBS; k++)
    if (s->knobs[k].nvalues >= 2) choice[n++] = k;
  *a = *b = -1;
  if (n < 2) return;
  unsigned long long h = knob_hash(s, "\x01pair", seed);
  int i = (int)(h % (unsigned long long)n);
  int j = (i + 1 + (int)((h >> 32) % (unsigned long long)(n - 1))) % n;
  *a = choice[i];
  *b = choice[j];
}

/* Index of v in knob k's domain; a value outside it counts one step past the far end. */
static int value_index(const spec_knob *kn, long long v) {
  for (int i = 0; i < kn->nvalues; i++)
    if (kn->values[i] == v) return i;
  return kn->nvalues;
}

static double knob_factor(const spec *s, const config *c, unsigned long long seed) {
  double f = 1.0, pen[SPEC_MAX_KNOBS];
  int d[SPEC_MAX_KNOBS];
  int n = s->nknobs < SPEC_MAX_KNOBS ? s->nknobs : SPEC_MAX_KNOBS;
  for (int k = 0; k < n; k++) {
    int opt = 0;
    simcost_knob(s, k, seed, &opt, &pen[k]);
    long long v = k < c->n ? c->v[k] : s->knobs[k].values[0];
    d[k] = value_index(&s->knobs[k], v) - opt;
    f *= 1.0 + pen[k] * fabs((double)d[k]);
  }
  int a, b;
  simcost_pair(s, seed, &a, &b);
  if (a >= 0) {
    double q = 1.5 * (pen[a] > pen[b] ? pen[a] : pen[b]);
    f *= 1.0 + q * fabs((double)(d[a] - d[b]));
  }
  return f;
}

static double eval_or_zero(const spec *s, const expr *x, const long long *dims, const config *c) {
  if (!x) return 0.0;
  long long v = 0;
  tf_err e;
  tf_err_clear(&e);
  if (spec_eval(s, x, dims, c, &v, &e) != 0 || v < 0) return 0.0;
  return (double)v;
}

double simcost_us(const spec *s, const long long *dims, const config *c, unsigned long long seed) {
  double base = simcost_base_us(eval_or_zero(s, s->flops, dims, c),
                                eval_or_zero(s, s->bytes, dims, c));
  return base * knob_factor(s, c, seed);
}

int simcost_optimum(const spec *s, const long long *dims, unsigned long long seed,
                    int (*accept)(void *ctx, const config *c), void *ctx, config *best,
                    double *us) {
  int n = s->nknobs < SPEC_MAX_KNOBS ? s->nknobs : SPEC_MAX_KNOBS;
  long long size = 1;
  for (int k = 0; k < n; k++) {
    if (s->knobs[k].nvalues <= 0) return 0;
    size *= s->knobs[k].nvalues;
    if (size > SIMCOST_MAX_SPACE) return -1;
  }
  int idx[SPEC_MAX_KNOBS] = {0};
  int accepted = 0;
  double best_us = INFINITY;
  for (long long step = 0; step < size; step++) {
    config c;
    memset(&c, 0, sizeof c);
    c.n = n;
    for (int k = 0; k < n; k++) c.v[k] = s->knobs[k].values[idx[k]];
    if (!accept || accept(ctx, &c)) {
      double t = simcost_us(s, dims, &c, seed);
      if (accepted == 0 || t < best_us) {
        best_us = t;
        *best = c;
      }
      accepted++;
    }
    for (int k = n - 1; k >= 0; k--) { /* odometer: the last knob turns fastest */
      if (++idx[k] < s->knobs[k].nvalues) break;
      idx[k] = 0;
    }
  }
  if (accepted > 0 && us) *us = best_us;
  return accepted;
}
