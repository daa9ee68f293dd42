/* msg: JSON codecs of the device record, jobs and results (see msg.h). */
#include "common/msg.h"

#include <math.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>

#include "common/jsonio.h"
#include "common/rule.h" /* defines: decide_select, decide_params_to_json, decide_params_from_json */

const char *const arm_names[ARM_COUNT] = {"best", "new", "control"};
/* A round's keys per arm, in arm_names' order: spelled out, not printed per round. */
static const char *const us_keys[ARM_COUNT] = {"best_us", "new_us", "control_us"};
static const char *const kernel_us_keys[ARM_COUNT] = {"best_kernel_us", "new_kernel_us",
                                                      "control_kernel_us"};

static const char *const status_names[] = {"ok", "fault", "compile_error", "error"};

/* ---- small helpers: read a field of a message, tolerating absence ---- */

static double num_or(const cJSON *o, const char *key, double dflt) {
  const cJSON *it = cJSON_GetObjectItemCaseSensitive(o, key);
  if (cJSON_IsNumber(it)) return it->valuedouble;
  if (cJSON_IsNull(it)) return INFINITY; /* cJSON writes inf and nan as null */
  return dflt;
}

/* An integer field: the default when absent, not a number, fractional or out of [lo, hi]
 * (a cast of 1e300 to int would be undefined behaviour). */
static long long int_or(const cJSON *o, const char *key, long long dflt, long long lo,
                        long long hi) {
  const cJSON *it = cJSON_GetObjectItemCaseSensitive(o, key);
  if (!cJSON_IsNumber(it)) return dflt;
  double v = it->valuedouble;
  if (!(v >= (double)lo && v <= (double)hi) || v != floor(v)) return dflt;
  return (long long)v;
}
#define INT_OR(o, key, dflt) ((int)int_or((o), (key), (dflt), -2147483647LL, 2147483647LL))
#define LL_OR(o, key, dflt) int_or((o), (key), (dflt), -(1LL << 53), 1LL << 53)

static void str_into(const cJSON *o, const char *key, char *dst, size_t len) {
  const cJSON *it = cJSON_GetObjectItemCaseSensitive(o, key);
  dst[0] = '\0';
  if (cJSON_IsString(it)) snprintf(dst, len, "%s", it->valuestring);
}

static int arm_index(const char *name) {
  for (int a = 0; a < ARM_COUNT; a++)
    if (strcmp(arm_names[a], name) == 0) return a;
  return -1;
}

static cJSON *uint_array(const unsigned *v, int n) {
  cJSON *a = cJSON_CreateArray();
  for (int i = 0; i < n; i++) cJSON_AddItemToArray(a, cJSON_CreateNumber(v[i]));
  return a;
}

static cJSON *ll_array(const long long *v, int n) {
  cJSON *a = cJSON_CreateArray();
  for (int i = 0; i < n; i++) cJSON_AddItemToArray(a, cJSON_CreateNumber((double)v[i]));
  return a;
}

static int read_ll_array(const cJSON *o, const char *key, long long *out, int n) {
  const cJSON *a = cJSON_GetObjectItemCaseSensitive(o, key);
  if (!cJSON_IsArray(a) || cJSON_GetArraySize(a) != n) return -1;
  for (int i = 0; i < n; i++) {
    const cJSON *it = cJSON_GetArrayItem(a, i);
    /* whole numbers only: 1.5 is malformed, not 1 */
    if (!cJSON_IsNumber(it) || jsonio_whole(it->valuedouble, -(1LL << 53), 1LL << 53, &out[i]))
      return -1;
  }
  return 0;
}

static int read_uint_array(const cJSON *o, const char *key, unsigned *out, int n) {
  long long tmp[16];
  if (n > 16 || read_ll_array(o, key, tmp, n)) return -1;
  for (int i = 0; i < n; i++) {
    if (tmp[i] < 0 || tmp[i] > 0xFFFFFFFFLL) return -1;
    out[i] = (unsigned)tmp[i];
  }
  return 0;
}

/* ---- device record ---- */

cJSON *device_to_json(const device_record *d) {
  cJSON *o = cJSON_CreateObject();
  cJSON_AddStringToObject(o, "backend", d->backend);
  cJSON_AddStringToObject(o, "name", d->name);
  cJSON_AddStringToObject(o, "uuid", d->uuid);
  cJSON_AddStringToObject(o, "pci_bus_id", d->pci_bus_id);
  char cc[16];
  snprintf(cc, sizeof cc, "%d.%d", d->cc_major, d->cc_minor);
  cJSON_AddStringToObject(o, "compute_capability", cc);
  cJSON_AddStringToObject(o, "arch", d->arch);
  cJSON_AddNumberToObject(o, "sm_count", d->sm_count);
  cJSON_AddNumberToObject(o, "memory_bytes", (double)d->mem_bytes);
  cJSON_AddNumberToObject(o, "l2_bytes", (double)d->l2_bytes);
  cJSON_AddNumberToObject(o, "max_sm_mhz", d->max_sm_mhz);
  cJSON_AddNumberToObject(o, "current_sm_mhz", d->cur_sm_mhz);
  if (d->max_mem_mhz > 0 && d->mem_bus_bits > 0) {
    cJSON_AddNumberToObject(o, "max_memory_mhz", d->max_mem_mhz);
    cJSON_AddNumberToObject(o, "memory_bus_bits", d->mem_bus_bits);
  }
  cJSON_AddNumberToObject(o, "driver_version", d->driver_version);
  cJSON_AddNumberToObject(o, "runtime_version", d->runtime_version);
  char nv[16];
  snprintf(nv, sizeof nv, "%d.%d", d->nvrtc_major, d->nvrtc_minor);
  cJSON_AddStringToObject(o, "nvrtc_version", nv);
  cJSON_AddStringToObject(o, "host", d->host);
  cJSON_AddNumberToObject(o, "ordinal", d->ordinal);
  if (d->sim_noise[0]) cJSON_AddStringToObject(o, "sim_noise", d->sim_noise);
  return o;
}

int device_from_json(const cJSON *o, device_record *d, tf_err *e) {
  memset(d, 0, sizeof *d);
  if (!cJSON_IsObject(o)) return tf_fail(e, TF_EXIT_FAIL, "device record: not an object");
  str_into(o, "backend", d->backend, sizeof d->backend);
  str_into(o, "name", d->name, sizeof d->name);
  str_into(o, "uuid", d->uuid, sizeof d->uuid);
  str_into(o, "pci_bus_id", d->pci_bus_id, sizeof d->pci_bus_id);
  str_into(o, "arch", d->arch, sizeof d->arch);
  str_into(o, "host", d->host, sizeof d->host);
  str_into(o, "sim_noise", d->sim_noise, sizeof d->sim_noise);
  char cc[16], nv[16];
  str_into(o, "compute_capability", cc, sizeof cc);
  str_into(o, "nvrtc_version", nv, sizeof nv);
  if (sscanf(cc, "%d.%d", &d->cc_major, &d->cc_minor) != 2) d->cc_major = d->cc_minor = 0;
  if (sscanf(nv, "%d.%d", &d->nvrtc_major, &d->nvrtc_minor) != 2) d->nvrtc_major = 0;
  d->sm_count = INT_OR(o, "sm_count", 0);
  d->mem_bytes = LL_OR(o, "memory_bytes", 0);
  d->l2_bytes = LL_OR(o, "l2_bytes", 0);
  d->max_sm_mhz = INT_OR(o, "max_sm_mhz", 0);
  d->cur_sm_mhz = INT_OR(o, "current_sm_mhz", 0);
  d->max_mem_mhz = INT_OR(o, "max_memory_mhz", 0);
  d->mem_bus_bits = INT_OR(o, "memory_bus_bits", 0);
  d->driver_version = INT_OR(o, "driver_version", 0);
  d->runtime_version = INT_OR(o, "runtime_version", 0);
  d->ordinal = INT_OR(o, "ordinal", -1);
  if (!d->uuid[0] || !d->backend[0] || !d->host[0] || d->ordinal < 0)
    return tf_fail(e, TF_EXIT_FAIL, "device record: 'uuid', 'backend', 'host' or 'ordinal' missing");
  return 0;
}

