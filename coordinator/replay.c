/* replay: a search read back from its ledger (coordinator/replay.h). */
#include "coordinator/replay.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* A configuration of the record: through the template when there is one, else its values in
 * the record's order. */
static int cfg_of(const spec *tmpl, const record_cfg *rc, const char *file, const char *key,
                  config *out, tf_err *e) {
  if (tmpl) return record_cfg_config(tmpl, rc, file, key, out, e);
  memset(out, 0, sizeof *out);
  out->n = rc->n;
  memcpy(out->v, rc->v, sizeof out->v);
  return 0;
}

/* What the job asked of its measure process: a canary first, a fresh process. */
static int job_asked(const record_gen *g, search_fact *f, tf_err *e) {
  job *j = malloc(sizeof *j);
  if (!j) return tf_fail(e, TF_EXIT_FAIL, "out of memory");
  int rc = record_job(g, j, e);
  if (rc == 0) {
    f->asked_canary = j->canary_rounds > 0;
    f->asked_fresh = j->fresh_child;
    f->job_id = j->id;
  }
  free(j);
  return rc;
}

static int generation_fact(const record_gen *g, const spec *tmpl, const char *file,
                           search_fact *f, tf_err *e) {
  f->kind = g->measured ? SEARCH_MEASURE : SEARCH_REFUSE;
  f->generation = g->generation;
  f->segment = g->restart;
  f->duel = g->duel;
  if (cfg_of(tmpl, &g->best, file, "best", &f->best, e) ||
      cfg_of(tmpl, &g->new_cfg, file, "new", &f->cand, e))
    return -1;
  if (!g->measured) return 0;
  f->decision = g->decision;
  f->status = g->res.status;
  f->correct = g->res.correct;
  f->ratio = g->median_ratio;
  f->best_us = record_rounds_median(g, ARM_BEST, 0);
  f->new_us = record_rounds_median(g, ARM_NEW, 0);
  f->child = g->res.child;
  f->canary = !g->has_canary ? TRUST_NO_CANARY
              : g->canary.biased ? TRUST_CANARY_BIASED : TRUST_CANARY_OK;
  f->untrusted = g->untrusted;
  return job_asked(g, f, e);
}

int replay_fact(const record *r, const spec *tmpl, const char *file, search_fact *f, tf_err *e) {
  memset(f, 0, sizeof *f);
  switch (r->kind) {
    case RECORD_GENERATION: return generation_fact(&r->gen, tmpl, file, f, e);
    case RECORD_RESTART:
      f->kind = SEARCH_RESTART;
      f->restart = r->restart.restart;
      f->generation = r->restart.generation;
      f->champion_us = r->restart.champion_us;
      snprintf(f->reason, sizeof f->reason, "%s", r->restart.reason);
      return cfg_of(tmpl, &r->restart.champion, file, "champion", &f->champion, e) ||
                     cfg_of(tmpl, &r->restart.start, file, "start", &f->start, e)
                 ? -1
                 : 0;
    case RECORD_REOPEN:
      f->kind = SEARCH_REOPEN;
      f->generation = r->reopen.generation;
      return 0;
    case RECORD_END:
      f->kind = SEARCH_END;
      f->generation = r->end.generation;
      snprintf(f->reason, sizeof f->reason, "%s", r->end.reason);
      return cfg_of(tmpl, &r->end.best, file, "best", &f->best, e);
    default: return 1;
  }
}

/* ---------------------------------------------------------------- the final best */

void ledger_best_init(ledger_best *b, const spec *tmpl, const char *path) {
  memset(b, 0, sizeof *b);
  b->tmpl = tmpl;
  b->path = path;
}

void ledger_best_release(ledger_best *b) {
  if (b->s) search_release(b->s);
  free(b->s);
  b->s = NULL;
}

/* The header: the search's mode, or (version 1) none, and each record's best as written. */
static void header(ledger_best *b, const record_device *d) {
  search_config *c = &b->cfg;
  memset(c, 0, sizeof *c);
  c->tmpl = NULL; /* read back only: proposes nothing */
  snprintf(c->search.mode, sizeof c->search.mode, "%s", d->mode);
  c->search.fixed = strcmp(d->mode, "aa") == 0 || strcmp(d->mode, "pair") == 0;
  c->loose = d->mode[0] == '\0';
  c->ordinal = d->dev.ordinal;
}

/* The search begins where its first generation record says it stood. */
static int start(ledger_best *b, const search_fact *f, const record_gen *g, tf_err *e) {
  b->names = g->best;
  b->cfg.start = f->best;
  b->s = calloc(1, sizeof *b->s);
  if (!b->s) return tf_fail(e, TF_EXIT_FAIL, "out of memory");
  return search_init(b->s, &b->cfg, e);
}

/* A search read back never knows its campaign's max_requeue but from its jobs. */
static int learn_requeue(ledger_best *b, const record_gen *g, tf_err *e) {
  job *j = malloc(sizeof *j);
  if (!j) return tf_fail(e, TF_EXIT_FAIL, "out of memory");
  int rc = record_job(g, j, e);
  if (rc == 0) b->s->cfg.max_requeue = j->decide.max_requeue;
  b->requeue_known = rc == 0;
  free(j);
  return rc;
}

int ledger_best_add(ledger_best *b, const record *rec, tf_err *e) {
  search_fact f;
  if (rec->kind == RECORD_DEVICE) {
    header(b, &rec->device);
    return 0;
  }
  int rc = replay_fact(rec, b->tmpl, b->path, &f, e);
  if (rc) return rc < 0 ? -1 : 0;
  if (!b->s && f.kind != SEARCH_MEASURE && f.kind != SEARCH_REFUSE)
    return tf_fail(e, TF_EXIT_INPUT, "a %s record before any generation",
                   record_kind_names[rec->kind]);
  if (!b->s && start(b, &f, &rec->gen, e)) return -1;
  if (f.kind == SEARCH_MEASURE && !b->requeue_known && learn_requeue(b, &rec->gen, e)) return -1;
  return search_apply(b->s, &f, e);
}

int ledger_best_get(const ledger_best *b, record_cfg *cfg, double *us, long long *gen) {
  if (!b->s) return 0;
  const config *c = search_answer(b->s, us, gen);
  if (b->tmpl) {
    record_cfg_of(b->tmpl, c, cfg);
    return 1;
  }
  *cfg = b->names;
  for (int k = 0; k < cfg->n && k < c->n; k++) cfg->v[k] = c->v[k];
  return 1;
}
