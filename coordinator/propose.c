#include "coordinator/propose.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/mix.h"        /* defines: tf_mix64 */
#include "coordinator/space.h" /* defines: space_verdict */

/* The repairs found from one best (repair_move, below). */
#define REPAIR_STEPS 4
static const int repair_steps[REPAIR_STEPS] = {1, -1, 2, -2};

struct repair_list {
  int used;          /* 1: a memo's list for the key below; 0: a slot free, or one scan alone */
  config best;
  int order[SPEC_MAX_KNOBS];
  int max_dist;
  int pos, end;      /* the next position to scan, and the last + 1 */
  int one_block;     /* the block whose one-knob move `one` is; -1 none */
  int one_broken;    /* 1: that move exists and breaks a constraint */
  config one;        /* that move */
  config *found;     /* the legal repairs found, in scan order */
  int n, cap;
};

/* A multiply-xor per knob and one finalizer: lookups are most of a guess ahead's work. */
static unsigned long long config_hash(const config *c) {
  unsigned long long h = (unsigned long long)c->n;
  for (int k = 0; k < c->n; k++) h = (h ^ (unsigned long long)c->v[k]) * 0x9e3779b97f4a7c15ULL;
  return tf_mix64(h);
}

/* The slot of an index over keys[] that holds c, or the empty slot where it would go. */
static int find_slot(const int *slot, int nslots, const config *keys, const config *c) {
  unsigned mask = (unsigned)nslots - 1u;
  for (unsigned i = (unsigned)config_hash(c) & mask;; i = (i + 1u) & mask)
    if (slot[i] < 0 || config_equal(&keys[slot[i]], c)) return (int)i;
}

/* A new index of nslots slots (a power of two above twice n) over keys[0..n). */
static int reindex(int **slot, int *nslots, int want, const config *keys, int n) {
  int *s = malloc((size_t)want * sizeof *s);
  if (!s) return -1;
  free(*slot);
  *slot = s;
  *nslots = want;
  for (int i = 0; i < want; i++) s[i] = -1;
  for (int i = 0; i < n; i++) s[find_slot(s, want, keys, &keys[i])] = i;
  return 0;
}

/* Room for one more key in keys (and vals, when given) and the index; 0 or -1. */
static int grow(config **keys, int **vals, int *cap, int n, int **slot, int *nslots) {
  if (n == *cap) {
    int c = *cap ? *cap * 2 : 64;
    config *nk = realloc(*keys, (size_t)c * sizeof *nk);
    if (!nk) return -1;
    *keys = nk;
    if (vals) {
      int *nv = realloc(*vals, (size_t)c * sizeof *nv);
      if (!nv) return -1;
      *vals = nv;
    }
    *cap = c;
  }
  if (2 * (n + 1) > *nslots) return reindex(slot, nslots, *nslots ? 2 * *nslots : 128, *keys, n);
  return 0;
}

int tried_has(const tried_set *t, const config *c) {
  for (; t; t = t->under)
    if (t->nslots > 0 && t->slot[find_slot(t->slot, t->nslots, t->v, c)] >= 0) return 1;
  return 0;
}

int tried_add(tried_set *t, const config *c) {
  if (tried_has(t, c)) return 0;
  if (grow(&t->v, NULL, &t->cap, t->n, &t->slot, &t->nslots)) return -1;
  t->v[t->n] = *c;
  t->slot[find_slot(t->slot, t->nslots, t->v, c)] = t->n++;
  return 0;
}

void tried_over(tried_set *dst, const tried_set *under) {
  memset(dst, 0, sizeof *dst);
  dst->under = under;
}

void tried_release(tried_set *t) {
  free(t->v);
  free(t->slot);
  memset(t, 0, sizeof *t);
}

