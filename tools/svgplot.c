/* svgplot: figures of inline SVG for tunefarm's HTML pages (tools/svgplot.h). */
#include "tools/svgplot.h"

#include "common/escape.h"

#include <math.h>

#define ML SVGPLOT_ML
#define MR SVGPLOT_MR
#define MT SVGPLOT_MT
#define MB SVGPLOT_MB

double svgplot_x(const svgplot *p, double x) {
  return ML + (x - p->x0) / (p->x1 - p->x0) * (SVGPLOT_W - ML - MR);
}

double svgplot_y(const svgplot *p, double y) {
  return SVGPLOT_H - MB - (y - p->y0) / (p->y1 - p->y0) * (SVGPLOT_H - MT - MB);
}

void svgplot_pad(double *lo, double *hi) {
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

/* The title is an HTML caption above the SVG, as wide as the plot and wrapped there: an SVG
 * text would be cut at the plot's edge. */
void svgplot_axes(FILE *f, const svgplot *p, const char *title, const char *xlabel,
                  const char *ylabel, int ydigits) {
  fprintf(f, "<figure class=\"plot\" style=\"width:%dpx\"><figcaption class=\"title\">", SVGPLOT_W);
  escape_html(f, title);
  fprintf(f, "</figcaption><svg class=\"plot\" width=\"%d\" height=\"%d\" viewBox=\"0 0 %d %d\" "
             "role=\"img\"><rect class=\"frame\" x=\"%d\" y=\"%d\" width=\"%d\" height=\"%d\"/>",
          SVGPLOT_W, SVGPLOT_H, SVGPLOT_W, SVGPLOT_H, ML, MT, SVGPLOT_W - ML - MR,
          SVGPLOT_H - MT - MB);
  double s = tick_step(p->y0, p->y1);
  for (double v = ceil(p->y0 / s) * s; v <= p->y1 + 1e-9 * s; v += s) {
    if (fabs(v) < 1e-9 * s) v = 0; /* never "-0.00" */
    fprintf(f, "<line class=\"grid\" x1=\"%d\" x2=\"%d\" y1=\"%.1f\" y2=\"%.1f\"/>"
               "<text class=\"tick\" x=\"%d\" y=\"%.1f\" text-anchor=\"end\">%.*f</text>", ML,
            SVGPLOT_W - MR, svgplot_y(p, v), svgplot_y(p, v), ML - 4, svgplot_y(p, v) + 4, ydigits,
            v);
  }
  s = tick_step(p->x0, p->x1);
  if (s < 1) s = 1;
  for (double v = ceil(p->x0 / s) * s; v <= p->x1 + 1e-9; v += s)
    fprintf(f, "<text class=\"tick\" x=\"%.1f\" y=\"%d\" text-anchor=\"middle\">%.0f</text>",
            svgplot_x(p, v), SVGPLOT_H - MB + 14, v);
  fprintf(f, "<text class=\"label\" x=\"%d\" y=\"%d\" text-anchor=\"middle\">",
          (ML + SVGPLOT_W - MR) / 2, SVGPLOT_H - 4);
  escape_html(f, xlabel);
  fprintf(f, "</text><text class=\"label\" transform=\"translate(12 %d) rotate(-90)\" "
             "text-anchor=\"middle\">", (MT + SVGPLOT_H - MB) / 2);
  escape_html(f, ylabel);
  fputs("</text>", f);
}

void svgplot_legend(FILE *f, const svgplot_legend_item *it, size_t n) {
  fputs("</svg><div class=\"legend\">", f);
  for (size_t i = 0; i < n; i++) {
    fprintf(f, "<span class=\"item\"><span class=\"sw %s\" style=\"--c:%s\"></span>", it[i].shape,
            it[i].colour);
    escape_html(f, it[i].text);
    fputs("</span> ", f);
  }
  fputs("</div></figure>\n", f);
}

void svgplot_hline(FILE *f, const svgplot *p, const char *cls, double y, const char *what) {
  fprintf(f, "<line class=\"%s\" x1=\"%d\" x2=\"%d\" y1=\"%.1f\" y2=\"%.1f\"><title>", cls, ML,
          SVGPLOT_W - MR, svgplot_y(p, y), svgplot_y(p, y));
  escape_html(f, what);
  fputs("</title></line>", f);
}

const char svgplot_style[] =
    "body{font-family:sans-serif;margin:1.5em;color:#222}"
    "table{border-collapse:collapse;margin:.5em 0 1em}td,th{border:1px solid #ccc;padding:.25em "
    ".5em;text-align:right;vertical-align:top}td:first-child{text-align:left}"
    "svg.plot{display:block}.frame{fill:#fafafa;stroke:#bbb}"
    ".grid{stroke:#e4e4e4}.tick,.label{font-size:10px;fill:#555}.title{font-size:11px;fill:#222}"
    "polyline{fill:none}"
    "figure{margin:0 0 .8em}figcaption.title{font-size:11px;color:#222;overflow-wrap:anywhere;"
    "margin-bottom:2px}.legend{font-size:10px;color:#555;overflow-wrap:anywhere}"
    ".legend .item{white-space:nowrap;display:inline-block;margin-right:.6em}"
    ".sw{display:inline-block;width:12px;height:8px;margin-right:3px;vertical-align:middle}"
    ".sw.dot{width:8px;border-radius:50%;background:var(--c)}.sw.ring{width:6px;height:6px;"
    "border-radius:50%;border:2px solid var(--c)}.sw.line{height:0;border-top:2px solid var(--c)}"
    ".sw.dash{height:0;border-top:2px dashed var(--c)}.sw.band,.sw.block{background:var(--c);"
    "opacity:.35}.sw.block{opacity:.8}";
