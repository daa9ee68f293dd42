/* bench_print: what `tunefarm bench` prints on stdout (tools/bench.h).
 *
 * Markdown: a header naming the campaign and shape, the device (name, UUID, driver), the date
 * and the protocol, then the table, which is the last thing printed. With --json: one JSON
 * object per arm and line instead, each self-contained (campaign, shape, device, protocol).
 * Every number is defined where it is printed:
 *   median µs   the median over the recorded rounds of each round's median launch time
 *               (CUDA events around the launch, after the L2 flush);
 *   spread µs   the smallest and the largest round median;
 *   kernel µs   the same statistic of CUPTI's kernel-only times (— where any round lacks one);
 *   TFLOP/s, GB/s  the spec's flops or bytes of one launch over the median;
 *   rel_err     ||out - ref|| / ||ref|| against the template's reference, worst input set;
 *               "not checked" (JSON null) for an arm measured on the simulated device,
 *               which runs no kernel;
 *   vs fastest  the median over the fastest correct arm's median.
 * On the simulated device the header says that its times are synthetic and that no output was
 * checked, in place of the protocol's check. */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "common/decide.h" /* defines: stats_median */
#include "common/jsonio.h" /* defines: jsonio_write_line */
#include "tools/bench.h"
#include "tools/throughput.h" /* defines: throughput_rate */
#include "worker/backend.h"    /* defines: backend_simulated */

typedef struct arm_stats {
  double median, lo, hi; /* NAN unless measured */
  double kernel;         /* NAN unless every round has a kernel time */
  double rate;           /* TFLOP/s or GB/s; NAN when unknown */
} arm_stats;

static arm_stats stats_of(const bench *b, const bench_arm *a) {
  arm_stats st = {NAN, NAN, NAN, NAN, NAN};
  if (a->status != BENCH_MEASURED || a->nrounds == 0) return st;
  st.median = stats_median(a->us, a->nrounds);
  st.lo = st.hi = a->us[0];
  int kernels = 0;
  for (int r = 0; r < a->nrounds; r++) {
    st.lo = fmin(st.lo, a->us[r]);
    st.hi = fmax(st.hi, a->us[r]);
    kernels += a->kernel_us[r] >= 0.0;
  }
  if (kernels == a->nrounds) st.kernel = stats_median(a->kernel_us, a->nrounds);
  st.rate = throughput_rate(a->work, st.median, b->unit_flops);
  return st;
}

static double fastest(const bench *b) {
  double best = NAN;
  for (int i = 0; i < b->narms; i++) {
    arm_stats st = stats_of(b, &b->arms[i]);
    if (!isnan(st.median) && !(st.median >= best)) best = st.median;
  }
  return best;
}

static const char *status_name(bench_status s) {
  static const char *const names[] = {"pending", "measured", "wrong", "error", "refused",
                                      "skipped"};
  return names[s];
}

static const char *kind_name(bench_kind k) {
  static const char *const names[] = {"template", "kernel", "cublas"};
  return names[k];
}

/* ---------------------------------------------------------------- Markdown */

/* Text for a table cell: '|' would end it, a newline the row; long notes are cut. */
static void cell(FILE *f, const char *text, size_t max) {
  size_t n = 0;
  for (; *text && n < max; text++, n++) {
    if (*text == '|') fputc('\\', f);
    fputc(*text == '\n' || *text == '\r' ? ' ' : *text, f);
  }
  if (*text) fputs("…", f);
}

/* v with `digits` decimals (or, digits < 0, in scientific notation) and a unit; — if unknown. */
static const char *num(char *buf, size_t len, int digits, const char *unit, double v) {
  if (isnan(v))
    snprintf(buf, len, "—");
  else if (digits < 0)
    snprintf(buf, len, "%.1e%s", v, unit);
  else
    snprintf(buf, len, "%.*f%s", digits, v, unit);
  return buf;
}

static void dims_text(const bench *b, char *buf, size_t len) {
  buf[0] = '\0';
  for (int d = 0; d < b->c.tmpl.ndims; d++)
    snprintf(buf + strlen(buf), len - strlen(buf), "%s%s=%lld", d ? " " : "",
             b->c.tmpl.dims[d].name, b->c.dims[d]);
}

static int simulated(const bench *b) {
  return backend_simulated(b->backend);
}

