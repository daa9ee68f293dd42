/* report: Markdown from ledgers (coordinator/report.h).
 *
 * Every ledger is read whole into a summary before anything is printed, so bad
 * input never leaves half a report on stdout. Numbers come from the records'
 * own rounds; nothing is combined across ledgers. */
#include "coordinator/report.h"

#include <dirent.h>
#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "common/decide.h"
#include "common/err.h"
#include "common/jsonio.h" /* defines: jsonio_whole */
#include "common/msg.h"
#include "coordinator/ledger.h"
#include "coordinator/replay.h" /* defines: ledger_best_init, ledger_best_add, ledger_best_get */
#include "coordinator/study.h"

#define REASON_TOP 3

typedef struct keep_row {
  long long gen;
  char change[512];
  double before_us, after_us, ratio; /* NAN when the record lacks them */
  char decision[16];
} keep_row;

typedef struct reason_group {
  char text[256]; /* the reason with its numbers replaced by N */
  int count;
  size_t first;   /* order of first appearance: ties are listed in it */
} reason_group;

/* The generations that ended in one dec, and why. */
typedef struct outcome {
  const char *name;
  int count;
  reason_group *groups;
  size_t ngroups, cap;
} outcome;

enum { OUT_REJECT, OUT_REFUSED, OUT_AMBIGUOUS, OUT_COUNT };

/* One measure process (a run's child): its latest canary and, in an A/A study, the ratios
 * new/best of every round it measured (both arms the same configuration). */
typedef struct process_row {
  char run[32];
  int child;
  int generations;            /* measured generations, the untrusted ones included */
  int canaries;
  double canary[2], lo[2], hi[2]; /* the latest canary: median ratio and 95% interval */
  char verdict[16];           /* of the latest canary; "" when none ran */
  double *aa[2];              /* A/A rounds: [0] event span, [1] kernel time (NAN if absent) */
  int naa, capaa;
  int keeps, decided;         /* A/A: keeps among the decided (trusted) generations */
} process_row;

typedef struct ledger_sum {
  const char *path;
  device_record dev;
  char campaign[64], backend[16];
  long long generations, rounds;
  keep_row *keeps;
  size_t nkeeps, capkeeps;
  outcome out[OUT_COUNT];
  double start_us;        /* the first measured best: the start configuration */
  ledger_best best;       /* the search read back, as bench reads it (coordinator/replay.h) */
  int has_best;           /* a generation was recorded: then the final best and its time */
  record_cfg best_cfg;
  double best_us;         /* NAN when never measured */
  long long best_gen;
  int ended;
  char end_reason[512];
  int restarts;           /* "restart" records: searches begun again from a random point */
  process_row *procs;
  size_t nprocs, capprocs;
  int aa;                 /* every measured generation compared a configuration with itself */
} ledger_sum;

typedef struct path_list {
  char **v;
  size_t n, cap;
} path_list;

static void usage(FILE *f) {
  fputs("usage: tunefarm report LEDGER|DIR ...\n"
        "\n"
        "Markdown on stdout: per device, the generations that kept a change, the rejected,\n"
        "refused and ambiguous ones with their commonest reasons, the final best and how the\n"
        "search ended; with several ledgers, a table with the devices side by side.\n"
        "A folder is searched recursively for *.jsonl ledgers. Every ledger is one device in\n"
        "one campaign; ledgers are never merged.\n"
        "\n"
        "  -h, --help   this text\n"
        "\n"
        "Exit status: 0, or 2 for bad input (a missing file, not a ledger, a corrupt line).\n",
        f);
}

/* ---------------------------------------------------------------- paths */

static int path_add(path_list *l, const char *p) {
  if (l->n == l->cap) {
    size_t cap = l->cap ? l->cap * 2 : 16;
    char **v = realloc(l->v, cap * sizeof *v);
    if (!v) return -1;
    l->v = v;
    l->cap = cap;
  }
  l->v[l->n] = strdup(p);
  if (!l->v[l->n]) return -1;
  l->n++;
  return 0;
}

static void path_list_free(path_list *l) {
  for (size_t i = 0; i < l->n; i++) free(l->v[i]);
  free(l->v);
}

