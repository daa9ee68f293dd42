/* svgplot: the plots of tunefarm's HTML pages (`report --html`, `study --strategies --html`).
 * A plot is a figure: a caption above a framed SVG with round ticks on both axes, the caller's
 * marks drawn in the plot's coordinates (svgplot_x, svgplot_y), a legend line below. Every
 * text goes through the HTML rule (common/escape.h). It writes to the FILE given and owns
 * nothing. */
#ifndef TF_SVGPLOT_H
#define TF_SVGPLOT_H

#include <stddef.h>
#include <stdio.h>

#define SVGPLOT_W 460
#define SVGPLOT_H 220
#define SVGPLOT_ML 58 /* the frame's margins in the SVG: left, right, top, bottom */
#define SVGPLOT_MR 12
#define SVGPLOT_MT 10
#define SVGPLOT_MB 34

/* The data ranges a plot shows. */
typedef struct svgplot {
  double x0, x1, y0, y1;
} svgplot;

/* A data x or y in the SVG's pixels. */
double svgplot_x(const svgplot *p, double x);
double svgplot_y(const svgplot *p, double y);

/* Widens [*lo, *hi] by some air, never empty (a non-finite end gives [0, 1]). */
void svgplot_pad(double *lo, double *hi);

/* Opens the figure: the caption `title`, the SVG, its frame, y ticks with `ydigits` decimals
 * and their grid, x ticks, and the axis labels `xlabel` and `ylabel`. */
void svgplot_axes(FILE *f, const svgplot *p, const char *title, const char *xlabel,
                  const char *ylabel, int ydigits);

/* One entry of a plot's legend: a swatch of the mark's colour (its shape: "dot", "ring",
 * "line", "dash", "band" or "block") and what it means. */
typedef struct svgplot_legend_item {
  const char *shape, *colour, *text;
} svgplot_legend_item;

/* Closes the SVG and the figure with the legend of n items. */
void svgplot_legend(FILE *f, const svgplot_legend_item *it, size_t n);

/* A horizontal line of class `cls` at y across the frame, with `what` as its tooltip. */
void svgplot_hline(FILE *f, const svgplot *p, const char *cls, double y, const char *what);

/* The CSS of the figures, frames, ticks, labels, legends and swatches; a page adds the
 * classes of its own marks. */
extern const char svgplot_style[];

#endif
