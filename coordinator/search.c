/* search: one device's search as a state machine (coordinator/search.h).
 *
 * search_next reads the state and says what comes next; search_apply is the only code that
 * changes it, from the facts of a record. The live loop applies the record it has just
 * written, resume applies the records it reads back: one path, so a resumed search cannot
 * drift from the one that was interrupted. */
#include "coordinator/search.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define EXHAUSTED "the space around best is exhausted (every move the proposer makes was tried)"

int search_config_of(const campaign *c, int ordinal, search_config *out, tf_err *e) {
  const char *known = NULL;
  memset(out, 0, sizeof *out);
  out->proposer = proposer_find(c->search.proposer, &known);
  if (!out->proposer)
    return tf_fail(e, TF_EXIT_INPUT, "campaign '%s': key 'search.proposer': no proposer '%s' "
                   "(known: %s)", c->path, c->search.proposer, known);
  if (proposer_params(out->proposer, c->path, c->search.nparams, c->search.param_key,
                      c->search.param_value, out->param, e))
    return -1;
  out->tmpl = &c->tmpl;
  out->dims = c->dims;
  out->start = c->start;
  out->search = c->search;
  out->max_requeue = c->decide.max_requeue;
  out->canary = c->canary;
  out->seed = c->measure.seed;
  out->ordinal = ordinal;
  return 0;
}

/* ---------------------------------------------------------------- launches */

/* Whether cand's launch can be computed at the problem (spec_launch: geometry, shared memory,
 * buffer sizes, integer arguments): 0 when it can, or when there is no template to ask; 1 when
 * not, with `key` the template's key that fails and `why` the failure from that key on. The
 * template's path is cut off: the record is the same on every machine. */
static int launch_fails(const search *s, const config *cand, char *key, size_t klen, char *why,
                        size_t wlen) {
  launch_geom g;
  tf_err e = {0};
  if (!s->cfg.tmpl || (s->launches && tried_has(s->launches, cand))) return 0;
  if (spec_launch(s->cfg.tmpl, s->cfg.dims, cand, &g, &e) == 0) {
    if (s->launches) tried_add(s->launches, cand); /* out of memory: only not kept */
    return 0;
  }
  char file[SPEC_PATH + 8];
  snprintf(file, sizeof file, "'%s': ", s->cfg.tmpl->path);
  const char *text = strstr(e.msg, file);
  text = text ? text + strlen(file) : e.msg;
  size_t n = strlen(text) < wlen ? strlen(text) : wlen - 1; /* the end may be cut */
  memcpy(why, text, n);
  why[n] = '\0';
  n = strncmp(text, "key '", 5) == 0 ? strcspn(text + 5, "'") : 0;
  if (n > 0) snprintf(key, klen, "%.*s", (int)n, text + 5);
  else snprintf(key, klen, "launch");
  return 1;
}

/* ---------------------------------------------------------------- segments */

static unsigned long long segment_seed(const search *s, int segment) {
  return s->cfg.seed ^ (unsigned long long)s->cfg.ordinal ^
         (unsigned long long)segment * 0x9e3779b97f4a7c15ULL;
}

/* Segment k begins at `start`: a fresh proposer (its own seeded knob order, no payoff, no near
 * misses), or one that carries what it learned, reseeded (proposer_ops.segment); the tried set
 * kept so that no configuration is measured twice as new. */
static int begin_segment(search *s, int k, const config *start, tf_err *e) {
  s->segment = k;
  s->seg_keeps = 0;
  s->stale = 0;
  s->duel = s->dueled = 0;
  snprintf(s->seg_why, sizeof s->seg_why, "its search had stalled before this run");
  s->best = *start;
  const proposer_ops *ops = s->cfg.proposer;
  if (s->cfg.tmpl && k > 0 && ops->segment) ops->segment(&s->prop, segment_seed(s, k));
  else if (s->cfg.tmpl)
    ops->init(&s->prop, s->cfg.tmpl, s->cfg.dims, segment_seed(s, k), s->cfg.param);
  s->prop.memo = s->memo;
  return tried_add(&s->tried, start) ? tf_fail(e, TF_EXIT_FAIL, "out of memory") : 0;
}

