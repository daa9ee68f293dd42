/* bench: the command line, the inputs and the list of arms (tools/bench.h).
 *
 * Everything the user can get wrong (the campaign, a ledger, --dims, an option) is read and
 * checked here, before any device is touched, so bad input costs no GPU time and leaves
 * nothing half-printed: one message naming the file and the key, exit status 2. */
#include "tools/bench.h"

#include <dirent.h>
#include <errno.h>
#include <getopt.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "coordinator/ledger.h" /* defines: ledger_scan */
#include "worker/backend.h"     /* defines: backend_find */
#include "coordinator/replay.h" /* defines: ledger_best_init, ledger_best_add, ledger_best_get */
#include "tools/throughput.h"     /* defines: throughput_work, throughput_unit_flops */

static void usage(FILE *f) {
  fputs("usage: tunefarm bench [--ledger FILE]... [--config K=V,...]... [--dims NAME=V,...]\n"
        "                      [--rounds R] [--samples S]\n"
        "                      [--device N] [--backend cuda|sim] [--no-cublas] [--json] CAMPAIGN\n"
        "\n"
        "Side by side on one GPU, same shapes, same protocol: the farm's final best of each\n"
        "ledger, the campaign's start configuration, every committed kernel that takes the\n"
        "template's interface (kernels/), and the campaign's library peers (\"peers\": cuBLAS\n"
        "SGEMM for FP32 with CUBLAS_DEFAULT_MATH, no TF32; cublasGemmEx for FP16 and BF16).\n"
        "Every arm is checked against the template's reference on every input set before any\n"
        "timing; a wrong arm is not timed. Then the campaign's burn-in rounds and R rounds of S\n"
        "launches per arm, arm order rotated, the L2 flushed before every launch. Progress on\n"
        "stderr; on stdout a Markdown table: median µs (the median of the round medians), spread\n"
        "(min-max of the round medians), CUPTI kernel µs, TFLOP/s or GB/s (from the spec's flops\n"
        "or bytes), rel_err, and the ratio to the fastest correct arm.\n"
        "\n"
        "  --ledger FILE   a ledger `tunefarm run` wrote for this campaign (repeatable): its\n"
        "                  final best, labelled \"farm best (GPU-xxxxxxxx)\" by its device\n"
        "  --config K=V,.. the campaign's start with these knobs set (repeatable, at most "
        BENCH_XSTR(BENCH_MAX_CONFIGS) "),\n"
        "                  e.g. BM=64,BN=128,TM=8,TN=8,VEC=4,PIPE=3,BK=32\n"
        "  --dims N=V,...  other problem sizes (e.g. M=1000,N=1000,K=1000); an arm whose\n"
        "                  constraints refuse them is listed as refused, never launched\n"
        "  --rounds R      recorded rounds (default 10, at most 256)\n"
        "  --samples S     launches per arm per round (default 20)\n"
        "  --device N      device ordinal among the visible ones (default 0)\n"
        "  --backend B     cuda, or sim (the simulated device: synthetic times, no output\n"
        "                  checked, rel_err \"not checked\"; cuBLAS is then skipped);\n"
        "                  default: cuda where a GPU is visible, else sim (said on stderr)\n"
        "  --no-cublas     leave the campaign's peers (cuBLAS) out\n"
        "  --json          one JSON object per arm on stdout instead of the table\n"
        "  -h, --help      this text\n"
        "\n"
        "Exit status: 0 every arm measured correct (or refused or skipped), 1 an arm wrong or\n"
        "failed (the table says which) or the device failed, 2 bad input (campaign, ledger,\n"
        "--dims, option), 3 no usable device for the cuda backend.\n",
        f);
}

/* ---------------------------------------------------------------- the command line */

static int int_arg(const char *opt, const char *text, long lo, long hi, int *out, tf_err *e) {
  char *end = NULL;
  errno = 0;
  long v = strtol(text, &end, 10);
  if (end == text || *end || errno || v < lo || v > hi)
    return tf_fail(e, TF_EXIT_INPUT, "option '%s': '%s' is not an integer in [%ld, %ld]", opt,
                   text, lo, hi);
  *out = (int)v;
  return 0;
}

