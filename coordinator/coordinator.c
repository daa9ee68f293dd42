/* coordinator: rank 0 of `tunefarm run` (coordinator/coordinator.h).
 *
 * The loop does what each device's search (coordinator/search.h) says: it sends the jobs,
 * decides their results, writes every record, and applies each record it wrote to the
 * search as resume applies the records it reads back (coordinator/replay.h): one path.
 * It takes every result that has arrived, writes their records, syncs the ledgers once
 * (group commit, coordinator/ledger.h) and only then sends the jobs those decisions lead to. */
#include "coordinator/coordinator.h"

#include <math.h>
#include <signal.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>

#include "common/clock.h"
#include "common/campaign.h"
#include "common/decide.h"
#include "common/mpimsg.h"
#include "common/msg.h"
#include "coordinator/job.h"
#include "coordinator/space.h" /* defines: space_enumerate, space_release */
#include "coordinator/ledger.h"
#include "coordinator/prefetch.h" /* defines: prefetch_list */
#include "coordinator/record.h"
#include "coordinator/replay.h"
#include "coordinator/search.h"
#include "worker/backend.h" /* defines: backend_simulated */

/* One device in this run: its search, its ledger, the job in flight. */
typedef struct device_run {
  device_record dev;
  int rank;            /* the worker that owns the device */
  int usable;          /* 0: the worker had no device or a duplicate one */
  ledger *l;
  search s;
  int busy;
  double sent_at;      /* wall clock when the job in flight was sent */
  int lost;            /* its worker missed that: no more jobs for it in this run */
  search_step step;    /* the step the job in flight measures */
  cJSON *sent;         /* that job as sent, for its record */
  cJSON *prefetch;     /* the programs to compile ahead that go with it (message only) */
  cJSON *next;         /* the job to run ahead that goes with it (message only) */
  cJSON *ahead;        /* the job the worker holds ahead, as sent (with its root); NULL: none */
  search_step ahead_step; /* its step */
  int go;              /* the queued job is the one ahead: the message only says go */
  int ahead_sent, ahead_taken; /* jobs sent ahead in this run, and of them the ones taken */
  int drifted;         /* this run's generations refused for the control's drift */
  int drifted_alone;   /* of those, the ones whose best and new held within the tolerance */
  int capped;          /* the GPU was told once that measure.max_samples capped its rounds */
  int short_told;      /* ... and once that its kernel is shorter than any rule was measured at */
  double extra_s;      /* the job's result may come this much later: the worker first
                        * finishes the job ahead it drops */
  int queued;          /* the job waits for the ledger's sync before it is sent */
  int compile_jobs;    /* its worker's compiles ahead at once (its hello); 0: no list to send */
  long long job_id;
  int measured_before; /* measured generations found in the ledger at start (resume) */
  int statics;         /* generations refused statically (no job), the ledger's before this
                        * run's included: with the measured and the untrusted ones they make up
                        * the generation number */
  int ended_before;    /* the ledger's search had ended before this run */
  double t_first, t_end; /* wall clock of this run's first job and of the search's end */
  result_times spent;  /* this run's results' times, summed: where the GPU's time went */
  int results;         /* this run's results */
  double t_last;       /* wall clock of this run's last result */
} device_run;

typedef struct farm {
  double t0;           /* wall clock at start, for rates and the coordinator's share */
  MPI_Comm comm;
  const run_opts *o;
  campaign c;
  space_view space;    /* c's space, enumerated at load: its table answers the searches'
                        * constraint checks (check_memo.space) */
  int ndev;
  device_run *d;
  char run[32];        /* when this run began: with a record's child, names its measure process */
  record *rec;         /* the record being written or read */
  int said_fallback;   /* a worker's hello said why it runs on the simulated device */
  ledger **ls;         /* the devices' ledgers, for one sync of them all */
  double cpu_first;    /* the coordinator's CPU seconds when it sent the run's first job */
  /* When every worker had given its first result (its measure child started, its first job
   * done): the wall clock, the coordinator's CPU and the measured generations then. The
   * rate from there on is the steady one, a run's startup left out. */
  double steady_t, steady_cpu;
  int steady_n;
  int lost;            /* workers declared lost */
  result *res;         /* the result being decided */
  job *job;            /* the job being built (large: one for the farm, not one per job) */
} farm;

/* This process's CPU time, user and system, seconds. */
static double cpu_s(void) {
  struct rusage ru;
  getrusage(RUSAGE_SELF, &ru);
  return (double)ru.ru_utime.tv_sec + 1e-6 * (double)ru.ru_utime.tv_usec +
         (double)ru.ru_stime.tv_sec + 1e-6 * (double)ru.ru_stime.tv_usec;
}

/* A progress line, written and flushed at once: a line per event. A decision's line follows
 * the write(2) of its ledger record; the sync that makes it durable comes before any job that
 * acts on it (flush). */
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

/* ---- records: written, then applied to the search ---- */

static void change_str(const spec *s, const config *from, const config *to, char *buf, size_t len) {
  size_t n = 0;
  buf[0] = '\0';
  for (int k = 0; k < s->nknobs && n < len; k++)
    if (from->v[k] != to->v[k])
      n += (size_t)snprintf(buf + n, len - n, "%s%s %lld->%lld", n ? ", " : "", s->knobs[k].name,
                            from->v[k], to->v[k]);
}

/* What every generation record of this device says about the generation itself. */
static void base_record(const farm *f, const device_run *d, const search_step *st,
                        record *rec) {
  record_release(rec);
  rec->kind = RECORD_GENERATION;
  record_gen *g = &rec->gen;
  g->generation = st->generation;
  snprintf(g->device, sizeof g->device, "%s", d->dev.uuid);
  snprintf(g->backend, sizeof g->backend, "%s", d->dev.backend);
  g->simulated = backend_simulated(d->dev.backend);
  now_iso(g->time, sizeof g->time);
  snprintf(g->rule, sizeof g->rule, "%s", f->c.decide.rule);
  g->restart = st->segment;
  g->duel = st->duel;
  record_cfg_of(&f->c.tmpl, &st->best, &g->best);
  record_cfg_of(&f->c.tmpl, &st->cand, &g->new_cfg);
}