int search_init(search *s, const search_config *cfg, tf_err *e) {
  memset(s, 0, sizeof *s);
  s->cfg = *cfg;
  s->memo = calloc(1, sizeof *s->memo);
  s->launches = calloc(1, sizeof *s->launches);
  if (!s->memo || !s->launches) return tf_fail(e, TF_EXIT_FAIL, "out of memory");
  s->memo->space = cfg->space;
  s->best_gen = s->champion_gen = -1;
  trust_init(&s->trust, &cfg->canary, cfg->search.fresh_every);
  return begin_segment(s, 0, &cfg->start, e);
}

void search_release(search *s) {
  tried_release(&s->tried);
  if (s->memo) check_memo_release(s->memo);
  free(s->memo);
  s->memo = NULL;
  if (s->launches) tried_release(s->launches);
  free(s->launches);
  s->launches = NULL;
}

void search_begin_run(search *s) { trust_begin_run(&s->trust); }

const config *search_answer(const search *s, double *us, long long *gen) {
  int champion = s->segment > 0 && !s->done;
  long long g = champion ? s->champion_gen : s->best_gen;
  if (us) *us = g < 0 ? NAN : champion ? s->champion_us : s->best_us;
  if (gen) *gen = g;
  return champion ? &s->champion : &s->best;
}

/* ---------------------------------------------------------------- next */

static int measure(const config *best, const config *cand, int duel, search_step *st) {
  st->kind = SEARCH_MEASURE; /* its job_id: search_next sets every step's */
  st->best = *best;
  st->cand = *cand;
  st->duel = duel;
  return 0;
}

/* The restarted search's best (new) against the champion (best), measured like any
 * generation. */
static int duel_step(const search *s, search_step *st) {
  return measure(&s->champion, &s->best, 1, st);
}

int search_none_ran(const search *s) {
  return s->last_job > 0 && s->ran == 0;
}

static int end_step(const search *s, const char *why, search_step *st) {
  st->kind = SEARCH_END;
  st->generation = s->generation;
  st->best = s->segment > 0 ? s->champion : s->best; /* the answer is the champion */
  if (search_none_ran(s))
    snprintf(st->reason, sizeof st->reason, "%s; no candidate ran: all %lld jobs ended in a "
             "fault or an error, so the start stands unmeasured, not as a best", why,
             s->last_job);
  else
    snprintf(st->reason, sizeof st->reason, "%s", why);
  return 0;
}

static int due_for_duel(const search *s) {
  return s->segment > 0 && s->seg_keeps > 0 && !s->dueled;
}

/* The next restart's start: the proposer's draw, passing over configurations whose launch
 * cannot be computed (a search from one could measure nothing). 0 when there is none. */
static int restart_start(const search *s, config *start) {
  char key[SPEC_NAME], why[512];
  tried_set passed;
  tried_over(&passed, &s->tried);
  int found = 0;
  for (int draw = 0; draw < 64; draw++) {
    if (!s->cfg.proposer->restart(&s->prop, &passed, segment_seed(s, s->segment + 1), start))
      break;
    if (!launch_fails(s, start, key, sizeof key, why, sizeof why)) {
      found = 1;
      break;
    }
    if (tried_add(&passed, start)) break;
  }
  tried_release(&passed);
  return found;
}

/* A segment stalled (why): its duel if it kept something, then a restart or the end. */
static int segment_over(const search *s, const char *why, search_step *st) {
  if (due_for_duel(s)) return duel_step(s, st);
  if (s->segment >= s->cfg.search.restarts) return end_step(s, why, st);
  if (!restart_start(s, &st->start))
    return end_step(s, "no legal configuration left untried to restart from", st);
  st->kind = SEARCH_RESTART;
  st->generation = s->generation;
  st->restart = s->segment + 1;
  st->champion = s->segment == 0 ? s->best : s->champion;
  st->champion_us = s->segment == 0 ? s->best_us : s->champion_us;
  snprintf(st->why, sizeof st->why, "%s", why);
  snprintf(st->reason, sizeof st->reason, "restart %d of %d from a random legal configuration "
           "never tried here: the last search ended (%s)", st->restart,
           s->cfg.search.restarts, why);
  return 0;
}

/* Propose; the first candidate that passes every constraint and whose launch computes is
 * measured, one that breaks a constraint or whose launch fails is refused (the proposer sees
 * it tried once its refusal is applied). */
