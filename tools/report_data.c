/* report_data: `report --json` and `--csv` (tools/report_model.h).
 *
 * docs/reference/report.md lists every field. JSON is built as one tree and printed whole; a number
 * that is not finite is written null (JSON, cJSON does so) or left empty (CSV). */
#include "tools/report_model.h"

#include "common/escape.h"

#include <cjson/cJSON.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

/* ---------------------------------------------------------------- JSON helpers */

typedef report_tree tree;

static cJSON *add(tree *t, cJSON *parent, const char *key, cJSON *item) {
  return report_tree_add(t, parent, key, item);
}

cJSON *report_tree_add(report_tree *t, cJSON *parent, const char *key, cJSON *item) {
  if (!item) {
    t->oom = 1;
    return NULL;
  }
  if (!parent || (key ? !cJSON_AddItemToObject(parent, key, item)
                      : !cJSON_AddItemToArray(parent, item))) {
    cJSON_Delete(item);
    t->oom = 1;
    return NULL;
  }
  return item;
}

static void num(tree *t, cJSON *o, const char *key, double v) {
  add(t, o, key, isfinite(v) ? cJSON_CreateNumber(v) : cJSON_CreateNull());
}

static void str(tree *t, cJSON *o, const char *key, const char *v) {
  add(t, o, key, v ? cJSON_CreateString(v) : cJSON_CreateNull());
}

static void flag(tree *t, cJSON *o, const char *key, int v) { add(t, o, key, cJSON_CreateBool(v)); }

static void numbers(tree *t, cJSON *o, const char *key, const double *v, int n) {
  cJSON *a = add(t, o, key, cJSON_CreateArray());
  for (int i = 0; a && i < n; i++) num(t, a, NULL, v[i]);
}

/* {"BK": [64, 32], ...}: every knob best and new set differently. */
static void change(tree *t, cJSON *o, const record_cfg *from, const record_cfg *to) {
  cJSON *c = add(t, o, "change", cJSON_CreateObject());
  for (int k = 0; c && k < from->n && k < to->n; k++) {
    if (from->v[k] == to->v[k]) continue;
    double pair[2] = {(double)from->v[k], (double)to->v[k]};
    numbers(t, c, from->name[k], pair, 2);
  }
}

/* Print the tree on one line and free it. */
static int emit(FILE *f, tree *t, cJSON *root, tf_err *e) {
  char *text = t->oom ? NULL : cJSON_PrintUnformatted(root);
  cJSON_Delete(root);
  if (!text) return tf_fail(e, TF_EXIT_FAIL, "out of memory");
  escape_json(f, text); /* cJSON copies a string's bytes: the rule makes them valid UTF-8 */
  int rc = fputc('\n', f) == EOF || ferror(f) ? -1 : 0;
  free(text);
  return rc ? tf_fail(e, TF_EXIT_FAIL, "cannot write stdout") : 0;
}

/* ---------------------------------------------------------------- --json */

static void canary_json(tree *t, cJSON *o, const double ratio[2], const double lo[2],
                        const double hi[2], const char *verdict) {
  num(t, o, "ratio", ratio[0]);
  num(t, o, "kernel_ratio", ratio[1]);
  double a[2] = {lo[0], hi[0]}, b[2] = {lo[1], hi[1]};
  numbers(t, o, "interval", a, 2);
  numbers(t, o, "kernel_interval", b, 2);
  str(t, o, "verdict", verdict);
}

static void gen_json(tree *t, cJSON *arr, const report_gen *g) {
  cJSON *o = add(t, arr, NULL, cJSON_CreateObject());
  if (!o) return;
  char label[32];
  report_search_label(g, label, sizeof label);
  num(t, o, "generation", (double)g->generation);
  str(t, o, "search", label);
  num(t, o, "restart", g->restart);
  flag(t, o, "duel", g->duel);
  str(t, o, "decision", decision_names[g->decision]);
  str(t, o, "reason", g->reason ? g->reason : "");
  flag(t, o, "measured", g->measured);
  if (g->measured) {
    static const char *const status[] = {"ok", "fault", "compile_error", "error"};
    str(t, o, "status", status[g->status]);
    if (g->detail) str(t, o, "detail", g->detail);
    flag(t, o, "correct", g->correct);
    flag(t, o, "untrusted", g->untrusted);
  } else {
    str(t, o, "constraint", g->constraint);
  }
  add(t, o, "best", record_cfg_to_json(&g->best));
  add(t, o, "new", record_cfg_to_json(&g->new_cfg));
  change(t, o, &g->best, &g->new_cfg);
  num(t, o, "best_us", g->before_us);
  num(t, o, "new_us", g->after_us);
  num(t, o, "control_us", g->control_us);
  num(t, o, "best_kernel_us", g->before_kernel_us);
  num(t, o, "new_kernel_us", g->after_kernel_us);
  num(t, o, "control_kernel_us", g->control_kernel_us);
  num(t, o, "median_ratio", g->median_ratio);
  num(t, o, "kernel_median_ratio", g->kernel_median_ratio);
  num(t, o, "control_drift", g->control_drift);
  numbers(t, o, "ratios", g->ratios, g->nratios);
  num(t, o, "best_so_far_us", g->answer_us);
  num(t, o, "search_best_us", g->search_best_us);
  if (g->child) {
    num(t, o, "child", g->child);
    str(t, o, "run", g->run);
  }
  if (g->has_canary)
    canary_json(t, add(t, o, "canary", cJSON_CreateObject()), g->canary_ratio, g->canary_lo,
                g->canary_hi, g->canary_biased ? "biased" : "ok");
  num(t, o, "compile_ms", g->compile_ms);
  num(t, o, "wall_s", g->wall_s);
  str(t, o, "time", g->time);
}