/* ---- hello ---- */

cJSON *hello_to_json(const hello *h) {
  cJSON *o = cJSON_CreateObject();
  cJSON_AddStringToObject(o, "type", "hello");
  if (h->rank >= 0) cJSON_AddNumberToObject(o, "rank", h->rank);
  if (h->worker_index >= 0) cJSON_AddNumberToObject(o, "worker_index", h->worker_index);
  if (h->has_device)
    cJSON_AddItemToObject(o, "device", device_to_json(&h->dev));
  else
    cJSON_AddStringToObject(o, "error", h->error);
  if (h->fallback[0]) cJSON_AddStringToObject(o, "fallback", h->fallback);
  if (h->compile_jobs > 0) cJSON_AddNumberToObject(o, "compile_jobs", h->compile_jobs);
  return o;
}

int hello_from_json(const cJSON *o, hello *h, tf_err *e) {
  memset(h, 0, sizeof *h);
  const char *type = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(o, "type"));
  if (!type || strcmp(type, "hello") != 0)
    return tf_fail(e, TF_EXIT_FAIL, "hello: 'type' is not \"hello\"");
  h->rank = INT_OR(o, "rank", -1);
  h->worker_index = INT_OR(o, "worker_index", -1);
  h->compile_jobs = INT_OR(o, "compile_jobs", 0);
  str_into(o, "error", h->error, sizeof h->error);
  str_into(o, "fallback", h->fallback, sizeof h->fallback);
  const cJSON *dev = cJSON_GetObjectItemCaseSensitive(o, "device");
  if (!dev) {
    if (!h->error[0]) snprintf(h->error, sizeof h->error, "it sent no device record");
    return 0;
  }
  if (device_from_json(dev, &h->dev, e)) return -1;
  h->has_device = 1;
  return 0;
}

void device_uuid8(const device_record *d, char out[9]) {
  const char *u = d->uuid;
  const char *dash = strchr(u, '-');
  if (dash && dash - u <= 4) u = dash + 1;
  int n = 0;
  for (; *u && n < 8; u++)
    if ((*u >= '0' && *u <= '9') || (*u >= 'a' && *u <= 'f') || (*u >= 'A' && *u <= 'F'))
      out[n++] = *u;
  while (n < 8) out[n++] = '0';
  out[8] = '\0';
}

/* ---- jobs ---- */

static cJSON *measure_to_json(const measure_opts *m) {
  cJSON *o = cJSON_CreateObject();
  cJSON_AddNumberToObject(o, "burn_in", m->burn_in);
  cJSON_AddNumberToObject(o, "rounds", m->rounds);
  cJSON_AddNumberToObject(o, "samples", m->samples);
  cJSON_AddNumberToObject(o, "max_samples", m->max_samples);
  cJSON_AddNumberToObject(o, "input_sets", m->input_sets);
  cJSON_AddBoolToObject(o, "flush_l2", m->flush_l2);
  cJSON_AddNumberToObject(o, "deadline_s", m->deadline_s);
  cJSON_AddNumberToObject(o, "seed", (double)m->seed);
  cJSON_AddStringToObject(o, "layout", measure_layout_names[m->layout]);
  cJSON_AddStringToObject(o, "code", measure_code_names[m->code]);
  cJSON_AddStringToObject(o, "order", measure_order_names[m->order]);
  return o;
}

/* The index of a name in a NULL-terminated table; dflt when absent, -1 when unknown. */
static int choice_of(const cJSON *o, const char *key, const char *const *names, int dflt) {
  const cJSON *it = cJSON_GetObjectItemCaseSensitive(o, key);
  if (!it) return dflt;
  if (!cJSON_IsString(it)) return -1;
  for (int i = 0; names[i]; i++)
    if (strcmp(names[i], it->valuestring) == 0) return i;
  return -1;
}

static void measure_from_json(const cJSON *o, measure_opts *m) {
  m->burn_in = INT_OR(o, "burn_in", 4);
  m->rounds = INT_OR(o, "rounds", 8);
  m->samples = INT_OR(o, "samples", 10);
  /* A job written before max_samples measured a fixed number of samples. */
  m->max_samples = INT_OR(o, "max_samples", m->samples);
  m->input_sets = INT_OR(o, "input_sets", 2);
  m->flush_l2 = cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(o, "flush_l2"));
  m->deadline_s = num_or(o, "deadline_s", 120);
  m->seed = (unsigned long long)int_or(o, "seed", 1, 0, 1LL << 53);
  m->layout = choice_of(o, "layout", measure_layout_names, LAYOUT_SHARED);
  m->code = choice_of(o, "code", measure_code_names, CODE_SHARED);
  m->order = choice_of(o, "order", measure_order_names, ORDER_ROTATE);
}

cJSON *decide_opts_to_json(const decide_opts *d) {
  cJSON *o = cJSON_CreateObject();
  cJSON_AddStringToObject(o, "rule", d->rule);
  cJSON_AddNumberToObject(o, "min_gain", d->min_gain);
  cJSON_AddNumberToObject(o, "drift_tolerance", d->drift_tolerance);
  cJSON_AddNumberToObject(o, "max_requeue", d->max_requeue);
  decide_params_to_json(d, o); /* the rule's own parameters (common/rule.h) */
  cJSON_AddNumberToObject(o, "clock_skew", d->clock_skew);
  cJSON_AddNumberToObject(o, "throttle_mhz", d->throttle_mhz);
  cJSON_AddNumberToObject(o, "max_screened", d->max_screened);
  return o;
}

/* An unknown rule keeps its name, so that decide() says which one it was. */
static void decide_from_json(const cJSON *o, decide_opts *d) {
  char rule[sizeof d->rule];
  str_into(o, "rule", rule, sizeof rule);
  if (decide_select(d, rule)) snprintf(d->rule, sizeof d->rule, "%s", rule);
  d->min_gain = num_or(o, "min_gain", d->min_gain);
  d->drift_tolerance = num_or(o, "drift_tolerance", d->drift_tolerance);
  d->max_requeue = INT_OR(o, "max_requeue", d->max_requeue);
  decide_params_from_json(o, d);
  d->clock_skew = num_or(o, "clock_skew", d->clock_skew);
  d->throttle_mhz = num_or(o, "throttle_mhz", d->throttle_mhz);
  d->max_screened = INT_OR(o, "max_screened", d->max_screened);
}

