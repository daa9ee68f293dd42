/* report_html: `report --html FILE`, one self-contained page (tools/report_model.h).
 *
 * Per campaign, a table of its GPUs (the control, the final best, its speed-ups, each winner
 * the fastest on its own GPU) and one column of plots per GPU, side by side and each on its
 * own scales, since no number of one GPU is ever set against another's: the best so far by
 * generation (keeps and restarts marked), the paired ratios new/best of every decision (a
 * cloud per generation, with 1 ± min_gain), the control's time (inside its tolerance band),
 * and the canary's A/A bias per measure process (with ± min_gain); above them the throughput
 * of the start, the final best and the control, below them the knob effects. Each plot's
 * title is an HTML caption that wraps at the plot's width, and each plot has a legend.
 *
 * Self-contained: inline SVG and CSS, a few lines of inline script (it records script errors
 * on the page and counts the marks, for the browser test), no URL of any kind, no font but
 * the reader's own. Every mark carries data attributes (data-gen, ...) and a <title> with its
 * numbers, so a test counts the points and a reader hovers over them. */
#include "tools/report_model.h"

#include "common/escape.h"
#include "tools/svgplot.h"

#include <math.h>
#include <string.h>

/* ---------------------------------------------------------------- text */

/* Every ledger text (a name, a path, a reason) goes through the HTML rule
 * (common/escape.h), in text and in quoted attribute values alike. */

static void num(FILE *f, int digits, double v, const char *unit) {
  if (isfinite(v))
    fprintf(f, "%.*f%s", digits, v, unit);
  else
    fputs("—", f);
}

static void cfg_text(FILE *f, const record_cfg *c) {
  char buf[1024];
  record_cfg_text(c, buf, sizeof buf);
  escape_html(f, buf[0] ? buf : "—");
}

/* ---------------------------------------------------------------- plots */

/* The x range of a ledger's generations. */
static void gen_range(const report_ledger *l, svgplot *p) {
  p->x0 = 0;
  p->x1 = l->ngens ? (double)l->gens[l->ngens - 1].generation + 1 : 1;
}

static void empty(FILE *f, const char *what) {
  fputs("<p class=\"empty\">", f);
  escape_html(f, what);
  fputs("</p>\n", f);
}

/* ---------------------------------------------------------------- the four plots */

/* The answer after every generation (a step line with a point each), the best of a restarted
 * search in progress (dashed), keeps as rings where new became best, restarts as lines. */
