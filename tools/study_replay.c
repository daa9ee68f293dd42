/* study_replay: `tunefarm study --ledgers`, the decision rules replayed on the
 * recorded rounds of GPU ledgers (tools/study_replay.h says what is counted).
 *
 * The ledgers come from fixed-pair campaigns measured with the median rule,
 * every round recorded (campaigns/decide-aa.json, decide-gain3.json), so every
 * rule of the registry (common/rule.h) reads the very same rounds: a rule that
 * judges a fixed number of rounds all of them, as the coordinator did; any
 * other the prefix its own protocol would have measured. Output:
 * markdown on stdout; bad input is one message naming the file, exit 2. */
// defines: study_replay_init, study_replay_release,
//          study_replay_add, study_replay_print, study_replay_tally,
//          study_replay_cell, study_ratios_median, study_replay_main
#include "tools/study_replay.h"

#include <dirent.h>
#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

// defines: ledger_scan
#include "coordinator/ledger.h"
// defines: study_wilson
#include "tools/study.h"

/* Every rule tallies every replayed record: the first rule's count is the cell's. */
static long cell_generations(const study_cell *c) { return c->t[0].generations; }

/* One ledger being read: where its records go. */
typedef struct replay_file {
  study_replay *sr;
  const char *path;
  int device; /* index into sr->devices, from the header */
} replay_file;

/* ---------------------------------------------------------------- setup */

int study_replay_init(study_replay *sr, tf_err *e) {
  memset(sr, 0, sizeof *sr);
  sr->cells = calloc(STUDY_REPLAY_MAX_PAIRS * STUDY_REPLAY_MAX_DEVICES, sizeof *sr->cells);
  sr->res = calloc(1, sizeof *sr->res);
  sr->job = calloc(1, sizeof *sr->job);
  if (!sr->cells || !sr->res || !sr->job) {
    study_replay_release(sr);
    return tf_fail(e, TF_EXIT_FAIL, "study: out of memory");
  }
  return 0;
}

void study_replay_release(study_replay *sr) {
  if (sr->cells)
    for (int i = 0; i < STUDY_REPLAY_MAX_PAIRS * STUDY_REPLAY_MAX_DEVICES; i++) {
      free(sr->cells[i].span.v);
      free(sr->cells[i].kernel.v);
    }
  for (long i = 0; i < sr->nseen; i++) free(sr->seen[i]);
  free(sr->seen);
  free(sr->cells);
  free(sr->res);
  free(sr->job);
  memset(sr, 0, sizeof *sr);
}

static study_cell *cell_at(const study_replay *sr, int pair, int device) {
  return &sr->cells[pair * STUDY_REPLAY_MAX_DEVICES + device];
}

/* ---------------------------------------------------------------- ratios */

/* Appends x; may reallocate r->v. */
static int ratios_push(study_ratios *r, double x) {
  if (r->n == r->cap) {
    long cap = r->cap ? 2 * r->cap : 256;
    double *v = realloc(r->v, (size_t)cap * sizeof *v);
    if (!v) return -1;
    r->v = v;
    r->cap = cap;
  }
  r->v[r->n++] = x;
  return 0;
}

double study_ratios_median(const study_ratios *r) {
  if (r->n > INT_MAX) return NAN;
  return stats_median(r->v, (int)r->n);
}

/* Every recorded round's new/best, both instruments. */
static int ratios_add(study_cell *c, const result *res) {
  for (int i = 0; i < res->nrounds; i++) {
    const round_rec *r = &res->rounds[i];
    if (ratios_push(&c->span, r->us[ARM_NEW] / r->us[ARM_BEST])) return -1;
    if (r->kernel_us[ARM_NEW] > 0.0 && r->kernel_us[ARM_BEST] > 0.0 &&
        ratios_push(&c->kernel, r->kernel_us[ARM_NEW] / r->kernel_us[ARM_BEST]))
      return -1;
  }
  return 0;
}

/* ---------------------------------------------------------------- groups */

/* The header's device, found or added. */
static int device_of(study_replay *sr, const char *path, const device_record *dp, tf_err *e) {
  const device_record d = *dp;
  for (int i = 0; i < sr->ndevices; i++)
    if (strcmp(sr->devices[i].uuid, d.uuid) == 0) return i;
  if (sr->ndevices == STUDY_REPLAY_MAX_DEVICES)
    return tf_fail(e, TF_EXIT_INPUT, "ledger '%s': more than %d devices in the ledgers given",
                   path, STUDY_REPLAY_MAX_DEVICES);
  study_device *sd = &sr->devices[sr->ndevices];
  snprintf(sd->uuid, sizeof sd->uuid, "%s", d.uuid);
  snprintf(sd->name, sizeof sd->name, "%s", d.name);
  snprintf(sd->host, sizeof sd->host, "%s", d.host);
  sd->ordinal = d.ordinal;
  sd->driver_version = d.driver_version;
  return sr->ndevices++;
}

