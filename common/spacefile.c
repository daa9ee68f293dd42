#include "common/spacefile.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

#include "common/decide.h" /* defines: stats_median */
#include "common/jsonio.h"

const char *const space_check_names[SPACE_CHECKS] = {"pass", "fail", "compile_error", "error",
                                                     "fault"};

/* ---- statistics of one entry ---- */

static int cmp_double(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return (x > y) - (x < y);
}

/* The q-quantile of sorted v[0..n) by linear interpolation. */
static double quantile(const double *v, int n, double q) {
  double at = q * (n - 1);
  int lo = (int)floor(at);
  int hi = lo + 1 < n ? lo + 1 : lo;
  return v[lo] + (at - lo) * (v[hi] - v[lo]);
}

void spacefile_entry_stats(space_entry *x) {
  int n = x->nrounds;
  x->median_us = x->mad_us = x->q1_us = x->q3_us = x->ratio = x->ref_median_us = NAN;
  if (n <= 0) return;
  double *v = malloc(sizeof *v * (size_t)n * 2);
  if (!v) return;
  memcpy(v, x->us, sizeof *v * (size_t)n);
  qsort(v, (size_t)n, sizeof *v, cmp_double);
  x->median_us = quantile(v, n, 0.5);
  x->q1_us = quantile(v, n, 0.25);
  x->q3_us = quantile(v, n, 0.75);
  for (int i = 0; i < n; i++) v[n + i] = fabs(x->us[i] - x->median_us);
  x->mad_us = stats_median(v + n, n);
  for (int i = 0; i < n; i++) v[i] = x->us[i] / x->ref_us[i];
  x->ratio = stats_median(v, n);
  x->ref_median_us = stats_median(x->ref_us, n);
  free(v);
}

/* ---- lines ---- */

/* v with 7 significant digits: a round's median is not known closer, and the file stays small. */
static cJSON *num7(double v) {
  if (!isfinite(v)) return cJSON_CreateNull();
  char buf[32];
  snprintf(buf, sizeof buf, "%.7g", v);
  return cJSON_CreateNumber(strtod(buf, NULL));
}

static void add7(cJSON *o, const char *key, double v) { cJSON_AddItemToObject(o, key, num7(v)); }

static cJSON *rounds_json(const double *v, int n) {
  cJSON *a = cJSON_CreateArray();
  for (int i = 0; i < n; i++) cJSON_AddItemToArray(a, num7(v[i]));
  return a;
}

static cJSON *values_json(const config *c) {
  cJSON *a = cJSON_CreateArray();
  for (int i = 0; i < c->n; i++) cJSON_AddItemToArray(a, cJSON_CreateNumber((double)c->v[i]));
  return a;
}

cJSON *spacefile_entry_to_json(const space_entry *x) {
  cJSON *o = cJSON_CreateObject();
  cJSON_AddStringToObject(o, "type", "config");
  cJSON_AddItemToObject(o, "values", values_json(&x->cfg));
  cJSON_AddStringToObject(o, "check", space_check_names[x->check]);
  if (x->detail[0]) cJSON_AddStringToObject(o, "detail", x->detail);
  add7(o, "compile_ms", x->compile_ms);
  add7(o, "rel_err", x->rel_err);
  if (x->check != SPACE_PASS || x->nrounds == 0) return o; /* a compile alone (sweep's part) */
  add7(o, "median_us", x->median_us);
  add7(o, "mad_us", x->mad_us);
  add7(o, "q1_us", x->q1_us);
  add7(o, "q3_us", x->q3_us);
  add7(o, "ratio", x->ratio);
  cJSON_AddNumberToObject(o, "samples", x->samples);
  cJSON_AddNumberToObject(o, "burn_in", x->burn_in);
  add7(o, "launch_spread", x->launch_spread);
  add7(o, "load_s", x->load_s);
  add7(o, "check_s", x->check_s);
  add7(o, "measure_s", x->measure_s);
  cJSON_AddItemToObject(o, "us", rounds_json(x->us, x->nrounds));
  cJSON_AddItemToObject(o, "ref_us", rounds_json(x->ref_us, x->nrounds));
  cJSON_AddItemToObject(o, "control_us", rounds_json(x->control_us, x->nrounds));
  return o;
}