static int propose(const search *s, search_step *st, tf_err *e) {
  const search_opts *so = &s->cfg.search;
  int nchanged, bad;
  if (!s->cfg.proposer->next(&s->prop, &s->best, &s->tried, s->stale >= so->two_knob_after,
                             &st->cand, &nchanged))
    return segment_over(s, EXHAUSTED, st);
  if (check_memo_check(s->memo, s->cfg.tmpl, s->cfg.dims, &st->cand, &bad, e)) return -1;
  if (bad < 0 && !launch_fails(s, &st->cand, st->key, sizeof st->key, st->reason,
                               sizeof st->reason))
    return measure(&s->best, &st->cand, 0, st);
  st->kind = SEARCH_REFUSE;
  st->best = s->best;
  st->constraint = bad >= 0 ? bad : SEARCH_NO_LAUNCH;
  return 0;
}

static int budget_spent(const search *s, search_step *st) {
  char why[160];
  snprintf(why, sizeof why, "budget of %d generations spent", s->cfg.search.budget);
  if (due_for_duel(s)) return duel_step(s, st); /* past the budget by one */
  return end_step(s, why, st);
}

int search_next(const search *s, search_step *st, tf_err *e) {
  const search_opts *so = &s->cfg.search;
  char why[200];
  memset(st, 0, sizeof *st);
  st->generation = s->generation + 1;
  st->segment = s->segment;
  st->canary = s->trust.canary_due;
  st->fresh = s->trust.fresh_due;
  st->job_id = s->last_job + 1;
  if (s->done) return st->kind = SEARCH_DONE, 0;
  if (!s->cfg.tmpl) return tf_fail(e, TF_EXIT_FAIL, "a search read back only proposes nothing");
  if (s->trust.given_up) {
    trust_why(&s->trust, why, sizeof why);
    return end_step(s, why, st);
  }
  /* measured where no canary vouched for the process: not a decision */
  if (s->again) return measure(&s->best, &s->cand, s->duel, st);
  if (s->duel && s->requeues > 0) return measure(&s->best, &s->cand, 1, st); /* past the budget */
  if (s->measured >= so->budget) return budget_spent(s, st);
  if (s->requeues > 0) return measure(&s->best, &s->cand, 0, st); /* a noisy one again */
  if (so->fixed) return measure(&s->best, &so->pair, 0, st); /* a study: best never moves */
  if (s->dueled) return segment_over(s, s->seg_why, st);
  if (s->stale >= so->max_stale) {
    snprintf(why, sizeof why, "%d generations in a row without a keep (max_stale)", s->stale);
    return segment_over(s, why, st);
  }
  return propose(s, st, e);
}

/* ---------------------------------------------------------------- apply */

static void config_text(const search *s, const config *c, char *buf, size_t len) {
  if (s->cfg.tmpl) {
    spec_config_str(s->cfg.tmpl, c, buf, len);
    return;
  }
  size_t n = 0;
  buf[0] = '\0';
  for (int k = 0; k < c->n && n < len; k++)
    n += (size_t)snprintf(buf + n, len - n, "%s%lld", k ? " " : "", c->v[k]);
}

/* The record's configuration at `key` must be `want` (the search's own state). */
static int expect(const search *s, const char *key, const config *got, const config *want,
                  tf_err *e) {
  if (s->cfg.loose || config_equal(got, want)) return 0;
  char a[512], b[512];
  config_text(s, got, a, sizeof a);
  config_text(s, want, b, sizeof b);
  return tf_fail(e, TF_EXIT_INPUT, "key '%s' is %s, but the records before it lead to %s", key,
                 a, b);
}

static int check_place(const search *s, const search_fact *f, tf_err *e) {
  if (f->generation != s->generation + 1)
    return tf_fail(e, TF_EXIT_INPUT, "key 'generation' must be %lld, the one after the previous "
                   "record", s->generation + 1);
  if (f->segment != s->segment)
    return tf_fail(e, TF_EXIT_INPUT, "key 'restart' is %d, but the records before it are in "
                   "restart %d", f->segment, s->segment);
  return 0;
}

