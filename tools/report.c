/* report: Markdown, JSON, CSV, T4 and HTML from ledgers (tools/report.h).
 *
 * Every ledger is read whole (tools/report_model.h) before anything is printed, so
 * bad input never leaves half a report on stdout or a half page on disk. Numbers come from
 * the records' own rounds; nothing is combined across ledgers. This file holds the command
 * and the Markdown; report_data.c the JSON and CSV; report_t4.c T4; report_html.c the page. */
#include "tools/report.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common/decide.h"
#include "common/err.h"
#include "common/escape.h"
#include "tools/report_model.h" /* defines: report_ledger, report_ledger_read, writers */
#include "tools/study.h"              /* defines: study_wilson */
#include "tools/throughput.h"         /* defines: throughput_fp32_lanes */
#include "worker/backend.h"            /* defines: backend_simulated */

#define REASON_TOP 3

typedef struct path_list {
  char **v;
  size_t n, cap;
} path_list;

/* What to write: one text format on stdout (Markdown unless another is asked for) and, with
 * --html, the page. */
typedef enum { OUT_MARKDOWN, OUT_JSON, OUT_CSV, OUT_T4, OUT_NONE } out_format;

typedef struct report_opts {
  out_format format;
  int formats;       /* text formats asked for: at most one */
  const char *html;  /* the page's file, or NULL */
  const char *t4_metadata; /* the T4 metadata file, or NULL */
} report_opts;

static void usage(FILE *f) {
  fputs("usage: tunefarm report [--json | --csv | --t4] [--html FILE] [--t4-metadata FILE]\n"
        "                       LEDGER|DIR ...\n"
        "\n"
        "Markdown on stdout: per device, the control's time, the final best (with restarts,\n"
        "the champion) and its speed-up over the start and over the control, the generations\n"
        "that kept a change (the winner marked), the rejected, refused and ambiguous ones\n"
        "with a representative reason of each kind, how the search ended and its measure\n"
        "processes; with several ledgers, a table with the devices side by side, each one's\n"
        "winner the fastest on its own GPU. A folder is searched recursively for *.jsonl\n"
        "ledgers. Every ledger is one device in one campaign; ledgers are never merged.\n"
        "docs/reference/report.md defines every number and field.\n"
        "\n"
        "  --json       tunefarm's JSON instead: per ledger the device, the campaign, every\n"
        "               generation with its decision, the keeps, the final best, the canaries\n"
        "  --csv        one row per generation, every ledger's rows tagged with its device\n"
        "  --t4         the T4 results file (Open Autotuning, as Kernel Tuner writes it) of\n"
        "               one ledger: one result per configuration evaluated, times in ms\n"
        "  --t4-metadata FILE\n"
        "               T4's metadata file of one ledger (the device, its libraries) to FILE;\n"
        "               also --t4-metadata=FILE. FILE is never a ledger, a folder, or an\n"
        "               existing file that is not such a metadata file: those are refused\n"
        "  --html FILE  one self-contained page (inline SVG, no network) per campaign: the\n"
        "               best so far, the paired ratios of every decision, the control, the\n"
        "               canaries, the GPUs side by side; nothing else on stdout unless a\n"
        "               text format is asked for too; also --html=FILE. FILE is never a\n"
        "               ledger (*.jsonl or one given), in a ledgers folder given, a folder,\n"
        "               or an existing file that is not such a page: those are refused\n"
        "  -h, --help   this text\n"
        "\n"
        "Exit status: 0, 1 when the page cannot be written, or 2 for bad input (a missing\n"
        "file, not a ledger, a corrupt line, --t4 with more than one ledger, a --html or\n"
        "--t4-metadata FILE refused).\n",
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
      rc = tf_fail(e, TF_EXIT_FAIL, "out of memory");
  }
  closedir(d);
  return rc;
}

/* The ledgers of arg (a ledger, or a folder searched for them) into out; a folder also into
 * dirs, where the page may not go. */