/* A number or null (NAN) under key; absent reads as NAN too. */
static int num_or_null(const cJSON *o, const char *key, double *out, const char *file, long line,
                       tf_err *e) {
  const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, key);
  *out = NAN;
  if (!v || cJSON_IsNull(v)) return 0;
  if (!cJSON_IsNumber(v) || !isfinite(v->valuedouble) || v->valuedouble < 0)
    return tf_fail(e, TF_EXIT_INPUT, "space '%s': line %ld: key '%s' must be a non-negative "
                   "number or null", file, line, key);
  *out = v->valuedouble;
  return 0;
}

/* n positive times under key into v. */
static int rounds_from(const cJSON *o, const char *key, int n, double *v, const char *file,
                       long line, tf_err *e) {
  const cJSON *a = cJSON_GetObjectItemCaseSensitive(o, key);
  if (!cJSON_IsArray(a) || cJSON_GetArraySize(a) != n)
    return tf_fail(e, TF_EXIT_INPUT, "space '%s': line %ld: key '%s' must be an array of %d "
                   "times (as many as 'us')", file, line, key, n);
  int i = 0;
  for (const cJSON *t = a->child; t; t = t->next, i++)
    if (!cJSON_IsNumber(t) || !(t->valuedouble > 0) || !isfinite(t->valuedouble))
      return tf_fail(e, TF_EXIT_INPUT, "space '%s': line %ld: key '%s' item %d must be a "
                     "positive time in microseconds", file, line, key, i);
    else
      v[i] = t->valuedouble;
  return 0;
}

static int values_from(const cJSON *o, int nknobs, config *c, const char *file, long line,
                       tf_err *e) {
  const cJSON *a = cJSON_GetObjectItemCaseSensitive(o, "values");
  if (!cJSON_IsArray(a) || cJSON_GetArraySize(a) != nknobs)
    return tf_fail(e, TF_EXIT_INPUT, "space '%s': line %ld: key 'values' must be an array of "
                   "%d knob values (the header's 'knobs')", file, line, nknobs);
  c->n = nknobs;
  int i = 0;
  for (const cJSON *v = a->child; v; v = v->next, i++)
    if (!cJSON_IsNumber(v) || jsonio_whole(v->valuedouble, -(1LL << 53), 1LL << 53, &c->v[i]))
      return tf_fail(e, TF_EXIT_INPUT, "space '%s': line %ld: key 'values' item %d must be a "
                     "whole number", file, line, i);
  return 0;
}

static int check_from(const cJSON *o, int *check, const char *file, long line, tf_err *e) {
  const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, "check");
  for (int k = 0; cJSON_IsString(v) && k < SPACE_CHECKS; k++)
    if (strcmp(v->valuestring, space_check_names[k]) == 0) return *check = k, 0;
  return tf_fail(e, TF_EXIT_INPUT, "space '%s': line %ld: key 'check' must be pass, fail, "
                 "compile_error, error or fault", file, line);
}

static int measured_from(const cJSON *o, space_entry *x, const char *file, long line,
                         tf_err *e) {
  const cJSON *us = cJSON_GetObjectItemCaseSensitive(o, "us");
  int n = cJSON_IsArray(us) ? cJSON_GetArraySize(us) : 0;
  if (n < 1 || n > SPACEFILE_MAX_ROUNDS)
    return tf_fail(e, TF_EXIT_INPUT, "space '%s': line %ld: key 'us' must hold 1 to %d round "
                   "times for a configuration that passed", file, line, SPACEFILE_MAX_ROUNDS);
  x->us = malloc(sizeof(double) * 3 * (size_t)n);
  if (!x->us) return tf_fail(e, TF_EXIT_FAIL, "space '%s': out of memory", file);
  x->ref_us = x->us + n;
  x->control_us = x->us + 2 * n;
  x->nrounds = n;
  long long samples = 1, burn_in = 0;
  if (rounds_from(o, "us", n, x->us, file, line, e) ||
      rounds_from(o, "ref_us", n, x->ref_us, file, line, e) ||
      rounds_from(o, "control_us", n, x->control_us, file, line, e) ||
      jsonio_int(file, "space", o, NULL, "samples", 0, 1, 1000000, &samples, e) ||
      jsonio_int(file, "space", o, NULL, "burn_in", 0, 0, 1000000, &burn_in, e) ||
      num_or_null(o, "launch_spread", &x->launch_spread, file, line, e) ||
      num_or_null(o, "load_s", &x->load_s, file, line, e) ||
      num_or_null(o, "check_s", &x->check_s, file, line, e) ||
      num_or_null(o, "measure_s", &x->measure_s, file, line, e)) {
    free(x->us);
    x->us = NULL;
    return -1;
  }
  x->samples = (int)samples;
  x->burn_in = (int)burn_in;
  spacefile_entry_stats(x);
  return 0;
}

