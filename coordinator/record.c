/* record: the ledger line codec (coordinator/record.h).
 *
 * Each kind has one writer and one reader side by side, in the order the writer puts the
 * keys. The readers go through jsonio's typed getters with no file named (what NULL), so a
 * message starts at the key and the ledger's reader puts the file and the line in front. */
#include "coordinator/record.h"

#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/jsonio.h" /* defines: jsonio_int, jsonio_str, jsonio_child, jsonio_only_keys, ... */

const char *const record_kind_names[RECORD_KINDS] = {"device", "generation", "restart", "end",
                                                     "reopen", "versions"};

static const char *const status_names[] = {"ok", "fault", "compile_error", "error", NULL};

static const char *const device_keys[] = {"type", "schema_version", "device", "campaign",
                                          "campaign_path", "root", "campaign_hash", "backend",
                                          "created", "tunefarm", "mode", NULL};
static const char *const gen_keys[] = {
    "type", "generation", "device", "backend", "simulated", "time", "rule", "restart", "duel",
    "best", "new", "change", "rounds", "ratios", "median_ratio", "kernel_median_ratio",
    "control_drift", "min_gain", "drift_tolerance", "correct", "rel_err", "checked", "status",
    "detail",
    "decision", "reason", "constraint", "stats", "screened", "burn_in", "samples",
    "samples_wanted", "launch_spread", "compile_ms",
    "cache_hit", "wall_s", "times", "elapsed_s", "child", "run", "canary", "untrusted", "job",
    NULL};
static const char *const restart_keys[] = {"type", "restart", "generation", "champion",
                                           "champion_us", "start", "reason", NULL};
static const char *const end_keys[] = {"type", "reason", "generation", "best", NULL};
static const char *const reopen_keys[] = {"type", "generation", "reason", NULL};
static const char *const versions_keys[] = {"type", "generation", "time", "driver_version",
                                            "runtime_version", "nvrtc_version", "reason", NULL};
static const char *const canary_keys[] = {"child", "verdict", "ratio", "kernel_ratio",
                                          "interval", "kernel_interval", "threshold", "reason",
                                          "rounds", NULL};

const char *const *record_keys(record_kind kind) {
  static const char *const *const keys[RECORD_KINDS] = {device_keys, gen_keys, restart_keys,
                                                         end_keys, reopen_keys, versions_keys};
  return kind >= 0 && kind < RECORD_KINDS ? keys[kind] : NULL;
}

record *record_new(void) { return calloc(1, sizeof(record)); }

void record_release(record *r) {
  if (!r) return;
  cJSON_Delete(r->gen.stats);
  cJSON_Delete(r->gen.job);
  memset(r, 0, sizeof *r);
}

void record_free(record *r) {
  record_release(r);
  free(r);
}

/* ---------------------------------------------------------------- configurations */

void record_cfg_of(const spec *s, const config *c, record_cfg *out) {
  memset(out, 0, sizeof *out);
  out->n = s->nknobs;
  for (int k = 0; k < s->nknobs; k++) { /* a knob's name fits: spec.c refuses longer ones */
    size_t n = strnlen(s->knobs[k].name, SPEC_NAME - 1);
    memcpy(out->name[k], s->knobs[k].name, n);
    out->name[k][n] = '\0';
    out->v[k] = k < c->n ? c->v[k] : 0;
  }
}

cJSON *record_cfg_to_json(const record_cfg *c) {
  cJSON *o = cJSON_CreateObject();
  for (int k = 0; o && k < c->n; k++) cJSON_AddNumberToObject(o, c->name[k], (double)c->v[k]);
  return o;
}

int record_cfg_config(const spec *s, const record_cfg *rc, const char *file, const char *where,
                      config *out, tf_err *e) {
  cJSON *o = record_cfg_to_json(rc);
  if (!o) return tf_fail(e, TF_EXIT_FAIL, "out of memory");
  int rc2 = spec_config_from_json(s, o, "ledger", file, where, out, e);
  cJSON_Delete(o);
  return rc2;
}

int record_cfg_equal(const record_cfg *a, const record_cfg *b) {
  if (a->n != b->n) return 0;
  for (int k = 0; k < a->n; k++)
    if (a->v[k] != b->v[k] || strcmp(a->name[k], b->name[k]) != 0) return 0;
  return 1;
}

void record_cfg_text(const record_cfg *c, char *buf, size_t len) {
  size_t n = 0;
  if (len) buf[0] = '\0';
  for (int k = 0; k < c->n && n < len; k++)
    n += (size_t)snprintf(buf + n, len - n, "%s%s=%lld", k ? ", " : "", c->name[k], c->v[k]);
}

