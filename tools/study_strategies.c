/* study_strategies: `tunefarm study --strategies` (tools/study_strategies.h). */
// defines: study_strategies_main
#include "tools/study_strategies.h"

#include <dirent.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common/campaign.h"    // defines: campaign_load, campaign_release
#include "common/escape.h"      // defines: escape_html
#include "common/err.h"         // defines: tf_err, tf_fail, tf_exit_status
#include "coordinator/ledger.h" // defines: ledger_scan
#include "coordinator/replay.h" // defines: ledger_best, ledger_best_add
#include "coordinator/space.h"  // defines: space_enumerate, space_at
#include "tools/report_model.h" // defines: report_file_begins
#include "tools/svgplot.h"      // defines: svgplot_axes, svgplot_legend, svgplot_style
#include "tools/sweep.h"        // defines: sweep_load_space
#include "worker/simcost.h"     // defines: simcost_us
#include "worker/backend.h"    // defines: backend_find

#define MAX_GROUPS 16
#define MAX_AT 16
#define MAX_RUNS 4096

/* A configuration's true time on a device: "sim", the simulated device's cost model under the
 * run's seed; or a recorded space (sf), its level there (ratio x reference_us, the drift the
 * reference saw beside it taken out) when it passed its check, and infinite when it did not,
 * the same for every seed. */
typedef struct truth {
  const campaign *c;
  const space_view *v;
  const space_file *sf;    /* NULL: the cost model */
  unsigned long long seed; /* the optimum below is this seed's */
  double optimum_us;
  int optimum_at;          /* its reachable index */
  int have_optimum;
} truth;

static double truth_us(const truth *t, const config *c, unsigned long long seed) {
  if (!t->sf) return simcost_us(&t->c->tmpl, t->c->dims, c, seed);
  const space_entry *x = spacefile_find(t->sf, c);
  if (!x) return NAN; /* never within anything; sweep_load_space saw every reachable one */
  return x->check == SPACE_PASS ? x->ratio * t->sf->reference_us : INFINITY;
}

/* The fastest reachable configuration, under seed for the cost model; a space's is every
 * seed's. */
static double truth_optimum(truth *t, unsigned long long seed) {
  if (t->have_optimum && (t->sf || t->seed == seed)) return t->optimum_us;
  double best = INFINITY;
  for (int i = 0; i < t->v->nreachable; i++) {
    config c;
    space_at(t->v, i, &c);
    double us = truth_us(t, &c, seed);
    if (us < best) best = us, t->optimum_at = i;
  }
  t->seed = seed, t->optimum_us = best, t->have_optimum = 1;
  return best;
}

/* One run: its distance to the optimum after each measured generation. */
typedef struct run_curve {
  int n, cap;
  double *ratio;        /* [m - 1]: the answer's true time / optimum after m measured */
  double *gpu_s;        /* [m - 1]: GPU seconds of recorded rounds up to it; on a recorded
                         * space the records' wall_s, the recorded device's time */
  double seen;          /* the nearest to the optimum of the configurations it measured (true
                         * time / optimum, best's and new's arms): a run whose answer is
                         * farther did not keep what it measured */
} run_curve;

typedef struct scan_ctx {
  truth *t;
  const char *path;
  ledger_best b;
  run_curve *r;
  double gpu_s;
  unsigned long long seed;
  int have_seed;
} scan_ctx;

static int curve_push(run_curve *r, double ratio, double gpu_s) {
  if (r->n == r->cap) {
    int cap = r->cap ? 2 * r->cap : 256;
    double *a = realloc(r->ratio, (size_t)cap * sizeof *a);
    if (!a) return -1;
    r->ratio = a;
    double *g = realloc(r->gpu_s, (size_t)cap * sizeof *g);
    if (!g) return -1;
    r->gpu_s = g;
    r->cap = cap;
  }
  r->ratio[r->n] = ratio;
  r->gpu_s[r->n++] = gpu_s;
  return 0;
}

static double rounds_gpu_s(const record_gen *g) {
  double us = 0;
  for (int i = 0; i < g->res.nrounds; i++)
    for (int a = 0; a < ARM_COUNT; a++)
      if (g->res.rounds[i].us[a] > 0) us += g->res.rounds[i].us[a] * g->res.samples;
  return us * 1e-6;
}