int spacefile_entry_from_json(const cJSON *o, int nknobs, space_entry *x, const char *file,
                              long line, tf_err *e) {
  const char *detail = "";
  memset(x, 0, sizeof *x);
  x->launch_spread = x->load_s = x->check_s = x->measure_s = NAN;
  if (values_from(o, nknobs, &x->cfg, file, line, e) || check_from(o, &x->check, file, line, e) ||
      num_or_null(o, "compile_ms", &x->compile_ms, file, line, e) ||
      num_or_null(o, "rel_err", &x->rel_err, file, line, e) ||
      jsonio_str(file, "space", o, NULL, "detail", 0, sizeof x->detail - 1, &detail, e))
    return -1;
  snprintf(x->detail, sizeof x->detail, "%s", detail);
  const cJSON *type = cJSON_GetObjectItemCaseSensitive(o, "type");
  int compile_only = cJSON_IsString(type) && strcmp(type->valuestring, "compile") == 0;
  return x->check == SPACE_PASS && !compile_only ? measured_from(o, x, file, line, e) : 0;
}

/* ---- the header ---- */

static cJSON *config_object(const space_file *sf, const config *c) {
  cJSON *o = cJSON_CreateObject();
  for (int i = 0; i < c->n && i < sf->nknobs; i++)
    cJSON_AddNumberToObject(o, sf->knobs[i], (double)c->v[i]);
  return o;
}

cJSON *spacefile_header_to_json(const space_file *sf) {
  cJSON *o = cJSON_CreateObject();
  cJSON_AddStringToObject(o, "type", "tfspace");
  cJSON_AddNumberToObject(o, "format", SPACEFILE_FORMAT);
  cJSON_AddStringToObject(o, "campaign", sf->campaign);
  cJSON_AddStringToObject(o, "campaign_hash", sf->campaign_hash);
  cJSON_AddStringToObject(o, "template", sf->tmpl);
  cJSON *k = cJSON_AddArrayToObject(o, "knobs");
  for (int i = 0; i < sf->nknobs; i++) cJSON_AddItemToArray(k, cJSON_CreateString(sf->knobs[i]));
  cJSON *p = cJSON_AddObjectToObject(o, "problem");
  for (int i = 0; i < sf->ndims; i++) cJSON_AddNumberToObject(p, sf->dim_names[i], (double)sf->dims[i]);
  cJSON_AddItemToObject(o, "device", device_to_json(&sf->dev));
  cJSON_AddBoolToObject(o, "simulated", sf->simulated);
  cJSON_AddItemToObject(o, "reference", config_object(sf, &sf->reference));
  cJSON_AddStringToObject(o, "control", sf->control);
  add7(o, "reference_us", sf->reference_us);
  cJSON_AddStringToObject(o, "date", sf->date);
  cJSON_AddNumberToObject(o, "configs", sf->n);
  return o;
}

static int copy_str(const cJSON *o, const char *key, char *out, size_t len, const char *file,
                    tf_err *e) {
  const char *s = NULL;
  if (jsonio_str(file, "space", o, "header", key, 1, len - 1, &s, e)) return -1;
  snprintf(out, len, "%s", s);
  return 0;
}