static int cmp_str(const void *a, const void *b) {
  return strcmp(*(char *const *)a, *(char *const *)b);
}

static int ends_with(const char *s, const char *tail) {
  size_t n = strlen(s), t = strlen(tail);
  return n >= t && strcmp(s + n - t, tail) == 0;
}

/* Every *.jsonl under dir; symbolic links to folders are not followed (no loops). */
static int walk(const char *dir, path_list *out, tf_err *e) {
  DIR *d = opendir(dir);
  if (!d) return tf_fail(e, TF_EXIT_INPUT, "folder '%s': cannot read: %s", dir, strerror(errno));
  struct dirent *de;
  int rc = 0;
  while (rc == 0 && (de = readdir(d))) {
    if (strcmp(de->d_name, ".") == 0 || strcmp(de->d_name, "..") == 0) continue;
    char p[4096];
    if (snprintf(p, sizeof p, "%s/%s", dir, de->d_name) >= (int)sizeof p) continue;
    struct stat st, lst;
    if (lstat(p, &lst) != 0 || stat(p, &st) != 0) continue;
    if (S_ISDIR(st.st_mode) && !S_ISLNK(lst.st_mode))
      rc = walk(p, out, e);
    else if (S_ISREG(st.st_mode) && ends_with(de->d_name, ".jsonl") && path_add(out, p))
      rc = tf_fail(e, TF_EXIT_FAIL, "report: out of memory");
  }
  closedir(d);
  return rc;
}

static int collect(const char *arg, path_list *out, tf_err *e) {
  struct stat st;
  if (stat(arg, &st) != 0)
    return tf_fail(e, TF_EXIT_INPUT, "ledger '%s': %s", arg, strerror(errno));
  if (!S_ISDIR(st.st_mode))
    return path_add(out, arg) ? tf_fail(e, TF_EXIT_FAIL, "report: out of memory") : 0;
  size_t first = out->n;
  if (walk(arg, out, e)) return -1;
  if (out->n == first)
    return tf_fail(e, TF_EXIT_INPUT, "folder '%s': no ledgers (*.jsonl) in it", arg);
  qsort(out->v + first, out->n - first, sizeof *out->v, cmp_str);
  return 0;
}

/* ---------------------------------------------------------------- values */

/* Append text to buf without overflowing it. */
static void cat(char *buf, size_t len, const char *text) {
  size_t n = strlen(buf);
  if (n + 1 < len) snprintf(buf + n, len - n, "%s", text);
}

/* best -> new as "BK 64→32, ...", or a dash when they are the same. */
static void change_text(const record_cfg *from, const record_cfg *to, char *buf, size_t len) {
  buf[0] = '\0';
  for (int k = 0; k < from->n && k < to->n; k++) {
    if (from->v[k] == to->v[k]) continue;
    char item[256];
    snprintf(item, sizeof item, "%s%s %lld→%lld", buf[0] ? ", " : "", from->name[k], from->v[k],
             to->v[k]);
    cat(buf, len, item);
  }
  if (!buf[0]) snprintf(buf, len, "—");
}

/* A reason with its numbers replaced by N, so that "new is 2.1% slower" and
 * "new is 0.4% slower" count as one reason. A sign is part of the number. */
static void reason_pattern(const char *in, char *out, size_t len) {
  size_t o = 0;
  for (size_t i = 0; in[i] && o + 2 < len;) {
    int digit = in[i] >= '0' && in[i] <= '9';
    int sign = (in[i] == '-' || in[i] == '+') && in[i + 1] >= '0' && in[i + 1] <= '9' &&
               (i == 0 || in[i - 1] == ' ' || in[i - 1] == '(');
    if (!digit && !sign) {
      out[o++] = in[i++];
      continue;
    }
    i++;
    while ((in[i] >= '0' && in[i] <= '9') ||
           (in[i] == '.' && in[i + 1] >= '0' && in[i + 1] <= '9'))
      i++;
    out[o++] = 'N';
  }
  out[o] = '\0';
}