/* The measured generation's arms, for the run's nearest measured configuration. */
static int note_seen(scan_ctx *x, const record_gen *g, tf_err *e) {
  const record_cfg *arm[2] = {&g->best, &g->new_cfg};
  double opt = truth_optimum(x->t, x->seed);
  for (int a = 0; a < 2; a++) {
    config c;
    if (record_cfg_config(&x->t->c->tmpl, arm[a], x->path, a ? "new" : "best", &c, e))
      return -1;
    double ratio = truth_us(x->t, &c, x->seed) / opt;
    if (ratio < x->r->seen) x->r->seen = ratio;
  }
  return 0;
}

static int on_record(void *ctx, long line, const record *rec, tf_err *e) {
  (void)line;
  scan_ctx *x = ctx;
  int measured_before = x->b.s ? x->b.s->measured : 0;
  if (ledger_best_add(&x->b, rec, e)) return -1;
  if (rec->kind != RECORD_GENERATION || !rec->gen.measured) return 0;
  if (!x->have_seed) {
    job *j = malloc(sizeof *j);
    if (!j) return tf_fail(e, TF_EXIT_FAIL, "out of memory");
    int rc = record_job(&rec->gen, j, e);
    x->seed = j->measure.seed;
    free(j);
    if (rc) return -1;
    x->have_seed = 1;
  }
  x->gpu_s += x->t->sf ? rec->gen.res.wall_s : rounds_gpu_s(&rec->gen);
  if (note_seen(x, &rec->gen, e)) return -1;
  if (x->b.s->measured == measured_before) return 0; /* not in the budget: no new count */
  const config *answer = search_answer(x->b.s, NULL, NULL);
  double ratio = truth_us(x->t, answer, x->seed) / truth_optimum(x->t, x->seed);
  return curve_push(x->r, ratio, x->gpu_s) ? tf_fail(e, TF_EXIT_FAIL, "out of memory") : 0;
}

static int read_run(truth *t, const char *path, run_curve *r, tf_err *e) {
  scan_ctx x = {.t = t, .path = path, .r = r};
  r->seen = INFINITY;
  ledger_best_init(&x.b, &t->c->tmpl, path);
  int rc = ledger_scan(path, stderr, on_record, &x, e);
  ledger_best_release(&x.b);
  return rc;
}

/* Every *.jsonl under dir, sorted per folder, as runs of one group. */
typedef struct group {
  const char *name;
  run_curve runs[MAX_RUNS];
  int n;
} group;

static int by_name(const struct dirent **a, const struct dirent **b) {
  return strcmp((*a)->d_name, (*b)->d_name);
}

static int read_dir(truth *t, const char *dir, group *g, tf_err *e) {
  struct dirent **list;
  int n = scandir(dir, &list, NULL, by_name), rc = 0;
  if (n < 0) return tf_fail(e, TF_EXIT_INPUT, "folder '%s' cannot be read", dir);
  for (int i = 0; i < n; i++) {
    char path[4096];
    struct stat st;
    const char *name = list[i]->d_name;
    size_t len = strlen(name);
    snprintf(path, sizeof path, "%s/%s", dir, name);
    if (rc || name[0] == '.' || stat(path, &st)) continue;
    if (S_ISDIR(st.st_mode)) {
      rc = read_dir(t, path, g, e);
    } else if (len > 6 && strcmp(name + len - 6, ".jsonl") == 0) {
      if (g->n == MAX_RUNS) rc = tf_fail(e, TF_EXIT_INPUT, "more than %d runs", MAX_RUNS);
      else rc = read_run(t, path, &g->runs[g->n++], e);
    }
  }
  for (int i = 0; i < n; i++) free(list[i]);
  free(list);
  return rc;
}

/* ---- the table ---- */

static double ratio_at(const run_curve *r, int g) {
  if (r->n == 0) return NAN;
  return r->ratio[(g < r->n ? g : r->n) - 1];
}

/* The fraction of g's runs whose answer is within `within` after gen measured generations. */
static double fraction_at(const group *g, int gen, double within) {
  int k = 0;
  for (int r = 0; r < g->n; r++) k += ratio_at(&g->runs[r], gen) <= within;
  return g->n ? (double)k / g->n : 0.0;
}