/* The record of a measured generation; takes the job as sent (d->sent) into the record. */
static void measured_record(const farm *f, device_run *d, const decision *dec,
                            const canary_verdict *cv, int untrusted, record *rec) {
  const result *r = f->res;
  base_record(f, d, &d->step, rec);
  record_gen *g = &rec->gen;
  g->measured = 1;
  g->res = *r;
  g->nratios = dec->nratios;
  memcpy(g->ratios, dec->ratios, (size_t)dec->nratios * sizeof *dec->ratios);
  g->median_ratio = dec->median_ratio;
  g->kernel_median_ratio = dec->kernel_median_ratio;
  g->control_drift = dec->control_drift;
  g->min_gain = f->c.decide.min_gain;
  g->drift_tolerance = f->c.decide.drift_tolerance;
  g->decision = dec->kind;
  snprintf(g->reason, sizeof g->reason, "%s", dec->reason);
  g->stats = dec->stats ? cJSON_Duplicate(dec->stats, 1) : NULL;
  g->screened = dec->screened;
  if (r->child > 0) snprintf(g->run, sizeof g->run, "%s", f->run);
  g->elapsed_s = d->t_last - d->t_first;
  g->has_canary = r->ncanary > 0;
  if (g->has_canary) g->canary = *cv;
  g->untrusted = untrusted;
  g->job = d->sent;
  d->sent = NULL;
}

/* A static refusal counted, as written or as read back. */
static void count_static(device_run *d, const record *rec) {
  d->statics += rec->kind == RECORD_GENERATION && !rec->gen.measured;
}

/* Append the record and apply its facts to the search, as resume does with the records it
 * reads back. */
static int commit(farm *f, device_run *d, tf_err *e) {
  search_fact fact;
  if (ledger_write(d->l, f->rec, e)) return -1; /* synced before anything acts on it: flush */
  count_static(d, f->rec);
  int rc = replay_fact(f->rec, &f->c.tmpl, ledger_path(d->l), &fact, e);
  if (rc == 0) rc = search_apply(&d->s, &fact, e);
  return rc < 0 ? tf_wrap(e, "ledger '%s': the record just written", ledger_path(d->l)) : 0;
}

/* A static refusal: the constraint the candidate breaks, or the template's key whose launch
 * expression fails there (its "constraint" is that key). A failing launch is the template's
 * fault, not the search's, so it is said on the progress lines too. */
static int write_refusal(farm *f, device_run *d, const search_step *st, tf_err *e) {
  record *rec = f->rec;
  base_record(f, d, st, rec);
  rec->gen.decision = DECISION_REFUSED;
  if (st->constraint == SEARCH_NO_LAUNCH) {
    snprintf(rec->gen.reason, sizeof rec->gen.reason, "its launch cannot be computed: %s",
             st->reason);
    snprintf(rec->gen.constraint, sizeof rec->gen.constraint, "%s", st->key);
  } else {
    const spec_constraint *k = &f->c.tmpl.cons[st->constraint];
    snprintf(rec->gen.reason, sizeof rec->gen.reason, "breaks constraint '%s': %s", k->name,
             k->reason);
    snprintf(rec->gen.constraint, sizeof rec->gen.constraint, "%s", k->name);
  }
  if (commit(f, d, e)) return -1;
  if (st->constraint == SEARCH_NO_LAUNCH)
    progress(f, "[gpu%d %.12s] gen %lld refused: %s\n", d->dev.ordinal, d->dev.uuid,
             st->generation, rec->gen.reason);
  return 0;
}

static int write_restart(farm *f, device_run *d, const search_step *st, tf_err *e) {
  record *rec = f->rec;
  record_release(rec);
  rec->kind = RECORD_RESTART;
  record_restart *r = &rec->restart;
  r->restart = st->restart;
  r->generation = st->generation;
  record_cfg_of(&f->c.tmpl, &st->champion, &r->champion);
  r->champion_us = st->champion_us;
  record_cfg_of(&f->c.tmpl, &st->start, &r->start);
  snprintf(r->reason, sizeof r->reason, "%s", st->reason);
  if (commit(f, d, e)) return -1;
  progress(f, "[gpu%d %.12s] restart %d of %d (%s)\n", d->dev.ordinal, d->dev.uuid, st->restart,
           f->c.search.restarts, st->why);
  return 0;
}

static int write_end(farm *f, device_run *d, const search_step *st, tf_err *e) {
  record *rec = f->rec;
  record_release(rec);
  rec->kind = RECORD_END;
  snprintf(rec->end.reason, sizeof rec->end.reason, "%s", st->reason);
  rec->end.generation = st->generation;
  record_cfg_of(&f->c.tmpl, &st->best, &rec->end.best);
  if (commit(f, d, e)) return -1;
  d->t_end = tf_monotonic_s();
  progress(f, "[gpu%d %.12s] search ends: %s\n", d->dev.ordinal, d->dev.uuid, st->reason);
  return 0;
}

/* ---- jobs and results ---- */

/* The job of step st as sent: every expression evaluated, the canary and a fresh process
 * when the search asks; NULL with e when it cannot be built (or out of memory). */
static cJSON *job_msg(farm *f, const search_step *st, job *j, tf_err *e) {
  if (job_build(j, &f->c, st->job_id, (int)st->generation, &st->best, &st->cand, e)) return NULL;
  j->canary_rounds = st->canary ? f->c.canary.rounds : 0;
  j->fresh_child = st->fresh;
  cJSON *msg = job_to_json(j);
  if (!msg) tf_fail(e, TF_EXIT_FAIL, "out of memory");
  return msg;
}

/* The job to run ahead of st's decision: the one the search asks for next if st is rejected
 * (search_next_if_rejected), unless it wants a fresh process; NULL when there is none. Any
 * error only means none: the job sent after the decision is built on its own. */
static cJSON *ahead_of(farm *f, device_run *d, const search_step *st) {
  tf_err ignored = {0};
  search_step *nx = &d->ahead_step;
  if (!f->o->run_ahead || search_next_if_rejected(&d->s, st, nx) != 1 || nx->fresh)
    return NULL;
  return job_msg(f, nx, f->job, &ignored);
}

/* Would steps a and b send the same job? job_msg builds a job from these fields alone. */
static int same_job(const search_step *a, const search_step *b) {
  return a->kind == SEARCH_MEASURE && b->kind == SEARCH_MEASURE && a->job_id == b->job_id &&
         a->generation == b->generation && config_equal(&a->best, &b->best) &&
         config_equal(&a->cand, &b->cand) && a->canary == b->canary && a->fresh == b->fresh;
}

/* The job queued (flush sends it, once the records before it are durable), with the programs
 * its device's search may ask for next for the worker to compile ahead (coordinator/
 * prefetch.h) and the job to run ahead of its decision, which travel in the message only,
 * never in the record. The job the worker holds ahead goes as the word "go". */