static int outcome_add(outcome *oc, const char *reason) {
  char pat[256];
  reason_pattern(reason ? reason : "(no reason given)", pat, sizeof pat);
  oc->count++;
  for (size_t i = 0; i < oc->ngroups; i++)
    if (strcmp(oc->groups[i].text, pat) == 0) {
      oc->groups[i].count++;
      return 0;
    }
  if (oc->ngroups == oc->cap) {
    size_t cap = oc->cap ? oc->cap * 2 : 8;
    reason_group *g = realloc(oc->groups, cap * sizeof *g);
    if (!g) return -1;
    oc->groups = g;
    oc->cap = cap;
  }
  reason_group *g = &oc->groups[oc->ngroups++];
  tf_escape(g->text, sizeof g->text, pat); /* a ledger's text: one line, no terminal codes */
  g->count = 1;
  g->first = oc->ngroups - 1;
  return 0;
}

/* ---------------------------------------------------------------- reading */

static int add_keep(ledger_sum *s, const record_gen *g, double before, double after) {
  if (s->nkeeps == s->capkeeps) {
    size_t cap = s->capkeeps ? s->capkeeps * 2 : 8;
    keep_row *k = realloc(s->keeps, cap * sizeof *k);
    if (!k) return -1;
    s->keeps = k;
    s->capkeeps = cap;
  }
  keep_row *k = &s->keeps[s->nkeeps++];
  k->gen = g->generation;
  /* a keep after a restart moved that segment's best; a duel's keep moved the champion */
  int n = 0;
  if (g->duel)
    n = snprintf(k->change, sizeof k->change, "duel, restart %d's best over the champion: ",
                 g->restart);
  else if (g->restart > 0)
    n = snprintf(k->change, sizeof k->change, "restart %d: ", g->restart);
  change_text(&g->best, &g->new_cfg, k->change + n, sizeof k->change - (size_t)n);
  k->before_us = before;
  k->after_us = after;
  k->ratio = g->measured ? g->median_ratio : NAN;
  snprintf(k->decision, sizeof k->decision, "%s", decision_names[g->decision]);
  return 0;
}

static process_row *process_of(ledger_sum *s, const record_gen *g) {
  int child = g->res.child;
  for (size_t i = 0; i < s->nprocs; i++)
    if (s->procs[i].child == child && strcmp(s->procs[i].run, g->run) == 0) return &s->procs[i];
  if (s->nprocs == s->capprocs) {
    size_t cap = s->capprocs ? s->capprocs * 2 : 8;
    process_row *p = realloc(s->procs, cap * sizeof *p);
    if (!p) return NULL;
    s->procs = p;
    s->capprocs = cap;
  }
  process_row *p = &s->procs[s->nprocs++];
  memset(p, 0, sizeof *p);
  snprintf(p->run, sizeof p->run, "%s", g->run);
  p->child = child;
  for (int k = 0; k < 2; k++) p->canary[k] = p->lo[k] = p->hi[k] = NAN;
  return p;
}