static int job_is_aa(const job *j) {
  const job_arm *b = &j->arm[ARM_BEST], *n = &j->arm[ARM_NEW];
  return strcmp(b->name_expr, n->name_expr) == 0 && config_equal(&b->cfg, &n->cfg);
}

static int pair_matches(const study_pair *p, const job *j, int aa) {
  if (p->aa || aa) return p->aa == aa;
  return strcmp(p->campaign, j->campaign) == 0 &&
         strcmp(p->best_expr, j->arm[ARM_BEST].name_expr) == 0 &&
         strcmp(p->new_expr, j->arm[ARM_NEW].name_expr) == 0;
}

/* "{"ITERS":1030}": a configuration of the record as the ledger writes it. */
static void config_text(const record_cfg *c, char *buf, size_t len) {
  cJSON *o = record_cfg_to_json(c);
  char *s = o ? cJSON_PrintUnformatted(o) : NULL;
  snprintf(buf, len, "%s", s ? s : "?");
  free(s);
  cJSON_Delete(o);
}

static void pair_label(study_pair *p, const job *j, const record_gen *g) {
  if (p->aa) {
    snprintf(p->label, sizeof p->label, "A/A: best and new are the same kernel and configuration "
                                        "(every keep is a false keep)");
    return;
  }
  char b[256], n[256];
  config_text(&g->best, b, sizeof b);
  config_text(&g->new_cfg, n, sizeof n);
  snprintf(p->label, sizeof p->label,
           "Known gain: campaign '%s', best %s, new %s (every keep is right, every reject a "
           "missed gain)",
           j->campaign, b, n);
}

/* The record's truth group, found or added. */
static int pair_of(study_replay *sr, const replay_file *f, long line, const record_gen *g,
                   tf_err *e) {
  const job *j = sr->job;
  int aa = job_is_aa(j);
  for (int i = 0; i < sr->npairs; i++)
    if (pair_matches(&sr->pairs[i], j, aa)) return i;
  if (sr->npairs == STUDY_REPLAY_MAX_PAIRS)
    return tf_fail(e, TF_EXIT_INPUT,
                   "ledger '%s': line %ld: more than %d different pairs in the ledgers given "
                   "(is this a search, not a fixed-pair study?)",
                   f->path, line, STUDY_REPLAY_MAX_PAIRS);
  study_pair *p = &sr->pairs[sr->npairs];
  p->aa = aa;
  snprintf(p->campaign, sizeof p->campaign, "%s", j->campaign);
  snprintf(p->best_expr, sizeof p->best_expr, "%s", j->arm[ARM_BEST].name_expr);
  snprintf(p->new_expr, sizeof p->new_expr, "%s", j->arm[ARM_NEW].name_expr);
  pair_label(p, j, g);
  return sr->npairs++;
}

/* ---------------------------------------------------------------- one record */

/* The job and the rounds of a measured, correct record, into sr->job and sr->res. */
static int record_load(study_replay *sr, const replay_file *f, long line, const record_gen *g,
                       tf_err *e) {
  if (record_job(g, sr->job, e)) return tf_wrap(e, "ledger '%s': line %ld", f->path, line);
  if (!decide_fixed_rounds(&sr->job->decide))
    return tf_fail(e, TF_EXIT_INPUT,
                   "ledger '%s': line %ld: measured with rule '%s'; the replay needs every "
                   "round recorded, by rule 'median' (campaigns/decide-aa.json)",
                   f->path, line, sr->job->decide.rule);
  result *r = sr->res;
  memset(r, 0, sizeof *r);
  r->status = RESULT_OK;
  r->correct = 1;
  r->nrounds = g->res.nrounds;
  memcpy(r->rounds, g->res.rounds, (size_t)r->nrounds * sizeof *r->rounds);
  if (r->nrounds == 0)
    return tf_fail(e, TF_EXIT_INPUT, "ledger '%s': line %ld: key 'rounds' is missing or empty",
                   f->path, line);
  return 0;
}