/* 1 if cand breaks a constraint at dims (0 without a template: nothing to check). */
static int breaks(const search *s, const config *cand, tf_err *e) {
  int bad = -1;
  if (!s->cfg.tmpl) return 0;
  if (check_memo_check(s->memo, s->cfg.tmpl, s->cfg.dims, cand, &bad, e)) return -1;
  return bad >= 0;
}

static int apply_refusal(search *s, const search_fact *f, tf_err *e) {
  if (check_place(s, f, e)) return -1;
  if (f->duel || s->duel)
    return tf_fail(e, TF_EXIT_INPUT, "a static refusal in a duel (a duel measures the "
                   "restarted search's best, which passed every constraint)");
  if (s->cfg.loose) s->best = f->best;
  if (expect(s, "best", &f->best, &s->best, e)) return -1;
  char key[SPEC_NAME], why[512];
  int b = breaks(s, &f->cand, e);
  if (b < 0) return -1;
  if (!b && s->cfg.tmpl && !launch_fails(s, &f->cand, key, sizeof key, why, sizeof why))
    return tf_fail(e, TF_EXIT_INPUT, "key 'new' breaks no constraint and its launch computes, "
                   "yet the record refuses it statically");
  s->generation = f->generation;
  s->refused++;
  return tried_add(&s->tried, &f->cand) ? tf_fail(e, TF_EXIT_FAIL, "out of memory") : 0;
}

/* The first record of a duel: the restarted search's best against the champion. */
static int begin_duel(search *s, const search_fact *f, tf_err *e) {
  if (!due_for_duel(s))
    return tf_fail(e, TF_EXIT_INPUT, "key 'duel': no duel is due (a duel ends a restarted "
                   "search that kept something, once)");
  if (s->measured < s->cfg.search.budget && s->stale >= s->cfg.search.max_stale)
    snprintf(s->seg_why, sizeof s->seg_why, "%d generations in a row without a keep (max_stale)",
             s->stale); /* it stalled: the restart after the duel says why */
  else if (s->measured < s->cfg.search.budget)
    snprintf(s->seg_why, sizeof s->seg_why, "%s", EXHAUSTED);
  s->duel = 1;
  s->requeues = 0; /* a candidate cut short hands none of its re-measurements on */
  s->cand = s->best;
  s->best = s->champion;
  return expect(s, "new", &f->cand, &s->cand, e);
}

/* The facts of a measured generation that concern its process. */
static trust_fact trust_fact_of(const search_fact *f) {
  return (trust_fact){.status = f->status, .correct = f->correct, .child = f->child,
                      .canary = f->canary, .untrusted = f->untrusted,
                      .asked_canary = f->asked_canary, .asked_fresh = f->asked_fresh};
}

/* A decided (trusted) generation. */
static void count(search *s, const search_fact *f) {
  int kept = f->decision == DECISION_KEEP;
  if (f->decision == DECISION_REFUSED && s->requeues < s->cfg.max_requeue) {
    s->requeues++; /* noisy: measure the same candidate again */
    s->refused++;
    return;
  }
  s->requeues = 0;
  if (kept) {
    s->keeps++;
    s->stale = 0;
  } else {
    s->stale++;
    s->faults += f->status != RESULT_OK;
    s->rejects += f->decision == DECISION_REJECT;
    s->near_rejects += f->decision == DECISION_REJECT && f->ratio < PROPOSE_NEAR_MISS;
    s->refused += f->decision == DECISION_REFUSED;
    s->ambiguous += f->decision == DECISION_AMBIGUOUS;
  }
  /* a refused generation's ratio is not trusted (its control drifted or it was noisy) */
  int trusted = f->decision == DECISION_REJECT || f->decision == DECISION_AMBIGUOUS;
  propose_obs o = {kept, trusted ? f->ratio : NAN, kept || trusted ? f->best_us : NAN,
                   kept || trusted ? f->new_us : NAN};
  if (s->cfg.tmpl && !s->cfg.search.fixed)
    s->cfg.proposer->feedback(&s->prop, &s->best, &f->cand, &o);
  if (isfinite(f->best_us)) {
    s->best_us = kept ? f->new_us : f->best_us;
    s->best_gen = f->generation;
    if (s->start_us == 0) s->start_us = f->best_us;
  }
  if (s->cfg.search.fixed) {
    s->stale = 0; /* nothing to exhaust: the budget ends a fixed-pair run */
    return;
  }
  if (kept) {
    s->best = f->cand;
    s->seg_keeps++;
  }
  if (s->duel) {
    s->duel = 0;
    s->dueled = 1;
    s->champion = s->best;
    if (isfinite(f->best_us)) { /* a faulted duel measured nothing */
      s->champion_us = s->best_us;
      s->champion_gen = s->best_gen;
    }
  }
}