static void add_cfg(cJSON *o, const char *key, const record_cfg *c) {
  cJSON_AddItemToObject(o, key, record_cfg_to_json(c));
}

/* {"BM": 64, ...}: every value a whole number, at most SPEC_MAX_KNOBS knobs. */
static int cfg_from(const cJSON *o, const char *key, int req, record_cfg *out, tf_err *e) {
  const cJSON *obj, *it;
  memset(out, 0, sizeof *out);
  if (jsonio_child(NULL, NULL, o, "", key, req, cJSON_Object, &obj, e)) return -1;
  cJSON_ArrayForEach(it, obj) {
    if (out->n == SPEC_MAX_KNOBS)
      return tf_fail(e, TF_EXIT_INPUT, "key '%s' has more than %d knobs", key, SPEC_MAX_KNOBS);
    if (strlen(it->string) >= SPEC_NAME ||
        jsonio_int(NULL, NULL, obj, key, it->string, 1, LLONG_MIN, LLONG_MAX, &out->v[out->n], e))
      return tf_fail(e, TF_EXIT_INPUT, "key '%s.%.60s' must be a knob's whole number", key,
                     it->string);
    snprintf(out->name[out->n++], SPEC_NAME, "%s", it->string);
  }
  return 0;
}

/* {"knob": [from, to], ...} for every knob best and new set differently. */
static cJSON *change_json(const record_cfg *from, const record_cfg *to) {
  cJSON *o = cJSON_CreateObject();
  for (int k = 0; k < from->n && k < to->n; k++)
    if (from->v[k] != to->v[k]) {
      cJSON *pair = cJSON_AddArrayToObject(o, from->name[k]);
      cJSON_AddItemToArray(pair, cJSON_CreateNumber((double)from->v[k]));
      cJSON_AddItemToArray(pair, cJSON_CreateNumber((double)to->v[k]));
    }
  return o;
}

/* "change" must say exactly what best and new say. */
static int check_change(const cJSON *o, const record_gen *g, tf_err *e) {
  const cJSON *change;
  if (jsonio_child(NULL, NULL, o, "", "change", 1, cJSON_Object, &change, e)) return -1;
  int same_knobs = g->best.n == g->new_cfg.n;
  for (int k = 0; same_knobs && k < g->best.n; k++)
    same_knobs = strcmp(g->best.name[k], g->new_cfg.name[k]) == 0;
  cJSON *want = same_knobs ? change_json(&g->best, &g->new_cfg) : NULL;
  int ok = want && cJSON_Compare(want, change, 1);
  cJSON_Delete(want);
  if (!same_knobs)
    return tf_fail(e, TF_EXIT_INPUT, "keys 'best' and 'new' must name the same knobs in order");
  return ok ? 0 : tf_fail(e, TF_EXIT_INPUT, "key 'change' is not the difference of 'best' and "
                                            "'new'");
}

/* ---------------------------------------------------------------- small readers */

static int str_into(const cJSON *o, const char *where, const char *key, int req, char *dst,
                    size_t len, tf_err *e) {
  const char *s = NULL;
  if (jsonio_str(NULL, NULL, o, where, key, req, len - 1, &s, e)) return -1;
  snprintf(dst, len, "%s", s ? s : "");
  return 0;
}

static int int_into(const cJSON *o, const char *key, int req, long long lo, long long hi,
                    long long *out, tf_err *e) {
  return jsonio_int(NULL, NULL, o, "", key, req, lo, hi, out, e);
}

/* A number, or null (what the writer puts for a value that is not finite): NAN, or `null`. */
static int num_or_null(const cJSON *o, const char *where, const char *key, int req, double null,
                       double *out, tf_err *e) {
  const cJSON *it = cJSON_GetObjectItemCaseSensitive(o, key);
  char k[256];
  if (!it && !req) return 0;
  if (!it) return tf_fail(e, TF_EXIT_INPUT, "key '%s' is missing", jsonio_key(k, sizeof k, where, key));
  if (cJSON_IsNull(it)) return *out = null, 0;
  if (!cJSON_IsNumber(it))
    return tf_fail(e, TF_EXIT_INPUT, "key '%s' must be a number or null",
                   jsonio_key(k, sizeof k, where, key));
  *out = it->valuedouble;
  return 0;
}

/* The index of the string at key in names (NULL-terminated). */
static int choice(const cJSON *o, const char *where, const char *key, const char *const *names,
                  int *out, tf_err *e) {
  char k[256], known[160] = "";
  const char *s = NULL;
  if (jsonio_str(NULL, NULL, o, where, key, 1, 64, &s, e)) return -1;
  for (int i = 0; names[i]; i++) {
    if (strcmp(names[i], s) == 0) return *out = i, 0;
    snprintf(known + strlen(known), sizeof known - strlen(known), "%s\"%s\"", i ? ", " : "",
             names[i]);
  }
  return tf_fail(e, TF_EXIT_INPUT, "key '%s' must be one of %s", jsonio_key(k, sizeof k, where, key),
                 known);
}