static int queue_job(farm *f, device_run *d, const search_step *st, tf_err *e) {
  int ahead = d->compile_jobs > 0 ? f->c.search.compile_ahead : 0;
  cJSON *msg = NULL;
  d->go = d->ahead && same_job(&d->ahead_step, st);
  d->extra_s = d->ahead && !d->go ? f->c.measure.deadline_s : 0;
  if (d->go) {
    msg = d->ahead; /* the job as sent ahead: sent, and kept for the record */
    d->ahead = NULL;
  }
  cJSON_Delete(d->ahead);
  d->ahead = NULL;
  if (d->go && ahead > 0 &&
      job_build(f->job, &f->c, st->job_id, (int)st->generation, &st->best, &st->cand, e))
    return -1; /* the programs to compile ahead come from it */
  if (!msg && !(msg = job_msg(f, st, f->job, e))) return -1; /* encoded once: sent, recorded */
  cJSON_Delete(d->sent);
  cJSON_Delete(d->prefetch);
  cJSON_Delete(d->next);
  d->sent = msg;
  d->prefetch = prefetch_list(&d->s, st, f->job, ahead, e);
  d->next = ahead_of(f, d, st); /* the job sent is encoded: f->job is free */
  d->queued = 1;
  return 0;
}

/* The message of a queued job: the job itself, or "go" when the worker holds it ahead; with
 * the lists that travel in the message only (taken by the caller's tree). */
static cJSON *message_of(device_run *d) {
  cJSON *m = d->sent;
  if (d->go) {
    m = cJSON_CreateObject();
    cJSON_AddStringToObject(m, "type", "go");
    cJSON_AddNumberToObject(m, "id", (double)d->job_id);
  }
  if (d->prefetch) cJSON_AddItemToObject(m, "prefetch", d->prefetch);
  if (d->next) cJSON_AddItemReferenceToObject(m, "next", d->next);
  return m;
}

/* Send a queued job. */
static int send_queued(farm *f, device_run *d, tf_err *e) {
  if (!d->queued) return 0;
  d->queued = 0;
  cJSON *m = message_of(d);
  int rc = mpimsg_send(f->comm, d->rank, TAG_JOB, m, e);
  if (m != d->sent) cJSON_Delete(m); /* the reference to next goes, not next */
  else {
    cJSON_DeleteItemFromObjectCaseSensitive(d->sent, "prefetch");
    cJSON_DeleteItemFromObjectCaseSensitive(d->sent, "next");
  }
  if (d->go) d->ahead_taken++;
  d->prefetch = NULL;
  d->ahead = d->next; /* kept as sent, with its root, for the comparison */
  d->next = NULL;
  d->ahead_sent += d->ahead != NULL;
  job_drop_root(d->sent); /* the ledger names files relative to the project root */
  if (f->cpu_first == 0) f->cpu_first = cpu_s();
  if (d->t_first == 0) d->t_first = tf_monotonic_s();
  d->sent_at = tf_monotonic_s();
  return rc;
}

/* Make every record written durable, then send the jobs that wait for it: a decision is acted
 * on only once its line is on disk, and the lines of every device that moved since the last
 * flush go with one sync (coordinator/ledger.h). */
static int flush(farm *f, tf_err *e) {
  for (int i = 0; i < f->ndev; i++) f->ls[i] = f->d[i].usable ? f->d[i].l : NULL;
  if (ledger_sync_all(f->ls, f->ndev, e)) return -1;
  for (int i = 0; i < f->ndev; i++)
    if (f->d[i].usable && send_queued(f, &f->d[i], e)) return -1;
  return 0;
}

static int send_job(farm *f, device_run *d, const search_step *st, tf_err *e) {
  if (queue_job(f, d, st, e)) return -1;
  if (st->duel && !d->s.duel)
    progress(f, "[gpu%d %.12s] restart %d kept %d: its best against the champion\n",
             d->dev.ordinal, d->dev.uuid, d->s.segment, d->s.seg_keeps);
  d->step = *st;
  d->busy = 1;
  d->job_id = st->job_id;
  return 0;
}

/* Do what the search says until it waits for a result or has ended. */
static int advance(farm *f, device_run *d, tf_err *e) {
  while (!d->busy) {
    search_step st;
    if (search_next(&d->s, &st, e)) return -1;
    switch (st.kind) {
      case SEARCH_DONE: return 0;
      case SEARCH_MEASURE: return send_job(f, d, &st, e);
      case SEARCH_REFUSE:
        if (write_refusal(f, d, &st, e)) return -1;
        break;
      case SEARCH_RESTART:
        if (write_restart(f, d, &st, e)) return -1;
        break;
      case SEARCH_END: return write_end(f, d, &st, e);
      case SEARCH_REOPEN: return tf_fail(e, TF_EXIT_FAIL, "search: a reopen is no next step");
    }
  }
  return 0;
}

/* "measured 12 of 40, 7 refused statically, ETA 1m05s": the generation number counts every
 * candidate recorded, so the line says apart the measured generations, the only ones the
 * budget counts, the static refusals, which cost no compile and no budget, and (when there are
 * any) the generations measured again because no canary cleared their process; then the time
 * the rest of the budget takes at this run's rate (an upper bound: max_stale may end the
 * search sooner). */
static void budget_text(const device_run *d, int budget, char *buf, size_t len) {
  int done = d->s.measured, here = done - d->measured_before, left = budget - done;
  double spent = tf_monotonic_s() - d->t_first;
  int n = snprintf(buf, len, "measured %d of %d, %d refused statically", done, budget,
                   d->statics);
  if (n > 0 && (size_t)n < len && d->s.trust.untrusted > 0)
    n += snprintf(buf + n, len - (size_t)n, ", %d measured again", d->s.trust.untrusted);
  if (n < 0 || (size_t)n >= len || here <= 0 || left <= 0 || spent <= 0) return;
  long eta = lround(spent / here * left);
  if (eta >= 3600)
    snprintf(buf + n, len - (size_t)n, ", ETA %ldh%02ldm", eta / 3600, eta % 3600 / 60);
  else
    snprintf(buf + n, len - (size_t)n, ", ETA %ldm%02lds", eta / 60, eta % 60);
}

