/* report_t4: `report --t4` and `--t4-metadata FILE` (tools/report_model.h).
 *
 * T4 is the Open Autotuning format Kernel Tuner writes (store_output_file, store_metadata_file)
 * and its dashboard and the autotuning-methodology package read. The results file holds one
 * result per configuration the search evaluated, with the keys and value types of Kernel
 * Tuner's writer, so that those tools read tunefarm's file as they read Kernel Tuner's; every
 * value is one that the first published results schema accepts too (docs/t4/README.md). Times
 * are milliseconds, as Kernel Tuner gives them; `metadata.timeunit` says so. docs/reference/report.md,
 * "--t4", defines every value. */
#include "tools/report_model.h"

#include "common/escape.h"
#include "worker/backend.h" /* defines: backend_simulated */

#include <cjson/cJSON.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <unistd.h>

#define T4_SCHEMA_VERSION "1.0.0"
/* How every metadata file this writer prints begins: `--t4-metadata` replaces an existing
 * file only when it begins so. */
#define T4_META_HEAD                                                    \
  "{\"schema_version\":\"" T4_SCHEMA_VERSION "\",\"metadata\":{\"environment\":" \
  "{\"device_query\":{\"tunefarm\":"

/* ---------------------------------------------------------------- JSON helpers */

typedef report_tree tree;

static cJSON *add(tree *t, cJSON *parent, const char *key, cJSON *item) {
  return report_tree_add(t, parent, key, item);
}

/* T4 has no null: a time the record lacks is 0, as Kernel Tuner writes one it did not take. */
static void num(tree *t, cJSON *o, const char *key, double v) {
  add(t, o, key, cJSON_CreateNumber(isfinite(v) ? v : 0));
}

static void str(tree *t, cJSON *o, const char *key, const char *v) {
  add(t, o, key, cJSON_CreateString(v ? v : ""));
}

/* Print the tree on one line and free it. */
static int emit(FILE *f, tree *t, cJSON *root, const char *what, tf_err *e) {
  char *text = t->oom ? NULL : cJSON_PrintUnformatted(root);
  cJSON_Delete(root);
  if (!text) return tf_fail(e, TF_EXIT_FAIL, "out of memory");
  escape_json(f, text); /* cJSON copies a string's bytes: the rule makes them valid UTF-8 */
  int rc = fputc('\n', f) == EOF || ferror(f) ? -1 : 0;
  free(text);
  return rc ? tf_fail(e, TF_EXIT_FAIL, "cannot write %s", what) : 0;
}

/* ---------------------------------------------------------------- configurations */

/* Why a configuration gave no valid time; T4_CORRECT when it did. */
typedef enum {
  T4_CORRECT, T4_CONSTRAINTS, T4_COMPILE, T4_RUNTIME, T4_TIMEOUT, T4_WRONG
} t4_invalid;
static const char *const t4_invalid_names[] = {"correct", "constraints", "compile", "runtime",
                                               "timeout", "correctness"};

/* One configuration: every evaluation of it in the ledger, gathered. */
typedef struct t4_cfg {
  const record_cfg *cfg;     /* borrowed from a generation */
  const report_gen *first;   /* the generation that first evaluated it: its timestamp, its job */
  t4_invalid invalid;        /* its first failure as new (or refusal); T4_CORRECT: none */
  double *runtimes;          /* ms: its median of every unscreened round of every measured
                              * generation with it as best or new; owned */
  int n, cap;
} t4_cfg;

/* The configurations in order of first evaluation, and an index on their values. */
typedef struct t4_set {
  t4_cfg *v;
  size_t n, cap;
  size_t *slot;              /* open addressing: index + 1 into v, 0 empty; nslot a power of 2 */
  size_t nslot;
} t4_set;

static uint64_t cfg_hash(const record_cfg *c) {
  uint64_t h = 1469598103934665603ULL;
  for (int k = 0; k < c->n; k++) {
    h ^= (uint64_t)c->v[k];
    h *= 1099511628211ULL;
  }
  return h;
}

static int set_rehash(t4_set *s) {
  size_t nslot = s->nslot ? s->nslot * 2 : 64;
  size_t *slot = calloc(nslot, sizeof *slot);
  if (!slot) return -1;
  for (size_t i = 0; i < s->n; i++) {
    size_t j = (size_t)cfg_hash(s->v[i].cfg) & (nslot - 1);
    while (slot[j]) j = (j + 1) & (nslot - 1);
    slot[j] = i + 1;
  }
  free(s->slot);
  s->slot = slot;
  s->nslot = nslot;
  return 0;
}

