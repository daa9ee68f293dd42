/* report_read: a ledger read whole for the report's writers (tools/report_model.h).
 *
 * The search's answer after every record comes from the search machine (ledger_best), the
 * same code resume and bench use, so the report cannot disagree with them about what won. */
#include "tools/report_model.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "coordinator/ledger.h" /* defines: ledger_scan */
#include "coordinator/replay.h" /* defines: ledger_best_init, ledger_best_add, ledger_best_get */
#include "coordinator/search.h" /* defines: search (the answer's state) */
#include "compile/program.h"     /* defines: program_source_path */
#include "tools/throughput.h"   /* defines: throughput_work, throughput_rate, throughput_peak_tflops */

/* Grow *v (of *cap elements of size sz) to hold n + 1. */
static int grow(void **v, size_t *cap, size_t n, size_t sz) {
  if (n < *cap) return 0;
  size_t c = *cap ? *cap * 2 : 16;
  void *p = realloc(*v, c * sz);
  if (!p) return -1;
  *v = p;
  *cap = c;
  return 0;
}

static char *dup_or_null(const char *s) { return s && s[0] ? strdup(s) : NULL; }

/* ---------------------------------------------------------------- labels */

void report_search_label(const report_gen *g, char *buf, size_t len) {
  if (g->duel)
    snprintf(buf, len, "duel %d", g->restart);
  else if (g->restart > 0)
    snprintf(buf, len, "restart %d", g->restart);
  else
    snprintf(buf, len, "search 1");
}

void report_change_text(const record_cfg *from, const record_cfg *to, char *buf, size_t len) {
  size_t n = 0;
  buf[0] = '\0';
  for (int k = 0; k < from->n && k < to->n && n < len; k++) {
    if (from->v[k] == to->v[k]) continue;
    n += (size_t)snprintf(buf + n, len - n, "%s%s %lld→%lld", n ? ", " : "", from->name[k],
                          from->v[k], to->v[k]);
  }
  if (!buf[0]) snprintf(buf, len, "—");
}

const report_gen *report_gen_at(const report_ledger *l, long long gen) {
  for (size_t i = 0; i < l->ngens; i++)
    if (l->gens[i].generation == gen) return &l->gens[i];
  return NULL;
}

/* ---------------------------------------------------------------- reasons */

/* Where a number starts at in[i]: a digit, or a sign before one that follows a space or '('. */
static int number_at(const char *in, size_t i) {
  if (in[i] >= '0' && in[i] <= '9') return 1;
  return (in[i] == '-' || in[i] == '+') && in[i + 1] >= '0' && in[i + 1] <= '9' &&
         (i == 0 || in[i - 1] == ' ' || in[i - 1] == '(');
}

/* The reason's words (its numbers taken out, each left as one '#') into *words, its numbers
 * into nums; returns how many numbers it holds. */
static int split_reason(const char *in, char **words, double *nums, int max) {
  size_t n = strlen(in), o = 0;
  int count = 0;
  char *w = malloc(n + 1);
  if (!w) return -1;
  for (size_t i = 0; i < n;) {
    if (!number_at(in, i)) {
      w[o++] = in[i++];
      continue;
    }
    char *end;
    double v = strtod(in + i, &end);
    size_t used = (size_t)(end - (in + i));
    if (used == 0) used = 1;
    /* "1e3" reads as one number; "2." leaves the full stop to the sentence */
    if (in[i + used - 1] == '.') used--;
    if (count < max) nums[count] = v;
    count++;
    w[o++] = '#';
    i += used;
  }
  w[o] = '\0';
  *words = w;
  return count;
}

static int outcome_add(report_outcome *oc, const char *reason) {
  const char *r = reason && reason[0] ? reason : "(no reason given)";
  double nums[REPORT_MAX_NUMBERS];
  char *words = NULL;
  int nnum = split_reason(r, &words, nums, REPORT_MAX_NUMBERS);
  if (nnum < 0) return -1;
  if (nnum > REPORT_MAX_NUMBERS) nnum = REPORT_MAX_NUMBERS;
  oc->count++;
  for (size_t i = 0; i < oc->ngroups; i++) {
    report_reason *g = &oc->groups[i];
    if (strcmp(g->words, words) != 0) continue;
    g->count++;
    for (int k = 0; k < g->nnum && k < nnum; k++) {
      if (nums[k] < g->lo[k]) g->lo[k] = nums[k];
      if (nums[k] > g->hi[k]) g->hi[k] = nums[k];
    }
    free(words);
    return 0;
  }
  if (grow((void **)&oc->groups, &oc->cap, oc->ngroups, sizeof *oc->groups)) {
    free(words);
    return -1;
  }
  report_reason *g = &oc->groups[oc->ngroups];
  memset(g, 0, sizeof *g);
  g->first = strdup(r);
  if (!g->first) {
    free(words);
    return -1;
  }
  g->words = words;
  g->count = 1;
  g->order = oc->ngroups++;
  g->nnum = nnum;
  for (int k = 0; k < nnum; k++) g->lo[k] = g->hi[k] = nums[k];
  return 0;
}

