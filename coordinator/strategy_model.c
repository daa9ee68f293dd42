/* strategy_model: proposer "model" (coordinator/propose.h, the table): candidates ranked by a
 * model of this device's own times, fitted to its decisions so far.
 *
 * Observations: every decided generation (keep, reject, ambiguous) gives best's and the
 * candidate's medians in microseconds (each configuration's latest), as ln(us); the latest
 * MODEL_MAX_OBS are kept, across restarts. The model: ridge least squares of ln(us) on an
 * intercept, a one-hot of each knob's value (all but its first) and, per pair of knobs, the
 * product of their centered value indices (the pair interactions that single moves cannot
 * see), refitted after each decision that adds an observation; the ridge term (`ridge`, on
 * every coefficient but the intercept) keeps it defined with fewer observations than features.
 *
 * A proposal: the candidates are best's one- and two-knob moves and `sample` configurations
 * drawn from the reachable space, each legal and untried; with fewer than `warmup`
 * observations, or with probability `explore` (a hash of the seed and the decisions so far),
 * the one ranked first by a hash of the seed is taken (exploration), else the one the model
 * predicts fastest (ties: the first found). Everything is a function of the seed and the
 * ledger's records. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "coordinator/propose.h" /* defines: proposer_ops, propose_draw_reachable, ... */

#define MODEL_MAX_OBS 256
#define MODEL_MAX_FEATURES                                                                 \
  (1 + SPEC_MAX_KNOBS * (SPEC_MAX_VALUES - 1) + SPEC_MAX_KNOBS * (SPEC_MAX_KNOBS - 1) / 2)
#define MODEL_MAX_PAIR 512 /* best's two-knob moves scored at most */

typedef struct model_obs {
  unsigned char idx[SPEC_MAX_KNOBS]; /* each knob's value index */
  float y;                           /* ln(us) */
} model_obs;

typedef struct model_state {
  int nobs, added;              /* observations held; added ever (the ring's next slot) */
  long long decisions;          /* feedback calls: the exploration draw's counter */
  int fitted, nfeat;
  model_obs obs[MODEL_MAX_OBS];
  double coef[MODEL_MAX_FEATURES];
} model_state;

_Static_assert(sizeof(model_state) <= PROPOSE_STATE_BYTES, "model state fits");

enum { P_EXPLORE, P_WARMUP, P_SAMPLE, P_RIDGE };
static const proposer_param model_params[] = {
    [P_EXPLORE] = {"explore", 0.1, 0.0, 1.0, "the chance that a proposal explores"},
    [P_WARMUP] = {"warmup", 8, 0, 1000, "observations before the model ranks"},
    [P_SAMPLE] = {"sample", 64, 0, 4096, "random reachable configurations scored beside "
                                         "best's moves"},
    [P_RIDGE] = {"ridge", 0.01, 0.0, 1e6, "the ridge penalty on the coefficients"},
};

static model_state *st(proposer *p) { return (model_state *)(void *)p->state.bytes; }
static const model_state *cst(const proposer *p) {
  return (const model_state *)(const void *)p->state.bytes;
}

static int nfeatures(const spec *s) {
  int n = 1;
  for (int k = 0; k < s->nknobs; k++) n += s->knobs[k].nvalues - 1;
  return n + s->nknobs * (s->nknobs - 1) / 2;
}

static void index_of(const spec *s, const config *c, unsigned char *idx) {
  for (int k = 0; k < s->nknobs; k++) {
    int i = spec_value_index(s, k, c->v[k]);
    idx[k] = (unsigned char)(i < 0 ? 0 : i);
  }
}