int check_memo_check(check_memo *m, const spec *s, const long long *dims, const config *c,
                     int *violated, tf_err *e) {
  int v = m && m->space ? space_verdict(m->space, c) : -2;
  if (v >= -1) {
    *violated = v;
    return 0;
  }
  if (m && m->nslots > 0) {
    int i = m->slot[find_slot(m->slot, m->nslots, m->key, c)];
    if (i >= 0) {
      *violated = m->bad[i];
      return 0;
    }
  }
  if (spec_check(s, dims, c, violated, e)) return -1;
  /* a memo that cannot grow only forgets: the verdict stands */
  if (m && grow(&m->key, &m->bad, &m->cap, m->n, &m->slot, &m->nslots) == 0) {
    m->key[m->n] = *c;
    m->bad[m->n] = *violated;
    m->slot[find_slot(m->slot, m->nslots, m->key, c)] = m->n++;
  }
  return 0;
}

void check_memo_release(check_memo *m) {
  free(m->key);
  free(m->bad);
  free(m->slot);
  if (m->repairs)
    for (int k = 0; k < PROPOSE_REPAIR_LISTS; k++) free(m->repairs[k].found);
  free(m->repairs);
  memset(m, 0, sizeof *m);
}

/* One step of splitmix64. */
static unsigned long long mix(unsigned long long x) {
  return tf_mix64(x + 0x9e3779b97f4a7c15ULL);
}

/* A configuration of every knob's domain drawn uniformly, advancing the stream *x. */
static void random_config(const proposer *p, unsigned long long *x, config *c) {
  memset(c, 0, sizeof *c);
  c->n = p->s->nknobs;
  for (int k = 0; k < p->s->nknobs; k++) {
    *x = mix(*x);
    c->v[k] = p->s->knobs[k].values[(*x >> 11) % (unsigned long long)p->s->knobs[k].nvalues];
  }
}

void proposer_start(proposer *p, const spec *s, const long long *dims, unsigned long long seed,
                    const double *param) {
  memset(p, 0, sizeof *p);
  p->s = s;
  p->dims = dims;
  p->seed = seed;
  memcpy(p->param, param, sizeof p->param);
}

void proposer_init(proposer *p, const spec *s, unsigned long long seed) {
  memset(p, 0, sizeof *p);
  p->s = s;
  for (int k = 0; k < s->nknobs; k++) p->tiebreak[k] = (int)(mix(seed * 131 + (unsigned)k) >> 40);
}

void proposer_repairs(proposer *p, const long long *dims) { p->dims = dims; }

/* Knob indices, best payoff first. */
static void knob_order(const proposer *p, int *order) {
  int n = p->s->nknobs;
  for (int k = 0; k < n; k++) order[k] = k;
  for (int i = 1; i < n; i++)
    for (int j = i; j > 0; j--) {
      int a = order[j - 1], b = order[j];
      int swap = p->payoff[b] > p->payoff[a] ||
                 (p->payoff[b] == p->payoff[a] && p->tiebreak[b] < p->tiebreak[a]);
      if (!swap) break;
      order[j - 1] = b;
      order[j] = a;
    }
}

/* Set knob k of c to the value `steps` positions away from its current one; 0 if outside. */
static int step_knob(const spec *s, config *c, int k, int steps) {
  int i = spec_value_index(s, k, c->v[k]) + steps;
  if (i < 0 || i >= s->knobs[k].nvalues) return 0;
  c->v[k] = s->knobs[k].values[i];
  return 1;
}

static int single_move(const proposer *p, const config *best, const tried_set *t, const int *order,
                       config *out) {
  for (int dist = 1; dist < SPEC_MAX_VALUES; dist++)
    for (int i = 0; i < p->s->nknobs; i++)
      for (int sign = 1; sign >= -1; sign -= 2) {
        config c = *best;
        if (step_knob(p->s, &c, order[i], sign * dist) && !tried_has(t, &c)) {
          *out = c;
          return 1;
        }
      }
  return 0;
}

/* 1 if c passes every constraint at the proposer's dims. */
static int legal(const proposer *p, const config *c) {
  int bad = -1;
  return check_memo_check(p->memo, p->s, p->dims, c, &bad, NULL) == 0 && bad < 0;
}

/* Repair scans: the first one-knob move (nearest first, knobs by payoff, at most max_dist
 * values away) that breaks a constraint and has an untried legal repair, the same move plus
 * the nearest step of another knob. The scan visits positions in that order: a block per
 * (distance, knob, sign), REPAIR_STEPS steps of every other knob within it. Which positions
 * hold a legal repair depends on best, the knob order and the constraints only, so a list
 * keeps those found, and the next scan from the same best goes on where the last one stopped:
 * whatever was tried since, the answer is the first repair on the list not tried, else the
 * scan's next. The answers are those of a scan from the start every time. */