static int parse_args(int argc, char **argv, bench_opts *o, int *help, tf_err *e) {
  static const struct option longs[] = {
      {"ledger", required_argument, 0, 'l'},  {"dims", required_argument, 0, 'd'},
      {"config", required_argument, 0, 'c'},
      {"rounds", required_argument, 0, 'r'},  {"samples", required_argument, 0, 's'},
      {"device", required_argument, 0, 'D'},  {"backend", required_argument, 0, 'b'},
      {"no-cublas", no_argument, 0, 'n'},     {"json", no_argument, 0, 'j'},
      {"help", no_argument, 0, 'h'},          {0, 0, 0, 0}};
  *o = (bench_opts){.rounds = 10, .samples = 20};
  *help = 0;
  optind = 1;
  opterr = 0; /* our own message, with the exit status of bad input */
  int c;
  while ((c = getopt_long(argc, argv, "h", longs, NULL)) != -1) {
    int rc = 0;
    switch (c) {
      case 'l':
        if (o->nledgers == BENCH_MAX_LEDGERS)
          return tf_fail(e, TF_EXIT_INPUT, "option '--ledger': at most %d ledgers",
                         BENCH_MAX_LEDGERS);
        o->ledgers[o->nledgers++] = optarg;
        break;
      case 'c':
        if (o->nconfigs == BENCH_MAX_CONFIGS)
          return tf_fail(e, TF_EXIT_INPUT, "option '--config': at most %d configurations",
                         BENCH_MAX_CONFIGS);
        o->configs[o->nconfigs++] = optarg;
        break;
      case 'd': o->dims = optarg; break;
      case 'r': rc = int_arg("--rounds", optarg, 1, BENCH_MAX_ROUNDS, &o->rounds, e); break;
      case 's': rc = int_arg("--samples", optarg, 1, 100000, &o->samples, e); break;
      case 'D': rc = int_arg("--device", optarg, 0, 1024, &o->device, e); break;
      case 'b': o->backend = optarg; break;
      case 'n': o->no_cublas = 1; break;
      case 'j': o->json = 1; break;
      case 'h': *help = 1; return 0;
      default:
        return tf_fail(e, TF_EXIT_INPUT, "unknown option or missing value: '%s' (see --help)",
                       argv[optind - 1]);
    }
    if (rc) return -1;
  }
  if (o->backend && !backend_find(o->backend)) {
    char names[128];
    backend_names(names, sizeof names);
    return tf_fail(e, TF_EXIT_INPUT, "option '--backend': '%s' is not %s", o->backend, names);
  }
  if (optind != argc - 1)
    return tf_fail(e, TF_EXIT_INPUT, "give exactly one campaign file (see --help)");
  o->campaign = argv[optind];
  return 0;
}

/* ---------------------------------------------------------------- --dims */

static int dims_known(const spec *s, char *buf, size_t len) {
  buf[0] = '\0';
  for (int d = 0; d < s->ndims; d++)
    snprintf(buf + strlen(buf), len - strlen(buf), "%s%s", d ? ", " : "", s->dims[d].name);
  return 0;
}

/* One "NAME=VALUE" of --dims into c->dims. */
static int apply_dim(campaign *c, char *item, tf_err *e) {
  const spec *s = &c->tmpl;
  char *eq = strchr(item, '='), known[256], *end = NULL;
  if (!eq) return tf_fail(e, TF_EXIT_INPUT, "option '--dims': '%s' is not NAME=VALUE", item);
  *eq = '\0';
  int d = spec_dim_index(s, item);
  dims_known(s, known, sizeof known);
  if (d < 0)
    return tf_fail(e, TF_EXIT_INPUT, "option '--dims': key '%s' is not a dimension of template "
                   "'%s' (its dimensions: %s)", item, s->name, known);
  errno = 0;
  long long v = strtoll(eq + 1, &end, 10);
  if (end == eq + 1 || *end || errno)
    return tf_fail(e, TF_EXIT_INPUT, "option '--dims': key '%s': '%s' is not an integer", item,
                   eq + 1);
  if (v < s->dims[d].lo || v > s->dims[d].hi)
    return tf_fail(e, TF_EXIT_INPUT, "option '--dims': key '%s': %lld is outside the range "
                   "[%lld, %lld] of template '%s'", item, v, s->dims[d].lo, s->dims[d].hi, s->name);
  c->dims[d] = v;
  return 0;
}

static int apply_dims(campaign *c, const char *text, tf_err *e) {
  char buf[512];
  if (strlen(text) >= sizeof buf)
    return tf_fail(e, TF_EXIT_INPUT, "option '--dims': too long");
  snprintf(buf, sizeof buf, "%s", text);
  char *save = NULL;
  for (char *item = strtok_r(buf, ",", &save); item; item = strtok_r(NULL, ",", &save))
    if (apply_dim(c, item, e)) return -1;
  return 0;
}