static void plot_best(FILE *f, const report_ledger *l) {
  svgplot p;
  gen_range(l, &p);
  p.y0 = INFINITY, p.y1 = -INFINITY;
  for (size_t i = 0; i < l->ngens; i++) {
    const report_gen *g = &l->gens[i];
    const double v[] = {g->answer_us, g->search_best_us,
                        g->decision == DECISION_KEEP ? g->after_us : NAN};
    for (int k = 0; k < 3; k++)
      if (isfinite(v[k])) p.y0 = fmin(p.y0, v[k]), p.y1 = fmax(p.y1, v[k]);
  }
  if (!isfinite(p.y0)) {
    empty(f, "best so far: nothing measured yet");
    return;
  }
  svgplot_pad(&p.y0, &p.y1);
  svgplot_axes(f, &p, "best so far (µs per launch): the answer; dashed, a restarted search's own best", "generation",
       "µs", 2);
  for (int series = 1; series >= 0; series--) { /* the search in progress under the answer */
    fprintf(f, "<polyline class=\"%s\" points=\"", series ? "search" : "answer");
    double last = NAN;
    for (size_t i = 0; i < l->ngens; i++) {
      const report_gen *g = &l->gens[i];
      double v = series ? (g->restart > 0 ? g->search_best_us : NAN) : g->answer_us;
      if (!isfinite(v)) continue;
      if (isfinite(last)) fprintf(f, "%.1f,%.1f ", svgplot_x(&p, (double)g->generation), svgplot_y(&p, last));
      fprintf(f, "%.1f,%.1f ", svgplot_x(&p, (double)g->generation), svgplot_y(&p, v));
      last = v;
    }
    fputs("\"/>", f);
  }
  for (size_t i = 0; i < l->nrestarts; i++) {
    double x = svgplot_x(&p, (double)l->restarts[i].after + 0.5);
    fprintf(f, "<line class=\"restart\" data-restart=\"%d\" x1=\"%.1f\" x2=\"%.1f\" y1=\"%d\" "
               "y2=\"%d\"><title>restart %d after generation %lld: ", l->restarts[i].restart, x,
            x, SVGPLOT_MT, SVGPLOT_H - SVGPLOT_MB, l->restarts[i].restart, l->restarts[i].after);
    escape_html(f, l->restarts[i].reason);
    fprintf(f, "</title></line><text class=\"tick\" x=\"%.1f\" y=\"%d\">r%d</text>", x + 2, SVGPLOT_MT + 10,
            l->restarts[i].restart);
  }
  for (size_t i = 0; i < l->ngens; i++) {
    const report_gen *g = &l->gens[i];
    if (isfinite(g->answer_us))
      fprintf(f, "<circle class=\"best\" data-gen=\"%lld\" cx=\"%.1f\" cy=\"%.1f\" r=\"2\">"
                 "<title>generation %lld: best so far %.3f µs</title></circle>", g->generation,
              svgplot_x(&p, (double)g->generation), svgplot_y(&p, g->answer_us), g->generation, g->answer_us);
    if (g->decision != DECISION_KEEP || !isfinite(g->after_us)) continue;
    char change[1024], label[32];
    report_change_text(&g->best, &g->new_cfg, change, sizeof change);
    report_search_label(g, label, sizeof label);
    fprintf(f, "<circle class=\"keep%s%s\" data-gen=\"%lld\" cx=\"%.1f\" cy=\"%.1f\" r=\"5\">"
               "<title>generation %lld (%s) keep: %.3f µs; ", g->duel ? " duel" : "",
            g->generation == l->winner_gen ? " winner" : "", g->generation,
            svgplot_x(&p, (double)g->generation), svgplot_y(&p, g->after_us), g->generation, label, g->after_us);
    escape_html(f, change);
    fputs(g->generation == l->winner_gen ? "; the winner" : "", f);
    fputs("</title></circle>", f);
  }
  static const svgplot_legend_item items[] = {
      {"line", "#1f5fa8", "the answer (best so far)"}, {"dash", "#7fa7d6", "a restarted search's best"},
      {"ring", "#1a8a3a", "keep"}, {"ring", "#a86b00", "a duel won"}, {"ring", "#d4002a", "the winner"},
      {"dash", "#a86b00", "restart"}};
  svgplot_legend(f, items, sizeof items / sizeof items[0]);
}

static const char *const decision_class[] = {"keep", "reject", "refused", "ambiguous"};