static int collect(const char *arg, path_list *out, path_list *dirs, tf_err *e) {
  struct stat st;
  if (stat(arg, &st) != 0)
    return tf_fail(e, TF_EXIT_INPUT, "ledger '%s': %s", arg, strerror(errno));
  if (!S_ISDIR(st.st_mode))
    return path_add(out, arg) ? tf_fail(e, TF_EXIT_FAIL, "out of memory") : 0;
  if (path_add(dirs, arg)) return tf_fail(e, TF_EXIT_FAIL, "out of memory");
  size_t first = out->n;
  if (walk(arg, out, e)) return -1;
  if (out->n == first)
    return tf_fail(e, TF_EXIT_INPUT, "folder '%s': no ledgers (*.jsonl) in it", arg);
  qsort(out->v + first, out->n - first, sizeof *out->v, cmp_str);
  return 0;
}

/* ---------------------------------------------------------------- the page's file */

int report_file_begins(const char *path, const char *head) {
  size_t len = strlen(head);
  char *buf = malloc(len + 1);
  FILE *f = buf ? fopen(path, "rb") : NULL;
  size_t n = f ? fread(buf, 1, len, f) : 0;
  if (f) fclose(f);
  int same = f && n == len && memcmp(buf, head, len) == 0;
  free(buf);
  return same;
}

/* Whether the file at path begins as every page report_write_html writes. */
static int is_our_page(const char *path) { return report_file_begins(path, REPORT_HTML_HEAD); }

/* Whether dir (a folder given to read) holds the folder parent, at any depth. */
static int inside(const char *parent, const char *dir) {
  char d[PATH_MAX];
  if (!realpath(dir, d)) return 0;
  size_t n = strlen(d);
  return strncmp(parent, d, n) == 0 && (parent[n] == '\0' || parent[n] == '/' || n == 1);
}

/* The page replaces its file whole, so --html never names a file the page must not replace:
 * a ledger (by its name, or the very file of one given to read, whatever the path), a file
 * in a ledgers folder given to read, a folder, or an existing file that is not a page this
 * command wrote. A shell glob of ledgers after --html puts the first ledger in the page's
 * place: that is refused here, before anything is read or written. */
static int check_page_file(const char *file, const path_list *ledgers, const path_list *dirs,
                           tf_err *e) {
  size_t n = strlen(file);
  if (n >= 6 && strcasecmp(file + n - 6, ".jsonl") == 0)
    return tf_fail(e, TF_EXIT_INPUT, "--html '%s': a ledger's name (*.jsonl), not a page's; "
                   "the page's file follows --html (--html report.html LEDGER...)", file);
  struct stat st, lt;
  if (stat(file, &st) == 0) {
    for (size_t i = 0; i < ledgers->n; i++)
      if (stat(ledgers->v[i], &lt) == 0 && lt.st_dev == st.st_dev && lt.st_ino == st.st_ino)
        return tf_fail(e, TF_EXIT_INPUT, "--html '%s': that is ledger '%s', given to read",
                       file, ledgers->v[i]);
    if (S_ISDIR(st.st_mode))
      return tf_fail(e, TF_EXIT_INPUT, "--html '%s': a folder, not a page's file", file);
    if (!is_our_page(file))
      return tf_fail(e, TF_EXIT_INPUT, "--html '%s': the file exists and is not a page of "
                     "tunefarm report, which would replace it: name a new file, or move it "
                     "aside", file);
  }
  char *copy = strdup(file), parent[PATH_MAX];
  if (!copy) return tf_fail(e, TF_EXIT_FAIL, "out of memory");
  char *slash = strrchr(copy, '/');
  const char *dir = !slash ? "." : slash == copy ? "/" : (*slash = '\0', copy);
  int known = realpath(dir, parent) != NULL;
  free(copy);
  for (size_t i = 0; known && i < dirs->n; i++)
    if (inside(parent, dirs->v[i]))
      return tf_fail(e, TF_EXIT_INPUT, "--html '%s': inside ledgers folder '%s', given to "
                     "read; write the page elsewhere", file, dirs->v[i]);
  return 0;
}