/* ---------------------------------------------------------------- ledgers */

/* What one ledger says: its device and its search's final best. */
typedef struct ledger_read {
  const char *path;
  const char *want;   /* the campaign given */
  device_record dev;
  char campaign[64], hash[72];
  ledger_best best;
  long long last_gen;
  long last_line;   /* of the last generation record */
} ledger_read;

static int ledger_line(void *ctx, long line, const record *rec, tf_err *e) {
  ledger_read *r = ctx;
  if (rec->kind == RECORD_DEVICE && strcmp(rec->device.campaign, r->want) != 0)
    return tf_fail(e, TF_EXIT_INPUT, "ledger '%s': key 'campaign' is '%s', not '%s' (the "
                   "campaign given)", r->path, rec->device.campaign, r->want);
  if (ledger_best_add(&r->best, rec, e)) return tf_wrap(e, "ledger '%s': line %ld", r->path, line);
  if (rec->kind == RECORD_DEVICE) {
    snprintf(r->campaign, sizeof r->campaign, "%s", rec->device.campaign);
    snprintf(r->hash, sizeof r->hash, "%s", rec->device.campaign_hash);
    r->dev = rec->device.dev;
  } else if (rec->kind == RECORD_GENERATION) {
    r->last_gen = rec->gen.generation;
    r->last_line = line;
  }
  return 0;
}

/* "GPU-7412f039" from the record's UUID: its prefix and first 8 hex digits. */
static void short_uuid(const device_record *d, char *buf, size_t len) {
  char u8[9];
  device_uuid8(d, u8);
  const char *dash = strchr(d->uuid, '-');
  int n = dash && dash - d->uuid <= 4 ? (int)(dash - d->uuid) : 0;
  snprintf(buf, len, "%.*s%s%s", n, d->uuid, n ? "-" : "", u8);
}

static int ledger_arm(bench *b, const char *path, bench_arm *a, tf_err *e) {
  ledger_read r = {.path = path, .want = b->c.name, .last_gen = -1};
  record_cfg best;
  ledger_best_init(&r.best, &b->c.tmpl, path);
  int rc = ledger_scan(path, stderr, ledger_line, &r, e);
  if (rc == 0 && !ledger_best_get(&r.best, &best, NULL, NULL))
    rc = tf_fail(e, TF_EXIT_INPUT, "ledger '%s': no generation recorded yet, so no farm best",
                 path);
  if (rc == 0 && record_cfg_config(&b->c.tmpl, &best, path, "best", &a->cfg, e))
    rc = tf_wrap(e, "ledger '%s': line %ld: the final best (generation %lld) does not fit "
                 "template '%s'", path, r.last_line, r.last_gen, b->c.tmpl.path);
  if (rc == 0 && strcmp(r.hash, b->c.hash) != 0 && strcmp(r.hash, b->c.hash_v1) != 0)
    fprintf(stderr, "tunefarm bench: note: ledger '%s' was written for another version of "
            "campaign '%s' or of its files (campaign_hash differs)\n", path, b->c.name);
  if (rc == 0) {
    char id[32];
    short_uuid(&r.dev, id, sizeof id);
    a->kind = BENCH_TEMPLATE;
    a->ledger = path;
    snprintf(a->label, sizeof a->label, "farm best (%s)", id);
  }
  ledger_best_release(&r.best);
  return rc;
}

/* ---------------------------------------------------------------- committed kernels */

static int cmp_name(const void *x, const void *y) {
  return strcmp(*(char *const *)x, *(char *const *)y);
}

/* Keep kernels/NAME.json when it takes the template's interface (spec_same_interface). */
static int load_kernel(bench *b, const char *dir, const char *name, tf_err *e) {
  char path[2 * SPEC_PATH];
  snprintf(path, sizeof path, "%s/%s", dir, name);
  spec *k = malloc(sizeof *k); /* large: off the stack; moved into b->kernels when kept */
  if (!k) return tf_fail(e, TF_EXIT_FAIL, "bench: out of memory");
  int rc = spec_load(k, path, e), keep = rc == 0 && spec_same_interface(k, &b->c.tmpl);
  if (keep && b->nkernels == BENCH_MAX_KERNELS)
    rc = tf_fail(e, TF_EXIT_FAIL, "folder '%s': more than %d committed kernels take template "
                 "'%s's interface", dir, BENCH_MAX_KERNELS, b->c.tmpl.name);
  if (rc == 0 && keep)
    b->kernels[b->nkernels++] = *k; /* the parsed expressions now belong to b */
  else if (rc == 0 || keep)
    spec_release(k);
  free(k);
  return rc;
}