static int type_of(const cJSON *o, record_kind *kind, tf_err *e) {
  int k = 0;
  static const char *const names[RECORD_KINDS + 1] = {"device", "generation", "restart", "end",
                                                      "reopen", "versions", NULL};
  if (choice(o, "", "type", names, &k, e)) return -1;
  *kind = (record_kind)k;
  return 0;
}

/* ---------------------------------------------------------------- device */

/* A new line of the kind: {"type": "<kind>"}. */
static cJSON *typed(record_kind kind) {
  cJSON *o = cJSON_CreateObject();
  cJSON_AddStringToObject(o, "type", record_kind_names[kind]);
  return o;
}

static cJSON *device_to(const record_device *d) {
  cJSON *o = typed(RECORD_DEVICE);
  cJSON_AddNumberToObject(o, "schema_version", d->schema_version);
  cJSON_AddItemToObject(o, "device", device_to_json(&d->dev));
  cJSON_AddStringToObject(o, "campaign", d->campaign);
  cJSON_AddStringToObject(o, "campaign_path", d->campaign_path);
  if (d->root[0]) cJSON_AddStringToObject(o, "root", d->root);
  cJSON_AddStringToObject(o, "campaign_hash", d->campaign_hash);
  cJSON_AddStringToObject(o, "backend", d->backend);
  cJSON_AddStringToObject(o, "created", d->created);
  cJSON_AddStringToObject(o, "tunefarm", d->tunefarm);
  if (d->mode[0]) cJSON_AddStringToObject(o, "mode", d->mode);
  return o;
}

static int device_from(const cJSON *o, record_device *d, tf_err *e) {
  long long v = 1;
  const cJSON *dev;
  if (int_into(o, "schema_version", 0, 1, RECORD_SCHEMA_VERSION, &v, e) ||
      str_into(o, "", "campaign", 1, d->campaign, sizeof d->campaign, e) ||
      str_into(o, "", "campaign_path", 1, d->campaign_path, sizeof d->campaign_path, e) ||
      str_into(o, "", "root", 0, d->root, sizeof d->root, e) ||
      str_into(o, "", "campaign_hash", 1, d->campaign_hash, sizeof d->campaign_hash, e) ||
      str_into(o, "", "backend", 1, d->backend, sizeof d->backend, e) ||
      str_into(o, "", "created", 1, d->created, sizeof d->created, e) ||
      str_into(o, "", "tunefarm", 1, d->tunefarm, sizeof d->tunefarm, e) ||
      str_into(o, "", "mode", 0, d->mode, sizeof d->mode, e) ||
      jsonio_child(NULL, NULL, o, "", "device", 1, cJSON_Object, &dev, e))
    return -1;
  d->schema_version = (int)v;
  if (device_from_json(dev, &d->dev, e) == 0) return 0;
  if (e) e->code = TF_EXIT_INPUT; /* a bad file, whatever the device codec calls it */
  return tf_wrap(e, "key 'device'");
}

/* ---------------------------------------------------------------- generation: writing */

/* Measured and derived values are written exactly (common/jsonio.h): the proposer reads
 * median_ratio back on resume, and verify recomputes every decision from the rounds. */
static cJSON *num_array(const double *x, int n) {
  cJSON *a = cJSON_CreateArray();
  for (int i = 0; i < n; i++) cJSON_AddItemToArray(a, jsonio_exact(x[i]));
  return a;
}

static cJSON *canary_to(const canary_verdict *v, const result *r) {
  cJSON *o = cJSON_CreateObject();
  cJSON_AddNumberToObject(o, "child", v->child);
  cJSON_AddStringToObject(o, "verdict", v->biased ? "biased" : "ok");
  jsonio_add_exact(o, "ratio", v->ratio[0]);
  jsonio_add_exact(o, "kernel_ratio", v->ratio[1]);
  cJSON *iv = cJSON_AddArrayToObject(o, "interval");
  cJSON *kv = cJSON_AddArrayToObject(o, "kernel_interval");
  for (int i = 0; i < 2; i++) {
    double a = i ? v->hi[0] : v->lo[0], b = i ? v->hi[1] : v->lo[1];
    cJSON_AddItemToArray(iv, jsonio_exact(a));
    cJSON_AddItemToArray(kv, jsonio_exact(b));
  }
  cJSON_AddNumberToObject(o, "threshold", v->threshold);
  cJSON_AddStringToObject(o, "reason", v->reason);
  cJSON *rounds = cJSON_AddArrayToObject(o, "rounds");
  for (int i = 0; i < r->ncanary; i++)
    cJSON_AddItemToArray(rounds, canary_round_to_json(&r->canary[i]));
  return o;
}