/* The fraction of g's runs that measured a configuration within `within`. */
static double fraction_seen(const group *g, double within) {
  int k = 0;
  for (int r = 0; r < g->n; r++) k += g->runs[r].seen <= within;
  return g->n ? (double)k / g->n : 0.0;
}

static int cmp_double(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return (x > y) - (x < y);
}

/* The median over runs of the first count (gens) or GPU time (else) within `within`; runs
 * that never got there count as infinite. */
static double median_to(const group *g, double within, int gens) {
  double *v = malloc((size_t)(g->n ? g->n : 1) * sizeof *v);
  if (!v) return NAN;
  for (int i = 0; i < g->n; i++) {
    const run_curve *r = &g->runs[i];
    v[i] = INFINITY;
    for (int m = 0; m < r->n; m++)
      if (r->ratio[m] <= within) {
        v[i] = gens ? m + 1 : r->gpu_s[m];
        break;
      }
  }
  qsort(v, (size_t)g->n, sizeof *v, cmp_double);
  double med = g->n ? v[(g->n - 1) / 2] : NAN;
  free(v);
  return med;
}

static void print_table(const group *gs, int ng, const int *at, int nat, double within,
                        const char *time_name, FILE *out) {
  fprintf(out, "\nWithin %.0f%% of the optimum: fraction of runs after G measured generations\n\n"
          "| strategy | runs |", (within - 1) * 100);
  for (int a = 0; a < nat; a++) fprintf(out, " G=%d |", at[a]);
  fprintf(out, " median G to reach | median %s to reach | measured one |\n|---|---:|",
          time_name);
  for (int a = 0; a < nat; a++) fprintf(out, "---:|");
  fprintf(out, "---:|---:|---:|\n");
  for (int i = 0; i < ng; i++) {
    const group *g = &gs[i];
    fprintf(out, "| %s | %d |", g->name, g->n);
    for (int a = 0; a < nat; a++) fprintf(out, " %.2f |", fraction_at(g, at[a], within));
    double mg = median_to(g, within, 1), ms = median_to(g, within, 0);
    if (isfinite(mg)) fprintf(out, " %.0f | %.3f |", mg, ms);
    else fprintf(out, " - | - |");
    fprintf(out, " %.2f |\n", fraction_seen(g, within));
  }
}

/* ---- the page (--html FILE) ---- */

/* How every page this command writes begins: --html replaces an existing file only then. */
#define STUDY_HTML_HEAD                                                                      \
  "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\"><title>tunefarm study: " \
  "search strategies</title>"

/* Eight colours a reader tells apart; strategies past the eighth repeat them, dashed. */
static const char *const colours[] = {"#1f5fa8", "#d4002a", "#1a8a3a", "#a86b00",
                                      "#7b3fb0", "#00838f", "#555555", "#e08a00"};
#define NCOLOURS (int)(sizeof colours / sizeof colours[0])

static int longest_run(const group *gs, int ng) {
  int n = 2; /* an axis of one generation has no width */
  for (int i = 0; i < ng; i++)
    for (int r = 0; r < gs[i].n; r++)
      if (gs[i].runs[r].n > n) n = gs[i].runs[r].n;
  return n;
}

/* One line per strategy: the fraction of its runs within `within` after each count of
 * measured generations, to the longest run. */
static void page_plot(FILE *f, const group *gs, int ng, double within) {
  int gmax = longest_run(gs, ng);
  svgplot p = {1, gmax, 0, 1};
  svgplot_pad(&p.y0, &p.y1);
  char title[128];
  snprintf(title, sizeof title, "runs within %.0f%% of the optimum, after G measured generations",
           (within - 1) * 100);
  svgplot_axes(f, &p, title, "measured generations G", "fraction of runs", 1);
  svgplot_legend_item items[MAX_GROUPS];
  for (int i = 0; i < ng; i++) {
    const char *c = colours[i % NCOLOURS];
    fprintf(f, "<polyline class=\"strategy%s\" style=\"stroke:%s\" points=\"",
            i >= NCOLOURS ? " more" : "", c);
    for (int gen = 1; gen <= gmax; gen++) { /* steps: the fraction holds until the next G */
      const double y = svgplot_y(&p, fraction_at(&gs[i], gen, within));
      fprintf(f, "%.1f,%.1f ", svgplot_x(&p, gen), y);
      if (gen < gmax) fprintf(f, "%.1f,%.1f ", svgplot_x(&p, gen + 1), y);
    }
    fputs("\"><title>", f);
    escape_html(f, gs[i].name);
    fputs("</title></polyline>", f);
    items[i] = (svgplot_legend_item){i >= NCOLOURS ? "dash" : "line", c, gs[i].name};
  }
  svgplot_legend(f, items, (size_t)ng);
}