/* ---------------------------------------------------------------- Markdown */

/* v with `digits` decimals and an optional unit, or a dash when it is unknown. */
static const char *fmt_num(char *buf, size_t len, int digits, const char *unit, double v) {
  if (!isfinite(v))
    snprintf(buf, len, "—");
  else
    snprintf(buf, len, "%.*f%s", digits, v, unit);
  return buf;
}

/* "host gpuN name (uuid)"; the ledger's words through the Markdown rule, as every ledger text
 * the Markdown prints (common/escape.h), never in a code span, where the rule's escapes would
 * show as they are. */
static void device_label(FILE *f, const device_record *d, const char *uuid) {
  escape_markdown(f, d->host);
  fprintf(f, " gpu%d ", d->ordinal);
  escape_markdown(f, d->name);
  fputs(" (", f);
  escape_markdown(f, uuid);
  fputc(')', f);
}

/* Did any of the reason's numbers differ over its kind? */
static int reason_varied(const report_reason *r) {
  for (int k = 0; k < r->nnum; k++)
    if (r->lo[k] != r->hi[k]) return 1;
  return 0;
}

/* "2× "new is 2.5% slower than best (needed > 1.0%)" (the first of 2; its numbers over the
 * group: 0.1–2.5, 1)": a whole reason, never cut, and where its numbers ranged; nothing when
 * none of them varied (a constraint's fixed text), since the reason shows them all. */