/* The feature vector of value indices idx (x[0..nfeatures)). */
static void features(const spec *s, const unsigned char *idx, double *x) {
  int f = 0;
  x[f++] = 1.0;
  for (int k = 0; k < s->nknobs; k++)
    for (int i = 1; i < s->knobs[k].nvalues; i++) x[f++] = idx[k] == i;
  for (int a = 0; a < s->nknobs; a++)
    for (int b = a + 1; b < s->nknobs; b++) {
      double ca = idx[a] - (s->knobs[a].nvalues - 1) / 2.0;
      double cb = idx[b] - (s->knobs[b].nvalues - 1) / 2.0;
      x[f++] = ca * cb;
    }
}

static void model_init(proposer *p, const spec *s, const long long *dims,
                       unsigned long long seed, const double *param) {
  proposer_start(p, s, dims, seed, param);
  st(p)->nfeat = nfeatures(s);
}

static void model_segment(proposer *p, unsigned long long seed) { p->seed = seed; }

/* Solve A w = b in place (A symmetric positive definite, n x n, Cholesky): 0, or -1 when A
 * is not positive definite. */
static int cholesky_solve(double *a, double *b, int n) {
  for (int j = 0; j < n; j++) {
    double d = a[j * n + j];
    for (int k = 0; k < j; k++) d -= a[j * n + k] * a[j * n + k];
    if (!(d > 1e-12)) return -1;
    a[j * n + j] = sqrt(d);
    for (int i = j + 1; i < n; i++) {
      double v = a[i * n + j];
      for (int k = 0; k < j; k++) v -= a[i * n + k] * a[j * n + k];
      a[i * n + j] = v / a[j * n + j];
    }
  }
  for (int i = 0; i < n; i++) { /* L y = b */
    for (int k = 0; k < i; k++) b[i] -= a[i * n + k] * b[k];
    b[i] /= a[i * n + i];
  }
  for (int i = n - 1; i >= 0; i--) { /* L^T w = y */
    for (int k = i + 1; k < n; k++) b[i] -= a[k * n + i] * b[k];
    b[i] /= a[i * n + i];
  }
  return 0;
}

/* Refit the coefficients to the observations; out of memory or a singular system leaves the
 * last fit. */
static void refit(proposer *p) {
  model_state *m = st(p);
  int n = m->nfeat;
  double *a = calloc((size_t)n * (size_t)n + 2 * (size_t)n, sizeof *a);
  if (!a) return;
  double *b = a + (size_t)n * (size_t)n, *x = b + n;
  for (int o = 0; o < m->nobs; o++) {
    features(p->s, m->obs[o].idx, x);
    for (int i = 0; i < n; i++) {
      if (x[i] == 0.0) continue;
      b[i] += x[i] * m->obs[o].y;
      for (int j = 0; j < n; j++) a[i * n + j] += x[i] * x[j];
    }
  }
  double ridge = p->param[P_RIDGE] > 0 ? p->param[P_RIDGE] : 1e-9;
  for (int i = 1; i < n; i++) a[i * n + i] += ridge;
  a[0] += 1e-9;
  if (cholesky_solve(a, b, n) == 0) {
    memcpy(m->coef, b, (size_t)n * sizeof *b);
    m->fitted = 1;
  }
  free(a);
}

static double predict(const proposer *p, const config *c) {
  const model_state *m = cst(p);
  unsigned char idx[SPEC_MAX_KNOBS];
  double x[MODEL_MAX_FEATURES], y = 0;
  index_of(p->s, c, idx);
  features(p->s, idx, x);
  for (int i = 0; i < m->nfeat; i++) y += m->coef[i] * x[i];
  return y;
}

/* Hold c's time: a configuration observed again replaces its older observation. */
static void observe(proposer *p, const config *c, double us) {
  model_state *m = st(p);
  model_obs o;
  memset(&o, 0, sizeof o);
  index_of(p->s, c, o.idx);
  o.y = (float)log(us);
  for (int i = 0; i < m->nobs; i++)
    if (memcmp(m->obs[i].idx, o.idx, sizeof o.idx) == 0) {
      m->obs[i] = o;
      return;
    }
  m->obs[m->added % MODEL_MAX_OBS] = o;
  m->added++;
  if (m->nobs < MODEL_MAX_OBS) m->nobs++;
}