/* A list (its storage kept) begins again for a key; `used` says whether a memo keeps it. */
static void repair_list_start(repair_list *l, const spec *s, const config *best,
                              const int *order, int max_dist, int used) {
  int n = s->nknobs;
  l->used = used;
  l->best = *best;
  memcpy(l->order, order, (size_t)n * sizeof *order);
  l->max_dist = max_dist;
  l->pos = 0;
  l->end = max_dist * 2 * n * n * REPAIR_STEPS;
  l->one_block = -1;
  l->n = 0;
}

/* The candidate at position pos (1), or 0 when that position holds none: its one-knob move
 * does not exist or is legal, or its second step does not exist. */
static int repair_at(const proposer *p, repair_list *l, int pos, config *out) {
  int n = p->s->nknobs;
  int block = pos / (n * REPAIR_STEPS), within = pos % (n * REPAIR_STEPS);
  int j = within / REPAIR_STEPS, sj = within % REPAIR_STEPS;
  int i = block / 2 % n, sign = block % 2 ? -1 : 1, dist = block / (2 * n) + 1;
  if (block != l->one_block) {
    l->one_block = block;
    l->one = l->best;
    l->one_broken = step_knob(p->s, &l->one, l->order[i], sign * dist) && !legal(p, &l->one);
  }
  if (!l->one_broken || j == i) return 0;
  *out = l->one;
  return step_knob(p->s, out, l->order[j], repair_steps[sj]);
}

/* Scan on from l->pos to the next legal repair: 1 with it, 0 at the end. Skips a whole block
 * when its one-knob move is no candidate. */
static int repair_scan(const proposer *p, repair_list *l, config *out) {
  int per_block = p->s->nknobs * REPAIR_STEPS;
  while (l->pos < l->end) {
    int pos = l->pos++;
    if (repair_at(p, l, pos, out)) {
      if (legal(p, out)) return 1;
    } else if (!l->one_broken) {
      l->pos = (pos / per_block + 1) * per_block;
    }
  }
  return 0;
}

static int same_list(const repair_list *l, const spec *s, const config *best, const int *order,
                     int max_dist) {
  return l->used && l->max_dist == max_dist && config_equal(&l->best, best) &&
         memcmp(l->order, order, (size_t)s->nknobs * sizeof *order) == 0;
}

/* The memo's list for (best, order, max_dist), begun when new in the slot used longest ago;
 * NULL without a memo or memory, and the caller scans from the start. */
static repair_list *repair_list_of(const proposer *p, const config *best, const int *order,
                                   int max_dist) {
  check_memo *m = p->memo;
  if (!m) return NULL;
  if (!m->repairs && !(m->repairs = calloc(PROPOSE_REPAIR_LISTS, sizeof *m->repairs)))
    return NULL;
  for (int k = 0; k < PROPOSE_REPAIR_LISTS; k++)
    if (same_list(&m->repairs[k], p->s, best, order, max_dist)) return &m->repairs[k];
  repair_list *l = &m->repairs[m->next_repairs];
  m->next_repairs = (m->next_repairs + 1) % PROPOSE_REPAIR_LISTS;
  repair_list_start(l, p->s, best, order, max_dist, 1);
  return l;
}

/* Keep a repair found. A list that cannot grow is forgotten (a later call from its best scans
 * from the start); the scan under way goes on and answers as it would have. */
static void keep_found(repair_list *l, const config *c) {
  if (!l->used) return;
  if (l->n == l->cap) {
    int cap = l->cap ? 2 * l->cap : 16;
    config *grown = realloc(l->found, (size_t)cap * sizeof *grown);
    if (!grown) {
      l->used = 0;
      return;
    }
    l->found = grown;
    l->cap = cap;
  }
  l->found[l->n++] = *c;
}