static void print_outcome(FILE *f, report_outcome *oc) {
  fprintf(f, "- %s: %d", oc->name, oc->count);
  report_outcome_sort(oc);
  for (size_t i = 0; i < oc->ngroups && i < REASON_TOP; i++) {
    const report_reason *r = &oc->groups[i];
    fprintf(f, "%s %d× \"", i ? ";" : " — commonest:", r->count);
    escape_markdown(f, r->first);
    fputc('"', f);
    if (r->count > 1 && reason_varied(r)) {
      char ranges[512];
      report_reason_ranges(r, ranges, sizeof ranges);
      fprintf(f, " (the first of %d; its numbers over them: %s)", r->count, ranges);
    }
  }
  if (oc->ngroups > REASON_TOP)
    fprintf(f, "; %zu other kinds", oc->ngroups - REASON_TOP);
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
static void print_processes(FILE *f, const report_ledger *s) {
  if (s->nprocs == 0) return;
  fputs("Measure processes (canary: a second copy of best in new's place; A/A: new/best over "
        "every round the process measured; bias = median ratio - 1, 95% interval):\n\n", f);
  fprintf(f, "| run | child | generations | canary event span | canary kernel | verdict |%s\n",
          s->aa ? " A/A rounds | A/A event span | A/A kernel | keeps |" : "");
  fprintf(f, "|---|---:|---:|---:|---:|---|%s\n", s->aa ? "---:|---:|---:|---:|" : "");
  for (size_t i = 0; i < s->nprocs; i++) {
    const report_process *p = &s->procs[i];
    char a[64], b[64];
    fputs("| ", f);
    escape_markdown(f, p->run[0] ? p->run : "—");
    fprintf(f, " | %d | %d | %s | ", p->child, p->generations,
            fmt_bias(a, sizeof a, p->canary[0], p->lo[0], p->hi[0]));
    fprintf(f, "%s | %s |", fmt_bias(b, sizeof b, p->canary[1], p->lo[1], p->hi[1]),
            p->verdict[0] ? p->verdict : "none");
    if (s->aa) {
      fprintf(f, " %d |", p->naa);
      for (int k = 0; k < 2; k++) {
        double m, lo, hi;
        stats_median_finite(p->aa[k], p->naa, &m, &lo, &hi);
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

/* The control, the final best and what it is worth: the numbers a reader looks for first. */
static void print_answer(FILE *f, const report_ledger *s) {
  char a[32], b[32], c[32], cfg[1024];
  if (!s->control[0] && !isfinite(s->control_us) && !isfinite(s->control_median)) {
    fputs("- control: none measured yet\n", f);
  } else {
    fputs("- control: ", f);
    escape_markdown(f, s->control[0] ? s->control : "—");
    fprintf(f, ": %s µs beside the final best (same rounds); over the campaign %s–%s µs, "
               "median %s\n", fmt_num(a, sizeof a, 2, "", s->control_us),
            fmt_num(b, sizeof b, 2, "", s->control_lo), fmt_num(c, sizeof c, 2, "", s->control_hi),
            fmt_num(cfg, sizeof cfg, 2, "", s->control_median));
  }
  record_cfg_text(&s->best_cfg, cfg, sizeof cfg);
  if (!s->has_best) {
    fputs("- final best: none yet (no generation recorded)\n", f);
    return;
  }
  fputs("- final best: ", f);
  escape_markdown(f, cfg[0] ? cfg : "—");
  if (s->best_gen < 0) {
    fputs(" (never measured)", f);
  } else {
    fprintf(f, " — %s µs (measured in generation %lld; ", fmt_num(a, sizeof a, 2, "", s->best_us),
            s->best_gen);
    if (s->winner_gen >= 0)
      fprintf(f, "kept in generation %lld)", s->winner_gen);
    else
      fputs("the start configuration)", f);
  }
  fprintf(f, " — **the winner**%s, fastest on its own GPU\n",
          s->nrestarts ? ", the champion of the searches (decided by duels)" : "");
  if (s->best_gen < 0) return;
  fprintf(f, "- speed-up: %s over the start (%s µs), %s over the control\n",
          fmt_num(a, sizeof a, 3, "×", s->start_us / s->best_us),
          fmt_num(b, sizeof b, 2, "", s->start_us),
          fmt_num(c, sizeof c, 3, "×", s->control_us / s->best_us));
}

/* The control faster than the winner in the same rounds: the search's answer loses to what it
 * is meant to beat. */
static void print_warning(FILE *f, const report_ledger *s) {
  if (!report_control_faster(s)) return;
  char a[32], b[32], c[32];
  fputs("- **warning: the control is faster than the winner**: ", f);
  escape_markdown(f, s->control[0] ? s->control : "the control");
  fprintf(f, " %s µs against the final best's %s µs in the same rounds (generation %lld), "
             "final best / control = %s\n", fmt_num(a, sizeof a, 2, "", s->control_us),
          fmt_num(b, sizeof b, 2, "", s->best_us), s->best_gen,
          fmt_num(c, sizeof c, 3, "×", s->best_us / s->control_us));
}

static void rate_row(FILE *f, const char *arm, const report_rate *r) {
  char a[32], b[32], c[32], d[32], m[32];
  fprintf(f, "| %s | %s | %s | %s | %s | %s |\n", arm, fmt_num(a, sizeof a, 2, "", r->us),
          fmt_num(b, sizeof b, 3, "", r->tflops), fmt_num(c, sizeof c, 1, "", r->gbps),
          fmt_num(d, sizeof d, 1, "%", 100 * r->peak_fraction),
          fmt_num(m, sizeof m, 1, "%", 100 * r->bw_fraction));
}

/* TFLOP/s and GB/s of the start, the final best and the control, from the spec's flops and
 * bytes, and the share of the device's FP32 peak (docs/reference/report.md, "Throughput"). */
static void print_throughput(FILE *f, const report_ledger *s) {
  char a[32];
  if (s->work_note[0]) {
    fputs("- throughput: unknown: ", f);
    escape_markdown(f, s->work_note);
    fputc('\n', f);
    return;
  }
  fputs("- throughput of one launch: the flops and bytes of ", f);
  escape_markdown(f, s->spec_path);
  fprintf(f, " over its time; %s-bound (TFLOP/s is its measure where flops are at least 10 "
             "per byte, else GB/s); FP32 peak ", s->unit_flops ? "compute" : "memory");
  if (isfinite(s->peak_tflops))
    fprintf(f, "%s TFLOP/s = %d SMs × %d FP32 lanes × 2 × %d MHz (", fmt_num(a, sizeof a, 1, "",
            s->peak_tflops), s->dev.sm_count, throughput_fp32_lanes(s->dev.arch), s->dev.max_sm_mhz);
  else
    fputs("unknown (no FP32 lanes per SM known for ", f);
  escape_markdown(f, s->dev.arch);
  fputs("); memory bandwidth peak ", f);
  if (isfinite(s->peak_gbps))
    fprintf(f, "%s GB/s = 2 × %d MHz × %d bits / 8\n\n", fmt_num(a, sizeof a, 0, "", s->peak_gbps),
            s->dev.max_mem_mhz, s->dev.mem_bus_bits);
  else
    fputs("unknown (not in the device record)\n\n", f);
  fputs("| arm | µs | TFLOP/s | GB/s | of FP32 peak | of memory peak |\n"
        "|---|---:|---:|---:|---:|---:|\n", f);
  rate_row(f, "start", &s->rate_start);
  rate_row(f, "final best", &s->rate_best);
  rate_row(f, "control", &s->rate_control);
}

/* Per knob, the median new/best of the generations whose change moved it alone. */
static void print_effects(FILE *f, const report_ledger *s) {
  if (s->neffects == 0) return;
  fputs("Knob effects: over the trusted, judged generations whose change moves one knob alone, "
        "the median of their ratios new/best (below 1: the move made it faster), per knob and "
        "per move.\n\n| knob | move | generations | median new/best |\n|---|---|---:|---:|\n", f);
  for (size_t i = 0; i < s->neffects; i++) {
    const report_effect *x = &s->effects[i];
    char m[64], r[32];
    if (x->all) snprintf(m, sizeof m, "all");
    else snprintf(m, sizeof m, "%lld→%lld", x->from, x->to);
    fputs("| ", f);
    if (x->all) escape_markdown(f, x->knob);
    fprintf(f, " | %s | %d | %s |\n", m, x->count, fmt_num(r, sizeof r, 3, "", x->median));
  }
  fputc('\n', f);
}

static void print_keeps(FILE *f, const report_ledger *s) {
  if (s->keeps == 0) {
    fputs("No generation kept a change.\n\n", f);
    return;
  }
  fputs("| gen | search | change | before µs | after µs | control µs | ratio | decision |\n", f);
  fputs("|---:|---|---|---:|---:|---:|---:|---|\n", f);
  for (size_t i = 0; i < s->ngens; i++) {
    const report_gen *g = &s->gens[i];
    if (g->decision != DECISION_KEEP) continue;
    char a[32], b[32], c[32], r[32], label[32], change[1024];
    report_search_label(g, label, sizeof label);
    report_change_text(&g->best, &g->new_cfg, change, sizeof change);
    fprintf(f, "| %lld | %s | ", g->generation, label);
    escape_markdown(f, change);
    fprintf(f, " | %s | %s | %s | %s | keep%s |\n", fmt_num(a, sizeof a, 2, "", g->before_us),
            fmt_num(b, sizeof b, 2, "", g->after_us), fmt_num(c, sizeof c, 2, "", g->control_us),
            fmt_num(r, sizeof r, 3, "", g->median_ratio),
            g->generation == s->winner_gen ? ", **winner**" : "");
  }
  fputc('\n', f);
}

static void print_section(FILE *f, report_ledger *s) {
  fputs("## ", f);
  device_label(f, &s->dev, s->dev.uuid);
  fputs(" — campaign ", f);
  escape_markdown(f, s->campaign);
  fputs(", backend ", f);
  escape_markdown(f, s->backend);
  fputs("\n\nledger: ", f);
  escape_markdown(f, s->path);
  fputs("\n\n", f);
  if (backend_simulated(s->backend)) /* its lines read like a GPU's: say what they are not */
    fputs("**simulated device**: every time below is synthetic (a cost model with seeded "
          "noise), and no kernel's output was checked (rel_err not measured)\n\n", f);
  print_answer(f, s);
  print_warning(f, s);
  print_throughput(f, s);
  fputc('\n', f);
  print_keeps(f, s);
  print_effects(f, s);
  for (int i = 0; i < REPORT_OUTCOMES; i++) print_outcome(f, &s->out[i]);
  if (s->nrestarts)
    fprintf(f, "- restarts: %zu (the final best is the champion of the searches, decided by "
               "duels)\n", s->nrestarts);
  for (size_t i = 0; i < s->nrestarts; i++) {
    char a[32];
    fprintf(f, "- restart %d after generation %lld (champion %s µs): ", s->restarts[i].restart,
            s->restarts[i].after, fmt_num(a, sizeof a, 2, "", s->restarts[i].champion_us));
    escape_markdown(f, s->restarts[i].reason);
    fputc('\n', f);
  }
  if (s->reopens)
    fprintf(f, "- reopened: %d time%s (a later run's campaign let the ended search go on)\n",
            s->reopens, s->reopens == 1 ? "" : "s");
  if (s->timed > 0 && s->wall_s > 0)
    fprintf(f, "- time: busy %.1f%% (measuring %.1f s of %.1f s, each run from its first job "
               "to its last result), %.0f decisions per hour (%ld measured generations)\n",
            100.0 * s->measure_s / s->wall_s, s->measure_s, s->wall_s,
            3600.0 * (double)s->timed / s->wall_s, s->timed);
  if (s->drifted > 0)
    fprintf(f, "- control drift: %ld of %ld measured generations refused, in %ld of them best "
               "and new held steady%s\n", s->drifted, s->measured, s->drifted_alone,
            decide_control_unsteady(s->drifted_alone, s->measured) ? DECIDE_UNSTEADY_CONTROL
                                                                   : "");
  fputs("- ended: ", f);
  escape_markdown(f, s->ended ? s->end_reason : "running or interrupted");
  fprintf(f, "\n- generations: %zu, rounds recorded: %lld\n\n", s->ngens, s->rounds);
  print_processes(f, s);
}

static void print_side_by_side(FILE *f, const report_ledger *s, size_t n) {
  fputs("## Side by side\n\n"
        "One row per ledger; each row's numbers come from that device alone, and each winner "
        "is the fastest on its own GPU: times of two GPUs are never compared or pooled.\n\n"
        "| device | campaign | generations | keeps | final best µs | start µs | control µs | "
        "over start | over control | winner (fastest on its own GPU) | ledger |\n"
        "|---|---|---:|---:|---:|---:|---:|---:|---:|---|---|\n",
        f);
  for (size_t i = 0; i < n; i++) {
    char a[32], b[32], c[32], d[32], e[32], u8[9], cfg[1024];
    device_uuid8(&s[i].dev, u8);
    record_cfg_text(&s[i].best_cfg, cfg, sizeof cfg);
    fputs("| ", f);
    device_label(f, &s[i].dev, u8);
    fputs(" | ", f);
    escape_markdown(f, s[i].campaign);
    fprintf(f, " | %zu | %d | %s | %s | %s | %s | %s | ", s[i].ngens, s[i].keeps,
            fmt_num(a, sizeof a, 2, "", s[i].best_us), fmt_num(b, sizeof b, 2, "", s[i].start_us),
            fmt_num(c, sizeof c, 2, "", s[i].control_us),
            fmt_num(d, sizeof d, 3, "×", s[i].start_us / s[i].best_us),
            fmt_num(e, sizeof e, 3, "×", s[i].control_us / s[i].best_us));
    escape_markdown(f, s[i].has_best && cfg[0] ? cfg : "—");
    fputs(" | ", f);
    escape_markdown(f, s[i].path);
    fputs(" |\n", f);
  }
  fputc('\n', f);
}

static void print_markdown(FILE *f, report_ledger *s, size_t n) {
  fputs("# tunefarm report\n\n"
        "before/after/control µs: the median over a generation's recorded rounds (screened "
        "ones left out) of best's, new's and the control's time per launch (event span); "
        "ratio: the median of the per-round ratios new/best, which the decision rule judged. "
        "Final best: the search's answer (with restarts, the champion) at its latest such "
        "median; speed-up over the start: start µs / final best µs; over the control: the "
        "control's µs in the same rounds / final best µs; all on the same device "
        "(docs/reference/report.md).\n\n",
        f);
  for (size_t i = 0; i < n; i++) print_section(f, &s[i]);
  if (n > 1) print_side_by_side(f, s, n);
}

/* ---------------------------------------------------------------- main */

/* The page goes to a temporary file first: a failed write never leaves half a page. */
static int write_page(const char *file, report_ledger *s, size_t n, tf_err *e) {
  char tmp[PATH_MAX];
  if (snprintf(tmp, sizeof tmp, "%s.tmp%ld", file, (long)getpid()) >= (int)sizeof tmp)
    return tf_fail(e, TF_EXIT_INPUT, "--html '%s': path too long", file);
  /* a new file: an existing one of that name is someone else's */
  int fd = open(tmp, O_WRONLY | O_CREAT | O_EXCL, 0666);
  FILE *f = fd < 0 ? NULL : fdopen(fd, "w");
  if (!f) {
    if (fd >= 0) close(fd), unlink(tmp);
    return tf_fail(e, TF_EXIT_FAIL, "--html '%s': %s", file, strerror(errno));
  }
  int rc = report_write_html(f, s, n, e);
  if (fclose(f) != 0 && rc == 0)
    rc = tf_fail(e, TF_EXIT_FAIL, "--html '%s': %s", file, strerror(errno));
  if (rc == 0 && rename(tmp, file) != 0)
    rc = tf_fail(e, TF_EXIT_FAIL, "--html '%s': %s", file, strerror(errno));
  if (rc) unlink(tmp);
  return rc;
}

static int write_text(const report_opts *o, report_ledger *s, size_t n, tf_err *e) {
  switch (o->format) {
    case OUT_JSON: return report_write_json(stdout, s, n, e);
    case OUT_CSV: return report_write_csv(stdout, s, n, e);
    case OUT_T4: return report_write_t4(stdout, s, n, e);
    case OUT_MARKDOWN: print_markdown(stdout, s, n); return 0;
    default: return 0;
  }
}

static int run(const report_opts *o, path_list *paths, tf_err *e) {
  if ((o->format == OUT_T4 || o->t4_metadata) && paths->n != 1)
    return tf_fail(e, TF_EXIT_INPUT, "--t4 takes one ledger, %zu given: T4 results name "
                   "no device, and tunefarm never pools two GPUs' results (one --t4 per ledger)",
                   paths->n);
  report_ledger *sums = calloc(paths->n, sizeof *sums);
  if (!sums) return tf_fail(e, TF_EXIT_FAIL, "out of memory");
  size_t n = 0;
  int rc = 0;
  for (; n < paths->n && rc == 0; n++) rc = report_ledger_read(&sums[n], paths->v[n], stderr, e);
  if (rc == 0 && o->html) rc = write_page(o->html, sums, n, e);
  if (rc == 0 && o->t4_metadata) rc = report_t4_write_metadata_file(o->t4_metadata, sums, e);
  if (rc == 0) rc = write_text(o, sums, n, e);
  fflush(stdout);
  if (rc == 0 && o->html && o->format == OUT_NONE)
    fprintf(stderr, "tunefarm report: wrote %s (%zu ledger%s)\n", o->html, n, n == 1 ? "" : "s");
  if (rc == 0 && o->t4_metadata && o->format == OUT_NONE)
    fprintf(stderr, "tunefarm report: wrote %s\n", o->t4_metadata);
  for (size_t i = 0; i < n; i++) report_ledger_release(&sums[i]);
  free(sums);
  return rc;
}

/* --t4-metadata FILE or --t4-metadata=FILE; *i moves past FILE. */
static int t4_metadata_opt(int argc, char **argv, int *i, report_opts *o, tf_err *e) {
  const char *a = argv[*i];
  const char *file = a[13] == '=' ? a + 14 : *i + 1 < argc ? argv[++*i] : "";
  if (!file[0])
    return tf_fail(e, TF_EXIT_INPUT, "option '--t4-metadata' needs a file (see --help)");
  if (file[0] == '-' && file[1])
    return tf_fail(e, TF_EXIT_INPUT, "option '--t4-metadata' needs a file, not '%s' (a file "
                   "whose name starts with '-': --t4-metadata ./%s)", file, file);
  if (o->t4_metadata) return tf_fail(e, TF_EXIT_INPUT, "option '--t4-metadata' given twice");
  o->t4_metadata = file;
  return 0;
}

/* One option; *i moves past its argument. */
static int parse_opt(int argc, char **argv, int *i, report_opts *o, tf_err *e) {
  const char *a = argv[*i];
  out_format fmt = OUT_NONE;
  if (strcmp(a, "--json") == 0) fmt = OUT_JSON;
  else if (strcmp(a, "--csv") == 0) fmt = OUT_CSV;
  else if (strcmp(a, "--t4") == 0) fmt = OUT_T4;
  else if (strcmp(a, "--t4-metadata") == 0 || strncmp(a, "--t4-metadata=", 14) == 0)
    return t4_metadata_opt(argc, argv, i, o, e);
  else if (strcmp(a, "--html") == 0 || strncmp(a, "--html=", 7) == 0) {
    const char *file = a[6] == '=' ? a + 7 : *i + 1 < argc ? argv[++*i] : "";
    if (!file[0])
      return tf_fail(e, TF_EXIT_INPUT, "option '--html' needs a file (see --help)");
    if (file[0] == '-' && file[1])
      return tf_fail(e, TF_EXIT_INPUT, "option '--html' needs a file, not '%s' (a file whose "
                     "name starts with '-': --html ./%s)", file, file);
    if (o->html) return tf_fail(e, TF_EXIT_INPUT, "option '--html' given twice (one page)");
    o->html = file;
    return 0;
  } else {
    return tf_fail(e, TF_EXIT_INPUT, "unknown option '%s' (see --help)", a);
  }
  if (o->formats++)
    return tf_fail(e, TF_EXIT_INPUT, "one of --json, --csv and --t4 at a time (see --help)");
  o->format = fmt;
  return 0;
}

int report_main(int argc, char **argv) {
  path_list paths = {0}, dirs = {0};
  report_opts o = {.format = OUT_MARKDOWN};
  tf_err e;
  tf_err_clear(&e);
  int rc = 0, opts = 1;
  for (int i = 1; i < argc && rc == 0; i++) {
    if (opts && (strcmp(argv[i], "-h") == 0 || strcmp(argv[i], "--help") == 0)) {
      usage(stdout);
      path_list_free(&paths);
      path_list_free(&dirs);
      return TF_EXIT_OK;
    }
    if (opts && strcmp(argv[i], "--") == 0) {
      opts = 0;
      continue;
    }
    if (opts && argv[i][0] == '-' && argv[i][1])
      rc = parse_opt(argc, argv, &i, &o, &e);
    else
      rc = collect(argv[i], &paths, &dirs, &e);
  }
  if (rc == 0 && (o.html || o.t4_metadata) && o.formats == 0) o.format = OUT_NONE;
  if (rc == 0 && paths.n == 0)
    rc = tf_fail(&e, TF_EXIT_INPUT, "no ledger given (usage: tunefarm report LEDGER|DIR ...)");
  if (rc == 0 && o.html) rc = check_page_file(o.html, &paths, &dirs, &e);
  if (rc == 0 && o.t4_metadata) rc = report_t4_check_file(o.t4_metadata, paths.v, paths.n, &e);
  if (rc == 0) rc = run(&o, &paths, &e);
  path_list_free(&paths);
  path_list_free(&dirs);
  if (rc == 0) return TF_EXIT_OK;
  fflush(stdout);
  fprintf(stderr, "tunefarm report: %s\n", e.msg);
  return tf_exit_status(&e);
}