static void print_decision(const farm *f, const device_run *d, const decision *dec) {
  char change[256], budget[128];
  change_str(&f->c.tmpl, &d->step.best, &d->step.cand, change, sizeof change);
  budget_text(d, f->c.search.budget, budget, sizeof budget);
  progress(f, "[gpu%d %.12s] gen %lld (%s) %s: median %.4f %s (%s)\n", d->dev.ordinal,
           d->dev.uuid, d->step.generation, budget, change, dec->median_ratio,
           decision_names[dec->kind], dec->reason);
}

static device_run *device_of_rank(farm *f, int rank) {
  for (int i = 0; i < f->ndev; i++)
    if (f->d[i].rank == rank && f->d[i].usable) return &f->d[i];
  return NULL;
}

/* The result as the coordinator takes it: a malformed, misaddressed or foreign result is this
 * generation's fault, not the farm's. */
static void take_result(farm *f, device_run *d, const cJSON *msg) {
  result *r = f->res;
  tf_err bad = {0};
  if (result_from_json(msg, r, &bad))
    result_fault(r, d->job_id, d->dev.uuid, "malformed result from the worker: %s", bad.msg);
  else if (r->id != d->job_id)
    result_fault(r, d->job_id, d->dev.uuid, "the worker answered job %lld, not %lld", r->id,
                 d->job_id);
  else if (r->status == RESULT_OK && strcmp(r->device, d->dev.uuid) != 0)
    result_fault(r, d->job_id, d->dev.uuid,
                 "the result was measured on %s, not on this search's device", r->device);
}

/* May the result be decided? Its process's canary, or the canary that cleared it, says;
 * when not, the decision becomes a refusal and the search measures the candidate again. */
static int judge_process(farm *f, device_run *d, const canary_verdict *cv, decision *dec) {
  const result *r = f->res;
  search_fact p = {.kind = SEARCH_MEASURE, .status = r->status, .correct = r->correct,
                   .child = r->child};
  p.canary = r->ncanary == 0 ? TRUST_NO_CANARY : cv->biased ? TRUST_CANARY_BIASED
                                                             : TRUST_CANARY_OK;
  if (r->ncanary > 0 && (cv->biased || r->child != d->s.trust.vetted_child)) /* a first verdict */
    progress(f, "[gpu%d %.12s] %s\n", d->dev.ordinal, d->dev.uuid, cv->reason);
  if (search_trusts(&d->s, &p)) return 0;
  decide_untrusted(dec, cv, r->child);
  return 1;
}

static void add_times(result_times *sum, const result_times *t) {
  sum->compile_s += t->compile_s;
  sum->compile_wait_s += t->compile_wait_s;
  sum->load_s += t->load_s;
  sum->check_s += t->check_s;
  sum->measure_s += t->measure_s;
}

/* This run's measured generations, all devices together. */
static int measured_now(const farm *f) {
  int n = 0;
  for (int i = 0; i < f->ndev; i++) n += f->d[i].s.measured - f->d[i].measured_before;
  return n;
}

/* A device's first result: when it is the last one's, the steady state begins. */
static void note_steady(farm *f) {
  for (int i = 0; i < f->ndev; i++)
    if (f->d[i].usable && !f->d[i].lost && f->d[i].results == 0) return;
  f->steady_t = tf_monotonic_s();
  f->steady_cpu = cpu_s();
  f->steady_n = measured_now(f);
}

/* A refusal for the control's drift, counted for the summary. When best and new held within
 * the tolerance over the rounds the rule used, the control alone moved: that says more about
 * the control at this shape than about the GPU (docs/design.md, "Control drift").
 * A generation the canary refused whose rule saw the drift too counts here as well. */
static void note_drift(const farm *f, device_run *d, const decision *dec) {
  double tol = 1.0 + f->c.decide.drift_tolerance;
  if (dec->kind != DECISION_REFUSED || !(dec->control_drift > tol)) return;
  d->drifted++;
  if (dec->best_spread <= tol && dec->new_spread <= tol) d->drifted_alone++;
}

/* Once per GPU: the launches spread so widely that measure.max_samples held the rounds below
 * the samples the rule's false-keep rate assumes (worker/protocol.h, protocol_samples). */
static void note_capped(const farm *f, device_run *d) {
  const result *r = f->res;
  if (d->capped || r->samples <= 0 || r->samples_wanted <= r->samples) return;
  d->capped = 1;
  progress(f, "[gpu%d %.12s] warning: this kernel's launches spread %.1f%%, so a round needs %d "
           "launches per arm for rule '%s' to hold identical kernels' false keeps at 0.1%% over "
           "%d rounds, and measure.max_samples allows %d: its false-keep rate is not established "
           "here; raise measure.max_samples to %d (docs/design.md, \"Samples per round\")\n",
           d->dev.ordinal, d->dev.uuid, 100.0 * r->launch_spread, r->samples_wanted,
           f->c.decide.rule, f->c.measure.rounds, r->samples, r->samples_wanted);
}

/* Once per GPU: best runs shorter than the shortest kernel at which the rules' false-keep
 * rates were measured, so the campaign's rate is not known; an A/A run of its start says it. */
static void note_short(const farm *f, device_run *d) {
  const result *r = f->res;
  /* the simulated device's times say nothing about a GPU's timer */
  if (d->short_told || backend_simulated(d->dev.backend) || r->status != RESULT_OK ||
      r->nrounds == 0)
    return;
  double us[MSG_MAX_ROUNDS];
  for (int i = 0; i < r->nrounds; i++) us[i] = r->rounds[i].us[ARM_BEST];
  double best = stats_median(us, r->nrounds);
  if (!(best < DECIDE_MEASURED_FLOOR_US)) return;
  d->short_told = 1;
  progress(f, "[gpu%d %.12s] warning: best runs %.2f us per launch, shorter than the %.1f us "
           "kernel at which rule '%s''s false-keep rate was measured (docs/results.md): its "
           "rate here is not established; measure it with an A/A run of this campaign "
           "(search.mode \"aa\", bench/aa.sh)\n",
           d->dev.ordinal, d->dev.uuid, best, DECIDE_MEASURED_FLOOR_US, f->c.decide.rule);
}

/* Decide the result in f->res, record it and apply it to the search. */
static int record_result(farm *f, device_run *d, tf_err *e) {
  d->busy = 0;
  d->t_last = tf_monotonic_s();
  add_times(&d->spent, &f->res->times);
  if (d->results++ == 0) note_steady(f);
  decision dec;
  if (decide(&f->c.decide, f->res, &dec)) {
    decision_release(&dec);
    return tf_fail(e, TF_EXIT_FAIL, "unknown rule '%s'", f->c.decide.rule);
  }
  canary_verdict cv;
  decide_canary(f->c.canary.threshold, f->c.measure.input_sets, f->res, &cv);
  int untrusted = judge_process(f, d, &cv, &dec);
  note_drift(f, d, &dec);
  note_capped(f, d);
  note_short(f, d);
  measured_record(f, d, &dec, &cv, untrusted, f->rec);
  int rc = commit(f, d, e);
  if (rc == 0) print_decision(f, d, &dec);
  decision_release(&dec);
  return rc;
}