static void measured_to(cJSON *o, const record_gen *g) {
  const result *r = &g->res;
  cJSON *rounds = cJSON_AddArrayToObject(o, "rounds");
  for (int i = 0; i < r->nrounds; i++) cJSON_AddItemToArray(rounds, round_to_json(&r->rounds[i]));
  cJSON_AddItemToObject(o, "ratios", num_array(g->ratios, g->nratios));
  jsonio_add_exact(o, "median_ratio", g->median_ratio);
  jsonio_add_exact(o, "kernel_median_ratio", g->kernel_median_ratio);
  jsonio_add_exact(o, "control_drift", g->control_drift);
  cJSON_AddNumberToObject(o, "min_gain", g->min_gain);
  cJSON_AddNumberToObject(o, "drift_tolerance", g->drift_tolerance);
  cJSON_AddBoolToObject(o, "correct", r->correct);
  cJSON *err = cJSON_AddObjectToObject(o, "rel_err");
  for (int a = 0; a < ARM_COUNT; a++) jsonio_add_exact(err, arm_names[a], r->rel_err[a]);
  if (r->checked >= 0) cJSON_AddItemToObject(o, "checked", checked_to_json(r->checked));
  cJSON_AddStringToObject(o, "status", status_names[r->status]);
  if (r->detail[0]) cJSON_AddStringToObject(o, "detail", r->detail);
}

/* An object of the record in the tree to print, without a copy: a reference to its members,
 * which deleting the tree leaves alone (the tree lives only to be printed). */
static cJSON *share(const cJSON *obj) {
  return cJSON_IsObject(obj) ? cJSON_CreateObjectReference(obj->child) : cJSON_Duplicate(obj, 1);
}

static void measured_tail(cJSON *o, const record_gen *g) {
  const result *r = &g->res;
  if (g->stats) cJSON_AddItemToObject(o, "stats", share(g->stats));
  cJSON_AddNumberToObject(o, "screened", g->screened);
  cJSON_AddNumberToObject(o, "burn_in", r->burn_in);
  if (r->samples > 0) {
    cJSON_AddNumberToObject(o, "samples", r->samples);
    cJSON_AddNumberToObject(o, "samples_wanted", r->samples_wanted);
    if (isfinite(r->launch_spread)) jsonio_add_exact(o, "launch_spread", r->launch_spread);
  }
  jsonio_add_exact(o, "compile_ms", r->compile_ms);
  cJSON_AddBoolToObject(o, "cache_hit", r->cache_hit);
  jsonio_add_exact(o, "wall_s", r->wall_s);
  const result_times *t = &r->times; /* none in a fault the worker wrote */
  if (t->compile_s > 0 || t->load_s > 0 || t->check_s > 0 || t->measure_s > 0)
    cJSON_AddItemToObject(o, "times", result_times_to_json(t));
  if (g->elapsed_s > 0) jsonio_add_exact(o, "elapsed_s", g->elapsed_s);
  if (r->child > 0) {
    cJSON_AddNumberToObject(o, "child", r->child);
    cJSON_AddStringToObject(o, "run", g->run);
  }
  if (g->has_canary) cJSON_AddItemToObject(o, "canary", canary_to(&g->canary, r));
  if (g->untrusted) cJSON_AddBoolToObject(o, "untrusted", 1);
  /* last: the record's longest part */
  if (g->job) cJSON_AddItemToObject(o, "job", share(g->job));
}

static cJSON *gen_to(const record_gen *g) {
  cJSON *o = typed(RECORD_GENERATION);
  cJSON_AddNumberToObject(o, "generation", (double)g->generation);
  cJSON_AddStringToObject(o, "device", g->device);
  cJSON_AddStringToObject(o, "backend", g->backend);
  if (g->simulated) cJSON_AddBoolToObject(o, "simulated", 1);
  cJSON_AddStringToObject(o, "time", g->time);
  cJSON_AddStringToObject(o, "rule", g->rule);
  if (g->restart > 0) cJSON_AddNumberToObject(o, "restart", g->restart);
  if (g->duel) cJSON_AddBoolToObject(o, "duel", 1);
  add_cfg(o, "best", &g->best);
  add_cfg(o, "new", &g->new_cfg);
  cJSON_AddItemToObject(o, "change", change_json(&g->best, &g->new_cfg));
  if (g->measured) measured_to(o, g);
  cJSON_AddStringToObject(o, "decision", decision_names[g->decision]);
  cJSON_AddStringToObject(o, "reason", g->reason);
  if (g->measured)
    measured_tail(o, g);
  else
    cJSON_AddStringToObject(o, "constraint", g->constraint);
  return o;
}