/* "tmaps": per tensor map, its extents then its box ([d0, d1, b0, b1] for rank 2). */
static void tmaps_to_json(const job *j, const launch_geom *g, cJSON *o) {
  cJSON *arr = cJSON_AddArrayToObject(o, "tmaps");
  for (int a = 0; a < j->nargs; a++) {
    if (j->arg_kind[a] != SPEC_ARG_TMAP) continue;
    long long v[2 * SPEC_TMAP_RANK];
    for (int i = 0; i < j->arg_rank[a]; i++)
      v[i] = g->tmap_dim[j->arg_tmap[a]][i], v[j->arg_rank[a] + i] = g->tmap_box[j->arg_tmap[a]][i];
    cJSON_AddItemToArray(arr, ll_array(v, 2 * j->arg_rank[a]));
  }
}

static int tmaps_from_json(const cJSON *o, const job *j, launch_geom *g, tf_err *e) {
  const cJSON *arr = cJSON_GetObjectItemCaseSensitive(o, "tmaps");
  if (!j->ntmaps) return 0;
  if (!cJSON_IsArray(arr) || cJSON_GetArraySize(arr) != j->ntmaps)
    return tf_fail(e, TF_EXIT_INPUT, "job: an arm lacks its 'tmaps' (one per tensor map)");
  for (int a = 0; a < j->nargs; a++) {
    if (j->arg_kind[a] != SPEC_ARG_TMAP) continue;
    const int t = j->arg_tmap[a], r = j->arg_rank[a];
    const cJSON *it = cJSON_GetArrayItem(arr, t);
    long long v[2 * SPEC_TMAP_RANK];
    if (!cJSON_IsArray(it) || cJSON_GetArraySize(it) != 2 * r)
      return tf_fail(e, TF_EXIT_INPUT, "job: an arm's tmaps[%d] is not %d numbers", t, 2 * r);
    for (int i = 0; i < 2 * r; i++) {
      const cJSON *x = cJSON_GetArrayItem(it, i);
      v[i] = cJSON_IsNumber(x) ? (long long)x->valuedouble : 0;
      if (v[i] < 1 || v[i] > (i < r ? 1LL << 32 : 256))
        return tf_fail(e, TF_EXIT_INPUT, "job: an arm's tmaps[%d] is out of range", t);
    }
    for (int i = 0; i < r; i++) g->tmap_dim[t][i] = v[i], g->tmap_box[t][i] = v[r + i];
  }
  return 0;
}

static cJSON *arm_to_json(const job *j, int a) {
  const job_arm *arm = &j->arm[a];
  cJSON *o = cJSON_CreateObject();
  cJSON_AddStringToObject(o, "role", arm_names[a]);
  cJSON_AddStringToObject(o, "name_expr", arm->name_expr);
  cJSON_AddBoolToObject(o, "template", arm->from_template);
  cJSON_AddItemToObject(o, "config", ll_array(arm->cfg.v, arm->cfg.n));
  cJSON_AddItemToObject(o, "grid", uint_array(arm->geom.grid, 3));
  cJSON_AddItemToObject(o, "block", uint_array(arm->geom.block, 3));
  cJSON_AddNumberToObject(o, "smem", arm->geom.smem);
  cJSON_AddItemToObject(o, "counts", ll_array(arm->geom.count, j->nbuffers));
  long long clear[SPEC_MAX_BUFFERS];
  for (int b = 0; b < j->nbuffers; b++) clear[b] = arm->geom.clear[b];
  cJSON_AddItemToObject(o, "clear", ll_array(clear, j->nbuffers));
  cJSON_AddItemToObject(o, "iargs", ll_array(arm->geom.iarg, j->nargs));
  if (j->ntmaps && !arm->library[0]) tmaps_to_json(j, &arm->geom, o);
  cJSON_AddStringToObject(o, "fault", arm->fault);
  if (arm->library[0]) {
    long long g[ARM_GEMM_FIELDS];
    for (int i = 0; i < ARM_GEMM_FIELDS; i++) g[i] = arm->gemm[i];
    cJSON_AddStringToObject(o, "library", arm->library);
    cJSON_AddItemToObject(o, "gemm", ll_array(g, ARM_GEMM_FIELDS));
  }
  return o;
}

/* A library arm: the only routine is the GEMM, whose buffers and dimensions must lie in the
 * job's layout (the worker indexes its buffers with them). */
static int gemm_from_json(const cJSON *o, const job *j, job_arm *arm, tf_err *e) {
  long long g[ARM_GEMM_FIELDS];
  if (strcmp(arm->library, ARM_LIBRARY_GEMM) != 0)
    return tf_fail(e, TF_EXIT_INPUT, "job: an arm names library '%s' (known: %s)", arm->library,
                   ARM_LIBRARY_GEMM);
  if (read_ll_array(o, "gemm", g, ARM_GEMM_FIELDS))
    return tf_fail(e, TF_EXIT_INPUT, "job: a GEMM arm lacks its 'gemm' fields");
  for (int i = 0; i < ARM_GEMM_FIELDS; i++) {
    long long hi = i < 3 ? j->nbuffers : i < 6 ? j->ndims : 2;
    if (g[i] < 0 || g[i] >= hi)
      return tf_fail(e, TF_EXIT_INPUT, "job: a GEMM arm's field %d is out of range", i);
    arm->gemm[i] = (int)g[i];
  }
  return 0;
}

static int arm_from_json(const cJSON *o, const job *j, job_arm *arm, tf_err *e) {
  str_into(o, "name_expr", arm->name_expr, sizeof arm->name_expr);
  str_into(o, "library", arm->library, sizeof arm->library);
  arm->from_template = cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(o, "template"));
  const cJSON *cfg = cJSON_GetObjectItemCaseSensitive(o, "config");
  arm->cfg.n = cJSON_IsArray(cfg) ? cJSON_GetArraySize(cfg) : 0;
  long long clear[SPEC_MAX_BUFFERS];
  if (arm->cfg.n > SPEC_MAX_KNOBS || read_ll_array(o, "config", arm->cfg.v, arm->cfg.n) ||
      read_uint_array(o, "grid", arm->geom.grid, 3) ||
      read_uint_array(o, "block", arm->geom.block, 3) ||
      read_ll_array(o, "counts", arm->geom.count, j->nbuffers) ||
      read_ll_array(o, "clear", clear, j->nbuffers) ||
      read_ll_array(o, "iargs", arm->geom.iarg, j->nargs) || !arm->name_expr[0])
    return tf_fail(e, TF_EXIT_INPUT, "job: an arm is malformed (name_expr, config, grid, block, "
                                     "counts, clear or iargs)");
  if (arm->library[0] && gemm_from_json(o, j, arm, e)) return -1;
  if (!arm->library[0] && tmaps_from_json(o, j, &arm->geom, e)) return -1;
  for (int b = 0; b < j->nbuffers; b++) {
    arm->geom.clear[b] = clear[b] != 0;
    if (arm->geom.count[b] < 1 || arm->geom.count[b] > SPEC_MAX_ELEMENTS)
      return tf_fail(e, TF_EXIT_INPUT, "job: buffer count out of range");
  }
  arm->geom.smem = (unsigned)int_or(o, "smem", 0, 0, 232448);
  str_into(o, "fault", arm->fault, sizeof arm->fault);
  return 0;
}