static int cmp_group(const void *a, const void *b) {
  const report_reason *x = a, *y = b;
  if (x->count != y->count) return x->count < y->count ? 1 : -1;
  return (x->order > y->order) - (x->order < y->order);
}

void report_outcome_sort(report_outcome *oc) {
  if (oc->ngroups > 1) qsort(oc->groups, oc->ngroups, sizeof *oc->groups, cmp_group);
}

void report_reason_ranges(const report_reason *r, char *buf, size_t len) {
  size_t n = 0;
  buf[0] = '\0';
  for (int k = 0; k < r->nnum && n < len; k++) {
    if (r->lo[k] == r->hi[k])
      n += (size_t)snprintf(buf + n, len - n, "%s%g", k ? ", " : "", r->lo[k]);
    else
      n += (size_t)snprintf(buf + n, len - n, "%s%g to %g", k ? ", " : "", r->lo[k], r->hi[k]);
  }
}

/* ---------------------------------------------------------------- processes */

static report_process *process_of(report_ledger *l, const record_gen *g) {
  int child = g->res.child;
  for (size_t i = 0; i < l->nprocs; i++)
    if (l->procs[i].child == child && strcmp(l->procs[i].run, g->run) == 0) return &l->procs[i];
  if (grow((void **)&l->procs, &l->capprocs, l->nprocs, sizeof *l->procs)) return NULL;
  report_process *p = &l->procs[l->nprocs++];
  memset(p, 0, sizeof *p);
  snprintf(p->run, sizeof p->run, "%s", g->run);
  p->child = child;
  for (int k = 0; k < 2; k++) p->canary[k] = p->lo[k] = p->hi[k] = NAN;
  return p;
}

static int aa_push(report_process *p, double span, double kernel) {
  if (p->naa == p->capaa) {
    int cap = p->capaa ? 2 * p->capaa : 64;
    for (int k = 0; k < 2; k++) {
      double *v = realloc(p->aa[k], (size_t)cap * sizeof *v);
      if (!v) return -1;
      p->aa[k] = v;
    }
    p->capaa = cap;
  }
  p->aa[0][p->naa] = span;
  p->aa[1][p->naa] = kernel;
  p->naa++;
  return 0;
}

/* What one measured generation says about the process that measured it. */
static int process_add(report_ledger *l, const record_gen *g, int aa, int keep) {
  report_process *p = process_of(l, g);
  if (!p) return -1;
  p->generations++;
  if (g->has_canary) {
    const canary_verdict *v = &g->canary;
    p->canaries++;
    snprintf(p->verdict, sizeof p->verdict, "%s", v->biased ? "biased" : "ok");
    for (int k = 0; k < 2; k++) {
      p->canary[k] = v->ratio[k];
      p->lo[k] = isfinite(v->lo[k]) ? v->lo[k] : NAN;
      p->hi[k] = isfinite(v->hi[k]) ? v->hi[k] : NAN;
    }
  }
  if (!aa || g->untrusted) return 0;
  p->decided++;
  p->keeps += keep;
  for (int i = 0; i < g->res.nrounds; i++) {
    const round_rec *r = &g->res.rounds[i];
    if (r->screened) continue;
    double kb = r->kernel_us[ARM_BEST], kn = r->kernel_us[ARM_NEW];
    if (aa_push(p, r->us[ARM_NEW] / r->us[ARM_BEST], kb >= 0 && kn >= 0 ? kn / kb : NAN))
      return -1;
  }
  return 0;
}

/* ---------------------------------------------------------------- records */

typedef struct read_ctx {
  report_ledger *l;
  ledger_best best;
  int has_control;
  job *job;                  /* the first measured record's: its specs, problem and control */
} read_ctx;