static void reasons_json(tree *t, cJSON *o, report_ledger *l) {
  cJSON *r = add(t, o, "reasons", cJSON_CreateObject());
  for (int i = 0; r && i < REPORT_OUTCOMES; i++) {
    report_outcome *oc = &l->out[i];
    report_outcome_sort(oc);
    cJSON *a = add(t, r, oc->name, cJSON_CreateArray());
    for (size_t j = 0; a && j < oc->ngroups; j++) {
      const report_reason *g = &oc->groups[j];
      cJSON *x = add(t, a, NULL, cJSON_CreateObject());
      num(t, x, "count", g->count);
      str(t, x, "first", g->first);
      cJSON *ranges = add(t, x, "numbers", cJSON_CreateArray());
      for (int k = 0; ranges && k < g->nnum; k++) {
        double pair[2] = {g->lo[k], g->hi[k]};
        numbers(t, ranges, NULL, pair, 2);
      }
    }
  }
}

static void answer_json(tree *t, cJSON *o, const report_ledger *l) {
  cJSON *c = add(t, o, "control", cJSON_CreateObject());
  str(t, c, "kernel", l->control[0] ? l->control : NULL);
  num(t, c, "us", l->control_us);
  num(t, c, "min_us", l->control_lo);
  num(t, c, "max_us", l->control_hi);
  num(t, c, "median_us", l->control_median);
  if (!l->has_best) {
    add(t, o, "final_best", cJSON_CreateNull());
    return;
  }
  cJSON *b = add(t, o, "final_best", cJSON_CreateObject());
  add(t, b, "config", record_cfg_to_json(&l->best_cfg));
  num(t, b, "us", l->best_us);
  num(t, b, "generation", l->best_gen >= 0 ? (double)l->best_gen : NAN);
  num(t, b, "kept_in", l->winner_gen >= 0 ? (double)l->winner_gen : NAN);
  num(t, b, "start_us", l->start_us);
  num(t, b, "speedup_over_start", l->start_us / l->best_us);
  num(t, b, "speedup_over_control", l->control_us / l->best_us);
  str(t, b, "winner", l->nrestarts ? "the champion of the searches; fastest on its own GPU"
                                   : "fastest on its own GPU");
}

static void rate_json(tree *t, cJSON *o, const char *key, const report_rate *r) {
  cJSON *x = add(t, o, key, cJSON_CreateObject());
  num(t, x, "us", r->us);
  num(t, x, "tflops", r->tflops);
  num(t, x, "gbps", r->gbps);
  num(t, x, "fraction_of_fp32_peak", r->peak_fraction);
  num(t, x, "fraction_of_memory_peak", r->bw_fraction);
}

/* docs/reference/report.md, "Throughput" and "Knob effects". */
static void throughput_json(tree *t, cJSON *o, const report_ledger *l) {
  cJSON *x = add(t, o, "throughput", cJSON_CreateObject());
  str(t, x, "spec", l->spec_path[0] ? l->spec_path : NULL);
  str(t, x, "unknown", l->work_note[0] ? l->work_note : NULL);
  str(t, x, "bound", l->work_note[0] ? NULL : l->unit_flops ? "compute" : "memory");
  num(t, x, "fp32_peak_tflops", l->peak_tflops);
  num(t, x, "memory_peak_gbps", l->peak_gbps);
  rate_json(t, x, "start", &l->rate_start);
  rate_json(t, x, "final_best", &l->rate_best);
  rate_json(t, x, "control", &l->rate_control);
  flag(t, x, "control_faster", report_control_faster(l));
  cJSON *a = add(t, o, "knob_effects", cJSON_CreateArray());
  for (size_t i = 0; a && i < l->neffects; i++) {
    const report_effect *ef = &l->effects[i];
    cJSON *y = add(t, a, NULL, cJSON_CreateObject());
    str(t, y, "knob", ef->knob);
    if (!ef->all) {
      num(t, y, "from", (double)ef->from);
      num(t, y, "to", (double)ef->to);
    }
    num(t, y, "generations", ef->count);
    num(t, y, "median_ratio", ef->median);
  }
}