static int apply_measured(search *s, const search_fact *f, tf_err *e) {
  if (check_place(s, f, e)) return -1;
  if (f->duel && !s->duel && begin_duel(s, f, e)) return -1;
  if (!f->duel && s->duel)
    return tf_fail(e, TF_EXIT_INPUT, "key 'duel' is missing: the duel in progress is measured "
                   "before anything else");
  if (s->cfg.loose) s->best = f->best;
  if (expect(s, "best", &f->best, &s->best, e)) return -1;
  if (s->cfg.search.fixed && s->cfg.tmpl && expect(s, "new", &f->cand, &s->cfg.search.pair, e))
    return -1;
  char key[SPEC_NAME], why[512];
  int b = breaks(s, &f->cand, e);
  if (b) return b < 0 ? -1 : tf_fail(e, TF_EXIT_INPUT, "key 'new' breaks a constraint, so it "
                                     "was never measured");
  if (launch_fails(s, &f->cand, key, sizeof key, why, sizeof why))
    return tf_fail(e, TF_EXIT_INPUT, "key 'new': its launch cannot be computed (%s), so it was "
                   "never measured", why);
  if (f->job_id <= s->last_job)
    return tf_fail(e, TF_EXIT_INPUT, "key 'job.id' is %lld, not after the job before it (%lld)",
                   f->job_id, s->last_job);
  s->last_job = f->job_id;
  if (tried_add(&s->tried, &f->cand)) return tf_fail(e, TF_EXIT_FAIL, "out of memory");
  s->generation = f->generation;
  s->cand = f->cand;
  trust_fact tf = trust_fact_of(f);
  trust_apply(&s->trust, &tf);
  s->ran += f->status == RESULT_OK;
  if (f->untrusted) { /* measured again, unless the trust gave up: then the search ends */
    s->refused++;
    s->again = !s->trust.given_up;
    return 0;
  }
  s->again = 0;
  s->measured++;
  count(s, f);
  return 0;
}

static int apply_restart(search *s, const search_fact *f, tf_err *e) {
  if (f->restart != s->segment + 1)
    return tf_fail(e, TF_EXIT_INPUT, "key 'restart' must be %d, the one after the previous "
                   "restart", s->segment + 1);
  if (f->generation != s->generation)
    return tf_fail(e, TF_EXIT_INPUT, "key 'generation' must be %lld, the last generation",
                   s->generation);
  if (due_for_duel(s) || s->duel)
    return tf_fail(e, TF_EXIT_INPUT, "a restart before the duel of the search it ends");
  if (expect(s, "champion", &f->champion, s->segment == 0 ? &s->best : &s->champion, e))
    return -1;
  char key[SPEC_NAME], why[512];
  if (s->cfg.tmpl && launch_fails(s, &f->start, key, sizeof key, why, sizeof why))
    return tf_fail(e, TF_EXIT_INPUT, "key 'start': its launch cannot be computed (%s), so no "
                   "restart begins there", why);
  if (s->segment == 0) s->champion_gen = s->best_gen;
  s->champion = f->champion;
  s->champion_us = f->champion_us;
  return begin_segment(s, f->restart, &f->start, e);
}

static int apply_end(search *s, const search_fact *f, tf_err *e) {
  if (f->generation != s->generation)
    return tf_fail(e, TF_EXIT_INPUT, "key 'generation' must be %lld, the last generation",
                   s->generation);
  if (s->segment > 0) { /* the answer is the champion, not the last segment's best */
    s->ended_best = s->best;
    s->ended_best_us = s->best_us;
    s->ended_best_gen = s->best_gen;
    s->best = s->champion;
    s->best_us = s->champion_us;
    s->best_gen = s->champion_gen;
  }
  if (s->cfg.loose) s->best = f->best;
  if (expect(s, "best", &f->best, &s->best, e)) return -1;
  snprintf(s->end_reason, sizeof s->end_reason, "%s", f->reason);
  s->done = 1;
  s->again = 0;
  return 0;
}