/* The control arm's name, from the first measured record's job, which is kept for the
 * throughput (the specs it names, the problem, the control's configuration). */
static void control_name(read_ctx *x, const record_gen *g) {
  job *j = malloc(sizeof *j);
  tf_err e = {0};
  if (j && record_job(g, j, &e) == 0) {
    snprintf(x->l->control, sizeof x->l->control, "%s", j->arm[ARM_CONTROL].name_expr);
    x->has_control = 1;
    x->job = j;
    return;
  }
  free(j);
}

static void fill_rounds(report_gen *r, const record_gen *g) {
  r->before_us = record_rounds_median(g, ARM_BEST, 0);
  r->after_us = record_rounds_median(g, ARM_NEW, 0);
  r->control_us = record_rounds_median(g, ARM_CONTROL, 0);
  r->before_kernel_us = record_rounds_median(g, ARM_BEST, 1);
  r->after_kernel_us = record_rounds_median(g, ARM_NEW, 1);
  r->control_kernel_us = record_rounds_median(g, ARM_CONTROL, 1);
  r->median_ratio = g->measured ? g->median_ratio : NAN;
  r->kernel_median_ratio = g->measured ? g->kernel_median_ratio : NAN;
  r->control_drift = g->measured ? g->control_drift : NAN;
}

static int fill_ratios(report_gen *r, const record_gen *g) {
  if (g->res.nrounds == 0) return 0;
  r->ratios = malloc((size_t)g->res.nrounds * sizeof *r->ratios);
  r->new_rounds_us = malloc((size_t)g->res.nrounds * sizeof *r->new_rounds_us);
  r->best_rounds_us = malloc((size_t)g->res.nrounds * sizeof *r->best_rounds_us);
  if (!r->ratios || !r->new_rounds_us || !r->best_rounds_us) return -1;
  for (int i = 0; i < g->res.nrounds; i++) {
    const round_rec *rr = &g->res.rounds[i];
    if (rr->screened) continue;
    r->new_rounds_us[r->nratios] = rr->us[ARM_NEW];
    r->best_rounds_us[r->nratios] = rr->us[ARM_BEST];
    r->ratios[r->nratios++] = rr->us[ARM_NEW] / rr->us[ARM_BEST];
  }
  return 0;
}

/* max/min of one arm over the unscreened rounds: the rounds its rule used (the measure child
 * stops where the rule does); 1 with none. */
static double arm_spread(const record_gen *g, int arm) {
  double lo = INFINITY, hi = 0.0;
  for (int i = 0; i < g->res.nrounds; i++) {
    const round_rec *rr = &g->res.rounds[i];
    if (rr->screened) continue;
    if (rr->us[arm] < lo) lo = rr->us[arm];
    if (rr->us[arm] > hi) hi = rr->us[arm];
  }
  return hi > 0.0 ? hi / lo : 1.0;
}

/* A measured record refused for its control's drift, and whether the control alone moved. */
static void drift_add(report_ledger *l, const record_gen *g) {
  if (!g->measured) return;
  l->measured++;
  double tol = 1.0 + g->drift_tolerance;
  if (g->decision != DECISION_REFUSED || !(g->control_drift > tol)) return;
  l->drifted++;
  l->drifted_alone += arm_spread(g, ARM_BEST) <= tol && arm_spread(g, ARM_NEW) <= tol;
}

/* A measured record's time: a run's wall is its last record's elapsed_s (records of one run
 * are consecutive, and elapsed_s grows within it). */
static void time_add(report_ledger *l, const record_gen *g) {
  if (!g->measured || !(g->elapsed_s > 0)) return;
  if (strcmp(g->run, l->timed_run) != 0) {
    l->wall_s += l->run_wall_s;
    l->run_wall_s = 0;
    snprintf(l->timed_run, sizeof l->timed_run, "%s", g->run);
  }
  if (g->elapsed_s > l->run_wall_s) l->run_wall_s = g->elapsed_s;
  l->measure_s += g->res.times.measure_s;
  l->timed++;
}