/* ---------------------------------------------------------------- generation: reading */

static int rounds_from(const cJSON *o, result *r, tf_err *e) {
  const cJSON *rounds, *it;
  if (jsonio_child(NULL, NULL, o, "", "rounds", 1, cJSON_Array, &rounds, e)) return -1;
  cJSON_ArrayForEach(it, rounds) {
    if (r->nrounds == MSG_MAX_ROUNDS)
      return tf_fail(e, TF_EXIT_INPUT, "key 'rounds' has more than %d rounds", MSG_MAX_ROUNDS);
    if (round_from_json(it, &r->rounds[r->nrounds]))
      return tf_fail(e, TF_EXIT_INPUT, "key 'rounds': round %d is malformed", r->nrounds + 1);
    r->nrounds++;
  }
  return 0;
}

static int ratios_from(const cJSON *o, record_gen *g, tf_err *e) {
  const cJSON *a, *it;
  if (jsonio_child(NULL, NULL, o, "", "ratios", 1, cJSON_Array, &a, e)) return -1;
  cJSON_ArrayForEach(it, a) {
    if (g->nratios == MSG_MAX_ROUNDS || !(cJSON_IsNumber(it) || cJSON_IsNull(it)))
      return tf_fail(e, TF_EXIT_INPUT, "key 'ratios' must be at most %d numbers", MSG_MAX_ROUNDS);
    g->ratios[g->nratios++] = cJSON_IsNumber(it) ? it->valuedouble : NAN;
  }
  return 0;
}

static int rel_err_from(const cJSON *o, result *r, tf_err *e) {
  static const char *const keys[] = {"best", "new", "control", NULL};
  const cJSON *err;
  if (jsonio_child(NULL, NULL, o, "", "rel_err", 1, cJSON_Object, &err, e) ||
      jsonio_only_keys(NULL, NULL, err, "rel_err", keys, e))
    return -1;
  for (int a = 0; a < ARM_COUNT; a++) /* null: not finite, as a failed check reads */
    if (num_or_null(err, "rel_err", arm_names[a], 1, INFINITY, &r->rel_err[a], e)) return -1;
  return 0;
}

/* [lo, hi], either may be null (an interval without a bound). */
static int interval_from(const cJSON *c, const char *key, double *lo, double *hi, tf_err *e) {
  const cJSON *a;
  if (jsonio_child(NULL, NULL, c, "canary", key, 1, cJSON_Array, &a, e)) return -1;
  const cJSON *x = cJSON_GetArrayItem(a, 0), *y = cJSON_GetArrayItem(a, 1);
  if (cJSON_GetArraySize(a) != 2 || !(cJSON_IsNumber(x) || cJSON_IsNull(x)) ||
      !(cJSON_IsNumber(y) || cJSON_IsNull(y)))
    return tf_fail(e, TF_EXIT_INPUT, "key 'canary.%s' must be two numbers [lo, hi]", key);
  *lo = cJSON_IsNumber(x) ? x->valuedouble : -INFINITY;
  *hi = cJSON_IsNumber(y) ? y->valuedouble : INFINITY;
  return 0;
}

static int canary_from(const cJSON *o, record_gen *g, tf_err *e) {
  static const char *const verdicts[] = {"ok", "biased", NULL};
  const cJSON *c, *rounds, *it;
  canary_verdict *v = &g->canary;
  long long child = 0;
  int biased = 0;
  if (jsonio_child(NULL, NULL, o, "", "canary", 0, cJSON_Object, &c, e)) return -1;
  if (!c) return 0;
  g->has_canary = 1;
  if (jsonio_only_keys(NULL, NULL, c, "canary", canary_keys, e) ||
      jsonio_int(NULL, NULL, c, "canary", "child", 1, 0, INT_MAX, &child, e) ||
      choice(c, "canary", "verdict", verdicts, &biased, e) ||
      num_or_null(c, "canary", "ratio", 1, NAN, &v->ratio[0], e) ||
      num_or_null(c, "canary", "kernel_ratio", 1, NAN, &v->ratio[1], e) ||
      interval_from(c, "interval", &v->lo[0], &v->hi[0], e) ||
      interval_from(c, "kernel_interval", &v->lo[1], &v->hi[1], e) ||
      jsonio_num(NULL, NULL, c, "canary", "threshold", 1, 0.0, 1.0, &v->threshold, e) ||
      str_into(c, "canary", "reason", 1, v->reason, sizeof v->reason, e) ||
      jsonio_child(NULL, NULL, c, "canary", "rounds", 1, cJSON_Array, &rounds, e))
    return -1;
  v->child = (int)child;
  v->biased = biased;
  result *r = &g->res;
  cJSON_ArrayForEach(it, rounds) {
    if (r->ncanary == MSG_MAX_CANARY || canary_round_from_json(it, &r->canary[r->ncanary]))
      return tf_fail(e, TF_EXIT_INPUT, "key 'canary.rounds': round %d is malformed",
                     r->ncanary + 1);
    r->ncanary++;
  }
  v->n = r->ncanary;
  return 0;
}