static void processes_json(tree *t, cJSON *o, const report_ledger *l) {
  cJSON *a = add(t, o, "processes", cJSON_CreateArray());
  for (size_t i = 0; a && i < l->nprocs; i++) {
    const report_process *p = &l->procs[i];
    cJSON *x = add(t, a, NULL, cJSON_CreateObject());
    str(t, x, "run", p->run);
    num(t, x, "child", p->child);
    num(t, x, "generations", p->generations);
    num(t, x, "canaries", p->canaries);
    if (p->canaries)
      canary_json(t, add(t, x, "canary", cJSON_CreateObject()), p->canary, p->lo, p->hi,
                  p->verdict);
  }
}

static void ledger_json(tree *t, cJSON *arr, report_ledger *l) {
  cJSON *o = add(t, arr, NULL, cJSON_CreateObject());
  if (!o) return;
  str(t, o, "ledger", l->path);
  add(t, o, "device", device_to_json(&l->dev));
  cJSON *c = add(t, o, "campaign", cJSON_CreateObject());
  str(t, c, "name", l->campaign);
  str(t, c, "path", l->campaign_path);
  str(t, c, "backend", l->backend);
  str(t, c, "mode", l->mode);
  str(t, c, "created", l->created);
  answer_json(t, o, l);
  throughput_json(t, o, l);
  cJSON *k = add(t, o, "keeps", cJSON_CreateArray());
  for (size_t i = 0; k && i < l->ngens; i++)
    if (l->gens[i].decision == DECISION_KEEP) num(t, k, NULL, (double)l->gens[i].generation);
  cJSON *r = add(t, o, "restarts", cJSON_CreateArray());
  for (size_t i = 0; r && i < l->nrestarts; i++) {
    cJSON *x = add(t, r, NULL, cJSON_CreateObject());
    num(t, x, "restart", l->restarts[i].restart);
    num(t, x, "after", (double)l->restarts[i].after);
    num(t, x, "champion_us", l->restarts[i].champion_us);
    str(t, x, "reason", l->restarts[i].reason);
  }
  str(t, o, "ended", l->ended ? l->end_reason : NULL);
  num(t, o, "reopens", l->reopens);
  num(t, o, "rounds", (double)l->rounds);
  cJSON *tm = add(t, o, "time", cJSON_CreateObject()); /* docs/reference/report.md */
  num(t, tm, "wall_s", l->wall_s);
  num(t, tm, "measure_s", l->measure_s);
  num(t, tm, "measured_generations", (double)l->timed);
  num(t, tm, "busy_fraction", l->wall_s > 0 ? l->measure_s / l->wall_s : NAN);
  num(t, tm, "decisions_per_hour", l->wall_s > 0 ? 3600.0 * (double)l->timed / l->wall_s : NAN);
  cJSON *dr = add(t, o, "control_drift", cJSON_CreateObject()); /* docs/reference/report.md */
  num(t, dr, "measured_generations", (double)l->measured);
  num(t, dr, "refused", (double)l->drifted);
  num(t, dr, "control_alone", (double)l->drifted_alone);
  reasons_json(t, o, l);
  processes_json(t, o, l);
  cJSON *g = add(t, o, "generations", cJSON_CreateArray());
  for (size_t i = 0; g && i < l->ngens; i++) gen_json(t, g, &l->gens[i]);
}

int report_write_json(FILE *f, report_ledger *l, size_t n, tf_err *e) {
  tree t = {0};
  cJSON *root = cJSON_CreateObject();
  if (!root) return tf_fail(e, TF_EXIT_FAIL, "out of memory");
  str(&t, root, "format", "tunefarm-report");
  num(&t, root, "version", 1);
  cJSON *a = add(&t, root, "ledgers", cJSON_CreateArray());
  for (size_t i = 0; a && i < n; i++) ledger_json(&t, a, &l[i]);
  return emit(f, &t, root, e);
}

/* ---------------------------------------------------------------- --csv */

/* Every ledger text is one field through the CSV rule (common/escape.h): quoted where it
 * must be, never a formula, never a line break. Numbers are printed as numbers. */

static void csv_num(FILE *f, double v) {
  if (isfinite(v)) fprintf(f, "%.10g", v);
}

/* The knob columns: every knob name of the ledgers' configurations, in the template's order
 * (a later ledger's knob the first lacks comes after the first's). */