/* new/best of every recorded round (screened ones left out), a cloud per generation. */
static void plot_ratios(FILE *f, const report_ledger *l) {
  svgplot p;
  gen_range(l, &p);
  p.y0 = 1, p.y1 = 1;
  int n = 0;
  for (size_t i = 0; i < l->ngens; i++)
    for (int k = 0; k < l->gens[i].nratios; k++) {
      double r = l->gens[i].ratios[k];
      if (!isfinite(r)) continue;
      p.y0 = fmin(p.y0, r), p.y1 = fmax(p.y1, r), n++;
    }
  if (n == 0) {
    empty(f, "paired ratios: no recorded round yet");
    return;
  }
  double gain = l->min_gain;
  if (isfinite(gain)) p.y0 = fmin(p.y0, 1 - gain), p.y1 = fmax(p.y1, 1 + gain);
  svgplot_pad(&p.y0, &p.y1);
  svgplot_axes(f, &p, "paired ratios new/best per round, by decision", "generation", "new / best", 3);
  svgplot_hline(f, &p, "one", 1, "new = best");
  if (isfinite(gain)) {
    svgplot_hline(f, &p, "threshold", 1 - gain, "1 - min_gain: a keep needs new this much faster");
    svgplot_hline(f, &p, "threshold", 1 + gain, "1 + min_gain");
  }
  for (size_t i = 0; i < l->ngens; i++) {
    const report_gen *g = &l->gens[i];
    const char *cls = g->untrusted ? "untrusted" : decision_class[g->decision];
    for (int k = 0; k < g->nratios; k++) {
      if (!isfinite(g->ratios[k])) continue;
      /* the rounds of one generation side by side, so the cloud shows its spread */
      double dx = g->nratios > 1 ? ((double)k / (g->nratios - 1) - 0.5) * 0.5 : 0;
      fprintf(f, "<circle class=\"ratio %s\" data-gen=\"%lld\" data-decision=\"%s\" cx=\"%.1f\" "
                 "cy=\"%.1f\" r=\"2.2\"><title>generation %lld round %d: %.4f (%s)</title>"
                 "</circle>", cls, g->generation, decision_names[g->decision],
              svgplot_x(&p, (double)g->generation + dx), svgplot_y(&p, g->ratios[k]), g->generation, k + 1,
              g->ratios[k], g->untrusted ? "untrusted" : decision_names[g->decision]);
    }
  }
  static const svgplot_legend_item items[] = {
      {"dot", "#1a8a3a", "keep"}, {"dot", "#888", "reject"}, {"dot", "#e08a00", "refused"},
      {"dot", "#7b3fb0", "ambiguous"}, {"dot", "#d4002a", "untrusted"},
      {"dash", "#c0392b", "1 ± min_gain"}};
  svgplot_legend(f, items, sizeof items / sizeof items[0]);
}

/* The control's median per generation: it should stay flat; drift is the machine, not the
 * search. */
static void plot_control(FILE *f, const report_ledger *l) {
  svgplot p;
  gen_range(l, &p);
  p.y0 = l->control_lo, p.y1 = l->control_hi;
  if (!isfinite(p.y0)) {
    empty(f, "control: not measured yet");
    return;
  }
  /* the tolerance band: any two times inside it differ by at most drift_tolerance, so the
   * scale always shows how far the control may move before the rule refuses */
  double m = l->control_median, k = sqrt(1 + l->drift_tolerance);
  int band = isfinite(m) && isfinite(k);
  if (band) p.y0 = fmin(p.y0, m / k), p.y1 = fmax(p.y1, m * k);
  svgplot_pad(&p.y0, &p.y1);
  svgplot_axes(f, &p, "the control's time per generation (µs): it should stay flat, inside its band", "generation",
       "µs", 2);
  if (band)
    fprintf(f, "<rect class=\"band\" x=\"%d\" y=\"%.1f\" width=\"%d\" height=\"%.1f\"><title>"
               "drift tolerance %.1f%%: median %.3f µs ÷ and × √(1 + %.3f)</title></rect>", SVGPLOT_ML,
            svgplot_y(&p, m * k), SVGPLOT_W - SVGPLOT_ML - SVGPLOT_MR, svgplot_y(&p, m / k) - svgplot_y(&p, m * k),
            100 * l->drift_tolerance, m, l->drift_tolerance);
  fputs("<polyline class=\"control\" points=\"", f);
  for (size_t i = 0; i < l->ngens; i++)
    if (isfinite(l->gens[i].control_us))
      fprintf(f, "%.1f,%.1f ", svgplot_x(&p, (double)l->gens[i].generation), svgplot_y(&p, l->gens[i].control_us));
  fputs("\"/>", f);
  for (size_t i = 0; i < l->ngens; i++) {
    const report_gen *g = &l->gens[i];
    if (!isfinite(g->control_us)) continue;
    fprintf(f, "<circle class=\"control\" data-gen=\"%lld\" cx=\"%.1f\" cy=\"%.1f\" r=\"2\">"
               "<title>generation %lld: control %.3f µs (drift %.4f)</title></circle>",
            g->generation, svgplot_x(&p, (double)g->generation), svgplot_y(&p, g->control_us), g->generation,
            g->control_us, g->control_drift);
  }
  static const svgplot_legend_item items[] = {
      {"dot", "#555", "the control, per generation"},
      {"band", "#2e8b57", "drift tolerance band around its median"}};
  svgplot_legend(f, items, sizeof items / sizeof items[0]);
}