static int repair_move(const proposer *p, const config *best, const tried_set *t, const int *order,
                       int max_dist, config *out) {
  repair_list alone = {0}, *l = repair_list_of(p, best, order, max_dist);
  if (!l) {
    l = &alone;
    repair_list_start(l, p->s, best, order, max_dist, 0);
  }
  for (int k = 0; k < l->n; k++)
    if (!tried_has(t, &l->found[k])) {
      *out = l->found[k];
      return 1;
    }
  while (repair_scan(p, l, out)) {
    keep_found(l, out);
    if (!tried_has(t, out)) return 1;
  }
  return 0;
}

/* best with the changes of near misses a and b; 0 when they set one knob two ways or one
 * holds the other (the combination would be a move already measured). */
static int combine(const spec *s, const config *best, const config *a, const config *b,
                   config *out) {
  int only_a = 0, only_b = 0;
  *out = *best;
  for (int k = 0; k < s->nknobs; k++) {
    int ca = a->v[k] != best->v[k], cb = b->v[k] != best->v[k];
    if (ca && cb && a->v[k] != b->v[k]) return 0;
    only_a += ca && !cb;
    only_b += cb && !ca;
    if (ca) out->v[k] = a->v[k];
    if (cb) out->v[k] = b->v[k];
  }
  return only_a > 0 && only_b > 0;
}

/* The untried combination of two near misses with the smallest product of their ratios. */
static int near_move_pair(const proposer *p, const config *best, const tried_set *t,
                          config *out) {
  double lowest = INFINITY;
  for (int i = 0; i < p->nnear; i++)
    for (int j = i + 1; j < p->nnear; j++) {
      config c;
      double r = p->near[i].ratio * p->near[j].ratio;
      if (r < lowest && combine(p->s, best, &p->near[i].c, &p->near[j].c, &c) &&
          !tried_has(t, &c)) {
        lowest = r;
        *out = c;
      }
    }
  return isfinite(lowest);
}

/* A near miss (closest first) together with a one-knob move from best that breaks a constraint
 * alone and is legal with the near miss (layernorm's rows in turn, ROWS 2, need a register
 * cache, which a near miss may hold). */
static int near_repair(const proposer *p, const config *best, const tried_set *t, const int *order,
                       config *out) {
  int n = p->s->nknobs;
  for (int m = 0; m < p->nnear; m++)
    for (int dist = 1; dist < SPEC_MAX_VALUES; dist++)
      for (int i = 0; i < n; i++)
        for (int sign = 1; sign >= -1; sign -= 2) {
          config one = *best, c;
          if (!step_knob(p->s, &one, order[i], sign * dist) || legal(p, &one)) continue;
          if (combine(p->s, best, &p->near[m].c, &one, &c) && !tried_has(t, &c) && legal(p, &c)) {
            *out = c;
            return 1;
          }
        }
  return 0;
}

/* One step of one knob (knobs by payoff) from a near miss that measured faster than best, but
 * not by the gain needed to keep it (ratio < PROPOSE_STEP_FROM), closest first; legal at dims
 * when given: a faster kernel may lie one step from a near miss (docs/design.md,
 * "The proposer"). */
static int near_step(const proposer *p, const config *best, const tried_set *t, const int *order,
                     config *out) {
  for (int m = 0; m < p->nnear && p->near[m].ratio < PROPOSE_STEP_FROM; m++)
    for (int i = 0; i < p->s->nknobs; i++)
      for (int sign = 1; sign >= -1; sign -= 2) {
        config c = p->near[m].c;
        if (step_knob(p->s, &c, order[i], sign) && !config_equal(&c, best) &&
            !tried_has(t, &c) && (!p->dims || legal(p, &c))) {
          *out = c;
          return 1;
        }
      }
  return 0;
}

/* Moves that a measurement or a constraint points at: combinations of near misses, steps from
 * near misses that measured faster, then (with dims) near misses that make a refused move
 * legal, then repairs of moves one or two values away. */
static int informed_move(const proposer *p, const config *best, const tried_set *t,
                         const int *order, config *out) {
  if (near_move_pair(p, best, t, out) || near_step(p, best, t, order, out)) return 1;
  if (!p->dims) return 0;
  return near_repair(p, best, t, order, out) || repair_move(p, best, t, order, 2, out);
}