static const char *const init_names[] = {"", "uniform", "normal", "int", "const"};
static const char *const role_names[] = {"input", "output", "inout", "scratch"};

/* What a buffer has beyond its name and "output": only what is not the default. */
static void buffer_extra_to_json(const job *j, int b, cJSON *x) {
  if (j->buf_role[b] == SPEC_ROLE_INOUT || j->buf_role[b] == SPEC_ROLE_SCRATCH)
    cJSON_AddStringToObject(x, "role", role_names[j->buf_role[b]]);
  if (j->buf_type[b] != REFERENCE_F32)
    cJSON_AddStringToObject(x, "type", reference_type_name(j->buf_type[b]));
  const reference_init *in = &j->buf_init[b];
  if (in->kind > REFERENCE_INIT_DEFAULT && in->kind <= REFERENCE_INIT_CONST) {
    cJSON *init = cJSON_AddObjectToObject(x, "init");
    cJSON *ab = cJSON_AddArrayToObject(init, init_names[in->kind]);
    cJSON_AddItemToArray(ab, cJSON_CreateNumber(in->a));
    cJSON_AddItemToArray(ab, cJSON_CreateNumber(in->b));
  }
  const reference_check *c = &j->buf_check[b];
  if (c->kind == REFERENCE_CHECK_EXACT) cJSON_AddStringToObject(x, "check", "exact");
  if (c->kind == REFERENCE_CHECK_TOL) {
    cJSON *o = cJSON_AddObjectToObject(x, "check");
    cJSON_AddNumberToObject(o, "rtol", c->rtol);
    cJSON_AddNumberToObject(o, "atol", c->atol);
  }
  if (c->allow_nonfinite) cJSON_AddBoolToObject(x, "allow_nonfinite", 1);
}

static int buffer_extra_from_json(const cJSON *x, job *j, int b, tf_err *e) {
  const cJSON *role = cJSON_GetObjectItemCaseSensitive(x, "role");
  const cJSON *type = cJSON_GetObjectItemCaseSensitive(x, "type");
  const cJSON *init = cJSON_GetObjectItemCaseSensitive(x, "init");
  const cJSON *check = cJSON_GetObjectItemCaseSensitive(x, "check");
  j->buf_role[b] = j->buf_output[b] ? SPEC_ROLE_OUTPUT : SPEC_ROLE_INPUT;
  if (role) {
    const char *r = cJSON_GetStringValue(role);
    j->buf_role[b] = -1;
    for (int i = 0; r && i < 4; i++)
      if (!strcmp(r, role_names[i])) j->buf_role[b] = i;
    if (j->buf_role[b] < 0 || SPEC_ROLE_CHECKED(j->buf_role[b]) != (j->buf_output[b] != 0))
      return tf_fail(e, TF_EXIT_INPUT, "job: buffers[%d].role does not fit its 'output'", b);
  }
  j->buf_type[b] = type ? reference_type_of(cJSON_GetStringValue(type)) : REFERENCE_F32;
  if (j->buf_type[b] < 0) return tf_fail(e, TF_EXIT_INPUT, "job: buffers[%d].type is not a type", b);
  if (init) {
    const cJSON *ab = cJSON_IsObject(init) ? init->child : NULL;
    int k = 0;
    for (int i = 1; ab && ab->string && i <= REFERENCE_INIT_CONST; i++)
      if (!strcmp(ab->string, init_names[i])) k = i;
    if (!k || !cJSON_IsArray(ab) || cJSON_GetArraySize(ab) != 2 ||
        !cJSON_IsNumber(cJSON_GetArrayItem(ab, 0)) || !cJSON_IsNumber(cJSON_GetArrayItem(ab, 1)))
      return tf_fail(e, TF_EXIT_INPUT, "job: buffers[%d].init is not {kind: [a, b]}", b);
    j->buf_init[b] = (reference_init){k, cJSON_GetArrayItem(ab, 0)->valuedouble,
                                      cJSON_GetArrayItem(ab, 1)->valuedouble};
  }
  reference_check *c = &j->buf_check[b];
  if (cJSON_IsString(check) && !strcmp(check->valuestring, "exact")) {
    c->kind = REFERENCE_CHECK_EXACT;
  } else if (cJSON_IsObject(check)) {
    c->kind = REFERENCE_CHECK_TOL;
    c->rtol = num_or(check, "rtol", 0);
    c->atol = num_or(check, "atol", 0);
    if (!(c->rtol >= 0 && c->rtol < 1e300 && c->atol >= 0 && c->atol < 1e300))
      return tf_fail(e, TF_EXIT_INPUT, "job: buffers[%d].check is not finite and non-negative", b);
  } else if (check) {
    return tf_fail(e, TF_EXIT_INPUT, "job: buffers[%d].check is not \"exact\" or {rtol, atol}", b);
  }
  c->allow_nonfinite = cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(x, "allow_nonfinite"));
  return 0;
}

/* "reference": the reference kernel and its launch, or the reference library. */
static void reference_to_json(const job *j, cJSON *o) {
  if (j->ref_library[0]) {
    cJSON *r = cJSON_AddObjectToObject(o, "reference");
    cJSON_AddStringToObject(r, "library", j->ref_library);
    cJSON_AddItemToObject(r, "iargs", ll_array(j->ref_geom.iarg, j->nargs));
    cJSON *names = cJSON_AddArrayToObject(r, "names");
    for (int a = 0; a < j->nargs; a++)
      cJSON_AddItemToArray(names, cJSON_CreateString(j->arg_names[a]));
    return;
  }
  if (!j->ref_kernel[0]) return;
  cJSON *r = cJSON_AddObjectToObject(o, "reference");
  cJSON_AddStringToObject(r, "kernel", j->ref_kernel);
  cJSON_AddStringToObject(r, "source", j->ref_source);
  cJSON_AddItemToObject(r, "grid", uint_array(j->ref_geom.grid, 3));
  cJSON_AddItemToObject(r, "block", uint_array(j->ref_geom.block, 3));
  cJSON_AddNumberToObject(r, "smem", j->ref_geom.smem);
  cJSON_AddItemToObject(r, "iargs", ll_array(j->ref_geom.iarg, j->nargs));
}

/* "reference": {"library": path, "iargs": [...], "names": [...]}: the CPU reference library,
 * the integer arguments' values and every argument's name ("" for an untyped one). */