/* Every canary: the A/A bias (copy/best - 1, in %) of the measure process it vetted, with its
 * 95% interval, at the generation whose job ran it. */
static void plot_canary(FILE *f, const report_ledger *l) {
  svgplot p;
  gen_range(l, &p);
  p.y0 = 0, p.y1 = 0;
  int n = 0;
  for (size_t i = 0; i < l->ngens; i++) {
    const report_gen *g = &l->gens[i];
    if (!g->has_canary || !isfinite(g->canary_ratio[0])) continue;
    n++;
    const double v[] = {g->canary_ratio[0], g->canary_lo[0], g->canary_hi[0]};
    for (int k = 0; k < 3; k++)
      if (isfinite(v[k])) p.y0 = fmin(p.y0, 100 * (v[k] - 1)), p.y1 = fmax(p.y1, 100 * (v[k] - 1));
  }
  if (n == 0) {
    empty(f, "canary: none ran");
    return;
  }
  double gain = 100 * l->min_gain;
  if (isfinite(gain)) p.y0 = fmin(p.y0, -gain), p.y1 = fmax(p.y1, gain);
  svgplot_pad(&p.y0, &p.y1);
  svgplot_axes(f, &p, "A/A bias per measure process (canary, event span, 95% interval)", "generation", "bias %", 2);
  svgplot_hline(f, &p, "one", 0, "no bias");
  if (isfinite(gain)) { /* a bias this large would pass a copy of best off as a gain */
    svgplot_hline(f, &p, "threshold", -gain, "1 - min_gain");
    svgplot_hline(f, &p, "threshold", gain, "1 + min_gain");
  }
  for (size_t i = 0; i < l->ngens; i++) {
    const report_gen *g = &l->gens[i];
    if (!g->has_canary || !isfinite(g->canary_ratio[0])) continue;
    double x = svgplot_x(&p, (double)g->generation), b = 100 * (g->canary_ratio[0] - 1);
    fprintf(f, "<g class=\"canary%s\" data-gen=\"%lld\" data-child=\"%d\" data-run=\"",
            g->canary_biased ? " biased" : "", g->generation, g->child);
    escape_html(f, g->run);
    fputs("\">", f);
    if (isfinite(g->canary_lo[0]) && isfinite(g->canary_hi[0]))
      fprintf(f, "<line x1=\"%.1f\" x2=\"%.1f\" y1=\"%.1f\" y2=\"%.1f\"/>", x, x,
              svgplot_y(&p, 100 * (g->canary_lo[0] - 1)), svgplot_y(&p, 100 * (g->canary_hi[0] - 1)));
    fprintf(f, "<circle cx=\"%.1f\" cy=\"%.1f\" r=\"3.5\"><title>process %d of run ", x,
            svgplot_y(&p, b), g->child);
    escape_html(f, g->run);
    fprintf(f, ", canary in generation %lld: bias %+.3f%% [%+.3f%%, %+.3f%%], %s</title>"
               "</circle></g>", g->generation, b, 100 * (g->canary_lo[0] - 1),
            100 * (g->canary_hi[0] - 1), g->canary_biased ? "biased" : "ok");
  }
  static const svgplot_legend_item items[] = {{"dot", "#1f5fa8", "canary bias, 95% interval"},
                                      {"dot", "#d4002a", "process found biased"},
                                      {"dash", "#c0392b", "1 ± min_gain"}};
  svgplot_legend(f, items, sizeof items / sizeof items[0]);
}

/* ---------------------------------------------------------------- knob effects, throughput */

#define BAR_W 140

/* Per knob and per move, the median new/best of the generations that moved that knob alone,
 * as a number and a bar from 1 (left of the middle: faster). */