/* The Markdown table's numbers as an HTML table. */
static void page_table(FILE *f, const group *gs, int ng, const int *at, int nat, double within,
                       const char *time_name) {
  fputs("<table><tr><th>strategy</th><th>runs</th>", f);
  for (int a = 0; a < nat; a++) fprintf(f, "<th>G=%d</th>", at[a]);
  fprintf(f, "<th>median G to reach %.0f%%</th><th>median %s to reach it</th>"
          "<th>measured one within %.0f%%</th></tr>\n", (within - 1) * 100, time_name,
          (within - 1) * 100);
  for (int i = 0; i < ng; i++) {
    fputs("<tr><td>", f);
    escape_html(f, gs[i].name);
    fprintf(f, "</td><td>%d</td>", gs[i].n);
    for (int a = 0; a < nat; a++) fprintf(f, "<td>%.2f</td>", fraction_at(&gs[i], at[a], within));
    double mg = median_to(&gs[i], within, 1), ms = median_to(&gs[i], within, 0);
    if (isfinite(mg)) fprintf(f, "<td>%.0f</td><td>%.3f</td>", mg, ms);
    else fputs("<td>-</td><td>-</td>", f);
    fprintf(f, "<td>%.2f</td></tr>\n", fraction_seen(&gs[i], within));
  }
  fputs("</table>\n", f);
}

/* The page replaces its file whole, so --html never names a ledger or a folder, nor an
 * existing file that is not a page of this command. */
static int check_page_file(const char *path, tf_err *e) {
  size_t n = strlen(path);
  struct stat st;
  if (n >= 6 && strcmp(path + n - 6, ".jsonl") == 0)
    return tf_fail(e, TF_EXIT_INPUT, "--html '%s': a ledger's name (*.jsonl), not a page's",
                   path);
  if (stat(path, &st) == 0 && S_ISDIR(st.st_mode))
    return tf_fail(e, TF_EXIT_INPUT, "--html '%s': a folder, not a page's file", path);
  if (stat(path, &st) == 0 && !report_file_begins(path, STUDY_HTML_HEAD))
    return tf_fail(e, TF_EXIT_INPUT, "--html '%s': the file exists and is not a page of "
                   "tunefarm study, which would replace it: name a new file, or move it aside",
                   path);
  return 0;
}

/* The page, written beside its file and renamed over it: never half a page. */
static int write_page(const char *path, const char *truth_text, const group *gs, int ng,
                      const int *at, int nat, const char *time_name, tf_err *e) {
  char tmp[4096];
  if (snprintf(tmp, sizeof tmp, "%s.part", path) >= (int)sizeof tmp)
    return tf_fail(e, TF_EXIT_INPUT, "--html: path too long");
  FILE *f = fopen(tmp, "w");
  if (!f) return tf_fail(e, TF_EXIT_FAIL, "cannot write '%s': %s", tmp, strerror(errno));
  fprintf(f, STUDY_HTML_HEAD "<style>%s.strategy{stroke-width:1.5}.more{stroke-dasharray:4 3}"
             "</style></head><body>\n<h1>tunefarm study: search strategies</h1>\n<p>",
          svgplot_style);
  escape_html(f, truth_text);
  fputs("</p>\n<p>A run's answer after G measured generations is the configuration it holds "
        "then (a run that ended sooner keeps its last); it is within 1% when its true time is "
        "at most 1.01 times the optimum's (docs/reference/strategies.md).</p>\n", f);
  for (int k = 0; k < 2; k++) {
    const double within = k ? 1.03 : 1.01;
    page_plot(f, gs, ng, within);
    page_table(f, gs, ng, at, nat, within, time_name);
  }
  fputs("</body></html>\n", f);
  int bad = ferror(f);
  if (fclose(f) != 0 || bad || rename(tmp, path) != 0) {
    int err = errno;
    unlink(tmp);
    return tf_fail(e, TF_EXIT_FAIL, "cannot write '%s': %s", path, strerror(err));
  }
  return 0;
}