static int generation(read_ctx *x, const record_gen *g) {
  report_ledger *l = x->l;
  if (grow((void **)&l->gens, &l->capgens, l->ngens, sizeof *l->gens)) return -1;
  report_gen *r = &l->gens[l->ngens++];
  memset(r, 0, sizeof *r);
  r->generation = g->generation;
  r->restart = g->restart;
  r->duel = g->duel;
  r->measured = g->measured;
  r->untrusted = g->untrusted;
  r->decision = g->decision;
  r->status = g->measured ? g->res.status : RESULT_OK;
  r->correct = g->measured && g->res.correct;
  r->cache_hit = g->measured && g->res.cache_hit;
  snprintf(r->constraint, sizeof r->constraint, "%s", g->constraint);
  snprintf(r->time, sizeof r->time, "%s", g->time);
  r->best = g->best;
  r->new_cfg = g->new_cfg;
  fill_rounds(r, g);
  r->rel_err_new = g->measured ? g->res.rel_err[ARM_NEW] : NAN;
  r->compile_ms = g->measured ? g->res.compile_ms : NAN;
  r->wall_s = g->measured ? g->res.wall_s : NAN;
  if (g->measured) r->times = g->res.times;
  r->child = g->measured ? g->res.child : 0;
  snprintf(r->run, sizeof r->run, "%s", g->run);
  r->has_canary = g->has_canary;
  r->canary_biased = g->has_canary && g->canary.biased;
  for (int k = 0; k < 2; k++) {
    r->canary_ratio[k] = g->has_canary ? g->canary.ratio[k] : NAN;
    r->canary_lo[k] = g->has_canary ? g->canary.lo[k] : NAN;
    r->canary_hi[k] = g->has_canary ? g->canary.hi[k] : NAN;
  }
  r->reason = dup_or_null(g->reason);
  r->detail = g->measured ? dup_or_null(g->res.detail) : NULL;
  if ((g->reason[0] && !r->reason) || fill_ratios(r, g)) return -1;
  l->rounds += g->res.nrounds;
  time_add(l, g);
  drift_add(l, g);
  int keep = g->decision == DECISION_KEEP, aa = record_cfg_equal(&g->best, &g->new_cfg);
  l->keeps += keep;
  if (g->measured) {
    if (!x->has_control) control_name(x, g);
    l->aa = l->aa && aa;
    if (process_add(l, g, aa, keep)) return -1;
  }
  if (g->measured) l->drift_tolerance = g->drift_tolerance, l->min_gain = g->min_gain;
  if (isnan(l->start_us) && !isnan(r->before_us)) {
    l->start_us = r->before_us;
    l->start_cfg = g->best;
    l->has_start = 1;
  }
  if (keep) return 0;
  int o = g->decision == DECISION_REJECT    ? REPORT_REJECT
          : g->decision == DECISION_REFUSED ? REPORT_REFUSED
                                            : REPORT_AMBIGUOUS;
  return outcome_add(&l->out[o], g->reason);
}

static int restart(report_ledger *l, const record_restart *rs) {
  if (grow((void **)&l->restarts, &l->caprestarts, l->nrestarts, sizeof *l->restarts)) return -1;
  report_restart *r = &l->restarts[l->nrestarts++];
  r->restart = rs->restart;
  r->after = rs->generation;
  r->champion_us = rs->champion_us;
  r->reason = dup_or_null(rs->reason);
  return 0;
}

/* After each record: the answer and the best of the search in progress, for the plots. */
static void note_answer(read_ctx *x) {
  report_ledger *l = x->l;
  if (l->ngens == 0) return;
  report_gen *r = &l->gens[l->ngens - 1];
  record_cfg cfg;
  double us = NAN;
  long long gen;
  if (ledger_best_get(&x->best, &cfg, &us, &gen)) r->answer_us = us;
  const search *s = x->best.s;
  r->search_best_us = s && s->best_gen >= 0 ? s->best_us : NAN;
}

static int read_line(void *ctx, long line, const record *rec, tf_err *e) {
  read_ctx *x = ctx;
  report_ledger *l = x->l;
  if (ledger_best_add(&x->best, rec, e)) return tf_wrap(e, "ledger '%s': line %ld", l->path, line);
  int rc = 0;
  switch (rec->kind) {
    case RECORD_DEVICE:
      l->dev = rec->device.dev;
      snprintf(l->campaign, sizeof l->campaign, "%s", rec->device.campaign);
      snprintf(l->campaign_path, sizeof l->campaign_path, "%s", rec->device.campaign_path);
      snprintf(l->root, sizeof l->root, "%s", rec->device.root);
      snprintf(l->backend, sizeof l->backend, "%s", rec->device.backend);
      snprintf(l->mode, sizeof l->mode, "%s", rec->device.mode);
      snprintf(l->created, sizeof l->created, "%s", rec->device.created);
      return 0;
    case RECORD_GENERATION:
      rc = generation(x, &rec->gen);
      if (rc == 0) note_answer(x);
      break;
    case RECORD_RESTART: rc = restart(l, &rec->restart); break;
    case RECORD_VERSIONS: break; /* another driver or NVRTC from here on: the search is the same */
    case RECORD_REOPEN: /* a later run let the search go on past its end */
      l->ended = 0;
      l->reopens++;
      free(l->end_reason);
      l->end_reason = NULL;
      break;
    default:
      l->ended = 1;
      free(l->end_reason);
      l->end_reason = strdup(rec->end.reason);
      rc = l->end_reason ? 0 : -1;
  }
  return rc ? tf_fail(e, TF_EXIT_FAIL, "out of memory") : 0;
}