/* A measured arm of the simulated device: its rel_err says nothing (an injected fault's
 * does: it is what made the arm WRONG). */
static int unchecked(const bench *b, const bench_arm *a) {
  return simulated(b) && a->status == BENCH_MEASURED;
}

/* What the protocol does before timing: the check, or on the simulated device what it is not. */
static void print_check(FILE *f, const bench *b) {
  if (simulated(b))
    fputs("no arm checked (the simulated device runs no kernel, so no output is compared with "
          "the reference: rel_err is not measured)", f);
  else
    fprintf(f, "every arm checked against the template's reference on %d input set(s) before "
            "any timing (a wrong arm is not timed)", b->c.measure.input_sets);
}

static void print_header(FILE *f, const bench *b, const bench_opts *o) {
  char shape[256];
  dims_text(b, shape, sizeof shape);
  fprintf(f, "## tunefarm bench: campaign %s, %s\n\n", b->c.name, shape);
  fprintf(f, "- device: %s, %s, driver %s, host %s, backend %s%s\n", b->dev.name, b->dev.uuid,
          b->driver, b->dev.host, b->backend,
          simulated(b) ? " (simulated device: its times are synthetic, from a cost model with "
                         "seeded noise, not a GPU's, and no output is checked)" : "");
  fprintf(f, "- date: %s\n", b->date);
  fputs("- protocol: the farm's (worker/protocol.h), three arms to a job: ", f);
  print_check(f, b);
  fprintf(f, "; %d burn-in round(s), then R = %d rounds x S = %d launches "
          "per arm, the arms of one job in rotated order, sharing their buffers, input sets "
          "alternating by round; the L2 flushed before every launch (a memset of twice its "
          "%.1f MiB)\n", b->c.measure.burn_in,
          o->rounds, o->samples, (double)b->dev.l2_bytes / (1024.0 * 1024.0));
  fputs("- median µs: the median over the rounds of each round's median launch time (CUDA "
        "events around the launch, and around the memset of C that split-K configurations "
        "need); spread: the smallest and largest round median; kernel µs: "
        "the same of CUPTI's kernel-only times; vs fastest: median / the fastest correct "
        "arm's median\n", f);
  if (b->cublas_lib[0])
    fprintf(f, "- cuBLAS: the campaign's peers from %s, math mode CUBLAS_DEFAULT_MATH "
            "(cublasSgemm_v2 for FP32: no TF32; cublasGemmEx with CUBLAS_COMPUTE_32F for FP16 "
            "and BF16), arms of the cuda backend measured in jobs beside the kernels\n",
            b->cublas_lib);
  fputc('\n', f);
}

static void print_row(FILE *f, const bench *b, const bench_arm *a, double best) {
  arm_stats st = stats_of(b, a);
  char m[32], lo[32], hi[32], k[32], r[32], err[32], vs[32];
  fputs("| ", f);
  cell(f, a->label, 96);
  fputs(" | ", f);
  cell(f, a->what, 400);
  fputs(" | ", f);
  if (a->status == BENCH_MEASURED)
    fputs(num(m, sizeof m, 2, "", st.median), f);
  else if (a->status == BENCH_WRONG)
    fputs("WRONG (not timed)", f);
  else
    cell(f, a->note, 160);
  if (a->status == BENCH_MEASURED)
    fprintf(f, " | %s–%s", num(lo, sizeof lo, 2, "", st.lo), num(hi, sizeof hi, 2, "", st.hi));
  else
    fputs(" | —", f);
  fprintf(f, " | %s | %s | %s | %s |\n", num(k, sizeof k, 2, "", st.kernel),
          num(r, sizeof r, 2, "", st.rate),
          unchecked(b, a) ? "not checked" : num(err, sizeof err, -1, "", a->rel_err),
          num(vs, sizeof vs, 2, "×", st.median / best));
}

static void print_table(FILE *f, const bench *b, const bench_opts *o) {
  print_header(f, b, o);
  fprintf(f, "| arm | config or kernel | median µs | spread µs | kernel µs | %s | rel_err | "
          "vs fastest |\n", b->unit_flops ? "TFLOP/s" : "GB/s");
  fputs("|---|---|---:|---:|---:|---:|---:|---:|\n", f);
  double best = fastest(b);
  for (int i = 0; i < b->narms; i++) print_row(f, b, &b->arms[i], best);
  fflush(f);
}