static int names_from(const cJSON *a, space_file *sf, const char *file, tf_err *e) {
  if (!cJSON_IsArray(a) || cJSON_GetArraySize(a) < 1 || cJSON_GetArraySize(a) > SPEC_MAX_KNOBS)
    return tf_fail(e, TF_EXIT_INPUT, "space '%s': header key 'knobs' must be an array of 1 to "
                   "%d names", file, SPEC_MAX_KNOBS);
  for (const cJSON *k = a->child; k; k = k->next, sf->nknobs++) {
    if (!cJSON_IsString(k) || strlen(k->valuestring) >= SPEC_NAME)
      return tf_fail(e, TF_EXIT_INPUT, "space '%s': header key 'knobs' item %d must be a knob "
                     "name", file, sf->nknobs);
    snprintf(sf->knobs[sf->nknobs], SPEC_NAME, "%s", k->valuestring);
  }
  return 0;
}

static int problem_from(const cJSON *p, space_file *sf, const char *file, tf_err *e) {
  if (!cJSON_IsObject(p))
    return tf_fail(e, TF_EXIT_INPUT, "space '%s': header key 'problem' must be an object", file);
  for (const cJSON *d = p->child; d; d = d->next) {
    if (sf->ndims >= SPEC_MAX_DIMS || strlen(d->string) >= SPEC_NAME ||
        !cJSON_IsNumber(d) || jsonio_whole(d->valuedouble, 0, 1LL << 53, &sf->dims[sf->ndims]))
      return tf_fail(e, TF_EXIT_INPUT, "space '%s': header key 'problem.%s' must be a whole "
                     "number", file, d->string);
    snprintf(sf->dim_names[sf->ndims++], SPEC_NAME, "%s", d->string);
  }
  return 0;
}

static int reference_from(const cJSON *r, space_file *sf, const char *file, tf_err *e) {
  sf->reference.n = sf->nknobs;
  for (int i = 0; i < sf->nknobs; i++) {
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(r, sf->knobs[i]);
    if (!cJSON_IsNumber(v) || jsonio_whole(v->valuedouble, -(1LL << 53), 1LL << 53,
                                           &sf->reference.v[i]))
      return tf_fail(e, TF_EXIT_INPUT, "space '%s': header key 'reference.%s' must be a whole "
                     "number", file, sf->knobs[i]);
  }
  return 0;
}

int spacefile_header_from_json(const cJSON *o, space_file *sf, tf_err *e) {
  const char *file = sf->path;
  const cJSON *type = cJSON_GetObjectItemCaseSensitive(o, "type");
  if (!cJSON_IsString(type) || strcmp(type->valuestring, "tfspace") != 0)
    return tf_fail(e, TF_EXIT_INPUT, "space '%s': not a recorded space (its first line is no "
                   "\"type\": \"tfspace\" header; `tunefarm sweep` writes them)", file);
  long long format = 0, n = 0;
  if (jsonio_int(file, "space", o, "header", "format", 1, 1, 1000000, &format, e)) return -1;
  if (format != SPACEFILE_FORMAT)
    return tf_fail(e, TF_EXIT_INPUT, "space '%s': header key 'format' is %lld; this tunefarm "
                   "reads format %d (record it again with tunefarm sweep)", file, format,
                   SPACEFILE_FORMAT);
  sf->format = (int)format;
  const cJSON *dev = cJSON_GetObjectItemCaseSensitive(o, "device"), *ref;
  tf_err de = {0};
  if (copy_str(o, "campaign", sf->campaign, sizeof sf->campaign, file, e) ||
      copy_str(o, "campaign_hash", sf->campaign_hash, sizeof sf->campaign_hash, file, e) ||
      copy_str(o, "template", sf->tmpl, sizeof sf->tmpl, file, e) ||
      copy_str(o, "control", sf->control, sizeof sf->control, file, e) ||
      copy_str(o, "date", sf->date, sizeof sf->date, file, e) ||
      names_from(cJSON_GetObjectItemCaseSensitive(o, "knobs"), sf, file, e) ||
      problem_from(cJSON_GetObjectItemCaseSensitive(o, "problem"), sf, file, e) ||
      jsonio_bool(file, "space", o, "header", "simulated", 1, &sf->simulated, e) ||
      jsonio_num(file, "space", o, "header", "reference_us", 1, 1e-9, 1e12, &sf->reference_us, e) ||
      jsonio_int(file, "space", o, "header", "configs", 1, 0, 1 << 24, &n, e) ||
      jsonio_child(file, "space", o, "header", "reference", 1, cJSON_Object, &ref, e) ||
      reference_from(ref, sf, file, e))
    return -1;
  if (device_from_json(dev, &sf->dev, &de))
    return tf_fail(e, TF_EXIT_INPUT, "space '%s': header key 'device': %s", file, de.msg);
  sf->n = (int)n; /* the count announced; the lines must match it */
  return 0;
}