/* ---------------------------------------------------------------- the answer */

static int cmp_double(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return (x > y) - (x < y);
}

/* The control over the campaign: the range and the median of its per-generation medians. */
static int control_spread(report_ledger *l) {
  double *v = malloc((l->ngens ? l->ngens : 1) * sizeof *v);
  if (!v) return -1;
  int n = 0;
  for (size_t i = 0; i < l->ngens; i++)
    if (isfinite(l->gens[i].control_us)) v[n++] = l->gens[i].control_us;
  if (n > 0) {
    qsort(v, (size_t)n, sizeof *v, cmp_double);
    l->control_lo = v[0];
    l->control_hi = v[n - 1];
    l->control_median = n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
  }
  free(v);
  return 0;
}

/* The keep that made the answer: the last keep whose new is the final best. */
static void find_winner(report_ledger *l) {
  l->winner_gen = -1;
  for (size_t i = 0; i < l->ngens; i++) {
    const report_gen *g = &l->gens[i];
    if (g->decision == DECISION_KEEP && record_cfg_equal(&g->new_cfg, &l->best_cfg))
      l->winner_gen = g->generation;
  }
}

static void finish(report_ledger *l, const ledger_best *b) {
  l->has_best = ledger_best_get(b, &l->best_cfg, &l->best_us, &l->best_gen);
  if (!l->has_best) return;
  find_winner(l);
  const report_gen *g = l->best_gen >= 0 ? report_gen_at(l, l->best_gen) : NULL;
  l->control_us = g ? g->control_us : NAN;
}

/* ---------------------------------------------------------------- throughput */

static report_rate rate_at(const report_ledger *l, double us, double flops, double bytes) {
  report_rate r = {us, throughput_rate(flops, us, 1), throughput_rate(bytes, us, 0), NAN, NAN};
  r.peak_fraction = r.tflops / l->peak_tflops;
  r.bw_fraction = r.gbps / l->peak_gbps;
  return r;
}

/* The job's problem in the order of spec s's dims: each by its name (a dim the job lacks
 * leaves the spec's expression unevaluable, so its work unknown). */
static void dims_for(const spec *s, const job *j, long long *dims) {
  for (int d = 0; d < SPEC_MAX_DIMS; d++) dims[d] = 0;
  for (int i = 0; i < j->ndims; i++) {
    int d = spec_dim_index(s, j->dim_names[i]);
    if (d >= 0) dims[d] = j->dims[i];
  }
}

/* flops and bytes of one launch of cfg (a template arm) or of the committed kernel (k). */
static void work_of(const spec *s, const job *j, const config *c, double *flops, double *bytes) {
  long long dims[SPEC_MAX_DIMS];
  dims_for(s, j, dims);
  *flops = throughput_work(s, 1, dims, c);
  *bytes = throughput_work(s, 0, dims, c);
}

static void rate_of_cfg(report_ledger *l, const spec *t, const job *j, const record_cfg *rc,
                        double us, report_rate *out) {
  config c;
  tf_err e = {0};
  double flops = 0, bytes = 0;
  if (record_cfg_config(t, rc, l->path, "configuration", &c, &e) == 0)
    work_of(t, j, &c, &flops, &bytes);
  *out = rate_at(l, us, flops, bytes);
}

/* Spec which (0 the template's, 1 the committed control's) of job j, loaded into s: from the
 * project root ($TUNEFARM_ROOT or here), else from the root the ledger recorded, as export
 * finds its campaign. Where it cannot be, the writers say why there is no throughput
 * (work_note): the ledger is fine. */