static int library_from_json(const cJSON *r, job *j, tf_err *e) {
  const cJSON *names = cJSON_GetObjectItemCaseSensitive(r, "names");
  str_into(r, "library", j->ref_library, sizeof j->ref_library);
  if (!j->ref_library[0] || read_ll_array(r, "iargs", j->ref_geom.iarg, j->nargs) ||
      !cJSON_IsArray(names) || cJSON_GetArraySize(names) != j->nargs)
    return tf_fail(e, TF_EXIT_INPUT, "job: 'reference' needs library, iargs and names (one per "
                   "argument)");
  for (int a = 0; a < j->nargs; a++) {
    const char *n = cJSON_GetStringValue(cJSON_GetArrayItem(names, a));
    if (!n || strlen(n) >= SPEC_NAME)
      return tf_fail(e, TF_EXIT_INPUT, "job: 'reference.names[%d]' is not a name", a);
    snprintf(j->arg_names[a], SPEC_NAME, "%s", n);
  }
  return 0;
}

static int reference_from_json(const cJSON *o, job *j, tf_err *e) {
  const cJSON *r = cJSON_GetObjectItemCaseSensitive(o, "reference");
  if (!r) return 0;
  if (cJSON_GetObjectItemCaseSensitive(r, "library")) return library_from_json(r, j, e);
  str_into(r, "kernel", j->ref_kernel, sizeof j->ref_kernel);
  str_into(r, "source", j->ref_source, sizeof j->ref_source);
  if (!j->ref_kernel[0] || !j->ref_source[0] || read_uint_array(r, "grid", j->ref_geom.grid, 3) ||
      read_uint_array(r, "block", j->ref_geom.block, 3) ||
      read_ll_array(r, "iargs", j->ref_geom.iarg, j->nargs))
    return tf_fail(e, TF_EXIT_INPUT, "job: 'reference' needs kernel, source, grid, block and "
                   "iargs (one per argument)");
  j->ref_geom.smem = (unsigned)int_or(r, "smem", 0, 0, 232448);
  for (int d = 0; d < 3; d++)
    if (!j->ref_geom.grid[d] || !j->ref_geom.block[d])
      return tf_fail(e, TF_EXIT_INPUT, "job: 'reference' has an empty grid or block");
  return 0;
}

static void layout_to_json(const job *j, cJSON *o) {
  cJSON *dims = cJSON_AddObjectToObject(o, "dims");
  for (int d = 0; d < j->ndims; d++) cJSON_AddNumberToObject(dims, j->dim_names[d], (double)j->dims[d]);
  cJSON *bufs = cJSON_AddArrayToObject(o, "buffers");
  for (int b = 0; b < j->nbuffers; b++) {
    cJSON *x = cJSON_CreateObject();
    cJSON_AddStringToObject(x, "name", j->buf_names[b]);
    cJSON_AddBoolToObject(x, "output", j->buf_output[b]);
    buffer_extra_to_json(j, b, x);
    cJSON_AddItemToArray(bufs, x);
  }
  cJSON *args = cJSON_AddArrayToObject(o, "args");
  for (int a = 0; a < j->nargs; a++) {
    cJSON *x = cJSON_CreateObject();
    if (j->arg_kind[a] == SPEC_ARG_TMAP) {
      cJSON_AddNumberToObject(x, "tensormap", j->arg_buffer[a]);
      cJSON_AddNumberToObject(x, "rank", j->arg_rank[a]);
      cJSON_AddNumberToObject(x, "swizzle", j->arg_swizzle[a]);
    } else if (j->arg_kind[a] == SPEC_ARG_BUFFER)
      cJSON_AddNumberToObject(x, "buffer", j->arg_buffer[a]);
    else if (j->arg_kind[a] == SPEC_ARG_FLOAT)
      cJSON_AddNumberToObject(x, "float", j->arg_float[a]);
    else
      cJSON_AddBoolToObject(x, "int", 1);
    if (j->arg_type[a] > 0)
      cJSON_AddStringToObject(x, "type", reference_type_name(j->arg_type[a] - 1));
    cJSON_AddItemToArray(args, x);
  }
}

static int layout_from_json(const cJSON *o, job *j, tf_err *e) {
  const cJSON *dims = cJSON_GetObjectItemCaseSensitive(o, "dims");
  const cJSON *bufs = cJSON_GetObjectItemCaseSensitive(o, "buffers");
  const cJSON *args = cJSON_GetObjectItemCaseSensitive(o, "args");
  const cJSON *it;
  if (!cJSON_IsObject(dims) || !cJSON_IsArray(bufs) || !cJSON_IsArray(args) ||
      cJSON_GetArraySize(dims) > SPEC_MAX_DIMS || cJSON_GetArraySize(bufs) > SPEC_MAX_BUFFERS ||
      cJSON_GetArraySize(args) > SPEC_MAX_ARGS)
    return tf_fail(e, TF_EXIT_INPUT, "job: 'dims', 'buffers' or 'args' missing or too long");
  cJSON_ArrayForEach(it, dims) {
    snprintf(j->dim_names[j->ndims], SPEC_NAME, "%s", it->string);
    j->dims[j->ndims++] = LL_OR(dims, it->string, 0);
  }
  cJSON_ArrayForEach(it, bufs) {
    str_into(it, "name", j->buf_names[j->nbuffers], SPEC_NAME);
    j->buf_output[j->nbuffers] = cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(it, "output"));
    if (buffer_extra_from_json(it, j, j->nbuffers++, e)) return -1;
  }
  cJSON_ArrayForEach(it, args) {
    int a = j->nargs++;
    const cJSON *type = cJSON_GetObjectItemCaseSensitive(it, "type");
    j->arg_type[a] = type ? reference_type_of(cJSON_GetStringValue(type)) + 1 : 0;
    if (type && j->arg_type[a] <= 0)
      return tf_fail(e, TF_EXIT_INPUT, "job: args[%d].type is not a type", a);
    if (cJSON_GetObjectItemCaseSensitive(it, "tensormap")) {
      j->arg_kind[a] = SPEC_ARG_TMAP;
      j->arg_buffer[a] = INT_OR(it, "tensormap", -1);
      j->arg_rank[a] = INT_OR(it, "rank", 0);
      j->arg_swizzle[a] = INT_OR(it, "swizzle", 0);
      j->arg_tmap[a] = j->ntmaps++;
      if (j->arg_buffer[a] < 0 || j->arg_buffer[a] >= j->nbuffers || j->arg_rank[a] < 1 ||
          j->arg_rank[a] > SPEC_TMAP_RANK || j->ntmaps > SPEC_MAX_TMAPS ||
          (j->arg_swizzle[a] & ~(32 | 64 | 128)) || __builtin_popcount((unsigned)j->arg_swizzle[a]) > 1)
        return tf_fail(e, TF_EXIT_INPUT, "job: args[%d] is not a tensor map of a buffer (rank 1 "
                       "to 5, swizzle 0, 32, 64 or 128)", a);
    } else if (cJSON_GetObjectItemCaseSensitive(it, "buffer")) {
      j->arg_kind[a] = SPEC_ARG_BUFFER;
      j->arg_buffer[a] = INT_OR(it, "buffer", 0);
      if (j->arg_buffer[a] < 0 || j->arg_buffer[a] >= j->nbuffers)
        return tf_fail(e, TF_EXIT_INPUT, "job: args[%d] names no buffer", a);
    } else if (cJSON_GetObjectItemCaseSensitive(it, "float")) {
      j->arg_kind[a] = SPEC_ARG_FLOAT;
      j->arg_float[a] = num_or(it, "float", 0);
    } else {
      j->arg_kind[a] = SPEC_ARG_INT;
    }
  }
  return 0;
}

