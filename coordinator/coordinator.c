#include "coordinator/coordinator.h"

#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>

#include "common/campaign.h"
#include "common/decide.h"
#include "common/jsonio.h"
#include "common/mpimsg.h"
#include "common/msg.h"
#include "coordinator/audit.h"
#include "coordinator/ledger.h"
#include "coordinator/propose.h"
#include "coordinator/record.h"

/* One device's search. */
typedef struct search {
  device_record dev;
  int rank;            /* the worker that owns the device */
  int usable;          /* 0: the worker had no device or a duplicate one */
  ledger *l;
  config best;
  tried_set tried;
  proposer prop;
  int generation;      /* the last generation number written */
  int measured;        /* generations that measured something (count toward the budget) */
  int stale;           /* non-keeps in a row */
  int keeps, rejects, refused, ambiguous, faults;
  int busy;
  config cand;
  int requeues;        /* noisy refusals of the current candidate */
  int done;
  char end_reason[600];
  double best_us;      /* median of the best arm in the latest measured generation */
  double start_us;
  long long job_id;
  int measured_before;  /* measured generations found in the ledger at start (resume) */
  double t_first, t_end; /* wall clock of this run's first job and of the search's end */
  /* Restarts (search.restarts): segment 0 starts at the campaign's start, segment k > 0 at a
   * random legal configuration never tried here. `champion` is the best of the segments
   * before this one; a segment that kept something ends with a duel, a measured generation
   * of its best (new) against the champion (best), decided by the campaign's rule. */
  int segment;
  int seg_keeps;
  config champion;
  double champion_us;
  int duel;            /* the candidate in flight is the segment's duel */
  int dueled;          /* this segment's duel has been decided */
  char seg_why[160];   /* why the segment stalled, for the record after its duel */
  /* The canary (docs/DECISIONS.md): a generation is decided only from a measure process
   * whose A/A canary found no bias; the job in flight as sent, for its ledger record. */
  cJSON *sent;
  int vetted_child;    /* the process the last canary cleared; 0: none in this run */
  int canary_due;      /* the next job runs the canary first */
  int fresh_due;       /* the next job runs in a fresh measure process */
  int since_canary;    /* generations measured since the last canary */
  int since_fresh;     /* generations measured in this process (search.fresh_every) */
  int biased_in_row;   /* canaries in a row that found their process biased */
  int again;           /* measure the candidate again: the process it ran in was not trusted */
  int canaries, biased, untrusted;
} search;

typedef struct farm {
  double t0;           /* wall clock at start, for rates and the coordinator's share */
  MPI_Comm comm;
  const run_opts *o;
  campaign c;
  int nsearch;
  search *s;
  long long next_id;
  char run[32];        /* when this run began: with a record's child, names its measure process */
  record *rec;         /* the record being written or read */
} farm;