/* Repairs of refused moves at any distance: a value far away can be the one that pays (the
 * register cache that holds the whole row), but they come after the single moves, which
 * they would otherwise crowd out of a search's stale budget. */
static int far_repair(const proposer *p, const config *best, const tried_set *t,
                      const int *order, config *out) {
  return p->dims && repair_move(p, best, t, order, SPEC_MAX_VALUES - 1, out);
}

/* Two knobs one or two steps each, knobs by payoff: the moves nothing points at. */
static int blind_pair(const proposer *p, const config *best, const tried_set *t,
                      const int *order, config *out) {
  static const int steps[4][2] = {{1, 1}, {1, -1}, {-1, 1}, {-1, -1}};
  int n = p->s->nknobs;
  for (int scale = 1; scale <= 2; scale++)
    for (int i = 0; i < n; i++)
      for (int j = i + 1; j < n; j++)
        for (int s = 0; s < 4; s++) {
          config c = *best;
          if (step_knob(p->s, &c, order[i], steps[s][0] * scale) &&
              step_knob(p->s, &c, order[j], steps[s][1] * scale) && !tried_has(t, &c)) {
            *out = c;
            return 1;
          }
        }
  return 0;
}

static int changed(const spec *s, const config *best, const config *c) {
  int n = 0;
  for (int k = 0; k < s->nknobs; k++) n += best->v[k] != c->v[k];
  return n;
}

int propose_next(const proposer *p, const config *best, const tried_set *tried, int prefer_two,
                 config *out, int *nchanged) {
  int order[SPEC_MAX_KNOBS]; /* the same for every kind of move of this proposal */
  knob_order(p, order);
  int found = (prefer_two && informed_move(p, best, tried, order, out)) ||
              single_move(p, best, tried, order, out) ||
              (!prefer_two && informed_move(p, best, tried, order, out)) ||
              far_repair(p, best, tried, order, out) || blind_pair(p, best, tried, order, out);
  if (found) *nchanged = changed(p->s, best, out);
  return found;
}

int propose_restart(const proposer *p, const tried_set *tried, unsigned long long seed,
                    config *out) {
  unsigned long long x = mix(seed);
  for (int draw = 0; draw < PROPOSE_RESTART_DRAWS; draw++) {
    config c;
    random_config(p, &x, &c);
    if ((!p->dims || legal(p, &c)) && !tried_has(tried, &c)) {
      *out = c;
      return 1;
    }
  }
  return 0;
}

/* Insert cand among the near misses, closest first; the farthest falls out when full. */
static void remember_near_miss(proposer *p, const config *cand, double ratio) {
  int i = p->nnear;
  if (i == PROPOSE_MAX_NEAR) {
    if (p->near[i - 1].ratio <= ratio) return; /* farther than every one kept */
    i--;
  } else {
    p->nnear++;
  }
  for (; i > 0 && p->near[i - 1].ratio > ratio; i--) p->near[i] = p->near[i - 1];
  p->near[i].c = *cand;
  p->near[i].ratio = ratio;
}

void propose_feedback(proposer *p, const config *best, const config *cand, int kept,
                      double ratio) {
  for (int k = 0; k < p->s->nknobs; k++)
    if (best->v[k] != cand->v[k]) p->payoff[k] += kept ? 1.0 : -0.1;
  if (kept)
    p->nnear = 0;
  else if (isfinite(ratio) && ratio < PROPOSE_NEAR_MISS)
    remember_near_miss(p, cand, ratio);
}

/* ---------------------------------------------------------------- shared helpers */

unsigned long long propose_mix(unsigned long long x) { return mix(x); }

double propose_uniform(unsigned long long x) {
  return (double)(tf_mix64(x) >> 11) * (1.0 / 9007199254740992.0);
}

int propose_legal(const proposer *p, const config *c) { return !p->dims || legal(p, c); }

int propose_changed(const spec *s, const config *a, const config *b) { return changed(s, a, b); }

/* Draws before a reachable list is scanned in order (most of it tried). */
#define DRAW_TRIES 4096