/* c's entry, added (not yet evaluated: first NULL) when it has none; NULL when out of memory. */
static t4_cfg *set_get(t4_set *s, const record_cfg *c) {
  if ((s->n + 1) * 2 > s->nslot && set_rehash(s)) return NULL;
  size_t j = (size_t)cfg_hash(c) & (s->nslot - 1);
  for (; s->slot[j]; j = (j + 1) & (s->nslot - 1))
    if (record_cfg_equal(s->v[s->slot[j] - 1].cfg, c)) return &s->v[s->slot[j] - 1];
  if (s->n == s->cap) {
    size_t cap = s->cap ? s->cap * 2 : 64;
    t4_cfg *v = realloc(s->v, cap * sizeof *v);
    if (!v) return NULL;
    s->v = v;
    s->cap = cap;
  }
  s->slot[j] = s->n + 1;
  t4_cfg *x = &s->v[s->n++];
  memset(x, 0, sizeof *x);
  x->cfg = c;
  return x;
}

static void set_release(t4_set *s) {
  for (size_t i = 0; i < s->n; i++) free(s->v[i].runtimes);
  free(s->v);
  free(s->slot);
}

/* The rounds of one arm (us, n of them) onto x's runtimes, in ms. */
static int add_rounds(t4_cfg *x, const report_gen *g, const double *us, int n) {
  if (n > 0 && x->n + n > x->cap) {
    int cap = x->cap ? x->cap : 16;
    while (cap < x->n + n) cap *= 2;
    double *v = realloc(x->runtimes, (size_t)cap * sizeof *v);
    if (!v) return -1;
    x->runtimes = v;
    x->cap = cap;
  }
  for (int i = 0; i < n; i++) x->runtimes[x->n++] = us[i] / 1000.0;
  if (!x->first && n > 0) x->first = g; /* no unscreened round: not timed here */
  return 0;
}

/* What one generation says of its new configuration when it gave no valid time. */
static t4_invalid gen_failure(const report_gen *g) {
  if (!g->measured) return T4_CONSTRAINTS;
  switch (g->status) {
    case RESULT_COMPILE_ERROR: return T4_COMPILE;
    case RESULT_FAULT:
      return g->detail && strncmp(g->detail, "timeout", 7) == 0 ? T4_TIMEOUT : T4_RUNTIME;
    case RESULT_ERROR: return T4_RUNTIME;
    default: return g->correct ? T4_CORRECT : T4_WRONG;
  }
}

/* One generation into the set, best before new. A failed job, refusal or failed check is
 * new's: best and the control passed before. */
static int gather_gen(t4_set *s, const report_gen *g) {
  t4_invalid why = gen_failure(g);
  if (why != T4_CORRECT) {
    t4_cfg *nx = set_get(s, &g->new_cfg);
    if (!nx) return -1;
    if (nx->invalid == T4_CORRECT) nx->invalid = why;
    if (!nx->first) nx->first = g;
    return 0;
  }
  t4_cfg *bx = set_get(s, &g->best);
  if (!bx || add_rounds(bx, g, g->best_rounds_us, g->nratios)) return -1;
  t4_cfg *nx = set_get(s, &g->new_cfg); /* after bx: set_get may move the entries */
  return nx && add_rounds(nx, g, g->new_rounds_us, g->nratios) == 0 ? 0 : -1;
}

/* ---------------------------------------------------------------- results */

static int cmp_double(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return (x > y) - (x < y);
}

/* The median of v (n > 0); NAN when out of memory. */
static double median(const double *v, int n) {
  double *c = malloc((size_t)n * sizeof *c);
  if (!c) return NAN;
  memcpy(c, v, (size_t)n * sizeof *c);
  qsort(c, (size_t)n, sizeof *c, cmp_double);
  double m = n % 2 ? c[n / 2] : (c[n / 2 - 1] + c[n / 2]) / 2;
  free(c);
  return m;
}

/* Kernel Tuner's times of one evaluation from the job that first evaluated it, ms: the
 * compile, the rounds (benchmark), the correctness gate (validation), the rest of the
 * measure process's wall (framework: loading modules, buffers and inputs, and the protocol);
 * the coordinator's proposal is not timed per generation (search_algorithm 0). */