static void knob_effects(FILE *f, const report_ledger *l) {
  fprintf(f, "<figure class=\"effects\" style=\"width:%dpx\"><figcaption class=\"title\">"
             "knob effects: median new/best of the generations whose change moved one knob "
             "alone (below 1: faster)</figcaption>", SVGPLOT_W);
  if (l->neffects == 0) {
    fputs("<p class=\"empty\">no trusted, judged generation moved one knob alone</p></figure>\n", f);
    return;
  }
  double span = 0.01;
  for (size_t i = 0; i < l->neffects; i++) span = fmax(span, fabs(l->effects[i].median - 1));
  fputs("<table class=\"effects\"><tr><th>knob</th><th>move</th><th>n</th><th>median</th>"
        "<th>new/best</th></tr>", f);
  for (size_t i = 0; i < l->neffects; i++) {
    const report_effect *x = &l->effects[i];
    double mid = BAR_W / 2.0, w = (x->median - 1) / span * (BAR_W / 2.0 - 2);
    fprintf(f, "<tr class=\"effect%s\" data-knob=\"", x->all ? " all" : "");
    escape_html(f, x->knob);
    fputs("\"><td>", f);
    if (x->all) escape_html(f, x->knob);
    if (x->all) fputs("</td><td>all", f);
    else fprintf(f, "</td><td>%lld→%lld", x->from, x->to);
    fprintf(f, "</td><td>%d</td><td>%.3f</td><td><svg class=\"bar\" width=\"%d\" height=\"10\" "
               "viewBox=\"0 0 %d 10\"><rect class=\"%s\" x=\"%.1f\" y=\"1\" width=\"%.1f\" "
               "height=\"8\"/><line class=\"one\" x1=\"%.1f\" x2=\"%.1f\" y1=\"0\" y2=\"10\"/>"
               "</svg></td></tr>", x->count, x->median, BAR_W, BAR_W,
            x->median < 1 ? "faster" : "slower", w < 0 ? mid + w : mid, fabs(w), mid, mid);
  }
  fputs("</table><div class=\"legend\"><span class=\"item\"><span class=\"sw block\" "
        "style=\"--c:#1a8a3a\"></span>faster (new/best below 1)</span> <span class=\"item\">"
        "<span class=\"sw block\" style=\"--c:#b0413e\"></span>slower</span></div></figure>\n", f);
}

static void rate_row(FILE *f, const char *arm, const report_rate *r) {
  fprintf(f, "<tr class=\"rate\" data-arm=\"%s\"><td>%s</td><td>", arm, arm);
  num(f, 2, r->us, "");
  fputs("</td><td>", f);
  num(f, 3, r->tflops, "");
  fputs("</td><td>", f);
  num(f, 1, r->gbps, "");
  fputs("</td><td>", f);
  num(f, 1, 100 * r->peak_fraction, "%");
  fputs("</td><td>", f);
  num(f, 1, 100 * r->bw_fraction, "%");
  fputs("</td></tr>", f);
}

/* TFLOP/s and GB/s of the start, the final best and the control (docs/reference/report.md). */
static void throughput_table(FILE *f, const report_ledger *l) {
  fprintf(f, "<figure class=\"throughput\" style=\"width:%dpx\"><figcaption class=\"title\">"
             "throughput of one launch: ", SVGPLOT_W);
  if (l->work_note[0]) {
    fputs("unknown: ", f);
    escape_html(f, l->work_note);
    fputs("</figcaption></figure>\n", f);
    return;
  }
  fputs("the flops and bytes of ", f);
  escape_html(f, l->spec_path);
  fprintf(f, " over its time (%s-bound); FP32 peak ", l->unit_flops ? "compute" : "memory");
  if (isfinite(l->peak_tflops))
    fprintf(f, "%.1f TFLOP/s (%d SMs × 2 × %d MHz × FP32 lanes of ", l->peak_tflops,
            l->dev.sm_count, l->dev.max_sm_mhz);
  else
    fputs("unknown (no FP32 lanes per SM known for ", f);
  escape_html(f, l->dev.arch);
  fputs("); memory bandwidth peak ", f);
  if (isfinite(l->peak_gbps))
    fprintf(f, "%.0f GB/s (2 × %d MHz × %d bits / 8)", l->peak_gbps, l->dev.max_mem_mhz,
            l->dev.mem_bus_bits);
  else
    fputs("unknown (not in the device record)", f);
  fputs("</figcaption><table class=\"rates\"><tr><th>arm</th><th>µs</th><th>TFLOP/s</th>"
        "<th>GB/s</th><th>of FP32 peak</th><th>of memory peak</th></tr>", f);
  rate_row(f, "start", &l->rate_start);
  rate_row(f, "final best", &l->rate_best);
  rate_row(f, "control", &l->rate_control);
  fputs("</table></figure>\n", f);
}