static void tally_add(study_tally *t, const decision *d, int rounds) {
  t->generations++;
  t->kinds[d->kind]++;
  t->rounds += rounds;
  t->screened += d->screened;
}

/* A rule that judges a fixed number of rounds, on every recorded round. */
static decision_kind replay_all(study_replay *sr, const decide_opts *o, study_tally *t) {
  decision d;
  decide(o, sr->res, &d);
  tally_add(t, &d, sr->res->nrounds);
  decision_kind k = d.kind;
  decision_release(&d);
  return k;
}

/* Any other rule on the prefix its protocol would have measured. Marks screened rounds and
 * cuts sr->res to the prefix: record_rounds restores them for the next rule. */
static void replay_prefix(study_replay *sr, const decide_opts *o, study_tally *t) {
  result *r = sr->res;
  int n = 0, stopped = 0;
  while (n < r->nrounds && !stopped) {
    r->rounds[n].screened = decide_screen_round(o, &r->rounds[n]);
    n++;
    stopped = decide_enough(o, &sr->job->measure, r->rounds, n);
  }
  if (!stopped) t->ran_out++;
  r->nrounds = n;
  decision d;
  decide(o, r, &d);
  tally_add(t, &d, n);
  decision_release(&d);
}

static void record_rounds(study_replay *sr, const record_gen *g) {
  sr->res->nrounds = g->res.nrounds;
  memcpy(sr->res->rounds, g->res.rounds, (size_t)g->res.nrounds * sizeof *sr->res->rounds);
}

/* Every rule of the registry on the record; the recorded rule with the job's own options,
 * the others with their defaults and the job's shared options. */
static void replay_rules(study_replay *sr, const record_gen *g, study_cell *c) {
  for (int i = 0; i < rule_count(); i++) {
    const decide_rule *rule = rule_at(i);
    decide_opts o = sr->job->decide;
    int recorded = strcmp(o.rule, rule->name) == 0;
    if (!recorded) decide_select(&o, rule->name);
    record_rounds(sr, g);
    if (!rule->fixed_rounds) {
      replay_prefix(sr, &o, &c->t[i]);
    } else if (replay_all(sr, &o, &c->t[i]) != g->decision && recorded) {
      sr->differ++;
    }
  }
}

static int replay_record(study_replay *sr, const replay_file *f, long line, const record_gen *g,
                         tf_err *e) {
  sr->records++;
  if (g->res.status != RESULT_OK) {
    sr->not_ok++;
    return 0;
  }
  if (!g->res.correct) {
    sr->incorrect++;
    return 0;
  }
  if (record_load(sr, f, line, g, e)) return -1;
  int p = pair_of(sr, f, line, g, e);
  if (p < 0) return -1;
  study_cell *c = cell_at(sr, p, f->device);
  if (ratios_add(c, sr->res)) return tf_fail(e, TF_EXIT_FAIL, "study: out of memory");
  replay_rules(sr, g, c);
  return 0;
}

/* ledger_scan's callback: the header names the device; generations with a "status" are
 * measurements (a static refusal has none); other records are skipped. */
static int on_line(void *ctx, long line, const record *rec, tf_err *e) {
  replay_file *f = ctx;
  if (rec->kind == RECORD_DEVICE) {
    f->device = device_of(f->sr, f->path, &rec->device.dev, e);
    return f->device < 0 ? -1 : 0;
  }
  if (rec->kind != RECORD_GENERATION || !rec->gen.measured) return 0;
  return replay_record(f->sr, f, line, &rec->gen, e) ? -1 : 0;
}

/* ---------------------------------------------------------------- files */

/* Remember a ledger's real path; 1 if it was read before. May reallocate sr->seen. */
static int seen_before(study_replay *sr, const char *path, tf_err *e) {
  char real[PATH_MAX];
  if (!realpath(path, real))
    return tf_fail(e, TF_EXIT_INPUT, "ledger '%s': %s", path, strerror(errno));
  for (long i = 0; i < sr->nseen; i++)
    if (strcmp(sr->seen[i], real) == 0) return 1;
  char **v = realloc(sr->seen, (size_t)(sr->nseen + 1) * sizeof *v);
  if (!v) return tf_fail(e, TF_EXIT_FAIL, "study: out of memory");
  sr->seen = v;
  sr->seen[sr->nseen] = strdup(real);
  if (!sr->seen[sr->nseen]) return tf_fail(e, TF_EXIT_FAIL, "study: out of memory");
  sr->nseen++;
  return 0;
}

