/* space: enumerating a campaign's knob space (coordinator/space.h). */
#include "coordinator/space.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define SPACE_MAX (1LL << 24)
/* The most work check and run spend on a space before anything else (space_steps): 2^30
 * steps took 3 to 6 s on this project's 2-core machine, so with room for a loaded machine or
 * a sanitizer build it stays under SPACE_MAX_SECONDS. It admits 2^24 points of up to 7 knobs
 * without constraints (6 knobs of 16 values: 3 s), and spaces with constraints in proportion. */
#define SPACE_MAX_STEPS (1LL << 30)
#define SPACE_MAX_SECONDS 30

/* ---- enumeration: configurations <-> mixed-radix indices over the domains ---- */

void space_config_at(const spec *s, long long idx, config *c) {
  c->n = s->nknobs;
  for (int k = s->nknobs - 1; k >= 0; k--) {
    int nv = s->knobs[k].nvalues;
    c->v[k] = s->knobs[k].values[idx % nv];
    idx /= nv;
  }
}

/* c's index in the whole space, or -1 when c is not a point of it (a value outside its knob's
 * domain); v->index_of must be filled. */
static long long config_to_index(const space_view *v, const config *c) {
  const spec *s = v->s;
  if (c->n != s->nknobs) return -1;
  long long idx = 0;
  for (int k = 0; k < s->nknobs; k++) {
    long long x = c->v[k];
    int j = x >= 0 && x < SPACE_DIRECT ? v->index_of[k][x] : spec_value_index(s, k, x);
    if (j < 0) return -1;
    idx = idx * s->knobs[k].nvalues + j;
  }
  return idx;
}

int space_verdict(const space_view *v, const config *c) {
  long long i = v->first_broken ? config_to_index(v, c) : -1;
  if (i < 0) return -2;
  return v->first_broken[i] == SPACE_ACCEPTED ? -1 : v->first_broken[i];
}

void space_at(const space_view *v, int i, config *out) { space_config_at(v->s, v->reach[i], out); }

/* ---- the reachability walk ----
 *
 * Breadth first from the start over accepted configurations, a step being a move of one or
 * two knobs to any of their values (what the proposer proposes). Walked naively, a visit
 * looks at every neighbour of its point, K*V + K(K-1)/2*V^2 of them: 3,936 for 6 knobs of
 * 16 values, 6.6e10 looks over a 2^24-point space (it ran for hours). But what the two-knob
 * moves on knobs a and b reach from a point is the whole plane through it in which only a
 * and b vary, and once one visit has looked at a plane every accepted point of it is seen:
 * no later visit from the same plane can add one. So each plane (and each line, for the
 * one-knob moves) is looked at once, and a visit tests one bit per plane and line through
 * its point.
 *
 * What bounds the walk: with K knobs of two values or more there are F = K(K+1)/2 lines and
 * planes through a point. Each line or plane is looked at once, which is at most F looks
 * per point of the space, and each visited point tests F bits: at most 2 * F * size steps,
 * linear in the size of the space and quadratic in the number of knobs (2 * 21 * 2^24 for
 * 6 knobs of 16 values, seconds). Memory: two bytes per point (accepted, seen), eight per
 * reachable point (the queue, which is the result) and one bit per line and plane.
 * The order of the result is the naive walk's: the loops run in its order and a skipped
 * plane or line holds only points seen before. */

typedef struct walk {
  int k;
  long long nv[SPEC_MAX_KNOBS], stride[SPEC_MAX_KNOBS];
  /* the moves of knobs a <= b stay in the line or plane of the knobs among a, b with two
   * values or more: fam[a][b] = {c, d} (c == d: a line, c < d: a plane, c < 0: none) */
  signed char fam[SPEC_MAX_KNOBS][SPEC_MAX_KNOBS][2];
  long long base[SPEC_MAX_KNOBS][SPEC_MAX_KNOBS]; /* first bit of a line (c, c) or plane */
  long long nbits;
  const unsigned char *first_broken; /* the space's: SPACE_ACCEPTED marks a legal point */
  unsigned char *seen, *done;
  long long *queue, tail;
} walk;