static int on_result(farm *f, cJSON *msg, int from, tf_err *e) {
  device_run *d = device_of_rank(f, from);
  if (d && d->lost) return 0; /* a worker declared lost that woke up: its job is recorded */
  if (!d || !d->busy) return tf_fail(e, TF_EXIT_FAIL, "a result from rank %d, which has no job", from);
  take_result(f, d, msg);
  return record_result(f, d, e);
}

/* A worker that missed its deadline is lost: its job is recorded as a fault (so that a resume
 * measures it again), its search stops for this run, and the other devices go on. Its rank
 * cannot be stopped by a message; the run ends through MPI_Abort (coordinator.h). */
static int lose(farm *f, device_run *d, tf_err *e) {
  double waited = tf_monotonic_s() - d->sent_at;
  char ahead[80] = "";
  if (d->extra_s > 0)
    snprintf(ahead, sizeof ahead, " + %g for the job ahead it finished first", d->extra_s);
  result_fault(f->res, d->job_id, d->dev.uuid,
               "worker rank %d sent no result for %.0f s (measure.deadline_s %g + "
               "--worker-margin %g%s): declared lost, its search stops for this run",
               d->rank, waited, f->c.measure.deadline_s, f->o->worker_margin_s, ahead);
  progress(f, "[gpu%d %.12s] %s\n", d->dev.ordinal, d->dev.uuid, f->res->detail);
  d->lost = 1;
  f->lost++;
  return record_result(f, d, e);
}

/* ---- start: hellos, ledgers, resume ---- */

static int duplicate_of(const farm *f, int upto, const char *uuid) {
  for (int i = 0; i < upto; i++)
    if (f->d[i].usable && strcmp(f->d[i].dev.uuid, uuid) == 0) return i;
  return -1;
}

static int take_hello(farm *f, const cJSON *msg, int from, int slot) {
  device_run *d = &f->d[slot];
  tf_err e = {0};
  hello h;
  d->rank = from;
  if (hello_from_json(msg, &h, &e) || !h.has_device) {
    fprintf(stderr, "tunefarm: worker rank %d has no usable device: %s\n", from,
            e.msg[0] ? e.msg : h.error);
    return 0;
  }
  d->dev = h.dev;
  d->compile_jobs = h.compile_jobs;
  /* The workers chose the backend (rank 0 never touches CUDA): say first why it is sim. */
  if (h.fallback[0] && !f->said_fallback++)
    fprintf(stderr, "tunefarm: no GPU here (%s): running on the simulated device (--backend "
            "sim)\n", h.fallback);
  int dup = duplicate_of(f, slot, d->dev.uuid);
  if (dup >= 0) {
    fprintf(stderr,
            "tunefarm: worker rank %d reports device %s, which rank %d already measures; two "
            "workers on one GPU would disturb each other's timings, so rank %d gets no jobs "
            "(start one worker per GPU: mpirun -np G+1, or check CUDA_VISIBLE_DEVICES)\n",
            from, d->dev.uuid, f->d[dup].rank, from);
    return 0;
  }
  d->usable = 1;
  return 0;
}