static int add_file(study_replay *sr, const char *path, tf_err *e) {
  int seen = seen_before(sr, path, e);
  if (seen < 0) return -1;
  if (seen)
    return tf_fail(e, TF_EXIT_INPUT, "ledger '%s': given twice (its generations would count "
                                     "twice)", path);
  replay_file f = {sr, path, -1};
  if (ledger_scan(path, stderr, on_line, &f, e)) return -1;
  sr->files++;
  return 0;
}

static int ends_with(const char *s, const char *tail) {
  size_t n = strlen(s), t = strlen(tail);
  return n >= t && strcmp(s + n - t, tail) == 0;
}

static int walk_filter(const struct dirent *de) { return de->d_name[0] != '.'; }

/* Every *.jsonl under dir, in sorted order; *found counts them. Symbolic links to
 * folders are not followed (no loops). */
static int add_dir(study_replay *sr, const char *dir, long *found, tf_err *e) {
  struct dirent **list = NULL;
  int n = scandir(dir, &list, walk_filter, alphasort);
  if (n < 0)
    return tf_fail(e, TF_EXIT_INPUT, "folder '%s': cannot read: %s", dir, strerror(errno));
  int rc = 0;
  for (int i = 0; i < n; i++) {
    char p[PATH_MAX];
    struct stat st, lst;
    if (rc == 0 && snprintf(p, sizeof p, "%s/%s", dir, list[i]->d_name) < (int)sizeof p &&
        lstat(p, &lst) == 0 && stat(p, &st) == 0) {
      if (S_ISDIR(st.st_mode) && !S_ISLNK(lst.st_mode))
        rc = add_dir(sr, p, found, e);
      else if (S_ISREG(st.st_mode) && ends_with(p, ".jsonl") && !(rc = add_file(sr, p, e)))
        (*found)++;
    }
    free(list[i]);
  }
  free(list);
  return rc;
}

int study_replay_add(study_replay *sr, const char *path, tf_err *e) {
  struct stat st;
  if (stat(path, &st) != 0)
    return tf_fail(e, TF_EXIT_INPUT, "ledger '%s': %s", path, strerror(errno));
  if (!S_ISDIR(st.st_mode)) return add_file(sr, path, e);
  long found = 0;
  if (add_dir(sr, path, &found, e)) return -1;
  if (found == 0)
    return tf_fail(e, TF_EXIT_INPUT, "folder '%s': no ledgers (*.jsonl) in it", path);
  return 0;
}

/* ---------------------------------------------------------------- lookups */

static int device_index(const study_replay *sr, const char *uuid) {
  for (int i = 0; i < sr->ndevices; i++)
    if (strcmp(sr->devices[i].uuid, uuid) == 0) return i;
  return -1;
}

const study_cell *study_replay_cell(const study_replay *sr, const char *uuid, int aa) {
  int d = device_index(sr, uuid);
  for (int p = 0; d >= 0 && p < sr->npairs; p++)
    if (sr->pairs[p].aa == (aa != 0)) return cell_at(sr, p, d);
  return NULL;
}

const study_tally *study_replay_tally(const study_replay *sr, const char *uuid, int aa,
                                      const char *rule) {
  const study_cell *c = study_replay_cell(sr, uuid, aa);
  for (int r = 0; c && r < rule_count(); r++)
    if (strcmp(rule_at(r)->name, rule) == 0)
      return c->t[r].generations ? &c->t[r] : NULL;
  return NULL;
}

/* ---------------------------------------------------------------- output */

static double pct(long k, long n) { return n > 0 ? 100.0 * (double)k / (double)n : NAN; }

static void print_inputs(const study_replay *sr, FILE *out) {
  long used = sr->records - sr->not_ok - sr->incorrect;
  fprintf(out, "Ledger replay: %ld ledgers, %ld measured generation records; %ld replayed "
               "(status ok, correct), %ld skipped for status, %ld for an incorrect result. "
               "The median rule, replayed, reproduces the recorded decision of %ld of the %ld.\n\n",
          sr->files, sr->records, used, sr->not_ok, sr->incorrect, used - sr->differ, used);
  fprintf(out, "Devices (from each ledger's header):\n\n");
  for (int i = 0; i < sr->ndevices; i++) {
    const study_device *d = &sr->devices[i];
    fprintf(out, "- `%s`: %s, driver %d, %s gpu%d\n", d->uuid, d->name, d->driver_version,
            d->host, d->ordinal);
  }
  fprintf(out, "\n");
}