/* The job as sent: it must read as a job (`tunefarm measure` reruns it). */
static int job_from(const cJSON *o, record_gen *g, tf_err *e) {
  const cJSON *j;
  if (jsonio_child(NULL, NULL, o, "", "job", 1, cJSON_Object, &j, e)) return -1;
  g->job = cJSON_Duplicate(j, 1);
  if (!g->job) return tf_fail(e, TF_EXIT_FAIL, "out of memory");
  job *scratch = malloc(sizeof *scratch);
  if (!scratch) return tf_fail(e, TF_EXIT_FAIL, "out of memory");
  int rc = record_job(g, scratch, e);
  free(scratch);
  return rc;
}

/* "times": optional (records written before it existed have none). */
static int times_from(const cJSON *o, result *r, tf_err *e) {
  if (result_times_from_json(cJSON_GetObjectItemCaseSensitive(o, "times"), &r->times))
    return tf_fail(e, TF_EXIT_INPUT, "key 'times' must map compile_s, compile_wait_s, load_s, "
                   "check_s and measure_s to seconds");
  return 0;
}

/* "checked" (absent in records written before it: unknown, -1). */
static int checked_from(const cJSON *o, result *r, tf_err *e) {
  const cJSON *c = cJSON_GetObjectItemCaseSensitive(o, "checked");
  r->checked = -1;
  if (c && checked_from_json(c, &r->checked))
    return tf_fail(e, TF_EXIT_INPUT, "key 'checked' must be an array of arm names (best, new, "
                   "control)");
  return 0;
}

static int measured_from(const cJSON *o, record_gen *g, tf_err *e) {
  result *r = &g->res;
  long long screened = 0, burn_in = 0, child = 0, samples = 0, wanted = 0;
  int status = 0;
  const cJSON *stats;
  r->launch_spread = NAN;
  if (rounds_from(o, r, e) || ratios_from(o, g, e) ||
      num_or_null(o, "", "median_ratio", 1, NAN, &g->median_ratio, e) ||
      num_or_null(o, "", "kernel_median_ratio", 1, NAN, &g->kernel_median_ratio, e) ||
      num_or_null(o, "", "control_drift", 1, NAN, &g->control_drift, e) ||
      jsonio_num(NULL, NULL, o, "", "min_gain", 1, 0.0, 1.0, &g->min_gain, e) ||
      jsonio_num(NULL, NULL, o, "", "drift_tolerance", 1, 0.0, 1.0, &g->drift_tolerance, e) ||
      jsonio_bool(NULL, NULL, o, "", "correct", 1, &r->correct, e) || rel_err_from(o, r, e) ||
      checked_from(o, r, e) || choice(o, "", "status", status_names, &status, e) ||
      str_into(o, "", "detail", 0, r->detail, sizeof r->detail, e) ||
      jsonio_child(NULL, NULL, o, "", "stats", 0, cJSON_Object, &stats, e) ||
      int_into(o, "screened", 1, 0, MSG_MAX_ROUNDS, &screened, e) ||
      int_into(o, "burn_in", 1, 0, INT_MAX, &burn_in, e) ||
      int_into(o, "samples", 0, 0, INT_MAX, &samples, e) ||
      int_into(o, "samples_wanted", 0, 0, INT_MAX, &wanted, e) ||
      jsonio_num(NULL, NULL, o, "", "launch_spread", 0, 0.0, 1e12, &r->launch_spread, e) ||
      jsonio_num(NULL, NULL, o, "", "compile_ms", 1, 0.0, 1e12, &r->compile_ms, e) ||
      jsonio_bool(NULL, NULL, o, "", "cache_hit", 1, &r->cache_hit, e) ||
      jsonio_num(NULL, NULL, o, "", "wall_s", 1, 0.0, 1e12, &r->wall_s, e) || times_from(o, r, e) ||
      jsonio_num(NULL, NULL, o, "", "elapsed_s", 0, 0.0, 1e12, &g->elapsed_s, e) ||
      int_into(o, "child", 0, 0, INT_MAX, &child, e) ||
      str_into(o, "", "run", 0, g->run, sizeof g->run, e) || canary_from(o, g, e) ||
      jsonio_bool(NULL, NULL, o, "", "untrusted", 0, &g->untrusted, e) || job_from(o, g, e))
    return -1;
  r->status = (result_status)status;
  g->screened = (int)screened;
  r->burn_in = (int)burn_in;
  r->samples = (int)samples;
  r->samples_wanted = (int)wanted;
  r->child = (int)child;
  if (stats && !(g->stats = cJSON_Duplicate(stats, 1)))
    return tf_fail(e, TF_EXIT_FAIL, "out of memory");
  return 0;
}