static void times_json(tree *t, cJSON *o, const t4_cfg *x) {
  const report_gen *g = x->first;
  int m = g->measured;
  double compile = m && isfinite(g->compile_ms) ? g->compile_ms : 0;
  double bench = m ? 1000.0 * g->times.measure_s : 0, check = m ? 1000.0 * g->times.check_s : 0;
  double rest = m && isfinite(g->wall_s) ? 1000.0 * g->wall_s - compile - bench - check : 0;
  num(t, o, "compilation", compile);
  num(t, o, "benchmark", bench);
  num(t, o, "framework", rest > 0 ? rest : 0);
  num(t, o, "search_algorithm", 0);
  num(t, o, "validation", check);
  cJSON *r = add(t, o, "runtimes", cJSON_CreateArray());
  for (int i = 0; r && x->invalid == T4_CORRECT && i < x->n; i++) num(t, r, NULL, x->runtimes[i]);
}

static void result_json(tree *t, cJSON *arr, const t4_cfg *x) {
  cJSON *o = add(t, arr, NULL, cJSON_CreateObject());
  if (!o) return;
  str(t, o, "timestamp", x->first->time);
  add(t, o, "configuration", record_cfg_to_json(x->cfg));
  times_json(t, add(t, o, "times", cJSON_CreateObject()), x);
  str(t, o, "invalidity", t4_invalid_names[x->invalid]);
  /* Kernel Tuner's 1 unless the correctness check failed: nothing else was found wrong */
  num(t, o, "correctness", x->invalid == T4_WRONG ? 0 : 1);
  cJSON *m = add(t, o, "measurements", cJSON_CreateArray());
  if (m && x->invalid == T4_CORRECT) {
    double v = median(x->runtimes, x->n);
    if (isnan(v)) t->oom = 1;
    cJSON *time = add(t, m, NULL, cJSON_CreateObject());
    str(t, time, "name", "time");
    num(t, time, "value", v);
    str(t, time, "unit", "ms");
  }
  cJSON *obj = add(t, o, "objectives", cJSON_CreateArray());
  str(t, obj, NULL, "time");
}

/* The session-wide fields the autotuning-methodology T4 schema defines; a reader of Kernel
 * Tuner's files passes over them. */
static void results_metadata(tree *t, cJSON *root, const report_ledger *l) {
  cJSON *md = add(t, root, "metadata", cJSON_CreateObject());
  str(t, md, "timeunit", "milliseconds");
  str(t, md, "autotuner", "tunefarm");
  str(t, md, "device", l->dev.name);
  if (!backend_simulated(l->backend)) str(t, md, "compute_api", "CUDA");
  str(t, md, "timestamp", l->created);
}

int report_write_t4(FILE *f, report_ledger *l, size_t n, tf_err *e) {
  if (n != 1) return tf_fail(e, TF_EXIT_INPUT, "--t4 takes one ledger, %zu given", n);
  t4_set s = {0};
  tree t = {0};
  for (size_t j = 0; j < l->ngens && !t.oom; j++)
    if (gather_gen(&s, &l->gens[j])) t.oom = 1;
  cJSON *root = cJSON_CreateObject();
  if (!root) t.oom = 1;
  str(&t, root, "schema_version", T4_SCHEMA_VERSION);
  results_metadata(&t, root, l);
  cJSON *a = add(&t, root, "results", cJSON_CreateArray());
  for (size_t i = 0; a && i < s.n; i++)
    if (s.v[i].first) result_json(&t, a, &s.v[i]); /* only ever best of a failed job: unevaluated */
  set_release(&s);
  if (!root) return tf_fail(e, TF_EXIT_FAIL, "out of memory");
  return emit(f, &t, root, "stdout", e);
}

/* ---------------------------------------------------------------- metadata */

/* "12.4" from CUDA's 12040. */
static void cuda_version(char *buf, size_t len, const char *name, int v) {
  snprintf(buf, len, "%s==%d.%d", name, v / 1000, v % 1000 / 10);
}

/* The libraries the measurements went through, as Kernel Tuner lists its Python packages
 * ("name==version"); none for the simulated device. */
static void requirements(tree *t, cJSON *env, const device_record *d) {
  cJSON *r = add(t, env, "requirements", cJSON_CreateArray());
  if (backend_simulated(d->backend)) return;
  char buf[64];
  cuda_version(buf, sizeof buf, "cuda-driver", d->driver_version);
  str(t, r, NULL, buf);
  cuda_version(buf, sizeof buf, "cuda-runtime", d->runtime_version);
  str(t, r, NULL, buf);
  snprintf(buf, sizeof buf, "nvrtc==%d.%d", d->nvrtc_major, d->nvrtc_minor);
  str(t, r, NULL, buf);
}