cJSON *job_to_json(const job *j) {
  cJSON *o = cJSON_CreateObject();
  cJSON_AddStringToObject(o, "type", "job");
  cJSON_AddNumberToObject(o, "id", (double)j->id);
  cJSON_AddNumberToObject(o, "generation", j->generation);
  cJSON_AddStringToObject(o, "campaign", j->campaign);
  if (j->root[0]) cJSON_AddStringToObject(o, "root", j->root);
  cJSON *src = cJSON_AddArrayToObject(o, "sources");
  for (int i = 0; i < j->nsources; i++) cJSON_AddItemToArray(src, cJSON_CreateString(j->sources[i]));
  if (j->specs[0][0]) {
    cJSON *specs = cJSON_AddArrayToObject(o, "specs");
    for (int i = 0; i < j->nsources; i++)
      cJSON_AddItemToArray(specs, cJSON_CreateString(j->specs[i]));
  }
  if (j->arch_specific) cJSON_AddBoolToObject(o, "arch_specific", 1);
  layout_to_json(j, o);
  reference_to_json(j, o);
  cJSON *arms = cJSON_AddArrayToObject(o, "arms");
  for (int a = 0; a < ARM_COUNT; a++) cJSON_AddItemToArray(arms, arm_to_json(j, a));
  cJSON_AddNumberToObject(o, "tolerance", j->tolerance);
  cJSON_AddItemToObject(o, "measure", measure_to_json(&j->measure));
  cJSON_AddItemToObject(o, "decide", decide_opts_to_json(&j->decide));
  if (j->canary_rounds > 0) cJSON_AddNumberToObject(o, "canary_rounds", j->canary_rounds);
  if (j->fresh_child) cJSON_AddBoolToObject(o, "fresh_child", 1);
  return o;
}

void job_drop_root(cJSON *o) { cJSON_DeleteItemFromObjectCaseSensitive(o, "root"); }

int job_id_from_json(const cJSON *o, long long *id) {
  const cJSON *it = cJSON_GetObjectItemCaseSensitive(o, "id");
  return cJSON_IsNumber(it) && jsonio_whole(it->valuedouble, 0, MSG_MAX_ID, id) == 0 ? 0 : -1;
}

int job_from_json(const cJSON *o, job *j, tf_err *e) {
  memset(j, 0, sizeof *j);
  if (job_id_from_json(o, &j->id))
    return tf_fail(e, TF_EXIT_INPUT, "job: key 'id' must be a whole number in [0, %lld]",
                   MSG_MAX_ID);
  const cJSON *src = cJSON_GetObjectItemCaseSensitive(o, "sources");
  const cJSON *arms = cJSON_GetObjectItemCaseSensitive(o, "arms");
  const cJSON *it;
  if (!cJSON_IsArray(src) || cJSON_GetArraySize(src) < 1 || cJSON_GetArraySize(src) > 2 ||
      !cJSON_IsArray(arms) || cJSON_GetArraySize(arms) != ARM_COUNT)
    return tf_fail(e, TF_EXIT_INPUT, "job: 'sources' (1 or 2 files) or 'arms' (3) missing");
  j->generation = INT_OR(o, "generation", 0);
  str_into(o, "campaign", j->campaign, sizeof j->campaign);
  str_into(o, "root", j->root, sizeof j->root);
  cJSON_ArrayForEach(it, src) {
    if (!cJSON_IsString(it)) return tf_fail(e, TF_EXIT_INPUT, "job: 'sources' must be strings");
    snprintf(j->sources[j->nsources++], SPEC_PATH, "%s", it->valuestring);
  }
  const cJSON *specs = cJSON_GetObjectItemCaseSensitive(o, "specs");
  int nspecs = 0;
  if (specs && (!cJSON_IsArray(specs) || cJSON_GetArraySize(specs) != j->nsources))
    return tf_fail(e, TF_EXIT_INPUT, "job: 'specs' must name one spec per source");
  cJSON_ArrayForEach(it, specs) {
    if (!cJSON_IsString(it)) return tf_fail(e, TF_EXIT_INPUT, "job: 'specs' must be strings");
    snprintf(j->specs[nspecs++], SPEC_PATH, "%s", it->valuestring);
  }
  j->arch_specific = cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(o, "arch_specific"));
  if (layout_from_json(o, j, e) || reference_from_json(o, j, e)) return -1;
  unsigned seen = 0; /* each role once: a repeated one would leave another arm empty */
  cJSON_ArrayForEach(it, arms) {
    const cJSON *role = cJSON_GetObjectItemCaseSensitive(it, "role");
    int a = cJSON_IsString(role) ? arm_index(role->valuestring) : -1;
    if (a < 0 || (seen & (1u << a)))
      return tf_fail(e, TF_EXIT_INPUT, "job: the arms' 'role' must be best, new and control, "
                                       "once each");
    seen |= 1u << a;
    if (arm_from_json(it, j, &j->arm[a], e)) return -1;
  }
  j->tolerance = num_or(o, "tolerance", 1e-5);
  measure_from_json(cJSON_GetObjectItemCaseSensitive(o, "measure"), &j->measure);
  decide_defaults(&j->decide);
  decide_from_json(cJSON_GetObjectItemCaseSensitive(o, "decide"), &j->decide);
  /* a tolerance that is not a finite non-negative number would pass every arm */
  if (!(j->tolerance >= 0 && j->tolerance < 1e300))
    return tf_fail(e, TF_EXIT_INPUT, "job: 'tolerance' must be a finite non-negative number");
  if (j->measure.rounds < 1 || j->measure.rounds > MSG_MAX_ROUNDS || j->measure.samples < 1 ||
      j->measure.max_samples < j->measure.samples || j->measure.max_samples > 100000 ||
      j->measure.input_sets < 1 || j->measure.input_sets > 8 || j->measure.burn_in < 0)
    return tf_fail(e, TF_EXIT_INPUT, "job: 'measure' out of range");
  if (j->measure.layout < 0 || j->measure.code < 0 || j->measure.order < 0)
    return tf_fail(e, TF_EXIT_INPUT, "job: 'measure.layout', 'measure.code' or 'measure.order' "
                                     "is not a known name");
  j->canary_rounds = cJSON_GetObjectItemCaseSensitive(o, "canary_rounds")
                         ? INT_OR(o, "canary_rounds", -1) : 0;
  if (j->canary_rounds < 0 || j->canary_rounds > MSG_MAX_CANARY)
    return tf_fail(e, TF_EXIT_INPUT, "job: 'canary_rounds' must be an integer in [0, %d]",
                   MSG_MAX_CANARY);
  j->fresh_child = cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(o, "fresh_child"));
  return 0;
}

/* ---- results ---- */