static int gen_from(const cJSON *o, record_gen *g, tf_err *e) {
  long long v = 0;
  int dec = 0;
  if (int_into(o, "generation", 1, 1, LLONG_MAX, &g->generation, e) ||
      str_into(o, "", "device", 1, g->device, sizeof g->device, e) ||
      str_into(o, "", "backend", 1, g->backend, sizeof g->backend, e) ||
      jsonio_bool(NULL, NULL, o, "", "simulated", 0, &g->simulated, e) ||
      str_into(o, "", "time", 1, g->time, sizeof g->time, e) ||
      str_into(o, "", "rule", 1, g->rule, sizeof g->rule, e) ||
      int_into(o, "restart", 0, 1, INT_MAX, &v, e) ||
      jsonio_bool(NULL, NULL, o, "", "duel", 0, &g->duel, e) ||
      cfg_from(o, "best", 1, &g->best, e) || cfg_from(o, "new", 1, &g->new_cfg, e) ||
      check_change(o, g, e) || choice(o, "", "decision", decision_names, &dec, e) ||
      str_into(o, "", "reason", 1, g->reason, sizeof g->reason, e))
    return -1;
  g->restart = (int)v;
  g->decision = (decision_kind)dec;
  /* A measured generation has a status; a static refusal has none, and names its constraint. */
  g->measured = cJSON_GetObjectItemCaseSensitive(o, "status") != NULL;
  if (g->measured) return measured_from(o, g, e);
  static const char *const refusal[] = {"type", "generation", "device", "backend", "simulated",
                                        "time", "rule", "restart", "duel", "best", "new",
                                        "change", "decision", "reason", "constraint", NULL};
  if (jsonio_only_keys(NULL, NULL, o, "", refusal, e) ||
      str_into(o, "", "constraint", 1, g->constraint, sizeof g->constraint, e))
    return tf_wrap(e, "a static refusal (no 'status')");
  if (g->decision != DECISION_REFUSED)
    return tf_fail(e, TF_EXIT_INPUT, "key 'decision' of a static refusal (no 'status') must be "
                                     "\"refused\"");
  return 0;
}

/* ---------------------------------------------------------------- restart and end */

static cJSON *restart_to(const record_restart *r) {
  cJSON *o = typed(RECORD_RESTART);
  cJSON_AddNumberToObject(o, "restart", r->restart);
  cJSON_AddNumberToObject(o, "generation", (double)r->generation);
  add_cfg(o, "champion", &r->champion);
  jsonio_add_exact(o, "champion_us", r->champion_us);
  add_cfg(o, "start", &r->start);
  cJSON_AddStringToObject(o, "reason", r->reason);
  return o;
}

static int restart_from(const cJSON *o, record_restart *r, tf_err *e) {
  long long k = 0;
  if (int_into(o, "restart", 1, 1, INT_MAX, &k, e) ||
      int_into(o, "generation", 1, 0, LLONG_MAX, &r->generation, e) ||
      cfg_from(o, "champion", 1, &r->champion, e) ||
      num_or_null(o, "", "champion_us", 1, NAN, &r->champion_us, e) ||
      cfg_from(o, "start", 1, &r->start, e) ||
      str_into(o, "", "reason", 1, r->reason, sizeof r->reason, e))
    return -1;
  r->restart = (int)k;
  return 0;
}

/* The answer of a finished search. */
static cJSON *end_to(const record_end *r) {
  cJSON *o = typed(RECORD_END), *best = record_cfg_to_json(&r->best);
  cJSON_AddStringToObject(o, "reason", r->reason);
  cJSON_AddNumberToObject(o, "generation", (double)r->generation);
  cJSON_AddItemToObject(o, "best", best);
  return o;
}

static int end_from(const cJSON *o, record_end *r, tf_err *e) {
  return str_into(o, "", "reason", 1, r->reason, sizeof r->reason, e) ||
                 int_into(o, "generation", 1, 0, LLONG_MAX, &r->generation, e) ||
                 cfg_from(o, "best", 1, &r->best, e)
             ? -1
             : 0;
}

static cJSON *reopen_to(const record_reopen *r) {
  cJSON *o = typed(RECORD_REOPEN);
  cJSON_AddNumberToObject(o, "generation", (double)r->generation);
  cJSON_AddStringToObject(o, "reason", r->reason);
  return o;
}