static int aa_push(process_row *p, double span, double kernel) {
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
static int process_add(ledger_sum *s, const record_gen *g, int aa, int keep) {
  process_row *p = process_of(s, g);
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

static int generation(ledger_sum *s, const record_gen *g, tf_err *e) {
  double before = record_rounds_median(g, ARM_BEST, 0);
  double after = record_rounds_median(g, ARM_NEW, 0);
  int keep = g->decision == DECISION_KEEP;
  s->generations++;
  s->rounds += g->res.nrounds;
  int aa = record_cfg_equal(&g->best, &g->new_cfg);
  if (g->measured) { /* not statically refused */
    s->aa = s->aa && aa;
    if (process_add(s, g, aa, keep)) return tf_fail(e, TF_EXIT_FAIL, "report: out of memory");
  }
  if (isnan(s->start_us) && !isnan(before)) s->start_us = before;
  int rc;
  if (keep)
    rc = add_keep(s, g, before, after);
  else if (g->decision == DECISION_REJECT)
    rc = outcome_add(&s->out[OUT_REJECT], g->reason);
  else if (g->decision == DECISION_REFUSED)
    rc = outcome_add(&s->out[OUT_REFUSED], g->reason);
  else
    rc = outcome_add(&s->out[OUT_AMBIGUOUS], g->reason);
  return rc ? tf_fail(e, TF_EXIT_FAIL, "report: out of memory") : 0;
}

static int read_line(void *ctx, long line, const record *rec, tf_err *e) {
  ledger_sum *s = ctx;
  if (ledger_best_add(&s->best, rec, e)) return tf_wrap(e, "ledger '%s': line %ld", s->path, line);
  switch (rec->kind) {
    case RECORD_DEVICE:
      tf_escape(s->campaign, sizeof s->campaign, rec->device.campaign);
      tf_escape(s->backend, sizeof s->backend, rec->device.backend);
      s->dev = rec->device.dev;
      return 0;
    case RECORD_GENERATION: return generation(s, &rec->gen, e);
    case RECORD_RESTART: s->restarts++; return 0;
    default:
      s->ended = 1;
      tf_escape(s->end_reason, sizeof s->end_reason, rec->end.reason);
      return 0;
  }
}

static void sum_init(ledger_sum *s, const char *path) {
  static const char *const names[OUT_COUNT] = {"rejected", "refused", "ambiguous"};
  memset(s, 0, sizeof *s);
  s->path = path;
  s->start_us = NAN;
  s->aa = 1;
  ledger_best_init(&s->best, NULL, path);
  s->best_us = NAN;
  s->best_gen = -1;
  for (int i = 0; i < OUT_COUNT; i++) s->out[i].name = names[i];
}

static void sum_release(ledger_sum *s) {
  free(s->keeps);
  for (size_t i = 0; i < s->nprocs; i++) {
    free(s->procs[i].aa[0]);
    free(s->procs[i].aa[1]);
  }
  free(s->procs);
  for (int i = 0; i < OUT_COUNT; i++) free(s->out[i].groups);
  ledger_best_release(&s->best);
}

/* ---------------------------------------------------------------- printing */

/* Text for a Markdown table cell: '|' would end the cell, and a control character from the
 * ledger would end the row or reach the terminal. */
static void cell(FILE *f, const char *text) {
  char esc[2048];
  for (const char *p = tf_escape(esc, sizeof esc, text); *p; p++) {
    if (*p == '|') fputc('\\', f);
    fputc(*p, f);
  }
}

/* v with `digits` decimals and an optional unit, or a dash when it is unknown. */
static const char *fmt_num(char *buf, size_t len, int digits, const char *unit, double v) {
  if (!isfinite(v))
    snprintf(buf, len, "—");
  else
    snprintf(buf, len, "%.*f%s", digits, v, unit);
  return buf;
}

static void device_label(FILE *f, const ledger_sum *s) {
  fprintf(f, "%s gpu%d %s (%s)", s->dev.host, s->dev.ordinal, s->dev.name, s->dev.uuid);
}

static int cmp_group(const void *a, const void *b) {
  const reason_group *x = a, *y = b;
  if (x->count != y->count) return x->count < y->count ? 1 : -1;
  return (x->first > y->first) - (x->first < y->first);
}

static void print_outcome(FILE *f, outcome *oc) {
  fprintf(f, "- %s: %d", oc->name, oc->count);
  if (oc->ngroups > 1) qsort(oc->groups, oc->ngroups, sizeof *oc->groups, cmp_group);
  for (size_t i = 0; i < oc->ngroups && i < REASON_TOP; i++)
    fprintf(f, "%s %d× \"%s\"", i ? ";" : " — commonest:", oc->groups[i].count,
            oc->groups[i].text);
  fputc('\n', f);
}

/* "+0.12% [-0.05%, +0.30%]" for a ratio and its interval, or a dash. */
static const char *fmt_bias(char *buf, size_t len, double r, double lo, double hi) {
  if (!isfinite(r))
    snprintf(buf, len, "—");
  else if (isfinite(lo) && isfinite(hi))
    snprintf(buf, len, "%+.2f%% [%+.2f%%, %+.2f%%]", 100 * (r - 1), 100 * (lo - 1), 100 * (hi - 1));
  else
    snprintf(buf, len, "%+.2f%%", 100 * (r - 1));
  return buf;
}

/* Every measure process of the ledger: what its canary said and, in an A/A study, the median
 * of new/best over every round it measured, with the median's 95% interval. */
static void print_processes(FILE *f, const ledger_sum *s) {
  if (s->nprocs == 0) return;
  fputs("Measure processes (canary: a second copy of best in new's place; A/A: new/best over "
        "every round the process measured; bias = median ratio - 1, 95% interval):\n\n", f);
  fprintf(f, "| run | child | generations | canary event span | canary kernel | verdict |%s\n",
          s->aa ? " A/A rounds | A/A event span | A/A kernel | keeps |" : "");
  fprintf(f, "|---|---:|---:|---:|---:|---|%s\n", s->aa ? "---:|---:|---:|---:|" : "");
  for (size_t i = 0; i < s->nprocs; i++) {
    const process_row *p = &s->procs[i];
    char a[64], b[64];
    fprintf(f, "| %s | %d | %d | %s | ", p->run[0] ? p->run : "—", p->child, p->generations,
            fmt_bias(a, sizeof a, p->canary[0], p->lo[0], p->hi[0]));
    fprintf(f, "%s | %s |", fmt_bias(b, sizeof b, p->canary[1], p->lo[1], p->hi[1]),
            p->verdict[0] ? p->verdict : "none");
    if (s->aa) {
      fprintf(f, " %d |", p->naa);
      for (int k = 0; k < 2; k++) {
        double lo, hi, m = stats_median(p->aa[k], p->naa);
        stats_median_interval(p->aa[k], p->naa, &lo, &hi);
        fprintf(f, " %s |", fmt_bias(b, sizeof b, m, lo, hi));
      }
      fprintf(f, " %d of %d |", p->keeps, p->decided);
    }
    fputc('\n', f);
  }
  fputc('\n', f);
  if (!s->aa) return;
  long keeps = 0, n = 0;
  for (size_t i = 0; i < s->nprocs; i++) keeps += s->procs[i].keeps, n += s->procs[i].decided;
  fprintf(f, "- A/A false keeps: %ld of %ld decided generations (%.2f%%, 95%% upper bound "
             "%.2f%%, Wilson)\n\n", keeps, n, n ? 100.0 * (double)keeps / (double)n : 0.0,
          n ? 100.0 * study_wilson(keeps, n, 1) : 100.0);
}

static void print_section(FILE *f, ledger_sum *s) {
  char a[32], b[32], r[32];
  fputs("## ", f);
  device_label(f, s);
  fprintf(f, " — campaign %s, backend %s\n\n", s->campaign, s->backend);
  fprintf(f, "ledger: `%s`\n\n", s->path);
  if (s->nkeeps == 0) {
    fputs("No generation kept a change.\n\n", f);
  } else {
    fputs("| gen | change | before µs | after µs | ratio | decision |\n", f);
    fputs("|---:|---|---:|---:|---:|---|\n", f);
    for (size_t i = 0; i < s->nkeeps; i++) {
      const keep_row *k = &s->keeps[i];
      fprintf(f, "| %lld | ", k->gen);
      cell(f, k->change);
      fprintf(f, " | %s | %s | %s | ", fmt_num(a, sizeof a, 2, "", k->before_us),
              fmt_num(b, sizeof b, 2, "", k->after_us), fmt_num(r, sizeof r, 3, "", k->ratio));
      cell(f, k->decision);
      fputs(" |\n", f);
    }
    fputc('\n', f);
  }
  for (int i = 0; i < OUT_COUNT; i++) print_outcome(f, &s->out[i]);
  char cfg[1024];
  record_cfg_text(&s->best_cfg, cfg, sizeof cfg);
  if (!s->has_best)
    fputs("- final best: none yet (no generation recorded)\n", f);
  else if (s->best_gen < 0)
    fprintf(f, "- final best: %s (never measured)\n", cfg[0] ? cfg : "—");
  else
    fprintf(f, "- final best: %s — %s µs (measured in generation %lld)\n", cfg[0] ? cfg : "—",
            fmt_num(a, sizeof a, 2, "", s->best_us), s->best_gen);
  if (s->restarts)
    fprintf(f, "- restarts: %d (the final best is the champion of the searches, "
               "decided by duels)\n", s->restarts);
  fprintf(f, "- ended: %s\n", s->ended ? s->end_reason : "running or interrupted");
  fprintf(f, "- generations: %lld, rounds recorded: %lld\n\n", s->generations, s->rounds);
  print_processes(f, s);
}

static void print_side_by_side(FILE *f, const ledger_sum *s, size_t n) {
  fputs("## Side by side\n\n"
        "One row per ledger; each row's numbers come from that device alone.\n\n"
        "| device | campaign | generations | keeps | final best µs | start µs | speed-up | "
        "ledger |\n"
        "|---|---|---:|---:|---:|---:|---:|---|\n",
        f);
  for (size_t i = 0; i < n; i++) {
    char a[32], b[32], c[32];
    char u8[9];
    device_uuid8(&s[i].dev, u8);
    fprintf(f, "| %s gpu%d %s (%s) | %s | %lld | %zu | %s | %s | ", s[i].dev.host,
            s[i].dev.ordinal, s[i].dev.name, u8, s[i].campaign, s[i].generations, s[i].nkeeps,
            fmt_num(a, sizeof a, 2, "", s[i].best_us),
            fmt_num(b, sizeof b, 2, "", s[i].start_us));
    double up = s[i].start_us / s[i].best_us;
    fmt_num(c, sizeof c, 3, "×", up);
    fprintf(f, "%s | `%s` |\n", c, s[i].path);
  }
  fputc('\n', f);
}

static void print_report(FILE *f, ledger_sum *s, size_t n) {
  fputs("# tunefarm report\n\n"
        "before/after µs: the median over a generation's recorded rounds (screened ones left out) of best's and new's "
        "time per launch (event span); ratio: the median of the per-round ratios new/best, "
        "which the decision rule judged. Final best: its latest such median; speed-up: start "
        "µs / final best µs, on the same device.\n\n",
        f);
  for (size_t i = 0; i < n; i++) print_section(f, &s[i]);
  if (n > 1) print_side_by_side(f, s, n);
  fflush(f);
}

/* ---------------------------------------------------------------- main */

static int run(path_list *paths, tf_err *e) {
  ledger_sum *sums = calloc(paths->n, sizeof *sums);
  if (!sums) return tf_fail(e, TF_EXIT_FAIL, "report: out of memory");
  size_t n = 0;
  int rc = 0;
  for (; n < paths->n; n++) {
    ledger_sum *s = &sums[n];
    sum_init(s, paths->v[n]);
    if (ledger_scan(paths->v[n], stderr, read_line, s, e)) {
      rc = -1;
      n++;
      break;
    }
    s->has_best = ledger_best_get(&s->best, &s->best_cfg, &s->best_us, &s->best_gen);
  }
  if (rc == 0) print_report(stdout, sums, n);
  for (size_t i = 0; i < n; i++) sum_release(&sums[i]);
  free(sums);
  return rc;
}

int report_main(int argc, char **argv) {
  path_list paths = {0};
  tf_err e;
  tf_err_clear(&e);
  int rc = 0, opts = 1;
  for (int i = 1; i < argc && rc == 0; i++) {
    if (opts && (strcmp(argv[i], "-h") == 0 || strcmp(argv[i], "--help") == 0)) {
      usage(stdout);
      path_list_free(&paths);
      return TF_EXIT_OK;
    }
    if (opts && strcmp(argv[i], "--") == 0) {
      opts = 0;
      continue;
    }
    if (opts && argv[i][0] == '-' && argv[i][1])
      rc = tf_fail(&e, TF_EXIT_INPUT, "unknown option '%s' (see --help)", argv[i]);
    else
      rc = collect(argv[i], &paths, &e);
  }
  if (rc == 0 && paths.n == 0)
    rc = tf_fail(&e, TF_EXIT_INPUT, "no ledger given (usage: tunefarm report LEDGER|DIR ...)");
  if (rc == 0) rc = run(&paths, &e);
  path_list_free(&paths);
  if (rc == 0) return TF_EXIT_OK;
  fflush(stdout);
  fprintf(stderr, "tunefarm report: %s\n", e.msg);
  return e.code ? e.code : TF_EXIT_FAIL;
}