/* The search as it stood before its end: a restarted search takes its own best back. */
static void unend(search *s) {
  if (s->segment > 0) {
    s->best = s->ended_best;
    s->best_us = s->ended_best_us;
    s->best_gen = s->ended_best_gen;
  }
  s->done = 0;
  s->end_reason[0] = '\0';
}

static int apply_reopen(search *s, const search_fact *f, tf_err *e) {
  if (!s->done)
    return tf_fail(e, TF_EXIT_INPUT, "a reopen record where the search had not ended");
  if (f->generation != s->generation)
    return tf_fail(e, TF_EXIT_INPUT, "key 'generation' must be %lld, the last generation",
                   s->generation);
  unend(s);
  return 0;
}

int search_would_go_on(const search *s, search_step *st, tf_err *e) {
  if (!s->done) return 0;
  search t = *s; /* search_next reads the state only: the tried set may be shared */
  unend(&t);
  if (search_next(&t, st, e)) return -1;
  return st->kind != SEARCH_END && st->kind != SEARCH_DONE;
}

int search_apply(search *s, const search_fact *f, tf_err *e) {
  if (f->kind == SEARCH_REOPEN) return apply_reopen(s, f, e);
  if (s->done)
    return tf_fail(e, TF_EXIT_INPUT, "a record after the search's end record");
  switch (f->kind) {
    case SEARCH_MEASURE: return apply_measured(s, f, e);
    case SEARCH_REFUSE: return apply_refusal(s, f, e);
    case SEARCH_RESTART: return apply_restart(s, f, e);
    case SEARCH_END: return apply_end(s, f, e);
    default: return tf_fail(e, TF_EXIT_FAIL, "search: no such fact");
  }
}

/* ---------------------------------------------------------------- peek */

/* The order: the order of need. The i-th guess of either path is the job after i more
 * generations, so the two paths alternate (rejected first: most generations reject), and a
 * compile pool with few cores, or at the start of a search, when nothing is compiled yet and
 * keeps come often, has both possible next jobs before anything deeper (docs/design.md,
 * "Compiling ahead"). Later the lists of one
 * generation and the next overlap (the same best, one candidate further), the rejected
 * path's programs are mostly compiled already, and what a pool starts is the deepest rejected
 * guess and the kept path. Each path assumes every later candidate is rejected: after a
 * rejection the coordinate search's next moves are known, after a near miss or a keep not. */

/* A copy of s that can be changed while s stays as it is: its tried set lies over s's. */
static void clone(const search *s, search *c) {
  *c = *s;
  tried_over(&c->tried, &s->tried);
}

/* The fact of step st had it been decided `d` in a process the canary cleared. */
static void assumed(const search *s, const search_step *st, decision_kind d, search_fact *f) {
  memset(f, 0, sizeof *f);
  f->kind = st->kind;
  f->generation = st->generation;
  f->segment = st->segment;
  f->duel = st->duel;
  f->best = st->best;
  f->cand = st->cand;
  if (st->kind == SEARCH_RESTART) {
    f->restart = st->restart;
    f->champion = st->champion;
    f->champion_us = st->champion_us;
    f->start = st->start;
  }
  if (st->kind != SEARCH_MEASURE) return;
  f->decision = d;
  f->status = RESULT_OK;
  f->correct = 1;
  f->ratio = f->best_us = f->new_us = NAN;
  f->canary = st->canary ? TRUST_CANARY_OK : TRUST_NO_CANARY;
  f->child = st->canary ? s->trust.vetted_child + 1 : s->trust.vetted_child;
  f->asked_canary = st->canary;
  f->asked_fresh = st->fresh;
  f->job_id = st->job_id;
}

static int guessed(const search_guess *out, int n, const config *best, const config *cand) {
  for (int i = 0; i < n; i++)
    if (config_equal(&out[i].best, best) && config_equal(&out[i].cand, cand)) return 1;
  return 0;
}

/* A guess with how likely it is to be asked for, and where it was found (ties keep that
 * order, so the list is the same on every run). */
typedef struct weighted {
  search_guess g;
  double w;
  int seq;
} weighted;