/* Which line or plane the moves of a and b stay in, and where its bits start. */
static void walk_layout(walk *w, long long size) {
  for (int a = 0; a < w->k; a++)
    for (int b = a; b < w->k; b++) {
      int c = w->nv[a] > 1 ? a : b, d = w->nv[b] > 1 ? b : a;
      if (w->nv[c] < 2) c = d = -1;
      w->fam[a][b][0] = (signed char)c;
      w->fam[a][b][1] = (signed char)d;
      if (c < 0 || a != c || b != d) continue;
      w->base[c][d] = w->nbits; /* each line and plane laid out once, from its own (a, b) */
      w->nbits += size / (c == d ? w->nv[c] : w->nv[c] * w->nv[d]);
    }
}

/* The bit of the line or plane (c, d) through the point whose digits before knob j form the
 * number hi[j] and after it lo[j]. */
static long long fam_bit(const walk *w, int c, int d, const long long *hi, const long long *lo) {
  if (c == d) return w->base[c][c] + hi[c] * w->stride[c] + lo[c];
  long long between = w->stride[c] / (w->stride[d] * w->nv[d]); /* values of the knobs in between */
  long long mid = hi[d] - hi[c + 1] * between;
  return w->base[c][d] + (hi[c] * between + mid) * w->stride[d] + lo[d];
}

static void walk_add(walk *w, long long i) {
  if (w->first_broken[i] == SPACE_ACCEPTED && !w->seen[i]) {
    w->seen[i] = 1;
    w->queue[w->tail++] = i;
  }
}

/* One visit, in the naive walk's order, skipping the lines and planes looked at before. */
static void walk_visit(walk *w, long long idx) {
  long long d[SPEC_MAX_KNOBS], hi[SPEC_MAX_KNOBS + 1], lo[SPEC_MAX_KNOBS];
  unsigned char skip[SPEC_MAX_KNOBS][SPEC_MAX_KNOBS];
  long long bit[SPEC_MAX_KNOBS][SPEC_MAX_KNOBS];
  hi[0] = 0;
  for (int j = 0; j < w->k; j++) {
    d[j] = idx / w->stride[j] % w->nv[j];
    hi[j + 1] = hi[j] * w->nv[j] + d[j];
    lo[j] = idx % w->stride[j];
  }
  for (int a = 0; a < w->k; a++)
    for (int b = a; b < w->k; b++) {
      int c = w->fam[a][b][0], e = w->fam[a][b][1];
      bit[a][b] = c < 0 ? -1 : fam_bit(w, c, e, hi, lo);
      skip[a][b] = c < 0 || (w->done[bit[a][b] >> 3] >> (bit[a][b] & 7) & 1);
    }
  for (int a = 0; a < w->k; a++) {
    int live[SPEC_MAX_KNOBS], n = 0;
    for (int b = a; b < w->k; b++)
      if (!skip[a][b]) live[n++] = b;
    for (long long va = 0; n && va < w->nv[a]; va++) {
      long long ia = idx + (va - d[a]) * w->stride[a];
      for (int i = 0; i < n; i++) {
        int b = live[i];
        if (b == a) walk_add(w, ia);
        for (long long vb = 0; b != a && vb < w->nv[b]; vb++)
          walk_add(w, ia + (vb - d[b]) * w->stride[b]);
      }
    }
  }
  for (int a = 0; a < w->k; a++)
    for (int b = a; b < w->k; b++)
      if (bit[a][b] >= 0) w->done[bit[a][b] >> 3] |= (unsigned char)(1u << (bit[a][b] & 7));
}