static void model_feedback(proposer *p, const config *best, const config *cand,
                           const propose_obs *o) {
  model_state *m = st(p);
  int added = 0;
  m->decisions++;
  if (isfinite(o->best_us) && o->best_us > 0) observe(p, best, o->best_us), added = 1;
  if (isfinite(o->new_us) && o->new_us > 0) observe(p, cand, o->new_us), added = 1;
  if (added) refit(p);
}

/* The ranking of a candidate: lower first. */
typedef struct ranking {
  const proposer *p;
  int by_model;
  unsigned long long x; /* exploration: a hash of the seed and the decisions */
  double score;
  int found;
} ranking;

static unsigned long long config_key(const config *c) {
  unsigned long long h = 0x84222325cbf29ce4ULL;
  for (int k = 0; k < c->n; k++) h = propose_mix(h ^ (unsigned long long)c->v[k]);
  return h;
}

static void consider(ranking *r, const tried_set *tried, const config *c, config *out) {
  if (tried_has(tried, c) || !propose_legal(r->p, c)) return;
  double score = r->by_model ? predict(r->p, c) : propose_uniform(r->x ^ config_key(c));
  if (!r->found || score < r->score) {
    r->found = 1;
    r->score = score;
    *out = *c;
  }
}

/* best's one-knob moves, then its two-knob moves (at most MODEL_MAX_PAIR). */
static void neighbours(ranking *r, const config *best, const tried_set *tried, config *out) {
  const spec *s = r->p->s;
  int pairs = 0;
  for (int k = 0; k < s->nknobs; k++)
    for (int i = 0; i < s->knobs[k].nvalues; i++) {
      config c = *best;
      c.v[k] = s->knobs[k].values[i];
      if (c.v[k] != best->v[k]) consider(r, tried, &c, out);
    }
  for (int a = 0; a < s->nknobs; a++)
    for (int b = a + 1; b < s->nknobs; b++)
      for (int i = 0; i < s->knobs[a].nvalues; i++)
        for (int j = 0; j < s->knobs[b].nvalues && pairs < MODEL_MAX_PAIR; j++) {
          config c = *best;
          c.v[a] = s->knobs[a].values[i];
          c.v[b] = s->knobs[b].values[j];
          if (c.v[a] == best->v[a] || c.v[b] == best->v[b]) continue;
          pairs++;
          consider(r, tried, &c, out);
        }
}

static int model_next(const proposer *p, const config *best, const tried_set *tried,
                      int prefer_two, config *out, int *nchanged) {
  (void)prefer_two;
  const model_state *m = cst(p);
  unsigned long long x = propose_mix(p->seed ^ (unsigned long long)m->decisions * 0xbf58476d1ce4e5b9ULL);
  ranking r = {.p = p, .x = x};
  r.by_model = m->fitted && m->nobs >= (int)p->param[P_WARMUP] &&
               propose_uniform(x ^ 0x5851f42d4c957f2dULL) >= p->param[P_EXPLORE];
  neighbours(&r, best, tried, out);
  for (int i = 0; i < (int)p->param[P_SAMPLE]; i++) {
    config c;
    if (propose_draw_reachable(p, tried, propose_mix(x + (unsigned long long)i), &c))
      consider(&r, tried, &c, out);
  }
  if (r.found) *nchanged = propose_changed(p->s, best, out);
  return r.found;
}

static int model_restart(const proposer *p, const tried_set *tried, unsigned long long seed,
                         config *out) {
  return propose_draw_reachable(p, tried, seed, out);
}

const proposer_ops proposer_model = {
    .name = "model", .params = model_params,
    .nparams = (int)(sizeof model_params / sizeof model_params[0]), .init = model_init,
    .segment = model_segment, .next = model_next, .restart = model_restart,
    .feedback = model_feedback};