static void ratio_row(FILE *out, const char *who, long gens, const study_ratios *span,
                      const study_ratios *kernel) {
  double s = study_ratios_median(span), k = study_ratios_median(kernel);
  fprintf(out, "| %s | %ld | %ld | %.4f | ", who, gens, span->n, s);
  if (kernel->n)
    fprintf(out, "%.4f (%ld rounds) |\n", k, kernel->n);
  else
    fprintf(out, "— |\n");
}

/* Every device's cells of one group, merged: only for the clearly labelled pooled row. */
static int pooled_ratios(const study_replay *sr, int p, study_ratios *span, study_ratios *kernel,
                         long *gens) {
  for (int d = 0; d < sr->ndevices; d++) {
    const study_cell *c = cell_at(sr, p, d);
    *gens += cell_generations(c);
    for (long i = 0; i < c->span.n; i++)
      if (ratios_push(span, c->span.v[i])) return -1;
    for (long i = 0; i < c->kernel.n; i++)
      if (ratios_push(kernel, c->kernel.v[i])) return -1;
  }
  return 0;
}

static void print_ratios(const study_replay *sr, int p, FILE *out) {
  fprintf(out, "Measured ratio new/best: the median over every recorded round of every replayed "
               "generation of the per-round ratio.\n\n");
  fprintf(out, "| device | generations | rounds | event span new/best | kernel time new/best |\n"
               "|---|---|---|---|---|\n");
  int shown = 0;
  for (int d = 0; d < sr->ndevices; d++) {
    const study_cell *c = cell_at(sr, p, d);
    if (!cell_generations(c)) continue;
    ratio_row(out, sr->devices[d].uuid, cell_generations(c), &c->span, &c->kernel);
    shown++;
  }
  study_ratios span = {0}, kernel = {0};
  long gens = 0;
  if (shown > 1 && pooled_ratios(sr, p, &span, &kernel, &gens) == 0)
    ratio_row(out, "all devices, pooled rounds", gens, &span, &kernel);
  free(span.v);
  free(kernel.v);
  fprintf(out, "\n");
}

/* "12.5% (≤ 19.0%)" for A/A, "97.0% (≥ 93.1%)" for a gain: the 95% Wilson bound on the
 * side the target is stated on. */
static void print_rate(FILE *out, long k, long n, int aa) {
  fprintf(out, "%.2f%% (%s %.2f%%)", pct(k, n), aa ? "≤" : "≥", 100.0 * study_wilson(k, n, aa));
}

static void tally_row(FILE *out, const char *who, const decide_rule *rule, const study_tally *t,
                      int aa) {
  long n = t->generations;
  fprintf(out, "| %s | %s | %ld | %ld | ", who, rule->name, n, t->kinds[DECISION_KEEP]);
  print_rate(out, t->kinds[DECISION_KEEP], n, aa);
  fprintf(out, " | %ld (%.1f%%) | %ld (%.1f%%) | %.2f | %.2f | ", t->kinds[DECISION_REFUSED],
          pct(t->kinds[DECISION_REFUSED], n), t->kinds[DECISION_AMBIGUOUS],
          pct(t->kinds[DECISION_AMBIGUOUS], n), n ? (double)t->rounds / (double)n : NAN,
          n ? (double)t->screened / (double)n : NAN);
  if (rule->fixed_rounds)
    fprintf(out, "— |\n");
  else
    fprintf(out, "%ld (%.1f%%) |\n", t->ran_out, pct(t->ran_out, n));
}

static void tally_merge(study_tally *to, const study_tally *t) {
  to->generations += t->generations;
  for (int k = 0; k < 4; k++) to->kinds[k] += t->kinds[k];
  to->rounds += t->rounds;
  to->screened += t->screened;
  to->ran_out += t->ran_out;
}

static void print_tallies(const study_replay *sr, int p, FILE *out) {
  int aa = sr->pairs[p].aa;
  fprintf(out, "| device | rule | generations | %s | %s (95%% bound) | refused | ambiguous | "
               "rounds used per decision | screened per decision | recorded rounds ran out |\n"
               "|---|---|---|---|---|---|---|---|---|---|\n",
          aa ? "false keeps" : "keeps", aa ? "false-keep rate" : "keep rate");
  int shown = 0;
  for (int d = 0; d < sr->ndevices; d++) {
    const study_cell *c = cell_at(sr, p, d);
    if (!cell_generations(c)) continue;
    for (int r = 0; r < rule_count(); r++)
      tally_row(out, sr->devices[d].uuid, rule_at(r), &c->t[r], aa);
    shown++;
  }
  for (int r = 0; shown > 1 && r < rule_count(); r++) {
    study_tally all = {0};
    for (int d = 0; d < sr->ndevices; d++) tally_merge(&all, &cell_at(sr, p, d)->t[r]);
    tally_row(out, "all devices, pooled counts", rule_at(r), &all, aa);
  }
  fprintf(out, "\n");
}

