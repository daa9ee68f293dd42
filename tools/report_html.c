/* report_html: `report --html FILE`, one self-contained page (tools/report_model.h).
 *
 * Per campaign, a table of its GPUs (the control, the final best, its speed-ups, each winner
 * the fastest on its own GPU) and one column of plots per GPU, side by side and each on its
 * own scales, since no number of one GPU is ever set against another's: the best so far by
 * generation (keeps and restarts marked), the paired ratios new/best of every decision (a
 * cloud per generation), the control's time, and the canary's A/A bias per measure process.
 *
 * Self-contained: inline SVG and CSS, a few lines of inline script (it records script errors
 * on the page and counts the marks, for the browser test), no URL of any kind, no font but
 * the reader's own. Every mark carries data attributes (data-gen, ...) and a <title> with its
 * numbers, so a test counts the points and a reader hovers over them. */
#include "tools/report_model.h"

#include "common/escape.h"

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

#define PLOT_W 460
#define PLOT_H 220
#define ML 58 /* margins: left, right, top, bottom */
#define MR 12
#define MT 26
#define MB 34

typedef struct plot {
  double x0, x1, y0, y1;
} plot;

static double px(const plot *p, double x) {
  return ML + (x - p->x0) / (p->x1 - p->x0) * (PLOT_W - ML - MR);
}

static double py(const plot *p, double y) {
  return PLOT_H - MB - (y - p->y0) / (p->y1 - p->y0) * (PLOT_H - MT - MB);
}

/* A range with some air, never empty. */
static void pad(double *lo, double *hi) {
  if (!isfinite(*lo) || !isfinite(*hi)) *lo = 0, *hi = 1;
  double d = *hi - *lo;
  if (d <= 0) d = fabs(*hi) > 0 ? fabs(*hi) * 0.02 : 1;
  *lo -= 0.06 * d;
  *hi += 0.06 * d;
}

/* About five round ticks over [lo, hi]. */
static double tick_step(double lo, double hi) {
  double raw = (hi - lo) / 5, mag = pow(10, floor(log10(raw))), r = raw / mag;
  return (r < 1.5 ? 1 : r < 3.5 ? 2 : r < 7.5 ? 5 : 10) * mag;
}

static void axes(FILE *f, const plot *p, const char *title, const char *ylabel, int ydigits) {
  fprintf(f, "<svg class=\"plot\" width=\"%d\" height=\"%d\" viewBox=\"0 0 %d %d\" role=\"img\">"
             "<text class=\"title\" x=\"%d\" y=\"16\">", PLOT_W, PLOT_H, PLOT_W, PLOT_H, ML);
  escape_html(f, title);
  fprintf(f, "</text><rect class=\"frame\" x=\"%d\" y=\"%d\" width=\"%d\" height=\"%d\"/>", ML, MT,
          PLOT_W - ML - MR, PLOT_H - MT - MB);
  double s = tick_step(p->y0, p->y1);
  for (double v = ceil(p->y0 / s) * s; v <= p->y1 + 1e-9 * s; v += s) {
    if (fabs(v) < 1e-9 * s) v = 0; /* never "-0.00" */
    fprintf(f, "<line class=\"grid\" x1=\"%d\" x2=\"%d\" y1=\"%.1f\" y2=\"%.1f\"/>"
               "<text class=\"tick\" x=\"%d\" y=\"%.1f\" text-anchor=\"end\">%.*f</text>", ML,
            PLOT_W - MR, py(p, v), py(p, v), ML - 4, py(p, v) + 4, ydigits, v);
  }
  s = tick_step(p->x0, p->x1);
  if (s < 1) s = 1;
  for (double v = ceil(p->x0 / s) * s; v <= p->x1 + 1e-9; v += s)
    fprintf(f, "<text class=\"tick\" x=\"%.1f\" y=\"%d\" text-anchor=\"middle\">%.0f</text>",
            px(p, v), PLOT_H - MB + 14, v);
  fprintf(f, "<text class=\"label\" x=\"%d\" y=\"%d\" text-anchor=\"middle\">generation</text>"
             "<text class=\"label\" transform=\"translate(12 %d) rotate(-90)\" "
             "text-anchor=\"middle\">", (ML + PLOT_W - MR) / 2, PLOT_H - 4, (MT + PLOT_H - MB) / 2);
  escape_html(f, ylabel);
  fputs("</text>", f);
}

