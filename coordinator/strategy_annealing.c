/* strategy_annealing: proposer "annealing" (coordinator/propose.h, the table), simulated
 * annealing on the decision rule's verdicts.
 *
 * The walk has a current point `cur` beside the search's best (the fastest kept, against which
 * every candidate is measured). A candidate is a one-knob move of cur (any other value of one
 * knob, as the coordinate proposer's single moves), legal and untried, in an order shuffled
 * from the seed and the number of decisions so far; when every one-knob move of cur was tried,
 * one of best's; none left: the segment is exhausted.
 *
 * The rule only says keep or reject, so acceptance reads the generation's recorded median
 * ratio r = new/best. A keep moves cur to the candidate (the new best). A rejected (or
 * ambiguous) candidate with a trusted ratio becomes cur with probability
 *     min(1, exp(-(ln r - ln r_cur) / T)),   T = t0 * cooling^k,
 * where r_cur is cur's own ratio against the same best (1 when cur is best: a keep resets it,
 * and best changes only on a keep) and k the decisions with a ratio in this segment so far:
 * ln r - ln r_cur is how much slower the candidate measured than cur, and t0 is the slowdown
 * accepted with probability 1/e at the start. A generation without a trusted ratio (refused
 * for drift, a fault, a noisy one) moves nothing. The uniform draw is a hash of the seed and
 * k, so the walk is a function of the ledger. A restart begins a fresh walk at T = t0. */
#include <math.h>
#include <string.h>

#include "coordinator/propose.h" /* defines: proposer_ops, propose_mix, propose_uniform */

typedef struct anneal_state {
  int have_cur;   /* 0: cur is best (before the first decision with a ratio) */
  config cur;
  double cur_lr;  /* ln of cur's median ratio against best */
  long long k;    /* decisions with a ratio (or a keep) in this segment */
} anneal_state;

_Static_assert(sizeof(anneal_state) <= PROPOSE_STATE_BYTES, "annealing state fits");

static const proposer_param anneal_params[] = {
    {"t0", 0.02, 1e-6, 10.0, "the starting temperature: the slowdown (ln of the ratio) "
                             "accepted with probability 1/e"},
    {"cooling", 0.97, 0.5, 1.0, "the temperature's factor per decision"},
};

static anneal_state *st(proposer *p) { return (anneal_state *)(void *)p->state.bytes; }
static const anneal_state *cst(const proposer *p) {
  return (const anneal_state *)(const void *)p->state.bytes;
}

static void anneal_init(proposer *p, const spec *s, const long long *dims,
                        unsigned long long seed, const double *param) {
  proposer_start(p, s, dims, seed, param);
}

/* The first legal untried one-knob move of `from`, in an order shuffled from x. */
static int shuffled_move(const proposer *p, const config *from, const tried_set *tried,
                         unsigned long long x, config *out) {
  int knob[SPEC_MAX_KNOBS * SPEC_MAX_VALUES], val[SPEC_MAX_KNOBS * SPEC_MAX_VALUES], n = 0;
  for (int k = 0; k < p->s->nknobs; k++)
    for (int i = 0; i < p->s->knobs[k].nvalues; i++)
      if (p->s->knobs[k].values[i] != from->v[k]) knob[n] = k, val[n++] = i;
  for (int i = n - 1; i > 0; i--) { /* Fisher-Yates */
    x = propose_mix(x);
    int j = (int)((x >> 11) % (unsigned long long)(i + 1)), tk = knob[i], tv = val[i];
    knob[i] = knob[j], val[i] = val[j], knob[j] = tk, val[j] = tv;
  }
  for (int i = 0; i < n; i++) {
    config c = *from;
    c.v[knob[i]] = p->s->knobs[knob[i]].values[val[i]];
    if (!tried_has(tried, &c) && propose_legal(p, &c)) {
      *out = c;
      return 1;
    }
  }
  return 0;
}

static int anneal_next(const proposer *p, const config *best, const tried_set *tried,
                       int prefer_two, config *out, int *nchanged) {
  (void)prefer_two;
  const anneal_state *a = cst(p);
  unsigned long long x = propose_mix(p->seed ^ (unsigned long long)a->k * 0x2545f4914f6cdd1dULL);
  int found = (a->have_cur && shuffled_move(p, &a->cur, tried, x, out)) ||
              shuffled_move(p, best, tried, x, out);
  if (found) *nchanged = propose_changed(p->s, best, out);
  return found;
}

static int anneal_restart(const proposer *p, const tried_set *tried, unsigned long long seed,
                          config *out) {
  return propose_draw_reachable(p, tried, seed, out);
}

static void anneal_feedback(proposer *p, const config *best, const config *cand,
                            const propose_obs *o) {
  anneal_state *a = st(p);
  if (o->kept) {
    a->cur = *cand, a->cur_lr = 0.0, a->have_cur = 1;
    a->k++;
    return;
  }
  if (!isfinite(o->ratio) || o->ratio <= 0) return;
  if (!a->have_cur) a->cur = *best, a->cur_lr = 0.0, a->have_cur = 1;
  double lr = log(o->ratio), worse = lr - a->cur_lr;
  double t = p->param[0] * pow(p->param[1], (double)a->k);
  double u = propose_uniform(p->seed ^ (unsigned long long)(a->k + 1) * 0x9e3779b97f4a7c15ULL);
  a->k++;
  if (worse <= 0 || u < exp(-worse / t)) a->cur = *cand, a->cur_lr = lr;
}

const proposer_ops proposer_annealing = {
    .name = "annealing", .params = anneal_params,
    .nparams = (int)(sizeof anneal_params / sizeof anneal_params[0]), .init = anneal_init,
    .next = anneal_next, .restart = anneal_restart, .feedback = anneal_feedback};