/* Every kernels/NAME.json that takes the template's interface, in name order; a project
 * without kernels/ has none. */
static int load_kernels(bench *b, tf_err *e) {
  char dir[SPEC_PATH + 16];
  snprintf(dir, sizeof dir, "%s/kernels", b->c.root);
  DIR *d = opendir(dir);
  if (!d && errno == ENOENT) return 0;
  if (!d) return tf_fail(e, TF_EXIT_INPUT, "folder '%s': cannot read: %s", dir, strerror(errno));
  char *names[256];
  int n = 0, rc = 0;
  for (struct dirent *de; n < 256 && (de = readdir(d));) {
    size_t len = strlen(de->d_name);
    if (len <= 5 || de->d_name[0] == '.' || strcmp(de->d_name + len - 5, ".json") != 0) continue;
    if (!(names[n] = strdup(de->d_name))) break;
    n++;
  }
  closedir(d);
  qsort(names, (size_t)n, sizeof *names, cmp_name);
  for (int i = 0; i < n; i++) {
    if (rc == 0) rc = load_kernel(b, dir, names[i], e);
    free(names[i]);
  }
  return rc;
}

/* ---------------------------------------------------------------- arms */

/* Refused at these shapes (never launched): outside a committed kernel's range, a broken
 * constraint, or a launch that cannot be built, as a job would build it. */
static void screen_arm(const bench *b, bench_arm *a) {
  static const config none = {0, {0}};
  const campaign *c = &b->c;
  int kernel = a->kind == BENCH_KERNEL, bad = -1;
  const spec *s = kernel ? a->kernel : &c->tmpl;
  const config *cfg = kernel ? &none : &a->cfg;
  tf_err why = {0};
  for (int d = 0; kernel && d < s->ndims && !why.msg[0]; d++)
    if (c->dims[d] < s->dims[d].lo || c->dims[d] > s->dims[d].hi)
      snprintf(why.msg, sizeof why.msg, "%s=%lld is outside the kernel's range [%lld, %lld]",
               s->dims[d].name, c->dims[d], s->dims[d].lo, s->dims[d].hi);
  if (!why.msg[0] && spec_check(s, c->dims, cfg, &bad, &why) == 0 && bad >= 0)
    snprintf(why.msg, sizeof why.msg, "breaks constraint '%s' at these shapes", s->cons[bad].name);
  job *j = why.msg[0] ? NULL : malloc(sizeof *j);
  if (!why.msg[0] && !j) snprintf(why.msg, sizeof why.msg, "out of memory");
  if (j) {
    if (job_init(j, c, 0, 0, &why) == 0) {
      if (kernel)
        job_set_kernel_arm(j, c, ARM_BEST, s, &why);
      else
        job_set_template_arm(j, c, ARM_BEST, cfg, &why);
    }
    free(j);
  }
  if (why.msg[0]) {
    snprintf(a->note, sizeof a->note, "refused: %s", why.msg);
    a->status = BENCH_REFUSED;
  }
}

/* Flops (or bytes) of one launch from the arm's spec; 0 when the spec has no expression. */
static double arm_work(const bench *b, const bench_arm *a) {
  static const config none = {0, {0}};
  const spec *s = a->kind == BENCH_KERNEL ? a->kernel : &b->c.tmpl;
  const config *cfg = a->kind == BENCH_KERNEL     ? &none
                      : a->kind == BENCH_TEMPLATE ? &a->cfg
                                                  : &b->c.start; /* cuBLAS: the template's count */
  return throughput_work(s, b->unit_flops, b->c.dims, cfg);
}

/* TFLOP/s where the work is compute-bound, else GB/s (tools/throughput.h). */
static void choose_unit(bench *b) {
  b->unit_flops = throughput_unit_flops(&b->c.tmpl, b->c.dims, &b->c.start);
}

/* ---------------------------------------------------------------- the arms the command line names */

static bench_arm *new_arm(bench *b, bench_kind kind, const char *label) {
  bench_arm *a = &b->arms[b->narms++];
  memset(a, 0, sizeof *a);
  a->kind = kind;
  a->status = BENCH_PENDING;
  a->rel_err = NAN;
  snprintf(a->label, sizeof a->label, "%s", label);
  return a;
}