static int collect_hellos(farm *f, tf_err *e) {
  for (int i = 0; i < f->ndev; i++) {
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

typedef struct resume_ctx {
  farm *f;
  device_run *d;
} resume_ctx;

/* One record read back, applied as the live run applied it when it wrote it. */
static int resume_line(void *ctx, long line, const record *rec, tf_err *e) {
  resume_ctx *x = ctx;
  search_fact fact;
  const char *path = ledger_path(x->d->l);
  int rc = replay_fact(rec, &x->f->c.tmpl, path, &fact, e);
  if (rc == 0) rc = search_apply(&x->d->s, &fact, e);
  if (rc == 0) count_static(x->d, rec);
  if (rc < 0) {
    if (e) e->code = TF_EXIT_INPUT;
    return tf_wrap(e, "ledger '%s': line %ld", path, line);
  }
  return 0;
}

/* A search that ended goes on when the campaign now lets it (a larger search.budget or
 * max_stale, more restarts; none of them is in the campaign's identity): its ledger gains a
 * reopen record after the end record, and the search continues where it stood. */
static int reopen(farm *f, device_run *d, tf_err *e) {
  search_step st;
  int go = search_would_go_on(&d->s, &st, e);
  if (go <= 0) return go;
  const search_opts *so = &f->c.search;
  record *rec = f->rec;
  record_release(rec);
  rec->kind = RECORD_REOPEN;
  rec->reopen.generation = d->s.generation;
  snprintf(rec->reopen.reason, sizeof rec->reopen.reason, "it had ended (%.300s); the campaign "
           "now has search.budget %d, max_stale %d and restarts %d, so it goes on",
           d->s.end_reason, so->budget, so->max_stale, so->restarts);
  if (commit(f, d, e)) return -1;
  d->ended_before = 0;
  progress(f, "[gpu%d %.12s] %s\n", d->dev.ordinal, d->dev.uuid, rec->reopen.reason);
  return 0;
}

static int open_search(farm *f, device_run *d, tf_err *e) {
  ledger_opts lo = {.dir = f->o->ledgers, .fresh = f->o->fresh, .log = f->o->progress};
  search_config cfg;
  if (search_config_of(&f->c, d->dev.ordinal, &cfg, e) ||
      ledger_open(&d->l, &lo, &f->c, &d->dev, e))
    return -1;
  /* seeded with the ordinal its ledger began under: another launch style may give the same
   * GPU another (coordinator/ledger.h), and the resumed search proposes as it would have */
  cfg.ordinal = ledger_ordinal(d->l);
  cfg.space = &f->space;
  if (search_init(&d->s, &cfg, e)) return -1;
  resume_ctx x = {f, d};
  if (ledger_replay(d->l, resume_line, &x, e)) return -1;
  search_begin_run(&d->s); /* every run begins in fresh processes */
  d->measured_before = d->s.measured;
  d->ended_before = d->s.done;
  if (d->s.generation > 0)
    progress(f, "[gpu%d %.12s] resuming %s at generation %lld (%d measured, %d kept)%s\n",
             d->dev.ordinal, d->dev.uuid, ledger_path(d->l), d->s.generation + 1, d->s.measured,
             d->s.keeps, d->s.done ? ": search already ended" : "");
  return d->s.done ? reopen(f, d, e) : 0;
}

/* ---- the loop ---- */

static int all_done(const farm *f) {
  for (int i = 0; i < f->ndev; i++)
    if (f->d[i].usable && !f->d[i].lost && (!f->d[i].s.done || f->d[i].busy)) return 0;
  return 1;
}

/* One message: its result decided and recorded, and its device's next steps taken. */
static int take(farm *f, cJSON *msg, int tag, int from, tf_err *e) {
  int rc = tag == TAG_RESULT ? on_result(f, msg, from, e)
                             : tf_fail(e, TF_EXIT_FAIL, "unexpected tag %d from rank %d", tag, from);
  cJSON_Delete(msg);
  device_run *d = device_of_rank(f, from);
  return rc || (d && !d->lost && advance(f, d, e)) ? -1 : 0;
}

/* The messages already there, up to one per device (so that a flush comes at least that
 * often): each taken as it comes. */
static int take_waiting(farm *f, tf_err *e) {
  for (int n = 1; n < f->ndev; n++) {
    int tag, from, got;
    cJSON *msg = mpimsg_try_recv(f->comm, MPI_ANY_SOURCE, &tag, &from, &got, e);
    if (!msg) return got ? -1 : 0;
    if (take(f, msg, tag, from, e)) return -1;
  }
  return 0;
}

/* The earliest time by which a job sent must have its result, and whose job it is. The
 * worker's own deadline ends a hung measure child; this one catches a hung worker. */
static double first_deadline(farm *f, device_run **late) {
  double first = 0, allowed = f->c.measure.deadline_s + f->o->worker_margin_s;
  for (int i = 0; i < f->ndev; i++) {
    device_run *d = &f->d[i];
    if (!d->usable || d->lost || !d->busy || d->queued) continue;
    double by = d->sent_at + allowed + d->extra_s;
    if (first == 0 || by < first) first = by, *late = d;
  }
  return first;
}

/* Every result that has arrived is taken before the flush that syncs their records at once:
 * the busier the coordinator, the more lines share a sync. */
static int serve_all(farm *f, tf_err *e) {
  for (int i = 0; i < f->ndev; i++)
    if (f->d[i].usable && advance(f, &f->d[i], e)) return -1;
  if (flush(f, e)) return -1;
  while (!all_done(f)) {
    int tag, from, got;
    device_run *late = NULL;
    cJSON *msg = mpimsg_recv_until(f->comm, MPI_ANY_SOURCE, first_deadline(f, &late), &tag,
                                   &from, &got, e);
    if (!msg && got) return -1;
    if (!msg ? lose(f, late, e) : take(f, msg, tag, from, e) || take_waiting(f, e)) return -1;
    if (flush(f, e)) return -1;
  }
  return 0;
}

/* The coordinator's own CPU time over the run's wall time: how much of its core it needs. */
static void print_load(const farm *f, FILE *out, double wall) {
  double cpu = cpu_s();
  int measured = measured_now(f);
  fprintf(out, "  coordinator: %.2f s of CPU in %.1f s of wall time (%.1f%% of one core), %d "
               "measured generations\n",
          cpu, wall, wall > 0 ? 100.0 * cpu / wall : 0.0, measured);
  double first = 0, last = 0;
  for (int i = 0; i < f->ndev; i++) {
    const device_run *d = &f->d[i];
    if (d->t_first > 0 && (first == 0 || d->t_first < first)) first = d->t_first;
    if (d->t_last > last) last = d->t_last;
  }
  /* the farm's throughput, and what the coordinator's core spent on each decision: with the
   * startup (campaign, space, hellos) left out, 1 / that is its ceiling on one core */
  if (last > first && first > 0 && measured > 0)
    fprintf(out, "  decisions: %d in %.2f s from the first job to the last result = %.0f per "
            "second; coordinator CPU %.0f us per decision\n", measured, last - first,
            measured / (last - first), 1e6 * (cpu - f->cpu_first) / measured);
  /* the same once every worker is under way: no measure child starting, no first job */
  int n = measured - f->steady_n;
  if (f->steady_t > 0 && last > f->steady_t && n > 0)
    fprintf(out, "  steady: %d decisions in %.2f s after every worker's first result = %.0f "
            "per second; coordinator CPU %.0f us per decision\n", n, last - f->steady_t,
            n / (last - f->steady_t), 1e6 * (cpu - f->steady_cpu) / n);
}

/* Before stopping on an error, take the results still on their way: a worker blocked in a
 * send that nobody receives would keep mpirun from ever exiting. Nothing is written. */
static void drain(farm *f) {
  for (int i = 0; i < f->ndev; i++) {
    device_run *d = &f->d[i];
    while (d->usable && !d->lost && d->busy && !d->queued) { /* a queued job was never sent */
      int tag, from;
      tf_err e = {0};
      cJSON *msg = mpimsg_recv(f->comm, d->rank, &tag, &from, &e);
      cJSON_Delete(msg);
      if (!msg || tag == TAG_RESULT) d->busy = 0;
    }
  }
}

/* Busy fraction: the GPU's measuring time over the wall time from this run's first job to its
 * last result (docs/reference/report.md); then where the rest went, per result. */
static void print_busy(const device_run *d, FILE *out) {
  double wall = d->t_last - d->t_first;
  int n = d->results;
  const result_times *t = &d->spent;
  if (n <= 0 || wall <= 0) return;
  fprintf(out, "\n    busy: %.1f%% (measuring %.1f s of %.1f s); per job %.3f s "
          "measuring, %.3f s compiling (%.3f s of it waiting for a compile ahead), %.3f s "
          "loading, %.3f s checking", 100.0 * t->measure_s / wall, t->measure_s, wall,
          t->measure_s / n, t->compile_s / n, t->compile_wait_s / n, t->load_s / n,
          t->check_s / n);
}

static void summary_of(const farm *f, const device_run *d, FILE *out, double wall) {
  const search *s = &d->s;
  const trust *t = &d->s.trust;
  char cfg[512];
  spec_config_str(&f->c.tmpl, &s->best, cfg, sizeof cfg);
  fprintf(out, "  gpu%d %s (%s): %lld generations = %d measured + %d refused statically",
          d->dev.ordinal, d->dev.uuid, d->dev.name, s->generation, s->measured, d->statics);
  if (t->untrusted > 0) fprintf(out, " + %d measured again", t->untrusted);
  /* s->refused counts every refusal: here only the measured ones refused as noisy */
  fprintf(out, "; %d kept, %d rejected, %d refused as noisy, %d ambiguous, %d faults; ",
          s->keeps, s->rejects, s->refused - d->statics - t->untrusted, s->ambiguous, s->faults);
  if (search_none_ran(s))
    fprintf(out, "no candidate ran: all %lld jobs ended in a fault or an error, so there is no "
            "best (the start %s was never measured)", s->last_job, cfg);
  else
    fprintf(out, "best %s", cfg);
  if (s->start_us > 0) fprintf(out, " (%.2f us, start %.2f us)", s->best_us, s->start_us);
  int n = s->measured - d->measured_before;
  double span = d->t_first > 0 && d->t_end > d->t_first ? d->t_end - d->t_first : wall;
  fprintf(out, "\n    rate: %d measured generations in %.1f s = %.0f per hour", n, span,
          span > 0 ? 3600.0 * n / span : 0.0);
  print_busy(d, out);
  if (d->ahead_sent > 0)
    fprintf(out, "\n    run ahead: %d jobs started before their decision, %d of them taken",
            d->ahead_sent, d->ahead_taken);
  if (d->drifted > 0) {
    fprintf(out, "\n    control drift: %d generation%s refused, in %d of them best and new "
            "held steady", d->drifted, d->drifted == 1 ? "" : "s", d->drifted_alone);
    if (decide_control_unsteady(d->drifted_alone, n)) fputs(DECIDE_UNSTEADY_CONTROL, out);
  }
  if (t->canaries > 0 || t->untrusted > 0)
    fprintf(out, "\n    canary: %d run, %d found its measure process biased; %d generations "
            "measured again", t->canaries, t->biased, t->untrusted);
  fprintf(out, "\n    ended: %s%s\n    ledger: %s\n",
          d->lost ? "no: its worker was lost (no result within the deadline); the same command "
                    "resumes it"
                  : s->done ? s->end_reason : "not yet",
          d->ended_before ? " (already, in an earlier run)" : "", ledger_path(d->l));
}

/* The devices' backend: the one asked for, or what the workers chose ("cuda", "sim", or both
 * when the nodes differ). */
static const char *backend_of(const farm *f) {
  const char *b = f->o->backend;
  for (int i = 0; !f->o->backend && i < f->ndev; i++) {
    if (!f->d[i].usable) continue;
    if (b && strcmp(b, f->d[i].dev.backend) != 0) return "cuda and sim";
    b = f->d[i].dev.backend;
  }
  return b ? b : "none";
}

/* What a simulated device's results are not: said on the run's first line and in its summary,
 * since its decision lines read like a GPU's. "" without one. */
static const char *simulated_note(const farm *f) {
  const backend_ops *sim = f->o->backend ? backend_find(f->o->backend) : NULL;
  for (int i = 0; !f->o->backend && i < f->ndev; i++)
    if (!sim && f->d[i].usable && backend_simulated(f->d[i].dev.backend))
      sim = backend_find(f->d[i].dev.backend);
  return sim && sim->simulated && sim->note ? sim->note : "";
}

/* The run's outcome: said under --quiet too, which drops only the progress lines. */
static void summary(const farm *f) {
  FILE *out = f->o->progress;
  double wall = tf_monotonic_s() - f->t0;
  fprintf(out, "\ntunefarm: campaign %s finished%s\n", f->c.name, simulated_note(f));
  fprintf(out, "  a generation is a candidate recorded: measured (only those count toward "
          "search.budget %d), refused statically for a constraint it breaks (no compile, no "
          "budget), or measured again when no canary cleared its process\n",
          f->c.search.budget);
  print_load(f, out, wall);
  for (int i = 0; i < f->ndev; i++)
    if (f->d[i].usable) summary_of(f, &f->d[i], out, wall);
}

static void release(farm *f) {
  for (int i = 0; f->d && i < f->ndev; i++) {
    if (f->d[i].l) ledger_close(f->d[i].l);
    search_release(&f->d[i].s);
    cJSON_Delete(f->d[i].sent);
    cJSON_Delete(f->d[i].prefetch);
    cJSON_Delete(f->d[i].next);
    cJSON_Delete(f->d[i].ahead);
  }
  free(f->d);
  free(f->ls);
  record_free(f->rec);
  free(f->res);
  free(f->job);
}

/* The campaign, with every constraint evaluated over the whole space: a template whose
 * expressions fail somewhere (division by zero) is refused before any ledger is touched, and
 * the verdicts stay in f->space for the searches. */
static int load(farm *f, tf_err *e) {
  progress(f, "tunefarm: loading campaign %s\n", f->o->campaign);
  if (campaign_load(&f->c, f->o->campaign, e)) return -1;
  double size = 1, t = tf_monotonic_s();
  for (int k = 0; k < f->c.tmpl.nknobs; k++) size *= f->c.tmpl.knobs[k].nvalues;
  progress(f, "tunefarm: enumerating its space: %.0f configurations against %d constraints\n",
           size, f->c.tmpl.nconstraints);
  space_view *v = &f->space;
  if (space_enumerate(&f->c, v, e) == 0) {
    progress(f, "tunefarm: %lld accepted, %d reachable from the start (%.1f s)\n", v->accepted,
             v->nreachable, tf_monotonic_s() - t);
    return 0;
  }
  campaign_release(&f->c);
  return -1;
}

/* The commands that resume the run, "  CMD\n" each: as launched (run_opts.resume), else
 * mpirun with the options run_opts holds. */
static void resume_lines(const run_opts *o, int ranks, char *buf, size_t len) {
  if (o->resume) {
    snprintf(buf, len, "%s", o->resume);
    return;
  }
  char jobs[48] = "", backend[32] = "";
  if (o->compile_jobs >= 0) snprintf(jobs, sizeof jobs, " --compile-jobs %d", o->compile_jobs);
  if (!o->run_ahead) snprintf(jobs + strlen(jobs), sizeof jobs - strlen(jobs), " --no-run-ahead");
  if (o->backend) snprintf(backend, sizeof backend, " --backend %s", o->backend);
  snprintf(buf, len, "  mpirun -np %d tunefarm run%s --ledgers %s%s %s\n", ranks, backend,
           o->ledgers, jobs, o->campaign);
}

static int run(farm *f, tf_err *e) {
  int usable = 0;
  progress(f, "tunefarm: opening the ledgers in %s/%s/\n", f->o->ledgers, f->c.name);
  for (int i = 0; i < f->ndev; i++) {
    device_run *d = &f->d[i];
    if (!d->usable) continue;
    usable++;
    if (open_search(f, d, e)) return -1;
  }
  if (usable == 0) return tf_fail(e, TF_EXIT_FAIL, "no worker has a usable device");
  progress(f, "tunefarm: campaign %s on %d device(s), backend %s, rule %s%s\n", f->c.name, usable,
           backend_of(f), f->c.decide.rule, simulated_note(f));
  char how[4608];
  int size;
  MPI_Comm_size(f->comm, &size);
  resume_lines(f->o, size, how, sizeof how);
  progress(f, "tunefarm: measuring, %d generations per device at most, counting measured ones "
           "only (static refusals spend none of the budget); Ctrl-C stops, and this resumes:\n%s",
           f->c.search.budget, how);
  return serve_all(f, e);
}

/* Tell every worker to stop, but a lost one: it cannot hear it (the caller aborts). */
static void stop_workers(farm *f) {
  cJSON *stop = cJSON_CreateObject();
  cJSON_AddStringToObject(stop, "type", "stop");
  int size;
  MPI_Comm_size(f->comm, &size);
  for (int r = 1; r < size; r++) {
    const device_run *d = f->d ? device_of_rank(f, r) : NULL;
    if (!d || !d->lost) mpimsg_send(f->comm, r, TAG_STOP, stop, NULL);
  }
  cJSON_Delete(stop);
}

/* The run's end when workers were lost: 1, and a message naming them. */
static int lost_error(const farm *f, tf_err *e) {
  char names[512] = "";
  size_t n = 0;
  for (int i = 0; i < f->ndev && n < sizeof names; i++)
    if (f->d[i].lost)
      n += (size_t)snprintf(names + n, sizeof names - n, "%srank %d (gpu%d %s)", n ? ", " : "",
                            f->d[i].rank, f->d[i].dev.ordinal, f->d[i].dev.uuid);
  tf_fail(e, TF_EXIT_FAIL, "%d worker(s) lost: %s sent no result within its job's deadline; "
          "its ledger records the job as a fault and the other GPUs' searches went on. The "
          "hung rank is torn down with the run; the same command resumes its search", f->lost,
          names);
  return 1;
}

/* The run's end when a search ran no candidate (search_none_ran): 1, and a message naming the
 * GPUs, since a search that measured nothing has no answer to give. */
static int none_ran_error(const farm *f, tf_err *e) {
  char names[512] = "";
  size_t n = 0;
  int count = 0;
  for (int i = 0; i < f->ndev; i++) {
    const device_run *d = &f->d[i];
    if (!d->usable || !search_none_ran(&d->s) || n >= sizeof names) continue;
    count++;
    n += (size_t)snprintf(names + n, sizeof names - n, "%sgpu%d %.12s (ledger '%s')",
                          n ? ", " : "", d->dev.ordinal, d->dev.uuid, ledger_path(d->l));
  }
  if (count == 0) return 0;
  return tf_fail(e, TF_EXIT_FAIL, "no candidate ran on %d GPU(s): %s: every job ended in a "
                 "fault or an error, so there is no best; each fault's detail is in the ledger",
                 count, names);
}

/* ---- interrupted ---- */

/* Said on SIGINT or SIGTERM (mpirun turns a Ctrl-C into SIGTERM for every rank): the ledgers
 * hold every record written, fsync'd, and the same command resumes them. Built before the run,
 * since a signal handler may only write. Under mpirun often only the first bytes a rank writes
 * after the signal reach the terminal, so the line saying what stopped goes first, on its
 * own; the run's first lines said how to resume already. */
static char interrupted_how[5120];

static void on_signal(int sig) {
  const char *what = sig == SIGINT ? "\ntunefarm: stopped by SIGINT\n"
                                   : "\ntunefarm: stopped by SIGTERM\n";
  ssize_t w = write(STDERR_FILENO, what, strlen(what));
  w = write(STDERR_FILENO, interrupted_how, strlen(interrupted_how));
  (void)w;
  signal(sig, SIG_DFL); /* then end as the signal would have */
  raise(sig);
}

static void catch_signals(const run_opts *o, int ranks) {
  char how[sizeof interrupted_how - 256];
  resume_lines(o, ranks, how, sizeof how);
  snprintf(interrupted_how, sizeof interrupted_how,
           "tunefarm: the ledgers in %s/ hold every generation recorded. Resume with the same "
           "command (without --fresh):\n%s", o->ledgers, how);
  struct sigaction sa;
  memset(&sa, 0, sizeof sa);
  sa.sa_handler = on_signal;
  sigemptyset(&sa.sa_mask);
  sigaction(SIGINT, &sa, NULL);
  sigaction(SIGTERM, &sa, NULL);
}

int coordinator_run(MPI_Comm comm, const run_opts *o, tf_err *e) {
  farm f = {.comm = comm, .o = o, .t0 = tf_monotonic_s()};
  now_iso(f.run, sizeof f.run);
  int size;
  MPI_Comm_size(comm, &size);
  f.ndev = size - 1;
  catch_signals(o, size);
  f.d = calloc((size_t)f.ndev, sizeof *f.d);
  f.ls = calloc((size_t)f.ndev, sizeof *f.ls);
  f.rec = record_new();
  f.res = calloc(1, sizeof *f.res);
  f.job = malloc(sizeof *f.job);
  /* The hellos first: a worker that fell back to the simulated device says so on the first
   * line. Workers wait for their first job meanwhile. */
  int rc = f.d && f.ls && f.rec && f.res && f.job ? collect_hellos(&f, e)
                                         : tf_fail(e, TF_EXIT_FAIL, "out of memory");
  int loaded = rc == 0 && load(&f, e) == 0;
  if (rc == 0 && !loaded) rc = -1;
  if (rc == 0) rc = run(&f, e);
  if (rc != 0 && f.d) drain(&f);
  if (rc == 0) summary(&f); /* before the stop: each worker then adds its compile pool's line */
  stop_workers(&f);
  if (rc == 0 && f.lost) rc = lost_error(&f, e);
  if (rc == 0) rc = none_ran_error(&f, e);
  if (loaded) {
    space_release(&f.space);
    campaign_release(&f.c);
  }
  release(&f);
  return rc;
}