static void print_notes(FILE *out) {
  fprintf(out,
          "Rounds used per decision: recorded rounds the rule read (median: all of them; "
          "sequential: the prefix up to the round where decide_enough says stop, screened "
          "rounds included). Recorded rounds ran out: the sequential rule wanted more rounds "
          "than were recorded (on the GPU a screened round is run again), and decided on all "
          "of them. Refused generations are not measured again: one measurement per record. "
          "The 95%% bound is Wilson's score interval: upper for a false-keep rate, lower for a "
          "keep rate.\n");
}

void study_replay_print(const study_replay *sr, FILE *out) {
  print_inputs(sr, out);
  for (int pass = 0; pass < 2; pass++) /* A/A first, then the gains */
    for (int p = 0; p < sr->npairs; p++) {
      if (sr->pairs[p].aa != (pass == 0)) continue;
      fprintf(out, "### %s\n\n", sr->pairs[p].label);
      print_ratios(sr, p, out);
      print_tallies(sr, p, out);
    }
  print_notes(out);
}

/* ---------------------------------------------------------------- command */

static void usage(FILE *f) {
  fprintf(f,
          "usage: tunefarm study --ledgers LEDGER|DIR ...\n"
          "\n"
          "Replays both decision rules on the rounds recorded by GPU runs of fixed-pair\n"
          "campaigns (campaigns/decide-aa.json, campaigns/decide-gain3.json: rule median,\n"
          "every round recorded). Each generation record with status ok and a correct\n"
          "result is decided by \"median\" on all its rounds, as recorded, and by\n"
          "\"sequential\" on the prefix its protocol would have measured: rounds in order,\n"
          "screened by clock, up to where the rule stops. Truth per record: A/A when the\n"
          "job's best and new arms are the same kernel and configuration, else a gain.\n"
          "Markdown on stdout: per truth, the measured ratio new/best and one row per\n"
          "device and rule (keeps, 95%% bound, refused, ambiguous, rounds used). Devices\n"
          "are never pooled except in rows labelled so.\n"
          "\n"
          "A folder is searched recursively for *.jsonl ledgers.\n"
          "Exit status: 0, or 2 for bad input (named with its file and line).\n");
}

/* The paths after --ledgers; 1 if --help was asked, -1 (e filled) for a stray option. */
static int replay_args(int argc, char **argv, int *npaths, tf_err *e) {
  *npaths = 0;
  for (int i = 1; i < argc; i++) {
    if (strcmp(argv[i], "--help") == 0 || strcmp(argv[i], "-h") == 0) return 1;
    if (strcmp(argv[i], "--ledgers") == 0) continue;
    if (argv[i][0] == '-')
      return tf_fail(e, TF_EXIT_INPUT, "option '%s' does not go with --ledgers (see --help)",
                     argv[i]);
    (*npaths)++;
  }
  if (*npaths == 0)
    return tf_fail(e, TF_EXIT_INPUT, "--ledgers needs at least one ledger or folder (see --help)");
  return 0;
}

static int replay_run(study_replay *sr, int argc, char **argv, tf_err *e) {
  for (int i = 1; i < argc; i++)
    if (strcmp(argv[i], "--ledgers") != 0 && study_replay_add(sr, argv[i], e)) return -1;
  if (sr->records - sr->not_ok - sr->incorrect == 0)
    return tf_fail(e, TF_EXIT_INPUT, "no measured generation (status ok, correct) in the "
                                     "ledgers given");
  study_replay_print(sr, stdout);
  return 0;
}

int study_replay_main(int argc, char **argv) {
  tf_err e = {0};
  int npaths = 0, rc = replay_args(argc, argv, &npaths, &e);
  if (rc == 1) {
    usage(stdout);
    return 0;
  }
  study_replay sr;
  if (rc == 0 && study_replay_init(&sr, &e) == 0) {
    rc = replay_run(&sr, argc, argv, &e);
    study_replay_release(&sr);
  } else {
    rc = -1;
  }
  if (rc == 0) return 0;
  fprintf(stderr, "tunefarm study: %s\n", e.msg);
  return tf_exit_status(&e);
}