/* The x range of a ledger's generations. */
static void gen_range(const report_ledger *l, plot *p) {
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
  plot p;
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
  pad(&p.y0, &p.y1);
  axes(f, &p, "best so far (µs per launch): the answer; dashed, a restarted search's own best",
       "µs", 2);
  for (int series = 1; series >= 0; series--) { /* the search in progress under the answer */
    fprintf(f, "<polyline class=\"%s\" points=\"", series ? "search" : "answer");
    double last = NAN;
    for (size_t i = 0; i < l->ngens; i++) {
      const report_gen *g = &l->gens[i];
      double v = series ? (g->restart > 0 ? g->search_best_us : NAN) : g->answer_us;
      if (!isfinite(v)) continue;
      if (isfinite(last)) fprintf(f, "%.1f,%.1f ", px(&p, (double)g->generation), py(&p, last));
      fprintf(f, "%.1f,%.1f ", px(&p, (double)g->generation), py(&p, v));
      last = v;
    }
    fputs("\"/>", f);
  }
  for (size_t i = 0; i < l->nrestarts; i++) {
    double x = px(&p, (double)l->restarts[i].after + 0.5);
    fprintf(f, "<line class=\"restart\" data-restart=\"%d\" x1=\"%.1f\" x2=\"%.1f\" y1=\"%d\" "
               "y2=\"%d\"><title>restart %d after generation %lld: ", l->restarts[i].restart, x,
            x, MT, PLOT_H - MB, l->restarts[i].restart, l->restarts[i].after);
    escape_html(f, l->restarts[i].reason);
    fprintf(f, "</title></line><text class=\"tick\" x=\"%.1f\" y=\"%d\">r%d</text>", x + 2, MT + 10,
            l->restarts[i].restart);
  }
  for (size_t i = 0; i < l->ngens; i++) {
    const report_gen *g = &l->gens[i];
    if (isfinite(g->answer_us))
      fprintf(f, "<circle class=\"best\" data-gen=\"%lld\" cx=\"%.1f\" cy=\"%.1f\" r=\"2\">"
                 "<title>generation %lld: best so far %.3f µs</title></circle>", g->generation,
              px(&p, (double)g->generation), py(&p, g->answer_us), g->generation, g->answer_us);
    if (g->decision != DECISION_KEEP || !isfinite(g->after_us)) continue;
    char change[1024], label[32];
    report_change_text(&g->best, &g->new_cfg, change, sizeof change);
    report_search_label(g, label, sizeof label);
    fprintf(f, "<circle class=\"keep%s%s\" data-gen=\"%lld\" cx=\"%.1f\" cy=\"%.1f\" r=\"5\">"
               "<title>generation %lld (%s) keep: %.3f µs; ", g->duel ? " duel" : "",
            g->generation == l->winner_gen ? " winner" : "", g->generation,
            px(&p, (double)g->generation), py(&p, g->after_us), g->generation, label, g->after_us);
    escape_html(f, change);
    fputs(g->generation == l->winner_gen ? "; the winner" : "", f);
    fputs("</title></circle>", f);
  }
  fputs("</svg>\n", f);
}

static const char *const decision_class[] = {"keep", "reject", "refused", "ambiguous"};

/* new/best of every recorded round (screened ones left out), a cloud per generation. */
static void plot_ratios(FILE *f, const report_ledger *l) {
  plot p;
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
  pad(&p.y0, &p.y1);
  axes(f, &p, "paired ratios new/best per round, by decision", "new / best", 3);
  fprintf(f, "<line class=\"one\" x1=\"%d\" x2=\"%d\" y1=\"%.1f\" y2=\"%.1f\"/>", ML, PLOT_W - MR,
          py(&p, 1), py(&p, 1));
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
              px(&p, (double)g->generation + dx), py(&p, g->ratios[k]), g->generation, k + 1,
              g->ratios[k], g->untrusted ? "untrusted" : decision_names[g->decision]);
    }
  }
  fputs("</svg>\n", f);
}

/* The control's median per generation: it should stay flat; drift is the machine, not the
 * search. */
static void plot_control(FILE *f, const report_ledger *l) {
  plot p;
  gen_range(l, &p);
  p.y0 = l->control_lo, p.y1 = l->control_hi;
  if (!isfinite(p.y0)) {
    empty(f, "control: not measured yet");
    return;
  }
  pad(&p.y0, &p.y1);
  axes(f, &p, "the control's time per generation (µs): it should stay flat", "µs", 2);
  fputs("<polyline class=\"control\" points=\"", f);
  for (size_t i = 0; i < l->ngens; i++)
    if (isfinite(l->gens[i].control_us))
      fprintf(f, "%.1f,%.1f ", px(&p, (double)l->gens[i].generation), py(&p, l->gens[i].control_us));
  fputs("\"/>", f);
  for (size_t i = 0; i < l->ngens; i++) {
    const report_gen *g = &l->gens[i];
    if (!isfinite(g->control_us)) continue;
    fprintf(f, "<circle class=\"control\" data-gen=\"%lld\" cx=\"%.1f\" cy=\"%.1f\" r=\"2\">"
               "<title>generation %lld: control %.3f µs (drift %.4f)</title></circle>",
            g->generation, px(&p, (double)g->generation), py(&p, g->control_us), g->generation,
            g->control_us, g->control_drift);
  }
  fputs("</svg>\n", f);
}

/* Every canary: the A/A bias (copy/best - 1, in %) of the measure process it vetted, with its
 * 95% interval, at the generation whose job ran it. */