static double wall_s(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

static void progress(const farm *f, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void progress(const farm *f, const char *fmt, ...) {
  if (f->o->quiet) return;
  va_list ap;
  va_start(ap, fmt);
  vfprintf(f->o->progress, fmt, ap);
  va_end(ap);
  fflush(f->o->progress);
}

static void now_iso(char *buf, size_t len) {
  time_t t = time(NULL);
  struct tm tm;
  gmtime_r(&t, &tm);
  strftime(buf, len, "%Y-%m-%dT%H:%M:%SZ", &tm);
}

void coordinator_stop_all(MPI_Comm comm) {
  int size;
  MPI_Comm_size(comm, &size);
  cJSON *stop = cJSON_CreateObject();
  cJSON_AddStringToObject(stop, "type", "stop");
  for (int r = 1; r < size; r++) mpimsg_send(comm, r, TAG_STOP, stop, NULL);
  cJSON_Delete(stop);
}

/* ---- ledger records ---- */

static void change_str(const spec *s, const config *from, const config *to, char *buf, size_t len) {
  size_t n = 0;
  buf[0] = '\0';
  for (int k = 0; k < s->nknobs && n < len; k++)
    if (from->v[k] != to->v[k])
      n += (size_t)snprintf(buf + n, len - n, "%s%s %lld->%lld", n ? ", " : "", s->knobs[k].name,
                            from->v[k], to->v[k]);
}

/* What every generation record of this search says about the generation itself. */
static void base_record(const farm *f, search *s, const config *cand, record *rec) {
  record_release(rec);
  rec->kind = RECORD_GENERATION;
  record_gen *g = &rec->gen;
  g->generation = ++s->generation;
  snprintf(g->device, sizeof g->device, "%s", s->dev.uuid);
  snprintf(g->backend, sizeof g->backend, "%s", s->dev.backend);
  g->simulated = strcmp(s->dev.backend, "sim") == 0;
  now_iso(g->time, sizeof g->time);
  snprintf(g->rule, sizeof g->rule, "%s", f->c.decide.rule);
  g->restart = s->segment;
  g->duel = s->duel;
  record_cfg_of(&f->c.tmpl, &s->best, &g->best);
  record_cfg_of(&f->c.tmpl, cand, &g->new_cfg);
}

/* The record of a measured generation. Takes the job as sent (s->sent) into the record. */
static void measured_record(const farm *f, search *s, const result *r, const decision *d,
                            const canary_verdict *cv, int untrusted, record *rec) {
  base_record(f, s, &s->cand, rec);
  record_gen *g = &rec->gen;
  g->measured = 1;
  g->res = *r;
  g->nratios = d->nratios;
  memcpy(g->ratios, d->ratios, (size_t)d->nratios * sizeof *d->ratios);
  g->median_ratio = d->median_ratio;
  g->kernel_median_ratio = d->kernel_median_ratio;
  g->control_drift = d->control_drift;
  g->min_gain = f->c.decide.min_gain;
  g->drift_tolerance = f->c.decide.drift_tolerance;
  g->decision = d->kind;
  snprintf(g->reason, sizeof g->reason, "%s", d->reason);
  g->stats = d->stats ? cJSON_Duplicate(d->stats, 1) : NULL;
  g->screened = d->screened;
  if (r->child > 0) snprintf(g->run, sizeof g->run, "%s", f->run);
  g->has_canary = r->ncanary > 0;
  if (g->has_canary) g->canary = *cv;
  g->untrusted = untrusted;
  g->job = s->sent;
  s->sent = NULL;
}

static int append(farm *f, search *s, const record *rec, tf_err *e) {
  (void)f;
  return ledger_append(s->l, rec, e);
}

/* ---- the search ---- */

static int end_search(farm *f, search *s, const char *why, tf_err *e) {
  if (s->segment > 0) { /* the answer is the champion, not the last segment's best */
    s->best = s->champion;
    s->best_us = s->champion_us;
  }
  s->done = 1;
  s->t_end = wall_s();
  snprintf(s->end_reason, sizeof s->end_reason, "%s", why);
  record *rec = f->rec;
  record_release(rec);
  rec->kind = RECORD_END;
  snprintf(rec->end.reason, sizeof rec->end.reason, "%s", why);
  rec->end.generation = s->generation;
  record_cfg_of(&f->c.tmpl, &s->best, &rec->end.best);
  if (append(f, s, rec, e)) return -1;
  progress(f, "[gpu%d %.12s] search ends: %s\n", s->dev.ordinal, s->dev.uuid, why);
  return 0;
}

static int record_static_refusal(farm *f, search *s, int bad, tf_err *e) {
  const spec_constraint *k = &f->c.tmpl.cons[bad];
  record *rec = f->rec;
  base_record(f, s, &s->cand, rec);
  rec->gen.decision = DECISION_REFUSED;
  snprintf(rec->gen.reason, sizeof rec->gen.reason, "breaks constraint '%s': %s", k->name,
           k->reason);
  snprintf(rec->gen.constraint, sizeof rec->gen.constraint, "%s", k->name);
  s->refused++;
  return append(f, s, rec, e);
}

static int send_job(farm *f, search *s, tf_err *e) {
  static job j;
  if (job_build(&j, &f->c, f->next_id, s->generation + 1, &s->best, &s->cand, e)) return -1;
  j.canary_rounds = s->canary_due ? f->c.canary.rounds : 0;
  j.fresh_child = s->fresh_due;
  cJSON *msg = job_to_json(&j);
  int rc = mpimsg_send(f->comm, s->rank, TAG_JOB, msg, e);
  if (rc) {
    cJSON_Delete(msg);
    return rc;
  }
  cJSON_Delete(s->sent);
  s->sent = msg;
  s->busy = 1;
  s->job_id = f->next_id++;
  s->canary_due = s->fresh_due = 0;
  if (j.canary_rounds) s->since_canary = 0;
  if (j.fresh_child) s->since_fresh = 0;
  if (s->t_first == 0) s->t_first = wall_s();
  return 0;
}

static int next_job(farm *f, search *s, tf_err *e);

/* The segment's best (new) against the champion (best), measured like any generation. */
static int start_duel(farm *f, search *s, tf_err *e) {
  s->cand = s->best;
  s->best = s->champion;
  s->duel = 1;
  s->requeues = 0; /* a candidate cut short by the budget hands none of its re-measurements on */
  progress(f, "[gpu%d %.12s] restart %d kept %d: its best against the champion\n",
           s->dev.ordinal, s->dev.uuid, s->segment, s->seg_keeps);
  return send_job(f, s, e);
}

static unsigned long long segment_seed(const farm *f, const search *s, int segment) {
  return f->c.measure.seed ^ (unsigned long long)s->dev.ordinal ^
         (unsigned long long)segment * 0x9e3779b97f4a7c15ULL;
}

/* Segment k begins at `start`: a fresh proposer (its own seeded knob order, no payoff, no near
 * misses), the tried set kept so that no configuration is measured twice as new. */
static int begin_segment(farm *f, search *s, int k, const config *start, tf_err *e) {
  s->segment = k;
  s->seg_keeps = 0;
  s->stale = 0;
  s->duel = s->dueled = 0;
  snprintf(s->seg_why, sizeof s->seg_why, "its search had stalled before this run");
  s->best = *start;
  proposer_init(&s->prop, &f->c.tmpl, segment_seed(f, s, k));
  proposer_repairs(&s->prop, f->c.dims);
  return tried_add(&s->tried, start) ? tf_fail(e, TF_EXIT_FAIL, "out of memory") : 0;
}

static void restart_record(const farm *f, const search *s, const config *start, const char *why,
                           record *rec) {
  record_release(rec);
  rec->kind = RECORD_RESTART;
  record_restart *r = &rec->restart;
  snprintf(r->reason, sizeof r->reason, "restart %d of %d from a random legal configuration never "
           "tried here: the last search ended (%s)", s->segment + 1, f->c.search.restarts, why);
  r->restart = s->segment + 1;
  r->generation = s->generation;
  record_cfg_of(&f->c.tmpl, &s->champion, &r->champion);
  r->champion_us = s->champion_us;
  record_cfg_of(&f->c.tmpl, start, &r->start);
}

/* A segment stalled (why): hold its duel if it kept something, then restart or end. */
static int segment_over(farm *f, search *s, const char *why, tf_err *e) {
  if (s->segment == 0) {
    s->champion = s->best;
    s->champion_us = s->best_us;
  } else if (s->seg_keeps > 0 && !s->dueled) {
    snprintf(s->seg_why, sizeof s->seg_why, "%s", why);
    return start_duel(f, s, e);
  }
  config start;
  if (s->segment >= f->c.search.restarts) return end_search(f, s, why, e);
  if (!propose_restart(&s->prop, &s->tried, segment_seed(f, s, s->segment + 1), &start))
    return end_search(f, s, "no legal configuration left untried to restart from", e);
  restart_record(f, s, &start, why, f->rec);
  if (append(f, s, f->rec, e)) return -1;
  progress(f, "[gpu%d %.12s] restart %d of %d (%s)\n", s->dev.ordinal, s->dev.uuid,
           s->segment + 1, f->c.search.restarts, why);
  if (begin_segment(f, s, s->segment + 1, &start, e)) return -1;
  return next_job(f, s, e);
}

/* Propose, refuse statically what breaks a rule, send the first that passes. */
static int next_job(farm *f, search *s, tf_err *e) {
  const search_opts *so = &f->c.search;
  char why[160];
  if (s->done || s->busy) return 0;
  if (s->again) { /* measured where no canary vouched for the process: not a decision */
    s->again = 0;
    return send_job(f, s, e);
  }
  if (s->duel && s->requeues > 0) return send_job(f, s, e); /* a noisy duel, even past the budget */
  if (s->measured >= so->budget) {
    snprintf(why, sizeof why, "budget of %d generations spent", so->budget);
    if (s->segment > 0 && s->seg_keeps > 0 && !s->dueled) /* past the budget by one */
      return start_duel(f, s, e);
    return end_search(f, s, why, e);
  }
  if (s->requeues > 0) return send_job(f, s, e); /* a noisy generation, measured again */
  if (so->fixed) { /* a study of the rule: the same pair every generation, best never moves */
    s->cand = so->pair;
    return send_job(f, s, e);
  }
  if (s->dueled) return segment_over(f, s, s->seg_why, e);
  if (s->stale >= so->max_stale) {
    snprintf(why, sizeof why, "%d generations in a row without a keep (max_stale)", s->stale);
    return segment_over(f, s, why, e);
  }
  for (;;) {
    int nchanged, bad;
    if (!propose_next(&s->prop, &s->best, &s->tried, s->stale >= so->two_knob_after, &s->cand,
                      &nchanged)) {
      return segment_over(
          f, s, "the space around best is exhausted (every move the proposer makes was tried)", e);
    }
    if (tried_add(&s->tried, &s->cand)) return tf_fail(e, TF_EXIT_FAIL, "out of memory");
    if (spec_check(&f->c.tmpl, f->c.dims, &s->cand, &bad, e)) return -1;
    if (bad < 0) return send_job(f, s, e);
    if (record_static_refusal(f, s, bad, e)) return -1;
  }
}

static double median_arm(const result *r, int arm) {
  double x[MSG_MAX_ROUNDS];
  int n = 0;
  for (int i = 0; i < r->nrounds; i++)
    if (!r->rounds[i].screened) x[n++] = r->rounds[i].us[arm];
  return stats_median(x, n);
}

static void count_decision(farm *f, search *s, const result *r, const decision *d) {
  int kept = d->kind == DECISION_KEEP;
  if (d->kind == DECISION_REFUSED && d->noisy && s->requeues < f->c.decide.max_requeue) {
    s->requeues++; /* measure the same candidate again */
    s->refused++;
    return;
  }
  s->requeues = 0;
  if (kept) {
    s->keeps++;
    s->stale = 0;
  } else {
    s->stale++;
    if (r->status != RESULT_OK) s->faults++;
    if (d->kind == DECISION_REJECT) s->rejects++;
    if (d->kind == DECISION_REFUSED) s->refused++;
    if (d->kind == DECISION_AMBIGUOUS) s->ambiguous++;
  }
  /* a refused generation's ratio is not trusted (its control drifted or it was noisy) */
  int trusted = d->kind == DECISION_REJECT || d->kind == DECISION_AMBIGUOUS;
  propose_feedback(&s->prop, &s->best, &s->cand, kept, trusted ? d->median_ratio : NAN);
  double b = median_arm(r, ARM_BEST), n = median_arm(r, ARM_NEW);
  if (isfinite(b)) s->best_us = kept ? n : b;
  if (isfinite(b) && s->start_us == 0) s->start_us = b;
  if (f->c.search.fixed) {
    s->stale = 0; /* nothing to exhaust: the budget ends a fixed-pair run */
    return;
  }
  if (kept) {
    s->best = s->cand;
    s->seg_keeps++;
  }
  if (s->duel) {
    s->duel = 0;
    s->dueled = 1;
    s->champion = s->best;
    if (isfinite(b)) s->champion_us = s->best_us;
  }
}

static void print_decision(const farm *f, const search *s, const decision *d) {
  char change[256];
  change_str(&f->c.tmpl, &s->best, &s->cand, change, sizeof change);
  progress(f, "[gpu%d %.12s] gen %d %s: median %.4f %s (%s)\n", s->dev.ordinal, s->dev.uuid,
           s->generation, change, d->median_ratio, decision_names[d->kind], d->reason);
}

/* What the coming jobs need: a canary after every fresh process and every canary.every
 * generations, a fresh process every search.fresh_every generations. */
static void schedule(farm *f, search *s, const result *r) {
  const canary_opts *k = &f->c.canary;
  s->since_canary++;
  s->since_fresh++;
  if (f->c.search.fresh_every > 0 && s->since_fresh >= f->c.search.fresh_every)
    s->fresh_due = 1;
  if (k->rounds > 0 && (s->fresh_due || r->status == RESULT_FAULT ||
                        (k->every > 0 && s->since_canary >= k->every)))
    s->canary_due = 1; /* after a fault the worker measures in a fresh process */
}

/* May this result be decided? Not when its process's canary found a bias, nor when no canary
 * has cleared the process that measured it (one started in place of a dead one). Then the
 * decision becomes a refusal, the candidate is measured again, and a biased process is
 * replaced. Returns 1 when the result is not trusted. */
static int judge_process(farm *f, search *s, const result *r, const canary_verdict *cv,
                         decision *d) {
  const canary_opts *k = &f->c.canary;
  if (r->ncanary > 0) {
    s->canaries++;
    if (cv->biased || r->child != s->vetted_child) /* a process's first verdict, or a bias */
      progress(f, "[gpu%d %.12s] %s\n", s->dev.ordinal, s->dev.uuid, cv->reason);
    if (!cv->biased) {
      s->vetted_child = r->child;
      s->biased_in_row = 0;
    } else {
      s->biased++;
      s->biased_in_row++;
      s->vetted_child = 0;
      s->fresh_due = 1;
    }
  }
  if (k->rounds == 0 || r->status != RESULT_OK || !r->correct) return 0;
  if (r->ncanary > 0 && !cv->biased) return 0;
  if (r->ncanary == 0 && r->child == s->vetted_child) return 0;
  decide_untrusted(d, cv, r->child);
  s->canary_due = 1;
  return 1;
}

static search *search_of_rank(farm *f, int rank) {
  for (int i = 0; i < f->nsearch; i++)
    if (f->s[i].rank == rank && f->s[i].usable) return &f->s[i];
  return NULL;
}

static int on_result(farm *f, cJSON *msg, int from, tf_err *e) {
  static result r;
  search *s = search_of_rank(f, from);
  if (!s || !s->busy) return tf_fail(e, TF_EXIT_FAIL, "a result from rank %d, which has no job", from);
  tf_err bad = {0};
  /* A malformed, misaddressed or foreign result is this generation's fault, not the farm's. */
  if (result_from_json(msg, &r, &bad))
    result_fault(&r, s->job_id, s->dev.uuid, "malformed result from the worker: %s", bad.msg);
  else if (r.id != s->job_id)
    result_fault(&r, s->job_id, s->dev.uuid, "the worker answered job %lld, not %lld", r.id,
                 s->job_id);
  else if (r.status == RESULT_OK && strcmp(r.device, s->dev.uuid) != 0)
    result_fault(&r, s->job_id, s->dev.uuid,
                 "the result was measured on %s, not on this search's device", r.device);
  s->busy = 0;
  decision d;
  if (decide(&f->c.decide, &r, &d))
    return tf_fail(e, TF_EXIT_FAIL, "unknown rule '%s'", f->c.decide.rule);
  canary_verdict cv;
  decide_canary(f->c.canary.threshold, f->c.measure.input_sets, &r, &cv);
  int untrusted = judge_process(f, s, &r, &cv, &d);
  schedule(f, s, &r);
  measured_record(f, s, &r, &d, &cv, untrusted, f->rec);
  int rc = append(f, s, f->rec, e);
  if (rc == 0) print_decision(f, s, &d);
  if (rc == 0 && untrusted) {
    s->refused++;
    s->untrusted++;
    s->again = 1;
    if (s->biased_in_row > f->c.canary.max_restarts) {
      char why[160];
      snprintf(why, sizeof why, "the canary found %d measure processes in a row biased beyond "
               "%.2f%%: this GPU's verdicts cannot be trusted", s->biased_in_row,
               100.0 * f->c.canary.threshold);
      s->again = 0;
      rc = end_search(f, s, why, e);
    }
  } else if (rc == 0) {
    s->measured++;
    count_decision(f, s, &r, &d);
  }
  decision_release(&d);
  return rc;
}

/* ---- start: hellos, ledgers, resume ---- */

static int duplicate_of(const farm *f, int upto, const char *uuid) {
  for (int i = 0; i < upto; i++)
    if (f->s[i].usable && strcmp(f->s[i].dev.uuid, uuid) == 0) return i;
  return -1;
}

static int take_hello(farm *f, const cJSON *msg, int from, int slot) {
  search *s = &f->s[slot];
  tf_err e = {0};
  s->rank = from;
  const cJSON *dev = cJSON_GetObjectItemCaseSensitive(msg, "device");
  const cJSON *err = cJSON_GetObjectItemCaseSensitive(msg, "error");
  if (!dev || device_from_json(dev, &s->dev, &e)) {
    fprintf(stderr, "tunefarm: worker rank %d has no usable device: %s\n", from,
            cJSON_IsString(err) ? err->valuestring : e.msg);
    return 0;
  }
  int dup = duplicate_of(f, slot, s->dev.uuid);
  if (dup >= 0) {
    fprintf(stderr,
            "tunefarm: worker rank %d reports device %s, which rank %d already measures; two "
            "workers on one GPU would disturb each other's timings, so rank %d gets no jobs "
            "(start one worker per GPU: mpirun -np G+1, or check CUDA_VISIBLE_DEVICES)\n",
            from, s->dev.uuid, f->s[dup].rank, from);
    return 0;
  }
  s->usable = 1;
  return 0;
}

static int collect_hellos(farm *f, tf_err *e) {
  for (int i = 0; i < f->nsearch; i++) {
    int tag, from;
    cJSON *msg = mpimsg_recv(f->comm, MPI_ANY_SOURCE, &tag, &from, e);
    if (!msg) return -1;
    if (tag != TAG_HELLO) {
      cJSON_Delete(msg);
      return tf_fail(e, TF_EXIT_FAIL, "rank %d sent tag %d before its hello", from, tag);
    }
    take_hello(f, msg, from, i);
    cJSON_Delete(msg);
  }
  return 0;
}

typedef struct replay_ctx {
  farm *f;
  search *s;
} replay_ctx;

static int replay_generation(replay_ctx *x, const record_gen *g, tf_err *e) {
  search *s = x->s;
  config cand;
  if (g->generation != s->generation + 1)
    return tf_fail(e, TF_EXIT_INPUT, "key 'generation' must be %d, the one after the previous "
                   "record", s->generation + 1);
  if (record_cfg_config(&x->f->c.tmpl, &g->new_cfg, ledger_path(s->l), "new", &cand, e))
    return -1;
  s->generation = (int)g->generation;
  tried_add(&s->tried, &cand);
  if (g->duel) {
    s->duel = 1;
    s->best = s->champion;
  }
  if (!g->measured) {
    s->refused++; /* a static refusal: no measurement */
    return 0;
  }
  if (g->has_canary) s->biased_in_row = g->canary.biased ? s->biased_in_row + 1 : 0;
  if (g->untrusted) { /* as on_result */
    s->cand = cand;
    s->refused++;
    s->untrusted++;
    s->again = 1;
    return 0;
  }
  s->again = 0;
  s->measured++;
  int kept = g->decision == DECISION_KEEP && !x->f->c.search.fixed;
  int noisy = g->decision == DECISION_REFUSED;
  if (noisy && s->requeues < x->f->c.decide.max_requeue) { /* as count_decision: again */
    s->requeues++;
    s->cand = cand;
    s->refused++;
    return 0;
  }
  s->requeues = 0;
  if (x->f->c.search.fixed) return 0;
  int trusted = g->decision == DECISION_REJECT || g->decision == DECISION_AMBIGUOUS;
  propose_feedback(&s->prop, &s->best, &cand, kept, trusted ? g->median_ratio : NAN);
  double us = record_rounds_median(g, kept ? ARM_NEW : ARM_BEST, 0);
  if (isfinite(us)) s->best_us = us;
  if (kept) {
    s->best = cand;
    s->keeps++;
    s->seg_keeps++;
    s->stale = 0;
  } else {
    s->stale++;
    s->faults += g->res.status != RESULT_OK; /* as count_decision */
    s->rejects += g->decision == DECISION_REJECT;
    s->refused += g->decision == DECISION_REFUSED;
    s->ambiguous += g->decision == DECISION_AMBIGUOUS;
  }
  if (s->duel) { /* as count_decision */
    s->duel = 0;
    s->dueled = 1;
    s->champion = s->best;
    if (isfinite(us)) s->champion_us = s->best_us; /* a faulted duel measured nothing */
  }
  return 0;
}

/* A restart record: the champion so far and the start of the next segment. */
static int replay_restart(replay_ctx *x, const record_restart *r, tf_err *e) {
  search *s = x->s;
  config start, champion;
  if (r->restart != s->segment + 1)
    return tf_fail(e, TF_EXIT_INPUT, "key 'restart' must be %d, the one after the previous "
                   "restart", s->segment + 1);
  if (record_cfg_config(&x->f->c.tmpl, &r->champion, ledger_path(s->l), "champion", &champion,
                        e) ||
      record_cfg_config(&x->f->c.tmpl, &r->start, ledger_path(s->l), "start", &start, e))
    return -1;
  s->champion = champion;
  s->champion_us = r->champion_us;
  return begin_segment(x->f, s, s->segment + 1, &start, e);
}

static int replay_one(void *ctx, long line, const record *rec, tf_err *e) {
  replay_ctx *x = ctx;
  int rc = 0;
  if (rec->kind == RECORD_END) {
    x->s->done = 1;
    if (x->s->segment > 0) { /* as end_search: the answer is the champion */
      x->s->best = x->s->champion;
      x->s->best_us = x->s->champion_us;
    }
    snprintf(x->s->end_reason, sizeof x->s->end_reason, "%s (already, in an earlier run)",
             rec->end.reason);
  } else if (rec->kind == RECORD_GENERATION) {
    rc = replay_generation(x, &rec->gen, e);
  } else if (rec->kind == RECORD_RESTART) {
    rc = replay_restart(x, &rec->restart, e);
  }
  return rc ? tf_wrap(e, "ledger '%s': line %ld", ledger_path(x->s->l), line) : 0;
}

static int open_search(farm *f, search *s, tf_err *e) {
  ledger_opts lo = {.dir = f->o->ledgers, .fresh = f->o->fresh, .log = f->o->progress};
  if (begin_segment(f, s, 0, &f->c.start, e)) return -1; /* segment 0: the campaign's start */
  s->canary_due = f->c.canary.rounds > 0; /* every run begins in fresh processes */
  if (ledger_open(&s->l, &lo, &f->c, &s->dev, e)) return -1;
  replay_ctx x = {f, s};
  if (ledger_replay(s->l, replay_one, &x, e)) return -1;
  s->measured_before = s->measured;
  if (s->generation > 0)
    progress(f, "[gpu%d %.12s] resuming %s at generation %d (%d measured, %d kept)%s\n",
             s->dev.ordinal, s->dev.uuid, ledger_path(s->l), s->generation + 1, s->measured,
             s->keeps, s->done ? ": search already ended" : "");
  return 0;
}

/* ---- the loop ---- */

static int all_done(const farm *f) {
  for (int i = 0; i < f->nsearch; i++)
    if (f->s[i].usable && (!f->s[i].done || f->s[i].busy)) return 0;
  return 1;
}

static int serve(farm *f, tf_err *e) {
  for (int i = 0; i < f->nsearch; i++)
    if (f->s[i].usable && next_job(f, &f->s[i], e)) return -1;
  while (!all_done(f)) {
    int tag, from;
    cJSON *msg = mpimsg_recv(f->comm, MPI_ANY_SOURCE, &tag, &from, e);
    if (!msg) return -1;
    int rc = tag == TAG_RESULT ? on_result(f, msg, from, e)
                               : tf_fail(e, TF_EXIT_FAIL, "unexpected tag %d from rank %d", tag, from);
    cJSON_Delete(msg);
    search *s = search_of_rank(f, from);
    if (rc || (s && next_job(f, s, e))) return -1;
  }
  return 0;
}

/* The coordinator's own CPU time over the run's wall time: how much of its core it needs. */
static void print_load(const farm *f, FILE *out, double wall) {
  struct rusage ru;
  getrusage(RUSAGE_SELF, &ru);
  double cpu = (double)ru.ru_utime.tv_sec + 1e-6 * (double)ru.ru_utime.tv_usec +
               (double)ru.ru_stime.tv_sec + 1e-6 * (double)ru.ru_stime.tv_usec;
  int measured = 0;
  for (int i = 0; i < f->nsearch; i++) measured += f->s[i].measured - f->s[i].measured_before;
  fprintf(out, "  coordinator: %.2f s of CPU in %.1f s of wall time (%.1f%% of one core), %d "
               "measured generations\n",
          cpu, wall, wall > 0 ? 100.0 * cpu / wall : 0.0, measured);
}

/* Before stopping on an error, take the results still on their way: a worker blocked in a
 * send that nobody receives would keep mpirun from ever exiting. Nothing is written. */
static void drain(farm *f) {
  for (int i = 0; i < f->nsearch; i++) {
    search *s = &f->s[i];
    while (s->usable && s->busy) {
      int tag, from;
      tf_err e = {0};
      cJSON *msg = mpimsg_recv(f->comm, s->rank, &tag, &from, &e);
      cJSON_Delete(msg);
      if (!msg || tag == TAG_RESULT) s->busy = 0;
    }
  }
}

static void summary(const farm *f) {
  if (f->o->quiet) return;
  FILE *out = f->o->progress;
  double wall = wall_s() - f->t0;
  fprintf(out, "\ntunefarm: campaign %s finished\n", f->c.name);
  print_load(f, out, wall);
  for (int i = 0; i < f->nsearch; i++) {
    const search *s = &f->s[i];
    if (!s->usable) continue;
    char cfg[512];
    spec_config_str(&f->c.tmpl, &s->best, cfg, sizeof cfg);
    fprintf(out,
            "  gpu%d %s (%s): %d generations, %d kept, %d rejected, %d refused, %d ambiguous, "
            "%d faults; best %s",
            s->dev.ordinal, s->dev.uuid, s->dev.name, s->generation, s->keeps, s->rejects,
            s->refused, s->ambiguous, s->faults, cfg);
    if (s->start_us > 0) fprintf(out, " (%.2f us, start %.2f us)", s->best_us, s->start_us);
    int n = s->measured - s->measured_before;
    double span = s->t_first > 0 && s->t_end > s->t_first ? s->t_end - s->t_first : wall;
    fprintf(out, "\n    rate: %d measured generations in %.1f s = %.0f per hour", n, span,
            span > 0 ? 3600.0 * n / span : 0.0);
    if (s->canaries > 0 || s->untrusted > 0)
      fprintf(out, "\n    canary: %d run, %d found its measure process biased; %d generations "
              "measured again", s->canaries, s->biased, s->untrusted);
    fprintf(out, "\n    ended: %s\n    ledger: %s\n", s->end_reason, ledger_path(s->l));
  }
}

static void release(farm *f) {
  for (int i = 0; i < f->nsearch; i++) {
    if (f->s[i].l) ledger_close(f->s[i].l);
    tried_release(&f->s[i].tried);
    cJSON_Delete(f->s[i].sent);
  }
  free(f->s);
  campaign_release(&f->c);
}

int coordinator_run(MPI_Comm comm, const run_opts *o, tf_err *e) {
  farm f = {.comm = comm, .o = o, .next_id = 1, .t0 = wall_s(), .rec = record_new()};
  now_iso(f.run, sizeof f.run);
  int size;
  MPI_Comm_size(comm, &size);
  f.nsearch = size - 1;
  f.s = calloc((size_t)f.nsearch, sizeof *f.s);
  if (!f.s || !f.rec) {
    free(f.s);
    record_free(f.rec);
    coordinator_stop_all(comm);
    return tf_fail(e, TF_EXIT_FAIL, "out of memory");
  }
  tf_err load_err = {0};
  int loaded = campaign_load(&f.c, o->campaign, &load_err) == 0;
  space_view v;
  /* Evaluate every constraint over the whole space now: a template whose expressions fail
   * somewhere (division by zero) is refused before any ledger is touched. */
  if (loaded && space_enumerate(&f.c, &v, &load_err) == 0)
    space_release(&v);
  else if (loaded) {
    campaign_release(&f.c);
    loaded = 0;
  }
  int rc = collect_hellos(&f, e);
  if (rc == 0 && !loaded) {
    *e = load_err;
    rc = -1;
  }
  int usable = 0;
  for (int i = 0; rc == 0 && i < f.nsearch; i++) {
    search *s = &f.s[i];
    if (!s->usable) continue;
    usable++;
    if (open_search(&f, s, e)) rc = -1;
  }
  if (rc == 0 && usable == 0) rc = tf_fail(e, TF_EXIT_FAIL, "no worker has a usable device");
  if (rc == 0) {
    progress(&f, "tunefarm: campaign %s on %d device(s), backend %s, rule %s\n", f.c.name, usable,
             o->backend, f.c.decide.rule);
    rc = serve(&f, e);
  }
  if (rc != 0) drain(&f);
  coordinator_stop_all(comm);
  if (rc == 0) summary(&f);
  if (loaded) release(&f);
  else free(f.s);
  record_free(f.rec);
  return rc;
}