static int draw_listed(const space_view *v, const tried_set *tried, unsigned long long x,
                       config *out) {
  unsigned long long r = (unsigned long long)v->nreachable;
  if (r == 0) return 0;
  for (int draw = 0; draw < DRAW_TRIES; draw++) {
    x = mix(x);
    space_at(v, (int)((x >> 11) % r), out);
    if (!tried_has(tried, out)) return 1;
  }
  for (unsigned long long j = 0, at = (x >> 11) % r; j < r; j++) {
    space_at(v, (int)((at + j) % r), out);
    if (!tried_has(tried, out)) return 1;
  }
  return 0;
}

int propose_draw_reachable(const proposer *p, const tried_set *tried, unsigned long long x,
                           config *out) {
  if (p->memo && p->memo->space && p->memo->space->reach)
    return draw_listed(p->memo->space, tried, x, out);
  for (int draw = 0; draw < DRAW_TRIES; draw++) {
    config c;
    random_config(p, &x, &c);
    if (propose_legal(p, &c) && !tried_has(tried, &c)) {
      *out = c;
      return 1;
    }
  }
  return 0;
}

/* ---------------------------------------------------------------- coordinate's row */

static void coordinate_init(proposer *p, const spec *s, const long long *dims,
                            unsigned long long seed, const double *param) {
  (void)param;
  proposer_init(p, s, seed);
  proposer_repairs(p, dims);
  p->seed = seed;
}

static void coordinate_feedback(proposer *p, const config *best, const config *cand,
                                const propose_obs *o) {
  propose_feedback(p, best, cand, o->kept, o->ratio);
}

static const proposer_ops coordinate_ops = {
    .name = "coordinate", .init = coordinate_init, .next = propose_next,
    .restart = propose_restart, .feedback = coordinate_feedback};

/* ---------------------------------------------------------------- the table */

extern const proposer_ops proposer_random;    /* coordinator/strategy_random.c */
extern const proposer_ops proposer_annealing; /* coordinator/strategy_annealing.c */
extern const proposer_ops proposer_model;     /* coordinator/strategy_model.c */

static const proposer_ops *const proposers[] = {
    &coordinate_ops,
    &proposer_random,
    &proposer_annealing,
    &proposer_model,
};
#define NPROPOSERS (sizeof proposers / sizeof proposers[0])

const proposer_ops *proposer_find(const char *name, const char **known) {
  if (known) *known = "coordinate, random, annealing, model";
  for (size_t i = 0; i < NPROPOSERS; i++)
    if (strcmp(proposers[i]->name, name) == 0) return proposers[i];
  return NULL;
}

static void param_names(const proposer_ops *ops, char *buf, size_t len) {
  size_t n = 0;
  buf[0] = '\0';
  for (int i = 0; i < ops->nparams && n < len; i++)
    n += (size_t)snprintf(buf + n, len - n, "%s%s", i ? ", " : "", ops->params[i].name);
}

int proposer_params(const proposer_ops *ops, const char *file, int n, const char (*keys)[32],
                    const double *values, double *param, tf_err *e) {
  for (int i = 0; i < PROPOSE_MAX_PARAMS; i++)
    param[i] = i < ops->nparams ? ops->params[i].def : 0.0;
  for (int k = 0; k < n; k++) {
    int i = 0;
    while (i < ops->nparams && strcmp(ops->params[i].name, keys[k]) != 0) i++;
    if (i == ops->nparams) {
      char names[256];
      param_names(ops, names, sizeof names);
      return tf_fail(e, TF_EXIT_INPUT, "campaign '%s': key 'search.params.%s': proposer '%s' "
                     "has no parameter '%s' (%s%s)", file, keys[k], ops->name, keys[k],
                     ops->nparams ? "its parameters: " : "it takes none", names);
    }
    const proposer_param *pp = &ops->params[i];
    if (!(values[k] >= pp->lo && values[k] <= pp->hi))
      return tf_fail(e, TF_EXIT_INPUT, "campaign '%s': key 'search.params.%s' must be a number "
                     "from %g to %g (%s)", file, keys[k], pp->lo, pp->hi, pp->what);
    param[i] = values[k];
  }
  return 0;
}