static int is_pending(const search_step *pending, const config *best, const config *cand) {
  return pending && config_equal(best, &pending->best) && config_equal(cand, &pending->cand);
}

/* The first `depth` measurements of c (not changed) had step st been kept (`near` 0) or
 * rejected as a near miss (`near` 1: a ratio of 1, as most near misses measure within a percent
 * of best; it opens informed moves that a plain reject does not, propose.h), each after the
 * ones before it were rejected: how many were written to out. */
static int branch(const search *c, const search_step *st, int near, int depth,
                  search_guess *out) {
  search b;
  tf_err ignored = {0};
  search_fact f;
  int found = 0;
  clone(c, &b);
  assumed(&b, st, near ? DECISION_REJECT : DECISION_KEEP, &f);
  if (near) f.ratio = 1.0;
  for (int steps = 0;
       found < depth && steps < 8 * depth + 64 && search_apply(&b, &f, &ignored) == 0; steps++) {
    search_step next;
    if (search_next(&b, &next, &ignored) || next.kind == SEARCH_END || next.kind == SEARCH_DONE)
      break;
    if (next.kind == SEARCH_MEASURE) out[found++] = (search_guess){next.best, next.cand};
    assumed(&b, &next, DECISION_REJECT, &f); /* rejected, a static refusal or a restart: on */
  }
  tried_release(&b.tried);
  return found;
}

/* The chances a walk ahead weighs its guesses by: p that a generation is kept, q that a
 * rejected one is a near miss. */
typedef struct peek_odds {
  double p, q;
} peek_odds;

/* Append the branch guesses b[0..nb) to out[*k], the j-th weighted w (1 - p)^j. */
static void add_branch(const search_guess *b, int nb, double w, double p, weighted *out,
                       int *k) {
  for (int j = 0; j < nb; j++, w *= 1.0 - p) {
    out[*k] = (weighted){b[j], w, *k};
    ++*k;
  }
}

/* From c (changed), every candidate rejected: up to n guesses appended to out[*k], the i-th
 * weighted w0 (1 - p)^i. With `branches`, each guess's own branches too: the first
 * SEARCH_PEEK_BRANCH guesses after it had it been kept instead, the j-th weighted p (1 - p)^j
 * times its own weight, and had it been rejected as a near miss, (1 - p) q (1 - p)^j times it.
 * A keep or a near miss further down the path thus finds the programs of the generations
 * after it compiled, not only the first: a compile takes several generations. Static
 * refusals and restarts are followed, bounded so that a space of refusals ends the walk. */
static void follow(search *c, const search_step *pending, int n, double w0, peek_odds o,
                   int branches, weighted *out, int *k) {
  tf_err ignored = {0};
  double w = w0;
  for (int got = 0, steps = 0; got < n && steps < 8 * n + 64; steps++) {
    search_step st;
    search_fact f;
    if (search_next(c, &st, &ignored) || st.kind == SEARCH_END || st.kind == SEARCH_DONE) return;
    if (st.kind == SEARCH_MEASURE && !is_pending(pending, &st.best, &st.cand)) {
      search_guess b[SEARCH_PEEK_BRANCH];
      out[*k] = (weighted){{st.best, st.cand}, w, *k};
      ++*k;
      if (branches) {
        add_branch(b, branch(c, &st, 0, SEARCH_PEEK_BRANCH, b), w * o.p, o.p, out, k);
        add_branch(b, branch(c, &st, 1, SEARCH_PEEK_BRANCH, b), w * (1.0 - o.p) * o.q, o.p,
                   out, k);
      }
      w *= 1.0 - o.p;
      got++;
    }
    assumed(c, &st, DECISION_REJECT, &f);
    if (search_apply(c, &f, &ignored)) return;
  }
}

/* s with pending decided d (rejected as a near miss with `near`), or s itself without a
 * pending step, then followed. */
static void path(const search *s, const search_step *pending, decision_kind d, int near, int n,
                 double w0, peek_odds o, int branches, weighted *out, int *k) {
  search c;
  clone(s, &c);
  search_fact f;
  tf_err ignored = {0};
  if (pending) {
    assumed(s, pending, d, &f);
    if (near) f.ratio = 1.0;
  }
  if (!pending || search_apply(&c, &f, &ignored) == 0)
    follow(&c, pending, n, w0, o, branches, out, k);
  tried_release(&c.tried);
}