static int build_arms(bench *b, const bench_opts *o, tf_err *e) {
  for (int i = 0; i < o->nledgers; i++)
    if (ledger_arm(b, o->ledgers[i], new_arm(b, BENCH_TEMPLATE, ""), e)) return -1;
  for (int i = 0; i < o->nconfigs; i++)
    if (spec_config_parse(&b->c.tmpl, &b->c.start, o->configs[i], "--config",
                          &new_arm(b, BENCH_TEMPLATE, "config")->cfg, e))
      return -1;
  new_arm(b, BENCH_TEMPLATE, "start")->cfg = b->c.start;
  for (int k = 0; k < b->nkernels; k++) {
    bench_arm *a = new_arm(b, BENCH_KERNEL, "committed kernel");
    a->kernel = &b->kernels[k];
    snprintf(a->what, sizeof a->what, "%s", b->kernels[k].name);
  }
  for (int p = 0; p < b->c.npeers && !o->no_cublas; p++) /* what: bench_measure.c */
    new_arm(b, BENCH_CUBLAS, "cuBLAS")->peer = p;
  choose_unit(b);
  for (int i = 0; i < b->narms; i++) {
    bench_arm *a = &b->arms[i];
    if (a->kind == BENCH_TEMPLATE) spec_config_str(&b->c.tmpl, &a->cfg, a->what, sizeof a->what);
    if (a->kind != BENCH_CUBLAS) screen_arm(b, a);
    a->work = arm_work(b, a);
  }
  return 0;
}

static int load_inputs(bench *b, const bench_opts *o, tf_err *e) {
  if (campaign_load(&b->c, o->campaign, e)) return -1;
  if (o->dims && apply_dims(&b->c, o->dims, e)) return -1;
  if (load_kernels(b, e)) return -1;
  return build_arms(b, o, e);
}

/* ---------------------------------------------------------------- main */

static void utc_now(char *buf, size_t len) {
  time_t now = time(NULL);
  struct tm tm;
  gmtime_r(&now, &tm);
  strftime(buf, len, "%Y-%m-%d %H:%M:%S UTC", &tm);
}

/* 0 when every arm is measured correct, refused or skipped; 1 when one is wrong or failed. */
static int arms_status(const bench *b) {
  for (int i = 0; i < b->narms; i++)
    if (b->arms[i].status == BENCH_WRONG || b->arms[i].status == BENCH_ERROR) return TF_EXIT_FAIL;
  return TF_EXIT_OK;
}

static void release(bench *b) {
  campaign_release(&b->c);
  for (int k = 0; k < b->nkernels; k++) spec_release(&b->kernels[k]);
  free(b);
}

int bench_main(int argc, char **argv) {
  bench_opts o;
  tf_err e = {0};
  int help = 0;
  if (parse_args(argc, argv, &o, &help, &e)) {
    fprintf(stderr, "tunefarm bench: %s\n", e.msg);
    return TF_EXIT_INPUT;
  }
  if (help) {
    usage(stdout);
    return TF_EXIT_OK;
  }
  bench *b = calloc(1, sizeof *b);
  if (!b) {
    fprintf(stderr, "tunefarm bench: out of memory\n");
    return TF_EXIT_FAIL;
  }
  utc_now(b->date, sizeof b->date);
  int rc = load_inputs(b, &o, &e) ? -1 : 0, device_failed = 0;
  if (rc == 0 && bench_measure(b, &o, &e)) {
    rc = -1;
    device_failed = e.code == TF_EXIT_FAIL; /* not TF_NO_DEVICE: it opened */
  }
  if (device_failed) {
    /* The device failed mid-way: what was measured before still goes out, and the arms it
     * never reached say so. */
    for (int i = 0; i < b->narms; i++)
      if (b->arms[i].status == BENCH_PENDING) {
        b->arms[i].status = BENCH_ERROR;
        snprintf(b->arms[i].note, sizeof b->arms[i].note, "not measured: %s", e.msg);
      }
    bench_print(stdout, b, &o);
    fprintf(stderr, "tunefarm bench: %s\n", e.msg);
    rc = TF_EXIT_FAIL;
  } else if (rc == 0) {
    bench_print(stdout, b, &o);
    rc = arms_status(b);
  } else {
    fflush(stdout);
    fprintf(stderr, "tunefarm bench: %s\n", e.msg);
    rc = tf_exit_status(&e);
  }
  release(b);
  return rc;
}