static int load_spec(report_ledger *l, const job *j, int which, spec *s) {
  char path[SPEC_PATH + 256], shown[SPEC_PATH];
  tf_err e = {0};
  program_source_path(NULL, j->specs[which], path, sizeof path);
  if (spec_load(s, path, &e) == 0) return 0;
  if (l->root[0]) {
    tf_err again = {0};
    program_source_path(l->root, j->specs[which], path, sizeof path);
    if (spec_load(s, path, &again) == 0) return 0;
  }
  snprintf(l->work_note, sizeof l->work_note, "cannot read the spec '%.160s' the ledger's jobs "
           "name (run from the project root, or set TUNEFARM_ROOT to it)",
           tf_escape(shown, sizeof shown, j->specs[which]));
  return -1;
}

/* TFLOP/s and GB/s of the start, the final best and the control, and the FP32 peak. */
static int throughput(report_ledger *l, const job *j) {
  static const config none = {0, {0}};
  l->peak_tflops = throughput_peak_tflops(&l->dev);
  l->peak_gbps = throughput_peak_gbps(&l->dev);
  report_rate unknown = {NAN, NAN, NAN, NAN, NAN};
  l->rate_start = l->rate_best = l->rate_control = unknown;
  if (!j || !j->specs[0][0]) {
    snprintf(l->work_note, sizeof l->work_note, "no measured generation names its spec");
    return 0;
  }
  snprintf(l->spec_path, sizeof l->spec_path, "%s", j->specs[0]);
  spec *t = calloc(2, sizeof *t);
  if (!t) return -1;
  if (load_spec(l, j, 0, &t[0]) == 0) {
    long long dims[SPEC_MAX_DIMS];
    dims_for(&t[0], j, dims);
    config start;
    tf_err e = {0};
    if (l->has_start && record_cfg_config(&t[0], &l->start_cfg, l->path, "start", &start, &e) == 0)
      l->unit_flops = throughput_unit_flops(&t[0], dims, &start);
    if (l->has_start) rate_of_cfg(l, &t[0], j, &l->start_cfg, l->start_us, &l->rate_start);
    if (l->has_best) rate_of_cfg(l, &t[0], j, &l->best_cfg, l->best_us, &l->rate_best);
    const job_arm *c = &j->arm[ARM_CONTROL];
    double flops = 0, bytes = 0;
    if (c->from_template) {
      work_of(&t[0], j, &c->cfg, &flops, &bytes);
    } else if (c->library[0]) {
      work_of(&t[0], j, &j->arm[ARM_BEST].cfg, &flops, &bytes); /* as bench: the template's count */
    } else if (j->specs[1][0] && load_spec(l, j, 1, &t[1]) == 0) {
      work_of(&t[1], j, &none, &flops, &bytes);
      spec_release(&t[1]);
    }
    l->rate_control = rate_at(l, l->control_us, flops, bytes);
    spec_release(&t[0]);
  }
  free(t);
  return 0;
}

int report_control_faster(const report_ledger *l) {
  return l->has_best && l->control_us < l->best_us; /* NAN compares false */
}

/* ---------------------------------------------------------------- knob effects */

typedef struct move {
  int knob;
  long long from, to;
  double ratio;
} move;

static int cmp_move(const void *a, const void *b) {
  const move *x = a, *y = b;
  if (x->knob != y->knob) return (x->knob > y->knob) - (x->knob < y->knob);
  if (x->from != y->from) return (x->from > y->from) - (x->from < y->from);
  if (x->to != y->to) return (x->to > y->to) - (x->to < y->to);
  return (x->ratio > y->ratio) - (x->ratio < y->ratio);
}

/* The knob a generation's change touches alone, or -1: a trusted, correct measurement that
 * the rule judged (keep, reject, ambiguous), not a duel (two searches' answers, not a move). */
static int single_move(const report_gen *g) {
  if (!g->measured || g->untrusted || g->duel || !g->correct || g->status != RESULT_OK ||
      g->decision == DECISION_REFUSED || !isfinite(g->median_ratio) || g->best.n != g->new_cfg.n)
    return -1;
  int knob = -1;
  for (int k = 0; k < g->best.n; k++) {
    if (g->best.v[k] == g->new_cfg.v[k]) continue;
    if (knob >= 0 || strcmp(g->best.name[k], g->new_cfg.name[k]) != 0) return -1;
    knob = k;
  }
  return knob;
}