static int reach(const campaign *c, space_view *v, tf_err *e) {
  const spec *s = &c->tmpl;
  walk w = {.k = s->nknobs, .first_broken = v->first_broken};
  for (int j = w.k - 1; j >= 0; j--) {
    w.nv[j] = s->knobs[j].nvalues;
    w.stride[j] = j == w.k - 1 ? 1 : w.stride[j + 1] * w.nv[j + 1];
  }
  walk_layout(&w, v->size);
  w.seen = calloc((size_t)v->size, 1);
  w.done = calloc((size_t)(w.nbits / 8 + 1), 1);
  w.queue = malloc((size_t)v->accepted * sizeof *w.queue + sizeof *w.queue);
  if (!w.seen || !w.done || !w.queue) {
    free(w.seen);
    free(w.done);
    free(w.queue);
    return tf_fail(e, TF_EXIT_FAIL, "out of memory enumerating %lld configurations", v->size);
  }
  long long start = config_to_index(v, &c->start);
  w.seen[start] = 1;
  w.queue[w.tail++] = start;
  for (long long head = 0; head < w.tail; head++) walk_visit(&w, w.queue[head]);
  free(w.seen);
  free(w.done);
  v->reach = w.queue; /* the queue, in visiting order, is the result */
  v->nreachable = v->nall = (int)w.tail;
  return 0;
}

/* ---- every constraint at every point ----
 *
 * A constraint's expression reads only the knobs it names (and the problem's dimensions, fixed
 * here), so its verdict at a point is its verdict at that point's values of those knobs. Each
 * constraint is evaluated once per combination of its own knobs' values, into a table, and
 * each point looks its verdicts up: matmul's 37 constraints name three or four of its 13 knobs
 * each, and its 1.1 million points took 2.4 s to evaluate one by one. */

_Static_assert(SPEC_MAX_CONSTRAINTS <= SPACE_ACCEPTED,
               "first_broken holds a constraint's index in a byte, SPACE_ACCEPTED apart");

enum { PASSES, REFUSES, FAILS }; /* a verdict; FAILS: the expression cannot be evaluated */

typedef struct verdicts {
  int nk, knob[SPEC_MAX_KNOBS];   /* the knobs it names */
  long long stride[SPEC_MAX_KNOBS]; /* each one's value index times this, summed: the entry */
  unsigned char *v;
} verdicts;

/* Constraint k's table; -1 when its names cannot be told (then every point evaluates it). */
static int tabulate(const campaign *c, int k, verdicts *t) {
  const spec *s = &c->tmpl;
  unsigned char used[SPEC_MAX_KNOBS + SPEC_MAX_DIMS] = {0};
  memset(t, 0, sizeof *t);
  if (expr_slots(s->cons[k].e, used, SPEC_MAX_KNOBS + SPEC_MAX_DIMS)) return -1;
  long long n = 1;
  for (int j = s->nknobs - 1; j >= 0; j--)
    if (used[j]) {
      t->knob[t->nk] = j;
      t->stride[t->nk++] = n;
      n *= s->knobs[j].nvalues;
    }
  if (!(t->v = malloc((size_t)n))) return -1;
  config cfg = c->start; /* knobs it does not name keep any value */
  for (long long x = 0; x < n; x++) {
    for (int i = 0; i < t->nk; i++) {
      const spec_knob *kn = &s->knobs[t->knob[i]];
      cfg.v[t->knob[i]] = kn->values[x / t->stride[i] % kn->nvalues];
    }
    long long val;
    tf_err ignored = {0}; /* a failure is told again, with its point, by check_all */
    t->v[x] = spec_eval(s, s->cons[k].e, c->dims, &cfg, &val, &ignored) ? FAILS
              : val == 0                                               ? REFUSES
                                                                       : PASSES;
  }
  return 0;
}

/* v->first_broken[i]: the first constraint point i breaks, or SPACE_ACCEPTED; refused_by and
 * accepted counted. A point where a constraint cannot be evaluated fails as
 * spec_check_all does there (the first such point). */