static int heavier_first(const void *a, const void *b) {
  const weighted *x = a, *y = b;
  if (x->w != y->w) return x->w < y->w ? 1 : -1;
  return (x->seq > y->seq) - (x->seq < y->seq);
}

/* The guesses in the order of how likely each is to be asked for, repeats dropped (a guess
 * found twice keeps its heavier place): with p the chance that a generation is kept and q
 * that a reject is a near miss, the rejected path's i-th guess is needed after i + 1 rejects,
 * (1 - p)^(i+1); the kept path's after a keep and i rejects, p (1 - p)^i; the near-miss
 * path's (1 - p) q (1 - p)^i; the j-th guess (from 0) of the kept branch of the rejected
 * path's i-th, after i + 1 rejects, a keep and j rejects, p (1 - p)^(i+1+j), and of its
 * near-miss branch (1 - p)^(i+1) (1 - p) q (1 - p)^j, for j < SEARCH_PEEK_BRANCH. A pool
 * that compiles the list's head thus spends its cores on the rejects most generations end
 * in, and on the keeps and the moves near misses open in order of their chance, each as early
 * as the path ahead is known. (A near miss changes nothing until the search prefers informed
 * moves: its guesses are then the rejected path's, and drop as repeats.) */
static int by_likelihood(weighted *w, int k, const search_step *pending, search_guess *out) {
  qsort(w, (size_t)k, sizeof *w, heavier_first);
  int n = 0;
  for (int i = 0; i < k; i++) {
    const search_guess *g = &w[i].g;
    if (!is_pending(pending, &g->best, &g->cand) && !guessed(out, n, &g->best, &g->cand))
      out[n++] = *g;
  }
  return n;
}

/* The chance that a generation is kept, from this search's decisions so far (Laplace's rule,
 * so that it is neither 0 nor 1 before there are any). */
double search_keep_chance(const search *s) {
  return (s->keeps + 1.0) / (s->keeps + s->rejects + 2.0);
}

int search_peek(const search *s, const search_step *pending, int n, search_guess *out,
                tf_err *e) {
  /* a fixed pair is the job in flight's program again: nothing new to guess */
  if (n <= 0 || !s->cfg.tmpl || s->done || s->cfg.search.fixed) return 0;
  weighted *w = malloc(sizeof *w * (size_t)(SEARCH_PEEK_PER * n));
  if (!w) return tf_fail(e, TF_EXIT_FAIL, "out of memory");
  int k = 0;
  peek_odds o = {search_keep_chance(s), (s->near_rejects + 1.0) / (s->rejects + 2.0)};
  int measuring = pending && pending->kind == SEARCH_MEASURE;
  path(s, pending, DECISION_REJECT, 0, n, measuring ? 1.0 - o.p : 1.0, o, 1, w, &k);
  if (measuring) {
    path(s, pending, DECISION_KEEP, 0, n, o.p, o, 0, w, &k);
    path(s, pending, DECISION_REJECT, 1, n, (1.0 - o.p) * o.q, o, 0, w, &k);
  }
  k = by_likelihood(w, k, pending, out);
  free(w);
  return k;
}

int search_next_if_rejected(const search *s, const search_step *pending, search_step *next) {
  if (!s->cfg.tmpl || s->done || !pending || pending->kind != SEARCH_MEASURE) return 0;
  search c;
  clone(s, &c);
  search_fact f;
  tf_err ignored = {0};
  int found = 0;
  assumed(s, pending, DECISION_REJECT, &f);
  for (int steps = 0; steps < 256 && search_apply(&c, &f, &ignored) == 0; steps++) {
    if (search_next(&c, next, &ignored)) break;
    if (next->kind != SEARCH_REFUSE) {
      found = next->kind == SEARCH_MEASURE;
      break;
    }
    assumed(&c, next, DECISION_REJECT, &f); /* a static refusal: its record, then on */
  }
  tried_release(&c.tried);
  return found;
}

int search_trusts(const search *s, const search_fact *f) {
  trust_fact tf = trust_fact_of(f);
  return trust_allows(&s->trust, &tf);
}