/* ---- the file ---- */

static int cmp_config(const config *a, const config *b) {
  if (a->n != b->n) return a->n < b->n ? -1 : 1;
  for (int i = 0; i < a->n; i++)
    if (a->v[i] != b->v[i]) return a->v[i] < b->v[i] ? -1 : 1;
  return 0;
}

static int cmp_entry(const void *a, const void *b) {
  return cmp_config(&((const space_entry *)a)->cfg, &((const space_entry *)b)->cfg);
}

/* One line of f into buf (NUL-terminated, newline dropped): 1, 0 at the end, -1 for a line
 * past the limit or a read error (zlib's: a file cut short inside its compressed stream). */
static int read_line(gzFile f, char *buf, int len, const char **why) {
  if (!gzgets(f, buf, len)) {
    int zerr = Z_OK;
    const char *msg = gzerror(f, &zerr);
    if (zerr != Z_OK && zerr != Z_STREAM_END) return *why = msg, -1;
    return 0;
  }
  size_t n = strlen(buf);
  if (n > 0 && buf[n - 1] == '\n') {
    buf[n - 1] = '\0';
    return 1;
  }
  if (!gzeof(f)) return *why = "a line longer than 1 MiB", -1;
  return 1; /* the last line, without its newline */
}

typedef struct reader {
  space_file *sf;
  gzFile f;
  char *buf;
  long line;
  int cap;
} reader;

/* The next line as JSON: 1 and *out, 0 at the end of the file, -1 with e. */
static int next_json(reader *r, cJSON **out, tf_err *e) {
  const char *why = NULL;
  int got = read_line(r->f, r->buf, (int)SPACEFILE_MAX_LINE, &why);
  if (got < 0)
    return tf_fail(e, TF_EXIT_INPUT, "space '%s': line %ld cannot be read (%s): the file is "
                   "cut short or corrupt", r->sf->path, r->line + 1, why);
  if (got == 0) return 0;
  r->line++;
  char what[64];
  snprintf(what, sizeof what, "line %ld", r->line);
  tf_err pe = {0};
  *out = jsonio_parse(r->buf, what, &pe);
  if (!*out || !cJSON_IsObject(*out)) {
    cJSON_Delete(*out);
    return tf_fail(e, TF_EXIT_INPUT, "space '%s': line %ld is not a JSON object: the file is "
                   "corrupt or cut short", r->sf->path, r->line);
  }
  return 1;
}

static int add_entry(reader *r, const cJSON *o, int *have, tf_err *e) {
  space_file *sf = r->sf;
  if (*have >= sf->n)
    return tf_fail(e, TF_EXIT_INPUT, "space '%s': line %ld: more configurations than the "
                   "header's 'configs' (%d)", sf->path, r->line, sf->n);
  if (*have >= r->cap) { /* grown as lines come: a header's count alone allocates nothing */
    int cap = r->cap ? 2 * r->cap : 256;
    space_entry *grown = realloc(sf->e, sizeof *grown * (size_t)cap);
    if (!grown) return tf_fail(e, TF_EXIT_FAIL, "space '%s': out of memory", sf->path);
    memset(grown + r->cap, 0, sizeof *grown * (size_t)(cap - r->cap));
    sf->e = grown;
    r->cap = cap;
  }
  if (spacefile_entry_from_json(o, sf->nknobs, &sf->e[*have], sf->path, r->line, e)) return -1;
  (*have)++;
  return 0;
}