cJSON *round_to_json(const round_rec *r) {
  cJSON *o = cJSON_CreateObject();
  cJSON *order = cJSON_AddArrayToObject(o, "order");
  for (int i = 0; i < ARM_COUNT; i++)
    cJSON_AddItemToArray(order, cJSON_CreateString(arm_names[r->order[i]]));
  for (int a = 0; a < ARM_COUNT; a++) jsonio_add_exact(o, us_keys[a], r->us[a]);
  for (int a = 0; a < ARM_COUNT; a++) {
    if (r->kernel_us[a] >= 0)
      jsonio_add_exact(o, kernel_us_keys[a], r->kernel_us[a]);
    else
      cJSON_AddNullToObject(o, kernel_us_keys[a]);
  }
  cJSON *mhz = cJSON_AddArrayToObject(o, "sm_mhz");
  for (int i = 0; i < 2; i++) cJSON_AddItemToArray(mhz, cJSON_CreateNumber(r->sm_mhz[i]));
  cJSON *am = cJSON_AddArrayToObject(o, "arm_mhz");
  for (int a = 0; a < ARM_COUNT; a++) cJSON_AddItemToArray(am, cJSON_CreateNumber(r->arm_mhz[a]));
  cJSON *rs = cJSON_AddArrayToObject(o, "clock_reasons");
  for (int i = 0; i < 2; i++) cJSON_AddItemToArray(rs, cJSON_CreateNumber((double)r->reasons[i]));
  if (r->screened) cJSON_AddBoolToObject(o, "screened", 1);
  return o;
}

int round_from_json(const cJSON *o, round_rec *r) {
  memset(r, 0, sizeof *r);
  const cJSON *order = cJSON_GetObjectItemCaseSensitive(o, "order");
  if (!cJSON_IsArray(order) || cJSON_GetArraySize(order) != ARM_COUNT) return -1;
  for (int i = 0; i < ARM_COUNT; i++) {
    const cJSON *it = cJSON_GetArrayItem(order, i);
    r->order[i] = cJSON_IsString(it) ? arm_index(it->valuestring) : -1;
    if (r->order[i] < 0) return -1;
  }
  for (int a = 0; a < ARM_COUNT; a++) {
    r->us[a] = num_or(o, us_keys[a], NAN);
    const cJSON *k = cJSON_GetObjectItemCaseSensitive(o, kernel_us_keys[a]);
    r->kernel_us[a] = cJSON_IsNumber(k) ? k->valuedouble : -1.0;
  }
  const cJSON *mhz = cJSON_GetObjectItemCaseSensitive(o, "sm_mhz");
  const cJSON *am = cJSON_GetObjectItemCaseSensitive(o, "arm_mhz");
  const cJSON *rs = cJSON_GetObjectItemCaseSensitive(o, "clock_reasons");
  for (int i = 0; i < 2; i++) {
    const cJSON *x = cJSON_GetArrayItem(mhz, i), *y = cJSON_GetArrayItem(rs, i);
    r->sm_mhz[i] = cJSON_IsNumber(x) ? x->valuedouble : 0;
    long long bits = 0; /* NVML's reason bits; 1e300 or 1.5 is no bit mask */
    if (cJSON_IsNumber(y) && jsonio_whole(y->valuedouble, 0, 1LL << 53, &bits)) return -1;
    r->reasons[i] = (unsigned long long)bits;
  }
  for (int a = 0; a < ARM_COUNT; a++) {
    const cJSON *x = cJSON_GetArrayItem(am, a);
    r->arm_mhz[a] = cJSON_IsNumber(x) ? x->valuedouble : 0;
  }
  r->screened = cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(o, "screened"));
  return isfinite(r->us[0]) && isfinite(r->us[1]) && isfinite(r->us[2]) ? 0 : -1;
}

cJSON *canary_round_to_json(const canary_round *c) {
  cJSON *o = cJSON_CreateObject();
  cJSON *order = cJSON_AddArrayToObject(o, "order");
  cJSON_AddItemToArray(order, cJSON_CreateString(c->copy_first ? "copy" : "best"));
  cJSON_AddItemToArray(order, cJSON_CreateString(c->copy_first ? "best" : "copy"));
  static const char *const keys[2][2] = {{"best_us", "copy_us"},
                                         {"best_kernel_us", "copy_kernel_us"}};
  for (int i = 0; i < 2; i++) jsonio_add_exact(o, keys[0][i], c->us[i]);
  for (int i = 0; i < 2; i++) {
    if (c->kernel_us[i] >= 0)
      jsonio_add_exact(o, keys[1][i], c->kernel_us[i]);
    else
      cJSON_AddNullToObject(o, keys[1][i]);
  }
  return o;
}

int canary_round_from_json(const cJSON *o, canary_round *c) {
  memset(c, 0, sizeof *c);
  const cJSON *order = cJSON_GetObjectItemCaseSensitive(o, "order");
  const char *first = cJSON_GetStringValue(cJSON_GetArrayItem(order, 0));
  if (!cJSON_IsArray(order) || cJSON_GetArraySize(order) != 2 || !first ||
      (strcmp(first, "best") && strcmp(first, "copy")))
    return -1;
  c->copy_first = strcmp(first, "copy") == 0;
  c->us[0] = num_or(o, "best_us", NAN);
  c->us[1] = num_or(o, "copy_us", NAN);
  const cJSON *kb = cJSON_GetObjectItemCaseSensitive(o, "best_kernel_us");
  const cJSON *kc = cJSON_GetObjectItemCaseSensitive(o, "copy_kernel_us");
  c->kernel_us[0] = cJSON_IsNumber(kb) ? kb->valuedouble : -1.0;
  c->kernel_us[1] = cJSON_IsNumber(kc) ? kc->valuedouble : -1.0;
  return isfinite(c->us[0]) && isfinite(c->us[1]) ? 0 : -1;
}

/* The keys of a result's "times", in the order written. */
static const struct {
  const char *name;
  size_t offset;
} time_keys[] = {{"compile_s", offsetof(result_times, compile_s)},
                 {"compile_wait_s", offsetof(result_times, compile_wait_s)},
                 {"load_s", offsetof(result_times, load_s)},
                 {"check_s", offsetof(result_times, check_s)},
                 {"measure_s", offsetof(result_times, measure_s)}};
#define NTIME_KEYS (sizeof time_keys / sizeof time_keys[0])

cJSON *result_times_to_json(const result_times *t) {
  cJSON *o = cJSON_CreateObject();
  for (size_t i = 0; i < NTIME_KEYS; i++)
    jsonio_add_exact(o, time_keys[i].name,
                     *(const double *)(const void *)((const char *)t + time_keys[i].offset));
  return o;
}

int result_times_from_json(const cJSON *o, result_times *t) {
  memset(t, 0, sizeof *t);
  if (!o) return 0;
  if (!cJSON_IsObject(o)) return -1;
  const cJSON *it;
  cJSON_ArrayForEach(it, o) {
    size_t i = 0;
    while (i < NTIME_KEYS && strcmp(it->string, time_keys[i].name) != 0) i++;
    if (i == NTIME_KEYS) return -1; /* a key no writer writes */
  }
  for (size_t i = 0; i < NTIME_KEYS; i++) {
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, time_keys[i].name);
    if (!v) continue;
    if (!cJSON_IsNumber(v) || !(v->valuedouble >= 0) || !isfinite(v->valuedouble)) return -1;
    *(double *)(void *)((char *)t + time_keys[i].offset) = v->valuedouble;
  }
  return 0;
}