static double median_of(const move *m, size_t n, double *tmp) {
  for (size_t i = 0; i < n; i++) tmp[i] = m[i].ratio;
  qsort(tmp, n, sizeof *tmp, cmp_double);
  return n % 2 ? tmp[n / 2] : 0.5 * (tmp[n / 2 - 1] + tmp[n / 2]);
}

static void effect_put(report_effect *e, const char *knob, int all, const move *m, size_t n,
                       double *tmp) {
  snprintf(e->knob, sizeof e->knob, "%s", knob);
  e->all = all;
  e->from = m->from;
  e->to = m->to;
  e->count = (int)n;
  e->median = median_of(m, n, tmp);
}

int report_knob_effects(const report_ledger *l, report_effect **out, size_t *nout) {
  *out = NULL;
  *nout = 0;
  size_t n = 0;
  move *m = malloc((l->ngens ? l->ngens : 1) * sizeof *m);
  double *tmp = malloc((l->ngens ? l->ngens : 1) * sizeof *tmp);
  report_effect *e = calloc(2 * (l->ngens ? l->ngens : 1), sizeof *e);
  if (!m || !tmp || !e) {
    free(m), free(tmp), free(e);
    return -1;
  }
  for (size_t i = 0; i < l->ngens; i++) {
    const report_gen *g = &l->gens[i];
    int k = single_move(g);
    if (k >= 0) m[n++] = (move){k, g->best.v[k], g->new_cfg.v[k], g->median_ratio};
  }
  qsort(m, n, sizeof *m, cmp_move);
  size_t ne = 0;
  for (size_t i = 0; i < n;) { /* one knob: all its moves, then each from -> to */
    size_t end = i;
    while (end < n && m[end].knob == m[i].knob) end++;
    const char *name = l->gens[0].best.name[m[i].knob];
    effect_put(&e[ne++], name, 1, &m[i], end - i, tmp);
    for (size_t j = i; j < end;) {
      size_t k = j;
      while (k < end && m[k].from == m[j].from && m[k].to == m[j].to) k++;
      effect_put(&e[ne++], name, 0, &m[j], k - j, tmp);
      j = k;
    }
    i = end;
  }
  free(m);
  free(tmp);
  *out = e;
  *nout = ne;
  return 0;
}

int report_ledger_read(report_ledger *l, const char *path, FILE *log, tf_err *e) {
  static const char *const names[REPORT_OUTCOMES] = {"rejected", "refused", "ambiguous"};
  memset(l, 0, sizeof *l);
  l->path = path;
  l->start_us = l->best_us = l->control_us = NAN;
  l->control_lo = l->control_hi = l->control_median = NAN;
  l->best_gen = l->winner_gen = -1;
  l->drift_tolerance = l->min_gain = NAN;
  l->aa = 1;
  for (int i = 0; i < REPORT_OUTCOMES; i++) l->out[i].name = names[i];
  read_ctx x = {.l = l};
  ledger_best_init(&x.best, NULL, path);
  int rc = ledger_scan(path, log, read_line, &x, e);
  if (rc == 0) {
    l->wall_s += l->run_wall_s; /* the last run's */
    l->run_wall_s = 0;
    finish(l, &x.best);
    if (control_spread(l) || throughput(l, x.job) ||
        report_knob_effects(l, &l->effects, &l->neffects))
      rc = tf_fail(e, TF_EXIT_FAIL, "out of memory");
  }
  free(x.job);
  ledger_best_release(&x.best);
  return rc;
}

void report_ledger_release(report_ledger *l) {
  for (size_t i = 0; i < l->ngens; i++) {
    free(l->gens[i].reason);
    free(l->gens[i].detail);
    free(l->gens[i].ratios);
    free(l->gens[i].new_rounds_us);
    free(l->gens[i].best_rounds_us);
  }
  free(l->gens);
  for (size_t i = 0; i < l->nrestarts; i++) free(l->restarts[i].reason);
  free(l->restarts);
  for (int o = 0; o < REPORT_OUTCOMES; o++) {
    for (size_t i = 0; i < l->out[o].ngroups; i++) {
      free(l->out[o].groups[i].first);
      free(l->out[o].groups[i].words);
    }
    free(l->out[o].groups);
  }
  for (size_t i = 0; i < l->nprocs; i++) {
    free(l->procs[i].aa[0]);
    free(l->procs[i].aa[1]);
  }
  free(l->procs);
  free(l->end_reason);
  free(l->effects);
  memset(l, 0, sizeof *l);
}