/* The device in lshw's terms (its id, class, product, serial and bus), the host it is in. */
static void hardware(tree *t, cJSON *md, const device_record *d) {
  cJSON *hw = add(t, md, "hardware", cJSON_CreateObject());
  cJSON *list = add(t, hw, "hardware_description", cJSON_CreateArray());
  cJSON *gpu = add(t, list, NULL, cJSON_CreateObject());
  char id[32];
  snprintf(id, sizeof id, "gpu%d", d->ordinal);
  str(t, gpu, "id", id);
  str(t, gpu, "class", "display");
  str(t, gpu, "product", d->name);
  str(t, gpu, "serial", d->uuid);
  str(t, gpu, "businfo", d->pci_bus_id);
  str(t, gpu, "host", d->host);
}

int report_write_t4_metadata(FILE *f, const report_ledger *l, tf_err *e) {
  tree t = {0};
  cJSON *root = cJSON_CreateObject();
  if (!root) return tf_fail(e, TF_EXIT_FAIL, "out of memory");
  str(&t, root, "schema_version", T4_SCHEMA_VERSION);
  cJSON *md = add(&t, root, "metadata", cJSON_CreateObject());
  cJSON *env = add(&t, md, "environment", cJSON_CreateObject());
  cJSON *query = add(&t, env, "device_query", cJSON_CreateObject());
  /* what the worker's query of the device gave, as the ledger's first line keeps it */
  add(&t, query, "tunefarm", device_to_json(&l->dev));
  requirements(&t, env, &l->dev);
  hardware(&t, md, &l->dev);
  str(&t, md, "operating_system", "Linux"); /* tunefarm measures on Linux only */
  return emit(f, &t, root, "the metadata file", e);
}

/* ---------------------------------------------------------------- --t4-metadata FILE */

static int is_our_metadata(const char *file) { return report_file_begins(file, T4_META_HEAD); }

int report_t4_check_file(const char *file, char *const *ledgers, size_t n, tf_err *e) {
  size_t len = strlen(file);
  if (len >= 6 && strcasecmp(file + len - 6, ".jsonl") == 0)
    return tf_fail(e, TF_EXIT_INPUT, "--t4-metadata '%s': a ledger's name (*.jsonl), not a "
                   "metadata file's; the file follows --t4-metadata (--t4-metadata "
                   "run_metadata.json LEDGER)", file);
  struct stat st, lt;
  if (stat(file, &st) != 0) return 0;
  for (size_t i = 0; i < n; i++)
    if (stat(ledgers[i], &lt) == 0 && lt.st_dev == st.st_dev && lt.st_ino == st.st_ino)
      return tf_fail(e, TF_EXIT_INPUT, "--t4-metadata '%s': that is ledger '%s', given to read",
                     file, ledgers[i]);
  if (S_ISDIR(st.st_mode))
    return tf_fail(e, TF_EXIT_INPUT, "--t4-metadata '%s': a folder, not a file", file);
  if (!is_our_metadata(file))
    return tf_fail(e, TF_EXIT_INPUT, "--t4-metadata '%s': the file exists and is not a T4 "
                   "metadata file of tunefarm report, which would replace it: name a new file, "
                   "or move it aside", file);
  return 0;
}

int report_t4_write_metadata_file(const char *file, const report_ledger *l, tf_err *e) {
  char tmp[PATH_MAX];
  if (snprintf(tmp, sizeof tmp, "%s.tmp%ld", file, (long)getpid()) >= (int)sizeof tmp)
    return tf_fail(e, TF_EXIT_INPUT, "--t4-metadata '%s': path too long", file);
  int fd = open(tmp, O_WRONLY | O_CREAT | O_EXCL, 0666); /* an existing one is someone else's */
  FILE *f = fd < 0 ? NULL : fdopen(fd, "w");
  if (!f) {
    if (fd >= 0) close(fd), unlink(tmp);
    return tf_fail(e, TF_EXIT_FAIL, "--t4-metadata '%s': %s", file, strerror(errno));
  }
  int rc = report_write_t4_metadata(f, l, e);
  if (fclose(f) != 0 && rc == 0)
    rc = tf_fail(e, TF_EXIT_FAIL, "--t4-metadata '%s': %s", file, strerror(errno));
  if (rc == 0 && rename(tmp, file) != 0)
    rc = tf_fail(e, TF_EXIT_FAIL, "--t4-metadata '%s': %s", file, strerror(errno));
  if (rc) unlink(tmp);
  return rc;
}