static int reopen_from(const cJSON *o, record_reopen *r, tf_err *e) {
  return int_into(o, "generation", 1, 0, LLONG_MAX, &r->generation, e) ||
                 str_into(o, "", "reason", 1, r->reason, sizeof r->reason, e)
             ? -1
             : 0;
}

static cJSON *versions_to(const record_versions *r) {
  cJSON *o = typed(RECORD_VERSIONS);
  char nv[32];
  snprintf(nv, sizeof nv, "%d.%d", r->nvrtc_major, r->nvrtc_minor);
  cJSON_AddNumberToObject(o, "generation", (double)r->generation);
  cJSON_AddStringToObject(o, "time", r->time);
  cJSON_AddNumberToObject(o, "driver_version", r->driver_version);
  cJSON_AddNumberToObject(o, "runtime_version", r->runtime_version);
  cJSON_AddStringToObject(o, "nvrtc_version", nv);
  cJSON_AddStringToObject(o, "reason", r->reason);
  return o;
}

/* "MAJOR.MINOR", as the device record writes NVRTC's version. */
static int nvrtc_from(const cJSON *o, record_versions *r, tf_err *e) {
  static const char digits[] = "0123456789";
  char nv[32];
  if (str_into(o, "", "nvrtc_version", 1, nv, sizeof nv, e)) return -1;
  size_t a = strspn(nv, digits), b = nv[a] == '.' ? strspn(nv + a + 1, digits) : 0;
  if (a == 0 || a > 6 || b == 0 || b > 6 || nv[a + 1 + b] != '\0')
    return tf_fail(e, TF_EXIT_INPUT, "key 'nvrtc_version' must be \"MAJOR.MINOR\"");
  r->nvrtc_major = atoi(nv);
  r->nvrtc_minor = atoi(nv + a + 1);
  return 0;
}

static int versions_from(const cJSON *o, record_versions *r, tf_err *e) {
  long long drv = 0, rt = 0;
  if (int_into(o, "generation", 1, 0, LLONG_MAX, &r->generation, e) ||
      str_into(o, "", "time", 1, r->time, sizeof r->time, e) ||
      int_into(o, "driver_version", 1, 0, INT_MAX, &drv, e) ||
      int_into(o, "runtime_version", 1, 0, INT_MAX, &rt, e) || nvrtc_from(o, r, e) ||
      str_into(o, "", "reason", 1, r->reason, sizeof r->reason, e))
    return -1;
  r->driver_version = (int)drv;
  r->runtime_version = (int)rt;
  return 0;
}

/* ---------------------------------------------------------------- entry points */

cJSON *record_to_json(const record *r) {
  switch (r->kind) {
    case RECORD_DEVICE: return device_to(&r->device);
    case RECORD_GENERATION: return gen_to(&r->gen);
    case RECORD_RESTART: return restart_to(&r->restart);
    case RECORD_END: return end_to(&r->end);
    case RECORD_REOPEN: return reopen_to(&r->reopen);
    case RECORD_VERSIONS: return versions_to(&r->versions);
    default: return NULL;
  }
}

int record_from_json(const cJSON *o, record *r, tf_err *e) {
  record_release(r);
  if (!cJSON_IsObject(o)) return tf_fail(e, TF_EXIT_INPUT, "a record must be a JSON object");
  if (type_of(o, &r->kind, e) || jsonio_only_keys(NULL, NULL, o, "", record_keys(r->kind), e))
    return -1;
  switch (r->kind) {
    case RECORD_DEVICE: return device_from(o, &r->device, e);
    case RECORD_GENERATION: return gen_from(o, &r->gen, e);
    case RECORD_RESTART: return restart_from(o, &r->restart, e);
    case RECORD_REOPEN: return reopen_from(o, &r->reopen, e);
    case RECORD_VERSIONS: return versions_from(o, &r->versions, e);
    default: return end_from(o, &r->end, e);
  }
}

int record_job(const record_gen *g, job *out, tf_err *e) {
  tf_err je = {0};
  if (!g->job) return tf_fail(e, TF_EXIT_INPUT, "key 'job' is missing");
  if (job_from_json(g->job, out, &je) == 0) return 0;
  return tf_fail(e, TF_EXIT_INPUT, "key 'job': %s", je.msg);
}

double record_rounds_median(const record_gen *g, int arm, int kernel) {
  double x[MSG_MAX_ROUNDS];
  int n = 0;
  for (int i = 0; i < g->res.nrounds; i++) {
    const round_rec *r = &g->res.rounds[i];
    double v = kernel ? r->kernel_us[arm] : r->us[arm];
    if (!r->screened && isfinite(v) && (!kernel || v >= 0)) x[n++] = v;
  }
  return stats_median(x, n);
}