/* The control faster than the winner in the same rounds. */
static void warning(FILE *f, const report_ledger *l) {
  if (!report_control_faster(l)) return;
  fputs("<p class=\"warning\" data-ledger=\"", f);
  escape_html(f, l->path);
  fputs("\">warning: the control (<code>", f);
  escape_html(f, l->control[0] ? l->control : "—");
  fprintf(f, "</code>) is faster than the winner: %.2f µs against %.2f µs in the same rounds "
             "(generation %lld)</p>\n", l->control_us, l->best_us, l->best_gen);
}

/* ---------------------------------------------------------------- the page */

static void device_name(FILE *f, const report_ledger *l) {
  char u8[9];
  device_uuid8(&l->dev, u8);
  escape_html(f, l->dev.host);
  fprintf(f, " gpu%d ", l->dev.ordinal);
  escape_html(f, l->dev.name);
  fprintf(f, " (%s)", u8);
}

static void summary_row(FILE *f, const report_ledger *l) {
  fputs("<tr><td>", f);
  device_name(f, l);
  fputs("</td><td><code>", f);
  escape_html(f, l->control[0] ? l->control : "—");
  fputs("</code></td><td>", f);
  num(f, 2, l->control_us, "");
  fputs("</td><td>", f);
  num(f, 2, l->start_us, "");
  fputs("</td><td class=\"winner\">", f);
  num(f, 2, l->best_us, "");
  fputs("</td><td>", f);
  num(f, 3, l->start_us / l->best_us, "×");
  fputs("</td><td>", f);
  num(f, 3, l->control_us / l->best_us, "×");
  fputs("</td><td class=\"winner\">", f);
  if (l->has_best) cfg_text(f, &l->best_cfg);
  else fputs("none yet", f);
  fprintf(f, "<br><small>fastest on its own GPU%s; %zu generations, %d keeps; ",
          l->nrestarts ? ", the champion of its searches" : "", l->ngens, l->keeps);
  escape_html(f, l->ended ? l->end_reason : "running or interrupted");
  fputs("</small></td></tr>\n", f);
}

static void gpu_column(FILE *f, const report_ledger *l) {
  fprintf(f, "<div class=\"gpu\" data-uuid=\"");
  escape_html(f, l->dev.uuid);
  fputs("\" data-ledger=\"", f);
  escape_html(f, l->path);
  fputs("\"><h3>", f);
  device_name(f, l);
  fputs("</h3>\n", f);
  throughput_table(f, l);
  plot_best(f, l);
  plot_ratios(f, l);
  plot_control(f, l);
  plot_canary(f, l);
  knob_effects(f, l);
  fputs("</div>\n", f);
}

static void campaign_section(FILE *f, report_ledger *l, size_t n, const char *name) {
  fputs("<section class=\"campaign\" data-campaign=\"", f);
  escape_html(f, name);
  fputs("\"><h2>campaign ", f);
  escape_html(f, name);
  fputs("</h2>\n<table><tr><th>GPU</th><th>control</th><th>control µs</th><th>start µs</th>"
        "<th>final best µs</th><th>over start</th><th>over control</th>"
        "<th>winner</th></tr>\n", f);
  for (size_t i = 0; i < n; i++)
    if (strcmp(l[i].campaign, name) == 0) summary_row(f, &l[i]);
  fputs("</table>\n", f);
  for (size_t i = 0; i < n; i++)
    if (strcmp(l[i].campaign, name) == 0) warning(f, &l[i]);
  fputs("<div class=\"gpus\">\n", f);
  for (size_t i = 0; i < n; i++)
    if (strcmp(l[i].campaign, name) == 0) gpu_column(f, &l[i]);
  fputs("</div></section>\n", f);
}