static void plot_canary(FILE *f, const report_ledger *l) {
  plot p;
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
  pad(&p.y0, &p.y1);
  axes(f, &p, "A/A bias per measure process (canary, event span, 95% interval)", "bias %", 2);
  fprintf(f, "<line class=\"one\" x1=\"%d\" x2=\"%d\" y1=\"%.1f\" y2=\"%.1f\"/>", ML, PLOT_W - MR,
          py(&p, 0), py(&p, 0));
  for (size_t i = 0; i < l->ngens; i++) {
    const report_gen *g = &l->gens[i];
    if (!g->has_canary || !isfinite(g->canary_ratio[0])) continue;
    double x = px(&p, (double)g->generation), b = 100 * (g->canary_ratio[0] - 1);
    fprintf(f, "<g class=\"canary%s\" data-gen=\"%lld\" data-child=\"%d\" data-run=\"",
            g->canary_biased ? " biased" : "", g->generation, g->child);
    escape_html(f, g->run);
    fputs("\">", f);
    if (isfinite(g->canary_lo[0]) && isfinite(g->canary_hi[0]))
      fprintf(f, "<line x1=\"%.1f\" x2=\"%.1f\" y1=\"%.1f\" y2=\"%.1f\"/>", x, x,
              py(&p, 100 * (g->canary_lo[0] - 1)), py(&p, 100 * (g->canary_hi[0] - 1)));
    fprintf(f, "<circle cx=\"%.1f\" cy=\"%.1f\" r=\"3.5\"><title>process %d of run ", x,
            py(&p, b), g->child);
    escape_html(f, g->run);
    fprintf(f, ", canary in generation %lld: bias %+.3f%% [%+.3f%%, %+.3f%%], %s</title>"
               "</circle></g>", g->generation, b, 100 * (g->canary_lo[0] - 1),
            100 * (g->canary_hi[0] - 1), g->canary_biased ? "biased" : "ok");
  }
  fputs("</svg>\n", f);
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
  plot_best(f, l);
  plot_ratios(f, l);
  plot_control(f, l);
  plot_canary(f, l);
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
  fputs("</table>\n<div class=\"gpus\">\n", f);
  for (size_t i = 0; i < n; i++)
    if (strcmp(l[i].campaign, name) == 0) gpu_column(f, &l[i]);
  fputs("</div></section>\n", f);
}

static const char style[] =
    "body{font-family:sans-serif;margin:1.5em;color:#222}"
    "table{border-collapse:collapse;margin:.5em 0 1em}td,th{border:1px solid #ccc;padding:.25em "
    ".5em;text-align:right;vertical-align:top}td:first-child,td.winner{text-align:left}"
    ".winner{font-weight:bold}small{font-weight:normal;color:#555}"
    ".gpus{display:flex;flex-wrap:wrap;gap:1.5em}.gpu{flex:0 0 auto}.gpu h3{font-size:1em}"
    "svg.plot{display:block;margin-bottom:.6em}.frame{fill:#fafafa;stroke:#bbb}"
    ".grid{stroke:#e4e4e4}.tick,.label{font-size:10px;fill:#555}.title{font-size:11px;fill:#222}"
    "polyline{fill:none}.answer{stroke:#1f5fa8;stroke-width:1.5}.search{stroke:#7fa7d6;"
    "stroke-dasharray:4 3}circle.best{fill:#1f5fa8}circle.keep{fill:none;stroke:#1a8a3a;"
    "stroke-width:2}circle.keep.duel{stroke:#a86b00}circle.keep.winner{stroke:#d4002a;"
    "stroke-width:3}.restart{stroke:#a86b00;stroke-dasharray:2 2}.one{stroke:#888}"
    "circle.ratio{fill-opacity:.75}.ratio.keep{fill:#1a8a3a}.ratio.reject{fill:#888}"
    ".ratio.refused{fill:#e08a00}.ratio.ambiguous{fill:#7b3fb0}.ratio.untrusted{fill:#d4002a}"
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
  fprintf(f, REPORT_HTML_HEAD "<style>%s</style>\n%s</head><body>\n"
             "<h1>tunefarm report</h1>\n<p>Every plot holds one GPU's numbers on its own "
             "scales: GPUs stand side by side and are never pooled. Times are microseconds per "
             "launch, medians over a generation's recorded rounds (screened ones left out); "
             "hover over a mark for its numbers (docs/REPORT.md).</p>\n<p class=\"legend\">"
             "Best so far: the search's answer after every generation (with restarts, the "
             "champion), dashed the best of a restarted search until its duel; rings are keeps "
             "(<span class=\"k\">kept</span>, <span class=\"d\">a duel won</span>, "
             "<span class=\"w\">the winner</span>), dotted lines restarts. Ratios, by "
             "decision: <span class=\"k\">keep</span>, <span class=\"r\">reject</span>, "
             "<span class=\"f\">refused</span>, <span class=\"a\">ambiguous</span>, "
             "<span class=\"w\">untrusted</span> (its process was not vetted).</p>\n",
          style, script);
  for (size_t i = 0; i < n; i++) {
    int seen = 0; /* a section per campaign, in the order they first appear */
    for (size_t j = 0; j < i; j++) seen |= strcmp(l[j].campaign, l[i].campaign) == 0;
    if (!seen) campaign_section(f, l, n, l[i].campaign);
  }
  fputs("</body></html>\n", f);
  return ferror(f) ? tf_fail(e, TF_EXIT_FAIL, "cannot write the page") : 0;
}