cJSON *checked_to_json(int checked) {
  cJSON *a = cJSON_CreateArray();
  for (int k = 0; a && k < ARM_COUNT; k++)
    if (checked & (1 << k)) cJSON_AddItemToArray(a, cJSON_CreateString(arm_names[k]));
  return a;
}

int checked_from_json(const cJSON *o, int *checked) {
  const cJSON *it;
  *checked = 0;
  if (!cJSON_IsArray(o)) return -1;
  cJSON_ArrayForEach(it, o) {
    int k = 0;
    while (k < ARM_COUNT && !(cJSON_IsString(it) && strcmp(it->valuestring, arm_names[k]) == 0))
      k++;
    if (k == ARM_COUNT) return -1;
    *checked |= 1 << k;
  }
  return 0;
}

cJSON *result_to_json(const result *r) {
  cJSON *o = cJSON_CreateObject();
  cJSON_AddStringToObject(o, "type", "result");
  cJSON_AddNumberToObject(o, "id", (double)r->id);
  cJSON_AddStringToObject(o, "status", status_names[r->status]);
  cJSON_AddStringToObject(o, "detail", r->detail);
  cJSON_AddStringToObject(o, "device", r->device);
  cJSON_AddBoolToObject(o, "correct", r->correct);
  cJSON *err = cJSON_AddObjectToObject(o, "rel_err");
  for (int a = 0; a < ARM_COUNT; a++) jsonio_add_exact(err, arm_names[a], r->rel_err[a]);
  if (r->checked >= 0) cJSON_AddItemToObject(o, "checked", checked_to_json(r->checked));
  cJSON_AddNumberToObject(o, "burn_in", r->burn_in);
  if (r->samples > 0) {
    cJSON_AddNumberToObject(o, "samples", r->samples);
    cJSON_AddNumberToObject(o, "samples_wanted", r->samples_wanted);
    if (isfinite(r->launch_spread)) jsonio_add_exact(o, "launch_spread", r->launch_spread);
  }
  jsonio_add_exact(o, "compile_ms", r->compile_ms);
  cJSON_AddBoolToObject(o, "cache_hit", r->cache_hit);
  jsonio_add_exact(o, "wall_s", r->wall_s);
  cJSON_AddItemToObject(o, "times", result_times_to_json(&r->times));
  cJSON *rounds = cJSON_AddArrayToObject(o, "rounds");
  for (int i = 0; i < r->nrounds; i++) cJSON_AddItemToArray(rounds, round_to_json(&r->rounds[i]));
  if (r->child > 0) cJSON_AddNumberToObject(o, "child", r->child);
  if (r->ncanary > 0) {
    cJSON *c = cJSON_AddArrayToObject(o, "canary");
    for (int i = 0; i < r->ncanary; i++) cJSON_AddItemToArray(c, canary_round_to_json(&r->canary[i]));
  }
  return o;
}

int result_from_json(const cJSON *o, result *r, tf_err *e) {
  memset(r, 0, sizeof *r);
  char status[32];
  str_into(o, "status", status, sizeof status);
  int s = -1;
  for (int i = 0; i < 4; i++)
    if (strcmp(status, status_names[i]) == 0) s = i;
  if (s < 0) return tf_fail(e, TF_EXIT_FAIL, "result: unknown status '%s'", status);
  r->status = (result_status)s;
  /* -1: a fault for a job whose id could not be read; any other id as a job's */
  const cJSON *id = cJSON_GetObjectItemCaseSensitive(o, "id");
  r->id = -1;
  if (id && (!cJSON_IsNumber(id) || jsonio_whole(id->valuedouble, -1, MSG_MAX_ID, &r->id)))
    return tf_fail(e, TF_EXIT_FAIL, "result: key 'id' must be -1 or a job's id, a whole number "
                   "in [0, %lld]", MSG_MAX_ID);
  str_into(o, "detail", r->detail, sizeof r->detail);
  str_into(o, "device", r->device, sizeof r->device);
  r->correct = cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(o, "correct"));
  const cJSON *err = cJSON_GetObjectItemCaseSensitive(o, "rel_err");
  for (int a = 0; a < ARM_COUNT; a++) r->rel_err[a] = num_or(err, arm_names[a], NAN);
  const cJSON *checked = cJSON_GetObjectItemCaseSensitive(o, "checked");
  r->checked = -1;
  if (checked && checked_from_json(checked, &r->checked))
    return tf_fail(e, TF_EXIT_FAIL, "result: 'checked' must be an array of arm names");
  r->burn_in = INT_OR(o, "burn_in", 0);
  r->samples = INT_OR(o, "samples", 0);
  r->samples_wanted = INT_OR(o, "samples_wanted", 0);
  r->launch_spread = num_or(o, "launch_spread", NAN);
  r->compile_ms = num_or(o, "compile_ms", 0);
  r->cache_hit = cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(o, "cache_hit"));
  r->wall_s = num_or(o, "wall_s", 0);
  if (result_times_from_json(cJSON_GetObjectItemCaseSensitive(o, "times"), &r->times))
    return tf_fail(e, TF_EXIT_FAIL, "result: 'times' must hold non-negative seconds");
  const cJSON *rounds = cJSON_GetObjectItemCaseSensitive(o, "rounds"), *it;
  if (rounds && !cJSON_IsArray(rounds)) return tf_fail(e, TF_EXIT_FAIL, "result: 'rounds' not an array");
  cJSON_ArrayForEach(it, rounds) {
    if (r->nrounds == MSG_MAX_ROUNDS) return tf_fail(e, TF_EXIT_FAIL, "result: too many rounds");
    if (round_from_json(it, &r->rounds[r->nrounds]))
      return tf_fail(e, TF_EXIT_FAIL, "result: round %d is malformed", r->nrounds);
    r->nrounds++;
  }
  r->child = INT_OR(o, "child", 0);
  const cJSON *canary = cJSON_GetObjectItemCaseSensitive(o, "canary");
  if (canary && !cJSON_IsArray(canary)) return tf_fail(e, TF_EXIT_FAIL, "result: 'canary' not an array");
  cJSON_ArrayForEach(it, canary) {
    if (r->ncanary == MSG_MAX_CANARY) return tf_fail(e, TF_EXIT_FAIL, "result: too many canary rounds");
    if (canary_round_from_json(it, &r->canary[r->ncanary]))
      return tf_fail(e, TF_EXIT_FAIL, "result: canary round %d is malformed", r->ncanary);
    r->ncanary++;
  }
  return 0;
}

void result_fault(result *r, long long id, const char *device, const char *fmt, ...) {
  memset(r, 0, sizeof *r);
  r->id = id;
  r->status = RESULT_FAULT;
  snprintf(r->device, sizeof r->device, "%s", device ? device : "");
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(r->detail, sizeof r->detail, fmt, ap);
  va_end(ap);
}