static int check_all(const campaign *c, space_view *v, tf_err *e) {
  const spec *s = &c->tmpl;
  verdicts *t = calloc((size_t)s->nconstraints + 1, sizeof *t); /* as many as it declares */
  if (!t) return tf_fail(e, TF_EXIT_FAIL, "out of memory");
  int whole = 1, rc = 0;
  for (int k = 0; k < s->nconstraints; k++) whole &= tabulate(c, k, &t[k]) == 0;
  int d[SPEC_MAX_KNOBS] = {0}; /* the point's value indices, the last knob turning fastest */
  for (long long i = 0; i < v->size && rc == 0; i++) {
    unsigned char broken[SPEC_MAX_CONSTRAINTS];
    int fails = !whole;
    for (int k = 0; k < s->nconstraints && !fails; k++) {
      long long x = 0;
      for (int j = 0; j < t[k].nk; j++) x += d[t[k].knob[j]] * t[k].stride[j];
      broken[k] = t[k].v[x] == REFUSES;
      fails = t[k].v[x] == FAILS;
    }
    if (fails) {
      config cfg;
      space_config_at(s, i, &cfg);
      rc = spec_check_all(s, c->dims, &cfg, broken, e);
    }
    v->first_broken[i] = SPACE_ACCEPTED;
    for (int k = s->nconstraints - 1; k >= 0 && rc == 0; k--)
      if (broken[k]) {
        v->refused_by[k]++;
        v->first_broken[i] = (unsigned char)k;
      }
    v->accepted += v->first_broken[i] == SPACE_ACCEPTED && rc == 0;
    for (int j = s->nknobs - 1; j >= 0 && ++d[j] == s->knobs[j].nvalues; j--) d[j] = 0;
  }
  for (int k = 0; k < s->nconstraints; k++) free(t[k].v);
  free(t);
  return rc;
}

/* What looking at a space costs, in steps of about the same price (3 to 6 ns here): per point,
 * its knobs decoded, its constraints evaluated (a step per constraint and per node of its
 * expression) and the walk (two per line and plane through it, see above). */
static long long space_steps(const spec *s, long long size) {
  long long per_point = 1 + s->nknobs + s->nconstraints, k = 0;
  for (int i = 0; i < s->nconstraints; i++) per_point += expr_nodes(s->cons[i].e);
  for (int j = 0; j < s->nknobs; j++) k += s->knobs[j].nvalues > 1;
  return size * (per_point + k * (k + 1));
}

int space_enumerate(const campaign *c, space_view *v, tf_err *e) {
  const spec *s = &c->tmpl;
  memset(v, 0, sizeof *v);
  v->s = s;
  v->size = 1;
  for (int k = 0; k < s->nknobs; k++) {
    v->size *= s->knobs[k].nvalues;
    if (v->size > SPACE_MAX)
      return tf_fail(e, TF_EXIT_INPUT, "template '%s': the knob space has more than %lld points",
                     s->path, SPACE_MAX);
  }
  long long steps = space_steps(s, v->size);
  if (steps > SPACE_MAX_STEPS)
    return tf_fail(e, TF_EXIT_INPUT,
                   "template '%s': checking its %lld configurations against %d constraints and "
                   "walking them would take %lld steps, more than the limit of %lld (about %d s "
                   "here): fewer knobs, values or constraints",
                   s->path, v->size, s->nconstraints, steps, SPACE_MAX_STEPS, SPACE_MAX_SECONDS);
  memset(v->index_of, -1, sizeof v->index_of);
  for (int k = 0; k < s->nknobs; k++)
    for (int j = 0; j < s->knobs[k].nvalues; j++)
      if (s->knobs[k].values[j] >= 0 && s->knobs[k].values[j] < SPACE_DIRECT &&
          v->index_of[k][s->knobs[k].values[j]] < 0) /* a value given twice: its first index */
        v->index_of[k][s->knobs[k].values[j]] = (signed char)j;
  v->first_broken = malloc((size_t)v->size);
  if (!v->first_broken) return tf_fail(e, TF_EXIT_FAIL, "out of memory");
  int rc = check_all(c, v, e);
  if (rc == 0) rc = reach(c, v, e);
  if (rc) space_release(v);
  return rc;
}

void space_release(space_view *v) {
  free(v->reach);
  v->reach = NULL;
  free(v->first_broken);
  v->first_broken = NULL;
}