/* ---------------------------------------------------------------- JSON lines */

static cJSON *numbers(const double *v, int n) {
  cJSON *a = cJSON_CreateArray();
  for (int i = 0; i < n; i++) cJSON_AddItemToArray(a, cJSON_CreateNumber(v[i]));
  return a;
}

/* What every line repeats, so that each stands alone. */
static void add_context(cJSON *j, const bench *b, const bench_opts *o) {
  cJSON_AddStringToObject(j, "campaign", b->c.name);
  cJSON *dims = cJSON_AddObjectToObject(j, "dims");
  for (int d = 0; d < b->c.tmpl.ndims; d++)
    cJSON_AddNumberToObject(dims, b->c.tmpl.dims[d].name, (double)b->c.dims[d]);
  cJSON *dev = cJSON_AddObjectToObject(j, "device");
  cJSON_AddStringToObject(dev, "name", b->dev.name);
  cJSON_AddStringToObject(dev, "uuid", b->dev.uuid);
  cJSON_AddStringToObject(dev, "driver", b->driver);
  cJSON_AddStringToObject(dev, "host", b->dev.host);
  cJSON_AddStringToObject(j, "backend", b->backend);
  cJSON_AddStringToObject(j, "date", b->date);
  cJSON_AddNumberToObject(j, "input_sets", b->c.measure.input_sets);
  cJSON_AddNumberToObject(j, "burn_in", b->c.measure.burn_in);
  cJSON_AddNumberToObject(j, "rounds", o->rounds);
  cJSON_AddNumberToObject(j, "samples", o->samples);
  cJSON_AddBoolToObject(j, "flush_l2", 1);
}

static cJSON *arm_json(const bench *b, const bench_opts *o, const bench_arm *a, double best) {
  arm_stats st = stats_of(b, a);
  cJSON *j = cJSON_CreateObject();
  cJSON_AddStringToObject(j, "type", "bench_arm");
  add_context(j, b, o);
  cJSON_AddStringToObject(j, "arm", a->label);
  cJSON_AddStringToObject(j, "kind", kind_name(a->kind));
  if (a->kind == BENCH_TEMPLATE)
    cJSON_AddItemToObject(j, "config", spec_config_to_json(&b->c.tmpl, &a->cfg));
  cJSON_AddStringToObject(j, "what", a->what);
  if (a->ledger) cJSON_AddStringToObject(j, "ledger", a->ledger);
  if (a->kind == BENCH_CUBLAS && b->cublas_lib[0]) {
    cJSON_AddStringToObject(j, "library", b->cublas_lib);
    cJSON_AddStringToObject(j, "math_mode", "CUBLAS_DEFAULT_MATH");
  }
  cJSON_AddStringToObject(j, "status", status_name(a->status));
  cJSON_AddStringToObject(j, "note", a->note);
  if (unchecked(b, a)) cJSON_AddNullToObject(j, "rel_err"); /* not measured */
  else cJSON_AddNumberToObject(j, "rel_err", a->rel_err);
  cJSON_AddNumberToObject(j, "median_us", st.median);
  cJSON *spread = cJSON_AddArrayToObject(j, "spread_us");
  cJSON_AddItemToArray(spread, cJSON_CreateNumber(st.lo));
  cJSON_AddItemToArray(spread, cJSON_CreateNumber(st.hi));
  cJSON_AddNumberToObject(j, "kernel_us", st.kernel);
  cJSON_AddNumberToObject(j, b->unit_flops ? "tflops" : "gbps", st.rate);
  cJSON_AddNumberToObject(j, "vs_fastest", st.median / best);
  cJSON_AddItemToObject(j, "round_us", numbers(a->us, a->nrounds));
  cJSON_AddItemToObject(j, "round_kernel_us", numbers(a->kernel_us, a->nrounds));
  return j;
}

static void print_json(FILE *f, const bench *b, const bench_opts *o) {
  double best = fastest(b);
  for (int i = 0; i < b->narms; i++) {
    cJSON *j = arm_json(b, o, &b->arms[i], best);
    jsonio_write_line(f, j);
    cJSON_Delete(j);
  }
}

void bench_print(FILE *f, const bench *b, const bench_opts *o) {
  if (o->json)
    print_json(f, b, o);
  else
    print_table(f, b, o);
}