/* ---- arguments ---- */

static void usage_text(FILE *f) {
  fputs("usage: tunefarm study --strategies [--truth sim|SPACE_FILE] [--at G,G,...] "
        "[--html FILE] CAMPAIGN [NAME=DIR ...]\n", f);
}

static int usage(void) {
  usage_text(stderr);
  return TF_EXIT_INPUT;
}

static int help(void) {
  usage_text(stdout);
  fputs("\nScores search strategies against the truth of CAMPAIGN's space. Each NAME=DIR is one\n"
        "strategy's runs, every ledger under DIR one run; after each measured generation a\n"
        "run's answer is looked up in the truth. Printed: the truth and its optimum, then per\n"
        "strategy the fraction of runs within 1% and 3% of the optimum after G measured\n"
        "generations, the median G to get there, the median time spent, and the fraction\n"
        "that measured a configuration within it at all (\"measured one\").\n\n"
        "  --truth sim         the simulated device's cost model under each run's seed, the\n"
        "                      time GPU seconds of recorded rounds (default)\n"
        "  --truth SPACE_FILE  a space `tunefarm sweep` recorded, which the runs replayed; the\n"
        "                      time the recorded device's (the records' wall_s)\n"
        "  --at G,G,...        the generation counts of the tables (default 10,25,50,100,200)\n"
        "  --html FILE         also a page: per threshold, a plot of the fraction of runs\n"
        "                      within it against G (a line per strategy) and its table; it\n"
        "                      replaces only a page of its own, never a ledger\n"
        "  -h, --help          this text\n\n"
        "Without NAME=DIR it prints the truth alone. Exit status: 0 done, 2 bad input (the\n"
        "campaign, a ledger, a folder, the truth, the page's file), 1 a failure.\n"
        "docs/reference/study.md, docs/reference/strategies.md.\n", stdout);
  return 0;
}

static int parse_at(const char *s, int *at, int *nat) {
  *nat = 0;
  while (*s && *nat < MAX_AT) {
    char *end;
    long v = strtol(s, &end, 10);
    if (end == s || v < 1 || v > 1000000 || (*end && *end != ',')) return -1;
    at[(*nat)++] = (int)v;
    s = *end ? end + 1 : end;
  }
  return *s ? -1 : 0;
}

/* What the table is judged against, in words, and the optimum when it is one for every run. */
static void print_truth(truth *t, FILE *out) {
  if (!t->sf) {
    fprintf(out, "Strategies on %s (truth: the simulated device's cost model, each run under its "
            "own measure.seed; %d reachable configurations)\n", t->c->name, t->v->nreachable);
    return;
  }
  config best;
  char text[512];
  double us = truth_optimum(t, 0);
  space_at(t->v, t->optimum_at, &best);
  spacefile_config_text(t->sf, &best, text, sizeof text);
  fprintf(out, "Strategies on %s (truth: the space '%s' recorded on %s%s; %d reachable "
          "configurations)\noptimum: %s at %.6g us (its median against the reference's, among "
          "the configurations that passed their check)\n", t->c->name, t->sf->path,
          t->sf->dev.name, t->sf->simulated ? ", synthetic times" : "", t->v->nreachable, text,
          us);
}

/* The truth's words, printed and kept for the page; NULL when out of memory. */
static char *truth_text(truth *t) {
  char *text = NULL;
  size_t len = 0;
  FILE *f = open_memstream(&text, &len);
  if (!f) return NULL;
  print_truth(t, f);
  if (fclose(f) != 0) {
    free(text);
    return NULL;
  }
  return text;
}