typedef struct csv_knobs {
  int n;
  char name[2 * SPEC_MAX_KNOBS][SPEC_NAME];
} csv_knobs;

static void knobs_add(csv_knobs *k, const record_cfg *c) {
  for (int i = 0; i < c->n; i++) {
    int seen = 0;
    for (int j = 0; j < k->n && !seen; j++) seen = strcmp(k->name[j], c->name[i]) == 0;
    if (!seen && k->n < 2 * SPEC_MAX_KNOBS) snprintf(k->name[k->n++], SPEC_NAME, "%s", c->name[i]);
  }
}

/* One column per knob of c's values: empty where c has no such knob. */
static void csv_cfg(FILE *f, const csv_knobs *k, const record_cfg *c) {
  for (int j = 0; j < k->n; j++) {
    fputc(',', f);
    for (int i = 0; i < c->n; i++)
      if (strcmp(c->name[i], k->name[j]) == 0) fprintf(f, "%lld", c->v[i]);
  }
}

/* The header's knob cells: new's values under the knob's name, best's under "best.NAME". */
static void csv_knob_header(FILE *f, const csv_knobs *k) {
  for (int pass = 0; pass < 2; pass++)
    for (int j = 0; j < k->n; j++) {
      char cell[SPEC_NAME + 8];
      snprintf(cell, sizeof cell, "%s%s", pass ? "best." : "", k->name[j]);
      fputc(',', f);
      escape_csv_cell(f, cell);
    }
}

static void csv_row(FILE *f, const csv_knobs *k, const report_ledger *l, const report_gen *g) {
  static const char *const status[] = {"ok", "fault", "compile_error", "error"};
  char label[32], change_s[1024];
  report_search_label(g, label, sizeof label);
  report_change_text(&g->best, &g->new_cfg, change_s, sizeof change_s);
  escape_csv_cell(f, l->path);
  fputc(',', f);
  escape_csv_cell(f, l->dev.host);
  fprintf(f, ",%d,", l->dev.ordinal);
  escape_csv_cell(f, l->dev.uuid);
  fputc(',', f);
  escape_csv_cell(f, l->campaign);
  fprintf(f, ",%lld,%s,%s,%s,%d,%d,", g->generation, label, decision_names[g->decision],
          g->measured ? status[g->status] : "refused", g->correct, g->untrusted);
  escape_csv_cell(f, change_s);
  csv_cfg(f, k, &g->new_cfg);
  csv_cfg(f, k, &g->best);
  const double v[] = {g->before_us, g->after_us, g->control_us, g->before_kernel_us,
                      g->after_kernel_us, g->control_kernel_us, g->median_ratio,
                      g->kernel_median_ratio, g->control_drift};
  for (size_t i = 0; i < sizeof v / sizeof v[0]; i++) fputc(',', f), csv_num(f, v[i]);
  fprintf(f, ",%d,", g->nratios);
  csv_num(f, g->answer_us);
  fputc(',', f);
  if (g->child) fprintf(f, "%d", g->child);
  fputc(',', f);
  escape_csv_cell(f, g->run);
  fputc(',', f);
  csv_num(f, g->canary_ratio[0]);
  fputc(',', f);
  csv_num(f, g->canary_ratio[1]);
  fprintf(f, ",%s,", g->has_canary ? (g->canary_biased ? "biased" : "ok") : "");
  csv_num(f, g->compile_ms);
  fputc(',', f);
  csv_num(f, g->wall_s);
  fputc(',', f);
  escape_csv_cell(f, g->time);
  fputc(',', f);
  escape_csv_cell(f, g->reason);
  fputc('\n', f);
}

int report_write_csv(FILE *f, report_ledger *l, size_t n, tf_err *e) {
  csv_knobs k = {0};
  for (size_t i = 0; i < n; i++)
    for (size_t j = 0; j < l[i].ngens; j++)
      knobs_add(&k, &l[i].gens[j].best), knobs_add(&k, &l[i].gens[j].new_cfg);
  fputs("ledger,host,gpu,uuid,campaign,generation,search,decision,status,correct,untrusted,"
        "change", f);
  csv_knob_header(f, &k);
  fputs(",best_us,new_us,control_us,best_kernel_us,new_kernel_us,"
        "control_kernel_us,median_ratio,kernel_median_ratio,control_drift,rounds,"
        "best_so_far_us,child,run,canary_ratio,canary_kernel_ratio,canary_verdict,compile_ms,"
        "wall_s,time,reason\n",
        f);
  for (size_t i = 0; i < n; i++)
    for (size_t j = 0; j < l[i].ngens; j++) csv_row(f, &k, &l[i], &l[i].gens[j]);
  return ferror(f) ? tf_fail(e, TF_EXIT_FAIL, "cannot write stdout") : 0;
}