/* Every line after the header, up to and including the "end" line. */
static int read_body(reader *r, tf_err *e) {
  space_file *sf = r->sf;
  int have = 0, ended = 0;
  cJSON *o = NULL;
  int got;
  while (!ended && (got = next_json(r, &o, e)) == 1) {
    const cJSON *type = cJSON_GetObjectItemCaseSensitive(o, "type");
    int rc = 0;
    if (cJSON_IsString(type) && strcmp(type->valuestring, "config") == 0) {
      rc = add_entry(r, o, &have, e);
    } else if (cJSON_IsString(type) && strcmp(type->valuestring, "end") == 0) {
      ended = 1;
    } else {
      rc = tf_fail(e, TF_EXIT_INPUT, "space '%s': line %ld: key 'type' must be \"config\" or "
                   "\"end\"", sf->path, r->line);
    }
    cJSON_Delete(o);
    if (rc) return sf->n = have, -1;
  }
  if (!ended && got < 0) return sf->n = have, -1;
  int announced = sf->n;
  sf->n = have;
  if (!ended || have != announced)
    return tf_fail(e, TF_EXIT_INPUT, "space '%s' is cut short: %d of the %d configurations its "
                   "header announces%s", sf->path, have, announced,
                   ended ? "" : ", and no \"end\" line");
  return 0;
}

static int check_sorted(space_file *sf, tf_err *e) {
  qsort(sf->e, (size_t)sf->n, sizeof *sf->e, cmp_entry);
  for (int i = 1; i < sf->n; i++)
    if (cmp_config(&sf->e[i - 1].cfg, &sf->e[i].cfg) == 0) {
      char text[512];
      spacefile_config_text(sf, &sf->e[i].cfg, text, sizeof text);
      return tf_fail(e, TF_EXIT_INPUT, "space '%s': configuration %s is there twice", sf->path,
                     text);
    }
  return 0;
}

static int load_open(reader *r, const char *path, tf_err *e) {
  errno = 0;
  r->f = gzopen(path, "rb");
  if (!r->f)
    return tf_fail(e, TF_EXIT_INPUT, "space '%s' cannot be opened: %s", path,
                   errno ? strerror(errno) : "out of memory");
  r->buf = malloc((size_t)SPACEFILE_MAX_LINE);
  if (!r->buf) return tf_fail(e, TF_EXIT_FAIL, "space '%s': out of memory", path);
  return 0;
}

int spacefile_load(space_file *sf, const char *path, tf_err *e) {
  memset(sf, 0, sizeof *sf);
  snprintf(sf->path, sizeof sf->path, "%s", path);
  reader r = {.sf = sf};
  cJSON *head = NULL;
  int rc = load_open(&r, path, e);
  if (rc == 0) {
    int got = next_json(&r, &head, e);
    if (got == 0) rc = tf_fail(e, TF_EXIT_INPUT, "space '%s' is empty", path);
    else rc = got < 0 ? -1 : spacefile_header_from_json(head, sf, e);
  }
  if (rc == 0) rc = read_body(&r, e) || check_sorted(sf, e) ? -1 : 0;
  cJSON_Delete(head);
  free(r.buf);
  if (r.f) gzclose(r.f);
  if (rc) spacefile_release(sf);
  return rc;
}

void spacefile_release(space_file *sf) {
  for (int i = 0; sf->e && i < sf->n; i++) free(sf->e[i].us);
  free(sf->e);
  sf->e = NULL;
  sf->n = 0;
}

const space_entry *spacefile_find(const space_file *sf, const config *c) {
  space_entry key;
  key.cfg = *c;
  return sf->n ? bsearch(&key, sf->e, (size_t)sf->n, sizeof *sf->e, cmp_entry) : NULL;
}

void spacefile_config_text(const space_file *sf, const config *c, char *buf, size_t len) {
  size_t n = 0;
  buf[0] = '\0';
  for (int i = 0; i < c->n && n < len; i++)
    n += (size_t)snprintf(buf + n, len - n, "%s%s=%lld", i ? "," : "",
                          i < sf->nknobs ? sf->knobs[i] : "?", c->v[i]);
}

double spacefile_round_us(const space_file *sf, const space_entry *x, int r) {
  return x->us[r] * (x->ratio * sf->reference_us / x->median_us);
}

double spacefile_control_us(const space_file *sf, const space_entry *x, int r) {
  return x->control_us[r] * (sf->reference_us / x->ref_median_us);
}