/* The report's own marks; svgplot_style holds the figures'. */
static const char style[] =
    "td.winner{text-align:left}.winner{font-weight:bold}small{font-weight:normal;color:#555}"
    ".gpus{display:flex;flex-wrap:wrap;gap:1.5em}.gpu{flex:0 0 auto;width:460px}.gpu h3{font-size:1em}"
    ".answer{stroke:#1f5fa8;stroke-width:1.5}.search{stroke:#7fa7d6;"
    "stroke-dasharray:4 3}circle.best{fill:#1f5fa8}circle.keep{fill:none;stroke:#1a8a3a;"
    "stroke-width:2}circle.keep.duel{stroke:#a86b00}circle.keep.winner{stroke:#d4002a;"
    "stroke-width:3}.restart{stroke:#a86b00;stroke-dasharray:2 2}.one{stroke:#888}"
    "circle.ratio{fill-opacity:.75}.ratio.keep{fill:#1a8a3a}.ratio.reject{fill:#888}"
    ".ratio.refused{fill:#e08a00}.ratio.ambiguous{fill:#7b3fb0}.ratio.untrusted{fill:#d4002a}"
    ".band{fill:#2e8b57;fill-opacity:.12}"
    ".threshold{stroke:#c0392b;stroke-dasharray:5 3}.warning{color:#b00020;font-weight:bold}"
    "table.effects td,table.rates td{padding:.1em .4em;font-size:11px}"
    ".bar .faster{fill:#1a8a3a}.bar .slower{fill:#b0413e}"
    "polyline.control{stroke:#555}circle.control{fill:#555}g.canary line{stroke:#1f5fa8}"
    "g.canary circle{fill:#1f5fa8}g.canary.biased circle{fill:#d4002a}.empty{color:#777}";

/* The page's only script: it notes script errors on the page and counts the marks, so a
 * headless browser's dumped DOM says that the page ran and what it drew. */
static const char script[] =
    "<script>(function(){var d=document.documentElement,e=[];"
    "window.addEventListener('error',function(x){e.push(String(x.message));"
    "d.setAttribute('data-errors',e.join(' | '));});"
    "window.addEventListener('load',function(){"
    "d.setAttribute('data-marks',String(document.querySelectorAll('svg circle').length));"
    "d.setAttribute('data-rendered','yes');});})();</script>\n";

int report_write_html(FILE *f, report_ledger *l, size_t n, tf_err *e) {
  fprintf(f, REPORT_HTML_HEAD "<style>%s%s</style>\n%s</head><body>\n"
             "<h1>tunefarm report</h1>\n<p>Every plot holds one GPU's numbers on its own "
             "scales: GPUs stand side by side and are never pooled. Times are microseconds per "
             "launch, medians over a generation's recorded rounds (screened ones left out); "
             "hover over a mark for its numbers (docs/reference/report.md).</p>\n<p class=\"legend\">"
             "Best so far: the search's answer after every generation (with restarts, the "
             "champion), dashed the best of a restarted search until its duel; rings are keeps "
             "(<span class=\"k\">kept</span>, <span class=\"d\">a duel won</span>, "
             "<span class=\"w\">the winner</span>), dotted lines restarts. Ratios, by "
             "decision: <span class=\"k\">keep</span>, <span class=\"r\">reject</span>, "
             "<span class=\"f\">refused</span>, <span class=\"a\">ambiguous</span>, "
             "<span class=\"w\">untrusted</span> (its process was not vetted).</p>\n",
          svgplot_style, style, script);
  for (size_t i = 0; i < n; i++) {
    int seen = 0; /* a section per campaign, in the order they first appear */
    for (size_t j = 0; j < i; j++) seen |= strcmp(l[j].campaign, l[i].campaign) == 0;
    if (!seen) campaign_section(f, l, n, l[i].campaign);
  }
  fputs("</body></html>\n", f);
  return ferror(f) ? tf_fail(e, TF_EXIT_FAIL, "cannot write the page") : 0;
}