static int run_study(const char *cpath, const char *space, char **pairs, int npairs,
                     const int *at, int nat, const char *page, tf_err *e) {
  campaign *c = calloc(1, sizeof *c);
  group *gs = calloc(MAX_GROUPS, sizeof *gs);
  space_file *sf = space ? calloc(1, sizeof *sf) : NULL;
  space_view v = {0};
  int rc = -1, ng = 0;
  if (!c || !gs || (space && !sf)) {
    tf_fail(e, TF_EXIT_FAIL, "out of memory");
    goto end;
  }
  if (campaign_load(c, cpath, e) || space_enumerate(c, &v, e) ||
      (sf && sweep_load_space(c, &v, space, sf, e)))
    goto end;
  truth t = {.c = c, .v = &v, .sf = sf};
  if (sf && !isfinite(truth_optimum(&t, 0))) {
    tf_fail(e, TF_EXIT_INPUT, "space '%s': no configuration that campaign '%s' can reach passed "
            "its check", space, cpath);
    goto end;
  }
  for (; ng < npairs; ng++) {
    char *eq = strchr(pairs[ng], '=');
    if (!eq || eq == pairs[ng] || !eq[1]) {
      tf_fail(e, TF_EXIT_INPUT, "'%s' is not NAME=DIR", pairs[ng]);
      goto end;
    }
    *eq = '\0';
    gs[ng].name = pairs[ng];
    if (read_dir(&t, eq + 1, &gs[ng], e)) goto end;
    if (gs[ng].n == 0) {
      tf_fail(e, TF_EXIT_INPUT, "folder '%s' holds no ledger", eq + 1);
      goto end;
    }
  }
  char *words = truth_text(&t);
  if (!words) {
    tf_fail(e, TF_EXIT_FAIL, "out of memory");
    goto end;
  }
  fputs(words, stdout);
  const char *time_name = sf ? "simulated s" : "GPU s";
  if (ng > 0) {
    print_table(gs, ng, at, nat, 1.01, time_name, stdout);
    print_table(gs, ng, at, nat, 1.03, time_name, stdout);
  }
  rc = ng > 0 && page ? write_page(page, words, gs, ng, at, nat, time_name, e) : 0;
  free(words);
end:
  for (int i = 0; gs && i < MAX_GROUPS; i++)
    for (int r = 0; r < gs[i].n; r++) free(gs[i].runs[r].ratio), free(gs[i].runs[r].gpu_s);
  free(gs);
  if (sf) spacefile_release(sf);
  free(sf);
  space_release(&v);
  if (c) campaign_release(c);
  free(c);
  return rc;
}

int study_strategies_main(int argc, char **argv) {
  int at[MAX_AT] = {10, 25, 50, 100, 200}, nat = 5, i = 1;
  const char *cpath = NULL, *space = NULL, *page = NULL;
  for (; i < argc && argv[i][0] == '-'; i++) {
    if (!strcmp(argv[i], "--strategies")) continue;
    if (!strcmp(argv[i], "-h") || !strcmp(argv[i], "--help")) return help();
    if (!strcmp(argv[i], "--at") && i + 1 < argc) {
      if (parse_at(argv[++i], at, &nat)) {
        fprintf(stderr, "tunefarm study: --at '%s' must be generation counts, e.g. 10,50,100\n",
                argv[i]);
        return TF_EXIT_INPUT;
      }
    } else if (!strcmp(argv[i], "--html") && i + 1 < argc) {
      page = argv[++i];
    } else if (!strcmp(argv[i], "--truth") && i + 1 < argc) {
      const backend_ops *model = backend_find(argv[++i]); /* its cost model is the truth */
      space = model ? NULL : argv[i];                     /* else a recorded space's file */
      if (model && (!model->simulated || model->recorded)) {
        fprintf(stderr, "tunefarm study: --truth '%s': give 'sim' (the simulated device's cost "
                        "model) or a space file that `tunefarm sweep` wrote\n", argv[i]);
        return TF_EXIT_INPUT;
      }
    } else {
      return usage();
    }
  }
  if (argc - i < 1) return usage(); /* no NAME=DIR: only the truth and its optimum */
  cpath = argv[i++];
  if (argc - i > MAX_GROUPS) {
    fprintf(stderr, "tunefarm study: at most %d strategies\n", MAX_GROUPS);
    return TF_EXIT_INPUT;
  }
  tf_err e = {0};
  if ((page && check_page_file(page, &e)) ||
      run_study(cpath, space, argv + i, argc - i, at, nat, page, &e)) {
    fprintf(stderr, "tunefarm study: %s\n", e.msg);
    return tf_exit_status(&e);
  }
  return 0;
}
