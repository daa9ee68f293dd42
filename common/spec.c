/* spec: loading templates/NAME.json and kernels/NAME.json (see spec.h). */
#include "common/spec.h"

#include <float.h>
#include <libgen.h>
#include <math.h>
#include <stdio.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "common/source.h" /* defines: source_check */
#include "common/jsonio.h"
#include "common/reference.h" /* defines: REFERENCE_SEED_STRIDE */

_Static_assert(REFERENCE_SEED_STRIDE == SPEC_MAX_BUFFERS,
               "the reference's input seeds must give every buffer of a spec its own stream");

#define WHAT "spec"

/* Everything an expression may name: the knobs and the problem sizes. */
typedef struct binding {
  const spec *s;
  const long long *dims; /* NULL while only checking names */
  const config *c;
} binding;

static int bind_name(void *ctx, const char *name, long long *out) {
  const binding *b = ctx;
  for (int k = 0; k < b->s->nknobs; k++)
    if (strcmp(b->s->knobs[k].name, name) == 0) {
      *out = b->c ? b->c->v[k] : 1;
      return 0;
    }
  for (int d = 0; d < b->s->ndims; d++)
    if (strcmp(b->s->dims[d].name, name) == 0) {
      *out = b->dims ? b->dims[d] : 1;
      return 0;
    }
  return -1;
}

/* A name's slot in the values eval() hands the evaluator: the knobs, then the dimensions. */
static int slot_of(void *ctx, const char *name) {
  const spec *s = ctx;
  int k = spec_knob_index(s, name), d = spec_dim_index(s, name);
  return k >= 0 ? k : d >= 0 ? SPEC_MAX_KNOBS + d : -1;
}

/* Parse an expression found at key `k` and bind its names, which may be only knobs and dims,
 * to their slots. */
static expr *load_expr(const spec *s, const char *text, const char *k, tf_err *e) {
  char msg[256];
  expr *x = expr_parse(text, msg, sizeof msg);
  if (!x) {
    tf_fail(e, TF_EXIT_INPUT, WHAT " '%s': key '%s': %s", s->path, k, msg);
    return NULL;
  }
  if (expr_bind_slots(x, slot_of, (void *)s, msg, sizeof msg) != 0) {
    tf_fail(e, TF_EXIT_INPUT, WHAT " '%s': key '%s': %s", s->path, k, msg);
    expr_free(x);
    return NULL;
  }
  return x;
}

static int copy_name(const spec *s, const char *k, const char *name, char *dst, size_t len,
                     tf_err *e) {
  if (!jsonio_safe_name(name) || strlen(name) >= len || strchr(name, '.') || strchr(name, '-'))
    return tf_fail(e, TF_EXIT_INPUT,
                   WHAT " '%s': key '%s': '%s' is not a valid name (letters, digits and '_')",
                   s->path, k, name);
  snprintf(dst, len, "%s", name);
  return 0;
}

/* Text that ledger records, reports and messages print as one line (a refusal's reason, a
 * constraint's name, a value's label): a tab is the only control character it may hold. */
static int one_line(const spec *s, const char *where, const char *key, const char *text,
                    tf_err *e) {
  if (jsonio_one_line(text)) return 0;
  return tf_fail(e, TF_EXIT_INPUT,
                 WHAT " '%s': key '%s.%s' holds a control character (one line of text: a tab "
                 "is the only one allowed)", s->path, where, key);
}

/* A table of the n entries the spec declares at `key` (at most max), zeroed; its count stays
 * 0 until each entry loads, so spec_release frees what did. */
static void *alloc_table(const spec *s, const char *key, int n, int max, size_t size,
                         tf_err *e) {
  if (n > max) {
    tf_fail(e, TF_EXIT_INPUT, WHAT " '%s': key '%s' declares %d entries, more than the limit "
            "of %d", s->path, key, n, max);
    return NULL;
  }
  void *t = calloc(n > 0 ? (size_t)n : 1, size);
  if (!t) tf_fail(e, TF_EXIT_FAIL, "out of memory");
  return t;
}

static int load_dims(spec *s, const cJSON *root, tf_err *e) {
  const cJSON *prob, *it;
  if (jsonio_child(s->path, WHAT, root, "", "problem", 1, cJSON_Object, &prob, e) ||
      !(s->dims = alloc_table(s, "problem", cJSON_GetArraySize(prob), SPEC_MAX_DIMS,
                              sizeof *s->dims, e)))
    return -1;
  cJSON_ArrayForEach(it, prob) {
    char k[128];
    snprintf(k, sizeof k, "problem.%s", it->string);
    spec_dim *d = &s->dims[s->ndims];
    if (copy_name(s, k, it->string, d->name, sizeof d->name, e)) return -1;
    if (!cJSON_IsArray(it) || cJSON_GetArraySize(it) != 2 ||
        !cJSON_IsNumber(cJSON_GetArrayItem(it, 0)) || !cJSON_IsNumber(cJSON_GetArrayItem(it, 1)))
      return tf_fail(e, TF_EXIT_INPUT, WHAT " '%s': key '%s' must be [lo, hi]", s->path, k);
    if (jsonio_whole(cJSON_GetArrayItem(it, 0)->valuedouble, 1, 1LL << 31, &d->lo) ||
        jsonio_whole(cJSON_GetArrayItem(it, 1)->valuedouble, d->lo, 1LL << 31, &d->hi))
      return tf_fail(e, TF_EXIT_INPUT,
                     WHAT " '%s': key '%s' must be integers 1 <= lo <= hi <= 2^31", s->path, k);
    s->ndims++;
  }
  if (s->ndims == 0)
    return tf_fail(e, TF_EXIT_INPUT, WHAT " '%s': key 'problem' names no dimension", s->path);
  return 0;
}

static int load_knob(spec *s, const cJSON *it, tf_err *e) {
  static const char *const keys[] = {"values", "labels", "default", "doc", NULL};
  char k[128];
  snprintf(k, sizeof k, "knobs.%s", it->string);
  spec_knob *kn = &s->knobs[s->nknobs];
  if (copy_name(s, k, it->string, kn->name, sizeof kn->name, e)) return -1;
  if (!cJSON_IsObject(it))
    return tf_fail(e, TF_EXIT_INPUT, WHAT " '%s': key '%s' must be an object", s->path, k);
  if (jsonio_only_keys(s->path, WHAT, it, k, keys, e)) return -1;
  const cJSON *vals, *labels, *v;
  if (jsonio_child(s->path, WHAT, it, k, "values", 1, cJSON_Array, &vals, e)) return -1;
  if (jsonio_child(s->path, WHAT, it, k, "labels", 0, cJSON_Array, &labels, e)) return -1;
  int n = cJSON_GetArraySize(vals);
  if (n < 1 || n > SPEC_MAX_VALUES)
    return tf_fail(e, TF_EXIT_INPUT, WHAT " '%s': key '%s.values' must list 1 to %d integers",
                   s->path, k, SPEC_MAX_VALUES);
  if (labels && cJSON_GetArraySize(labels) != n)
    return tf_fail(e, TF_EXIT_INPUT, WHAT " '%s': key '%s.labels' must have one label per value",
                   s->path, k);
  cJSON_ArrayForEach(v, vals) {
    long long x;
    if (!cJSON_IsNumber(v) || jsonio_whole(v->valuedouble, -1000000000LL, 1000000000LL, &x))
      return tf_fail(e, TF_EXIT_INPUT, WHAT " '%s': key '%s.values' must hold integers", s->path,
                     k);
    for (int i = 0; i < kn->nvalues; i++)
      if (kn->values[i] == x)
        return tf_fail(e, TF_EXIT_INPUT, WHAT " '%s': key '%s.values' repeats %lld", s->path, k,
                       x);
    kn->values[kn->nvalues++] = x;
  }
  for (int i = 0; labels && i < n; i++) {
    const cJSON *l = cJSON_GetArrayItem(labels, i);
    char li[32];
    snprintf(li, sizeof li, "labels[%d]", i);
    if (!cJSON_IsString(l) || strlen(l->valuestring) >= sizeof kn->labels[i])
      return tf_fail(e, TF_EXIT_INPUT, WHAT " '%s': key '%s.labels' must hold short strings",
                     s->path, k);
    if (one_line(s, k, li, l->valuestring, e)) return -1;
    snprintf(kn->labels[i], sizeof kn->labels[i], "%s", l->valuestring);
  }
  const cJSON *def = cJSON_GetObjectItemCaseSensitive(it, "default");
  if (def) {
    if (!cJSON_IsNumber(def) || jsonio_whole(def->valuedouble, LLONG_MIN, LLONG_MAX, &kn->def) ||
        spec_value_index(s, s->nknobs, kn->def) < 0)
      return tf_fail(e, TF_EXIT_INPUT, WHAT " '%s': key '%s.default' must be one of the knob's values",
                     s->path, k);
    kn->has_default = 1;
  }
  s->nknobs++;
  return 0;
}

static int load_knobs(spec *s, const cJSON *root, tf_err *e) {
  const cJSON *knobs, *it;
  if (jsonio_child(s->path, WHAT, root, "", "knobs", 1, cJSON_Object, &knobs, e) ||
      !(s->knobs = alloc_table(s, "knobs", cJSON_GetArraySize(knobs), SPEC_MAX_KNOBS,
                               sizeof *s->knobs, e)))
    return -1;
  cJSON_ArrayForEach(it, knobs) if (load_knob(s, it, e)) return -1;
  for (int k = 0; k < s->nknobs; k++)
    if (spec_dim_index(s, s->knobs[k].name) >= 0)
      return tf_fail(e, TF_EXIT_INPUT, WHAT " '%s': key 'knobs.%s' has a problem dimension's name",
                     s->path, s->knobs[k].name);
  return 0;
}

static int load_constraints(spec *s, const cJSON *root, tf_err *e) {
  static const char *const keys[] = {"name", "expr", "reason", "performance", NULL};
  const cJSON *arr, *it;
  if (jsonio_child(s->path, WHAT, root, "", "constraints", 0, cJSON_Array, &arr, e) ||
      !(s->cons = alloc_table(s, "constraints", cJSON_GetArraySize(arr), SPEC_MAX_CONSTRAINTS,
                              sizeof *s->cons, e)))
    return -1;
  int i = 0;
  cJSON_ArrayForEach(it, arr) {
    char k[64];
    snprintf(k, sizeof k, "constraints[%d]", i++);
    if (!cJSON_IsObject(it))
      return tf_fail(e, TF_EXIT_INPUT, WHAT " '%s': key '%s' must be an object", s->path, k);
    if (jsonio_only_keys(s->path, WHAT, it, k, keys, e)) return -1;
    spec_constraint *c = &s->cons[s->nconstraints];
    const char *name, *text, *reason;
    if (jsonio_str(s->path, WHAT, it, k, "name", 1, sizeof c->name - 1, &name, e) ||
        jsonio_str(s->path, WHAT, it, k, "expr", 1, SPEC_MAX_TEXT - 1, &text, e) ||
        jsonio_str(s->path, WHAT, it, k, "reason", 1, SPEC_MAX_REASON - 1, &reason, e) ||
        jsonio_bool(s->path, WHAT, it, k, "performance", 0, &c->performance, e))
      return -1;
    if (!reason[0])
      return tf_fail(e, TF_EXIT_INPUT, WHAT " '%s': key '%s.reason' must say why", s->path, k);
    if (one_line(s, k, "name", name, e) || one_line(s, k, "reason", reason, e)) return -1;
    snprintf(c->name, sizeof c->name, "%s", name);
    s->nconstraints++; /* counted before its texts and expression, so that spec_release frees them */
    if (!(c->text = strdup(text)) || !(c->reason = strdup(reason)))
      return tf_fail(e, TF_EXIT_FAIL, "out of memory");
    char kk[96];
    snprintf(kk, sizeof kk, "%s.expr", k);
    if (!(c->e = load_expr(s, text, kk, e))) return -1;
  }
  return 0;
}

/* A number where an expression is expected ("smem": 0, "block": [256, 1, 1]) becomes the
 * expression's text; only a whole number an expression holds exactly (|v| <= 2^53) is one. */
static int number_text(const spec *s, const char *k, const cJSON *it, char *text, size_t len,
                       tf_err *e) {
  long long v;
  if (jsonio_whole(it->valuedouble, -(1LL << 53), 1LL << 53, &v))
    return tf_fail(e, TF_EXIT_INPUT,
                   WHAT " '%s': key '%s' must be an expression string or a whole number "
                        "(at most 2^53)",
                   s->path, k);
  snprintf(text, len, "%lld", v);
  return 0;
}

/* One expression-valued string at obj[key], stored as text and tree. */
static int load_text_expr(spec *s, const cJSON *obj, const char *where, const char *key, int req,
                          const char *dflt, char *text, size_t len, expr **out, tf_err *e) {
  const char *t = dflt;
  char k[128];
  jsonio_key(k, sizeof k, where, key);
  const cJSON *it = cJSON_GetObjectItemCaseSensitive(obj, key);
  if (it && cJSON_IsNumber(it)) {
    if (number_text(s, k, it, text, len, e)) return -1;
  } else {
    if (jsonio_str(s->path, WHAT, obj, where, key, req, len - 1, &t, e)) return -1;
    if (!t) return 0;
    snprintf(text, len, "%s", t);
  }
  return (*out = load_expr(s, text, k, e)) ? 0 : -1;
}

/* lo to hi expressions under where.key into out[] (*n of them), each text in text + i * tlen;
 * `count` says how many for the message ("3 expressions (x, y, z)"). */
static int load_exprs(spec *s, const cJSON *obj, const char *where, const char *key, int lo,
                      int hi, const char *count, char *text, size_t tlen, expr **out, int *n,
                      tf_err *e) {
  const cJSON *arr;
  if (jsonio_child(s->path, WHAT, obj, where, key, 1, cJSON_Array, &arr, e)) return -1;
  *n = cJSON_GetArraySize(arr);
  if (*n < lo || *n > hi)
    return tf_fail(e, TF_EXIT_INPUT, WHAT " '%s': key '%s.%s' must list %s", s->path, where, key,
                   count);
  for (int i = 0; i < *n; i++) {
    const cJSON *it = cJSON_GetArrayItem(arr, i);
    char k[128], *t = text + (size_t)i * tlen;
    snprintf(k, sizeof k, "%s.%s[%d]", where, key, i);
    if (cJSON_IsNumber(it)) {
      if (number_text(s, k, it, t, tlen, e)) return -1;
    } else if (cJSON_IsString(it) && strlen(it->valuestring) < tlen) {
      snprintf(t, tlen, "%s", it->valuestring);
    } else {
      return tf_fail(e, TF_EXIT_INPUT, WHAT " '%s': key '%s' must be an expression string",
                     s->path, k);
    }
    if (!(out[i] = load_expr(s, t, k, e))) return -1;
  }
  return 0;
}

/* Three expressions (x, y, z) under where.key ("launch.grid", "reference.launch.block"). */
static int load_triple(spec *s, const cJSON *launch, const char *where, const char *key,
                       char text[3][128], expr **out, tf_err *e) {
  int n;
  return load_exprs(s, launch, where, key, 3, 3, "3 expressions (x, y, z)", text[0], 128, out,
                    &n, e);
}

static int load_launch(spec *s, const cJSON *root, tf_err *e) {
  static const char *const keys[] = {"grid", "block", "smem", NULL};
  const cJSON *launch;
  if (jsonio_child(s->path, WHAT, root, "", "launch", 1, cJSON_Object, &launch, e) ||
      jsonio_only_keys(s->path, WHAT, launch, "launch", keys, e) ||
      load_triple(s, launch, "launch", "grid", s->grid_text, s->grid, e) ||
      load_triple(s, launch, "launch", "block", s->block_text, s->block, e))
    return -1;
  return load_text_expr(s, launch, "launch", "smem", 0, "0", s->smem_text, sizeof s->smem_text,
                        &s->smem, e);
}

/* An expression that may name only problem sizes (the reference kernel's launch, an init
 * range): it has one value per problem, whatever the configuration. */
static int dims_only(const spec *s, const expr *x, const char *k, tf_err *e) {
  unsigned char used[SPEC_MAX_KNOBS + SPEC_MAX_DIMS] = {0};
  int rc = expr_slots(x, used, SPEC_MAX_KNOBS + SPEC_MAX_DIMS);
  for (int i = 0; rc == 0 && i < s->nknobs; i++) rc = used[i] ? -1 : 0;
  if (rc == 0) return 0;
  return tf_fail(e, TF_EXIT_INPUT, WHAT " '%s': key '%s' may name only problem sizes, not knobs",
                 s->path, k);
}

static int load_role(spec *s, const cJSON *it, const char *k, spec_buffer *b, tf_err *e) {
  static const char *const roles[] = {"input", "output", "inout", "scratch"};
  const char *role, *type = "f32";
  if (jsonio_str(s->path, WHAT, it, k, "role", 1, 16, &role, e) ||
      jsonio_str(s->path, WHAT, it, k, "type", 0, 16, &type, e))
    return -1;
  b->role = -1;
  for (int r = 0; r < 4; r++)
    if (!strcmp(role, roles[r])) b->role = r;
  if (b->role < 0)
    return tf_fail(e, TF_EXIT_INPUT, WHAT " '%s': key '%s.role' must be \"input\", \"output\", "
                   "\"inout\" or \"scratch\"", s->path, k);
  b->output = SPEC_ROLE_CHECKED(b->role);
  if ((b->type = reference_type_of(type)) < 0)
    return tf_fail(e, TF_EXIT_INPUT, WHAT " '%s': key '%s.type' must be one of f32, f64, f16, "
                   "bf16, i8, u8, i32, u32, i64", s->path, k);
  return 0;
}

/* [a, b] of two finite numbers into *a, *b; `what` names the form in the message. */
static int number_pair(const spec *s, const cJSON *v, const char *k, const char *what, double *a,
                       double *b, tf_err *e) {
  if (!cJSON_IsArray(v) || cJSON_GetArraySize(v) != 2 ||
      !cJSON_IsNumber(cJSON_GetArrayItem(v, 0)) || !cJSON_IsNumber(cJSON_GetArrayItem(v, 1)) ||
      !isfinite(cJSON_GetArrayItem(v, 0)->valuedouble) ||
      !isfinite(cJSON_GetArrayItem(v, 1)->valuedouble))
    return tf_fail(e, TF_EXIT_INPUT, WHAT " '%s': key '%s' must be %s, two finite numbers",
                   s->path, k, what);
  *a = cJSON_GetArrayItem(v, 0)->valuedouble;
  *b = cJSON_GetArrayItem(v, 1)->valuedouble;
  return 0;
}

/* {"int": [lo, hi]}: two expressions over the problem sizes, evaluated by spec_launch. */
static int load_int_range(spec *s, const cJSON *v, const char *k, spec_buffer *b, tf_err *e) {
  expr **ends[2] = {&b->init_lo, &b->init_hi};
  if (!cJSON_IsArray(v) || cJSON_GetArraySize(v) != 2)
    return tf_fail(e, TF_EXIT_INPUT, WHAT " '%s': key '%s' must be [lo, hi], two expressions "
                   "over the problem sizes", s->path, k);
  for (int i = 0; i < 2; i++) {
    const cJSON *x = cJSON_GetArrayItem(v, i);
    char ki[160];
    snprintf(ki, sizeof ki, "%s[%d]", k, i);
    if (cJSON_IsNumber(x)) {
      if (number_text(s, ki, x, b->init_text[i], sizeof b->init_text[i], e)) return -1;
    } else if (cJSON_IsString(x) && strlen(x->valuestring) < sizeof b->init_text[i]) {
      snprintf(b->init_text[i], sizeof b->init_text[i], "%s", x->valuestring);
    } else {
      return tf_fail(e, TF_EXIT_INPUT, WHAT " '%s': key '%s' must be an expression string",
                     s->path, ki);
    }
    if (!(*ends[i] = load_expr(s, b->init_text[i], ki, e)) || dims_only(s, *ends[i], ki, e))
      return -1;
  }
  b->init.kind = REFERENCE_INIT_INT;
  return 0;
}

/* "init": one of {"uniform": [lo, hi]}, {"normal": [mean, sd]}, {"int": [lo, hi]},
 * {"const": v}; only for the buffers a fill writes. */
static int load_init(spec *s, const cJSON *it, const char *k, spec_buffer *b, tf_err *e) {
  const cJSON *init = cJSON_GetObjectItemCaseSensitive(it, "init");
  if (!init) return 0;
  char ki[96];
  snprintf(ki, sizeof ki, "%s.init", k);
  if (!SPEC_ROLE_FILLED(b->role))
    return tf_fail(e, TF_EXIT_INPUT, WHAT " '%s': key '%s': only an input or inout buffer is "
                   "filled", s->path, ki);
  if (!cJSON_IsObject(init) || cJSON_GetArraySize(init) != 1)
    return tf_fail(e, TF_EXIT_INPUT, WHAT " '%s': key '%s' must be one of {\"uniform\": [lo, hi]}, "
                   "{\"normal\": [mean, sd]}, {\"int\": [lo, hi]}, {\"const\": v}", s->path, ki);
  const cJSON *v = init->child;
  char kv[128];
  snprintf(kv, sizeof kv, "%s.%s", ki, v->string);
  reference_init *in = &b->init;
  if (!strcmp(v->string, "uniform")) {
    in->kind = REFERENCE_INIT_UNIFORM;
    if (number_pair(s, v, kv, "[lo, hi]", &in->a, &in->b, e)) return -1;
    if (!(in->a < in->b))
      return tf_fail(e, TF_EXIT_INPUT, WHAT " '%s': key '%s' must have lo < hi", s->path, kv);
  } else if (!strcmp(v->string, "normal")) {
    in->kind = REFERENCE_INIT_NORMAL;
    if (number_pair(s, v, kv, "[mean, sd]", &in->a, &in->b, e)) return -1;
    if (!(in->b > 0))
      return tf_fail(e, TF_EXIT_INPUT, WHAT " '%s': key '%s' must have sd > 0", s->path, kv);
  } else if (!strcmp(v->string, "int")) {
    return load_int_range(s, v, kv, b, e);
  } else if (!strcmp(v->string, "const")) {
    in->kind = REFERENCE_INIT_CONST;
    if (!cJSON_IsNumber(v) || !isfinite(v->valuedouble))
      return tf_fail(e, TF_EXIT_INPUT, WHAT " '%s': key '%s' must be a finite number", s->path, kv);
    in->a = v->valuedouble;
  } else {
    return tf_fail(e, TF_EXIT_INPUT, WHAT " '%s': key '%s' is not one of uniform, normal, int, "
                   "const", s->path, kv);
  }
  return 0;
}

/* "check": "exact" or {"rtol": r, "atol": a}; "allow_nonfinite": true. Only for the buffers
 * that are checked. */
static int load_check(spec *s, const cJSON *it, const char *k, spec_buffer *b, tf_err *e) {
  static const char *const keys[] = {"rtol", "atol", NULL};
  const cJSON *c = cJSON_GetObjectItemCaseSensitive(it, "check");
  const cJSON *nf = cJSON_GetObjectItemCaseSensitive(it, "allow_nonfinite");
  char kc[96];
  snprintf(kc, sizeof kc, "%s.%s", k, c ? "check" : "allow_nonfinite");
  if ((c || nf) && !b->output)
    return tf_fail(e, TF_EXIT_INPUT, WHAT " '%s': key '%s': only an output or inout buffer is "
                   "checked", s->path, kc);
  if (jsonio_bool(s->path, WHAT, it, k, "allow_nonfinite", 0, &b->check.allow_nonfinite, e))
    return -1;
  if (!c) return 0;
  if (cJSON_IsString(c) && !strcmp(c->valuestring, "exact")) {
    b->check.kind = REFERENCE_CHECK_EXACT;
    return 0;
  }
  if (!cJSON_IsObject(c) || cJSON_GetArraySize(c) == 0)
    return tf_fail(e, TF_EXIT_INPUT, WHAT " '%s': key '%s' must be \"exact\" or {\"rtol\": r, "
                   "\"atol\": a}", s->path, kc);
  b->check.kind = REFERENCE_CHECK_TOL;
  return jsonio_only_keys(s->path, WHAT, c, kc, keys, e) ||
                 jsonio_num(s->path, WHAT, c, kc, "rtol", 0, 0.0, 1.0, &b->check.rtol, e) ||
                 jsonio_num(s->path, WHAT, c, kc, "atol", 0, 0.0, 1e300, &b->check.atol, e)
             ? -1
             : 0;
}

static int load_buffers(spec *s, const cJSON *root, tf_err *e) {
  static const char *const keys[] = {"name", "count", "role", "clear", "type", "init", "check",
                                     "allow_nonfinite", NULL};
  const cJSON *arr, *it;
  if (jsonio_child(s->path, WHAT, root, "", "buffers", 1, cJSON_Array, &arr, e) ||
      !(s->bufs = alloc_table(s, "buffers", cJSON_GetArraySize(arr), SPEC_MAX_BUFFERS,
                              sizeof *s->bufs, e)))
    return -1;
  int i = 0, outputs = 0;
  cJSON_ArrayForEach(it, arr) {
    char k[64];
    snprintf(k, sizeof k, "buffers[%d]", i++);
    if (!cJSON_IsObject(it))
      return tf_fail(e, TF_EXIT_INPUT, WHAT " '%s': key '%s' must be an object", s->path, k);
    if (jsonio_only_keys(s->path, WHAT, it, k, keys, e)) return -1;
    spec_buffer *b = &s->bufs[s->nbuffers];
    const char *name;
    if (jsonio_str(s->path, WHAT, it, k, "name", 1, 63, &name, e) ||
        copy_name(s, k, name, b->name, sizeof b->name, e) || load_role(s, it, k, b, e))
      return -1;
    for (int j = 0; j < s->nbuffers; j++)
      if (strcmp(s->bufs[j].name, b->name) == 0)
        return tf_fail(e, TF_EXIT_INPUT, WHAT " '%s': key '%s.name': '%s' appears more than once",
                       s->path, k, b->name);
    outputs += b->output;
    s->nbuffers++; /* counted before its expressions load, so that spec_release frees them */
    if (load_text_expr(s, it, k, "count", 1, NULL, b->count_text, sizeof b->count_text, &b->count,
                       e) ||
        load_text_expr(s, it, k, "clear", 0, NULL, b->clear_text, sizeof b->clear_text, &b->clear,
                       e) ||
        load_init(s, it, k, b, e) || load_check(s, it, k, b, e))
      return -1;
  }
  if (outputs == 0)
    return tf_fail(e, TF_EXIT_INPUT, WHAT " '%s': key 'buffers' has no output buffer", s->path);
  return 0;
}

static int spec_buffer_index(const spec *s, const char *name) {
  for (int i = 0; i < s->nbuffers; i++)
    if (strcmp(s->bufs[i].name, name) == 0) return i;
  return -1;
}

#define ARG_FORMS "a name, an expression, {\"float\": x}, {\"name\": n, \"type\": t, \"value\": v} or {\"name\": n, \"tensormap\": {...}}"

/* A float scalar's value: a JSON number or a string holding one ("1e-5"). */
static int float_value(const spec *s, const cJSON *v, const char *k, double *out, tf_err *e) {
  char *end = NULL;
  if (cJSON_IsNumber(v)) *out = v->valuedouble;
  else if (cJSON_IsString(v)) *out = strtod(v->valuestring, &end);
  if (!(cJSON_IsNumber(v) || (cJSON_IsString(v) && end != v->valuestring && *end == '\0')) ||
      !isfinite(*out))
    return tf_fail(e, TF_EXIT_INPUT, WHAT " '%s': key '%s.value' must be a finite number",
                   s->path, k);
  return 0;
}

/* {"name": "eps", "type": "f32", "value": "1e-5"}: a float type takes a number, an integer
 * type an expression over knobs and problem sizes (or a whole number). */
static int load_typed_arg(spec *s, const cJSON *it, const char *k, spec_arg *a, tf_err *e) {
  static const char *const keys[] = {"name", "type", "value", NULL};
  const char *name, *type;
  if (jsonio_only_keys(s->path, WHAT, it, k, keys, e) ||
      jsonio_str(s->path, WHAT, it, k, "name", 1, SPEC_NAME - 1, &name, e) ||
      copy_name(s, k, name, a->name, sizeof a->name, e) ||
      jsonio_str(s->path, WHAT, it, k, "type", 1, 16, &type, e))
    return -1;
  if ((a->type = reference_type_of(type)) < 0)
    return tf_fail(e, TF_EXIT_INPUT, WHAT " '%s': key '%s.type' must be one of f32, f64, f16, "
                   "bf16, i8, u8, i32, u32, i64", s->path, k);
  const cJSON *v = cJSON_GetObjectItemCaseSensitive(it, "value");
  if (!v)
    return tf_fail(e, TF_EXIT_INPUT, WHAT " '%s': key '%s.value' is missing", s->path, k);
  if (reference_type_is_float(a->type)) {
    a->kind = SPEC_ARG_FLOAT;
    if (float_value(s, v, k, &a->f, e)) return -1;
    if (a->type != REFERENCE_F64 && !(fabs(a->f) <= FLT_MAX))
      return tf_fail(e, TF_EXIT_INPUT, WHAT " '%s': key '%s.value' is beyond a float's range",
                     s->path, k);
    return 0;
  }
  a->kind = SPEC_ARG_INT;
  return load_text_expr(s, it, k, "value", 1, NULL, a->text, sizeof a->text, &a->e, e);
}

/* {"name": "tmA", "tensormap": {"buffer": "A", "dims": [...], "box": [...], "swizzle": 128}} */
static int load_tmap_arg(spec *s, const cJSON *it, const char *k, spec_arg *a, tf_err *e) {
  static const char *const keys[] = {"name", "tensormap", NULL};
  static const char *const tkeys[] = {"buffer", "dims", "box", "swizzle", NULL};
  const char *name, *buf;
  const cJSON *tm;
  char w[80];
  snprintf(w, sizeof w, "%s.tensormap", k);
  if (jsonio_only_keys(s->path, WHAT, it, k, keys, e) ||
      jsonio_str(s->path, WHAT, it, k, "name", 1, SPEC_NAME - 1, &name, e) ||
      copy_name(s, k, name, a->name, sizeof a->name, e) ||
      jsonio_child(s->path, WHAT, it, k, "tensormap", 1, cJSON_Object, &tm, e) ||
      jsonio_only_keys(s->path, WHAT, tm, w, tkeys, e) ||
      jsonio_str(s->path, WHAT, tm, w, "buffer", 1, SPEC_NAME - 1, &buf, e))
    return -1;
  if (s->ntmaps == SPEC_MAX_TMAPS)
    return tf_fail(e, TF_EXIT_INPUT, WHAT " '%s': key '%s': more than %d tensor maps", s->path, k,
                   SPEC_MAX_TMAPS);
  if ((a->buffer = spec_buffer_index(s, buf)) < 0)
    return tf_fail(e, TF_EXIT_INPUT, WHAT " '%s': key '%s.buffer': no buffer is named '%s'",
                   s->path, w, buf);
  a->kind = SPEC_ARG_TMAP;
  a->tmap = s->ntmaps++;
  int nbox;
  if (load_exprs(s, tm, w, "dims", 1, SPEC_TMAP_RANK, "1 to 5 expressions", a->dim_text[0], 64,
                 a->dim, &a->rank, e) ||
      load_exprs(s, tm, w, "box", a->rank, a->rank, "as many expressions as dims", a->box_text[0],
                 64, a->box, &nbox, e))
    return -1;
  const cJSON *sw = cJSON_GetObjectItemCaseSensitive(tm, "swizzle");
  a->swizzle = sw ? (int)cJSON_GetNumberValue(sw) : 0;
  if (sw && (!cJSON_IsNumber(sw) || (a->swizzle != 0 && a->swizzle != 32 && a->swizzle != 64 &&
                                     a->swizzle != 128) || a->swizzle != sw->valuedouble))
    return tf_fail(e, TF_EXIT_INPUT, WHAT " '%s': key '%s.swizzle' must be 0, 32, 64 or 128 "
                   "(bytes)", s->path, w);
  return 0;
}

static int load_arg(spec *s, const cJSON *it, const char *k, spec_arg *a, tf_err *e) {
  a->type = -1;
  if (cJSON_IsObject(it) && cJSON_GetObjectItemCaseSensitive(it, "tensormap"))
    return load_tmap_arg(s, it, k, a, e);
  if (cJSON_IsObject(it) && cJSON_GetObjectItemCaseSensitive(it, "type"))
    return load_typed_arg(s, it, k, a, e);
  if (cJSON_IsObject(it)) {
    const cJSON *f = cJSON_GetObjectItemCaseSensitive(it, "float");
    if (!f || !cJSON_IsNumber(f) || cJSON_GetArraySize(it) != 1)
      return tf_fail(e, TF_EXIT_INPUT, WHAT " '%s': key '%s' must be " ARG_FORMS, s->path, k);
    if (!(fabs(f->valuedouble) <= FLT_MAX)) /* it is passed to the kernel as a float */
      return tf_fail(e, TF_EXIT_INPUT, WHAT " '%s': key '%s.float' is beyond a float's range",
                     s->path, k);
    a->kind = SPEC_ARG_FLOAT;
    a->f = f->valuedouble;
    return 0;
  }
  if (!cJSON_IsString(it) || strlen(it->valuestring) >= sizeof a->text)
    return tf_fail(e, TF_EXIT_INPUT, WHAT " '%s': key '%s' must be " ARG_FORMS, s->path, k);
  int b = spec_buffer_index(s, it->valuestring);
  if (b >= 0) {
    a->kind = SPEC_ARG_BUFFER;
    a->buffer = b;
    return 0;
  }
  a->kind = SPEC_ARG_INT;
  snprintf(a->text, sizeof a->text, "%s", it->valuestring);
  return (a->e = load_expr(s, a->text, k, e)) ? 0 : -1;
}

static int load_args(spec *s, const cJSON *root, tf_err *e) {
  const cJSON *arr, *it;
  if (jsonio_child(s->path, WHAT, root, "", "args", 1, cJSON_Array, &arr, e) ||
      !(s->args = alloc_table(s, "args", cJSON_GetArraySize(arr), SPEC_MAX_ARGS,
                              sizeof *s->args, e)))
    return -1;
  cJSON_ArrayForEach(it, arr) {
    char k[64];
    snprintf(k, sizeof k, "args[%d]", s->nargs);
    s->nargs++; /* counted before its expression loads, so that spec_release frees it */
    if (load_arg(s, it, k, &s->args[s->nargs - 1], e)) return -1;
  }
  return 0;
}

/* The .cu beside the .json (the file at key `key`) into out; the name may not leave that
 * folder. */
static int resolve_source(spec *s, const char *key, const char *src, char *out, tf_err *e) {
  if (!jsonio_safe_name(src) || strstr(src, ".."))
    return tf_fail(e, TF_EXIT_INPUT,
                   WHAT " '%s': key '%s': '%s' must be a file name beside the spec, not a path",
                   s->path, key, src);
  char tmp[SPEC_PATH];
  snprintf(tmp, sizeof tmp, "%s", s->path);
  int n = snprintf(out, SPEC_PATH, "%s/%s", dirname(tmp), src);
  if (n < 0 || (size_t)n >= SPEC_PATH)
    return tf_fail(e, TF_EXIT_INPUT, WHAT " '%s': path too long", s->path);
  FILE *f = fopen(out, "r");
  if (!f)
    return tf_fail(e, TF_EXIT_INPUT, WHAT " '%s': key '%s': cannot open '%s'", s->path, key, out);
  fclose(f);
  /* no link out of the folder, no #include of anything but the folder's own files */
  if (source_check(out, e)) return tf_wrap(e, WHAT " '%s': key '%s'", s->path, key);
  return 0;
}

/* "reference": {"library": "lib/libref.so"}: a CPU reference the user builds, a relative path
 * inside the spec's folder (each part a plain name: no "..", no hidden file). Only its form
 * is checked here: the library is a build product, which `check` and `audit` load
 * (common/cpuref.h) and the measure child uses; the simulated device needs none. */
static int load_library(spec *s, const cJSON *ref, tf_err *e) {
  static const char *const keys[] = {"library", NULL};
  const char *lib;
  if (jsonio_only_keys(s->path, WHAT, ref, "reference", keys, e) ||
      jsonio_str(s->path, WHAT, ref, "reference", "library", 1, 255, &lib, e))
    return -1;
  char part[256];
  const char *p = lib;
  for (size_t n; *p; p += n + (p[n] == '/')) {
    n = strcspn(p, "/");
    snprintf(part, sizeof part, "%.*s", (int)n, p);
    if (!jsonio_safe_name(part) || (p[n] == '/' && !p[n + 1]))
      return tf_fail(e, TF_EXIT_INPUT, WHAT " '%s': key 'reference.library': '%s' must be a "
                     "relative path inside the spec's folder (plain names joined by '/')",
                     s->path, lib);
  }
  char tmp[SPEC_PATH];
  snprintf(tmp, sizeof tmp, "%s", s->path);
  int n = snprintf(s->ref_library_path, SPEC_PATH, "%s/%s", dirname(tmp), lib);
  if (n < 0 || (size_t)n >= SPEC_PATH)
    return tf_fail(e, TF_EXIT_INPUT, WHAT " '%s': path too long", s->path);
  snprintf(s->ref_library, sizeof s->ref_library, "%s", lib);
  return 0;
}

/* "reference": {"kernel": k, "source": "ref.cu", "launch": {"grid": [...], "block": [...],
 * "smem": x}}: a kernel beside the spec that computes the outputs from the same arguments;
 * its launch names only problem sizes. Or a library (load_library). */
static int load_reference(spec *s, const cJSON *root, tf_err *e) {
  static const char *const keys[] = {"kernel", "source", "launch", "library", NULL};
  static const char *const lkeys[] = {"grid", "block", "smem", NULL};
  const cJSON *ref, *launch;
  const char *kernel, *src;
  if (jsonio_child(s->path, WHAT, root, "", "reference", 0, cJSON_Object, &ref, e)) return -1;
  if (!ref) return 0;
  if (cJSON_GetObjectItemCaseSensitive(ref, "library")) return load_library(s, ref, e);
  if (jsonio_only_keys(s->path, WHAT, ref, "reference", keys, e) ||
      jsonio_str(s->path, WHAT, ref, "reference", "kernel", 1, sizeof s->ref_kernel - 1, &kernel,
                 e) ||
      copy_name(s, "reference.kernel", kernel, s->ref_kernel, sizeof s->ref_kernel, e) ||
      jsonio_str(s->path, WHAT, ref, "reference", "source", 1, 63, &src, e) ||
      resolve_source(s, "reference.source", src, s->ref_source_path, e) ||
      jsonio_child(s->path, WHAT, ref, "reference", "launch", 1, cJSON_Object, &launch, e) ||
      jsonio_only_keys(s->path, WHAT, launch, "reference.launch", lkeys, e))
    return -1;
  static const char *const which[2] = {"grid", "block"};
  for (int w = 0; w < 2; w++) {
    expr **x = w ? s->ref_block : s->ref_grid;
    if (load_triple(s, launch, "reference.launch", which[w],
                    w ? s->ref_block_text : s->ref_grid_text, x, e))
      return -1;
    for (int i = 0; i < 3; i++) {
      char k[64];
      snprintf(k, sizeof k, "reference.launch.%s[%d]", which[w], i);
      if (dims_only(s, x[i], k, e)) return -1;
    }
  }
  return load_text_expr(s, launch, "reference.launch", "smem", 0, "0", s->ref_smem_text,
                        sizeof s->ref_smem_text, &s->ref_smem, e) ||
                 dims_only(s, s->ref_smem, "reference.launch.smem", e)
             ? -1
             : 0;
}

/* With a reference kernel the integer arguments name only problem sizes: the reference is
 * launched once per problem, with no configuration. */
static int check_reference_args(const spec *s, tf_err *e) {
  for (int a = 0; (s->ref_kernel[0] || s->ref_library[0]) && a < s->nargs; a++) {
    char k[32];
    snprintf(k, sizeof k, "args[%d]", a);
    if (s->args[a].kind == SPEC_ARG_INT && dims_only(s, s->args[a].e, k, e)) return -1;
  }
  return 0;
}

/* The name must match the file's base name, so a campaign's "template" finds it. */
static int check_name(spec *s, const char *name, tf_err *e) {
  char tmp[SPEC_PATH];
  snprintf(tmp, sizeof tmp, "%s", s->path);
  char *base = basename(tmp);
  size_t n = strlen(name);
  if (!jsonio_safe_name(name) || strncmp(base, name, n) != 0 || strcmp(base + n, ".json") != 0)
    return tf_fail(e, TF_EXIT_INPUT, WHAT " '%s': key 'name': '%s' must match the file name",
                   s->path, name);
  snprintf(s->name, sizeof s->name, "%s", name);
  return 0;
}

/* The longest name expression any configuration can produce must fit the jobs' 256 bytes. */
static int check_name_length(const spec *s, tf_err *e) {
  size_t n = strlen(s->kernel) + 2;
  for (int k = 0; k < s->nknobs; k++) {
    size_t widest = 0;
    for (int i = 0; i < s->knobs[k].nvalues; i++) {
      char v[32];
      size_t w = (size_t)snprintf(v, sizeof v, "%lld", s->knobs[k].values[i]);
      if (w > widest) widest = w;
    }
    n += widest + 2;
  }
  if (n >= 256)
    return tf_fail(e, TF_EXIT_INPUT,
                   WHAT " '%s': key 'knobs': an instantiation name would need %zu characters "
                        "(at most 255): fewer knobs or shorter values",
                   s->path, n);
  return 0;
}

/* tunefarm has no references of its own: "family", which named one in older templates, is
 * refused with what replaces it. */
static int refuse_family(const spec *s, const cJSON *root, tf_err *e) {
  if (!cJSON_GetObjectItemCaseSensitive(root, "family")) return 0;
  return tf_fail(e, TF_EXIT_INPUT,
                 WHAT " '%s': key 'family': tunefarm has no built-in references; name a "
                      "reference kernel or library ('reference', docs/reference/template.md)",
                 s->path);
}

static int load_root(spec *s, const cJSON *root, tf_err *e) {
  static const char *const keys[] = {"name", "doc", "source", "kernel", "family", "reference",
                                     "problem", "knobs", "constraints", "launch", "buffers",
                                     "args", "tolerance", "flops", "bytes", "arch_specific",
                                     NULL};
  const char *name, *src, *kernel, *doc;
  if (jsonio_only_keys(s->path, WHAT, root, "", keys, e) || refuse_family(s, root, e) ||
      jsonio_str(s->path, WHAT, root, "", "name", 1, 63, &name, e) || check_name(s, name, e) ||
      jsonio_str(s->path, WHAT, root, "", "doc", 0, 8192, &doc, e) ||
      jsonio_str(s->path, WHAT, root, "", "source", 1, 63, &src, e) ||
      resolve_source(s, "source", src, s->source_path, e) ||
      jsonio_str(s->path, WHAT, root, "", "kernel", 1, sizeof s->kernel - 1, &kernel, e) ||
      copy_name(s, "kernel", kernel, s->kernel, sizeof s->kernel, e) ||
      jsonio_bool(s->path, WHAT, root, "", "arch_specific", 0, &s->arch_specific, e))
    return -1;
  s->tolerance = 1e-5;
  if (load_dims(s, root, e) || load_knobs(s, root, e) || check_name_length(s, e) ||
      load_constraints(s, root, e) ||
      load_launch(s, root, e) || load_buffers(s, root, e) || load_reference(s, root, e) ||
      load_args(s, root, e) || check_reference_args(s, e) ||
      jsonio_num(s->path, WHAT, root, "", "tolerance", 0, 0.0, 1.0, &s->tolerance, e) ||
      load_text_expr(s, root, "", "flops", 0, NULL, s->flops_text, sizeof s->flops_text,
                     &s->flops, e) ||
      load_text_expr(s, root, "", "bytes", 0, NULL, s->bytes_text, sizeof s->bytes_text,
                     &s->bytes, e))
    return -1;
  return 0;
}

int spec_load(spec *s, const char *path, tf_err *e) {
  memset(s, 0, sizeof *s);
  if (strlen(path) >= sizeof s->path)
    return tf_fail(e, TF_EXIT_INPUT, WHAT " '%.64s...': path too long", path);
  snprintf(s->path, sizeof s->path, "%s", path);
  cJSON *root = jsonio_load(path, WHAT, e);
  if (!root) return -1;
  int rc = load_root(s, root, e);
  cJSON_Delete(root);
  if (rc) spec_release(s);
  return rc;
}

void spec_release(spec *s) {
  for (int i = 0; i < s->nconstraints; i++) {
    expr_free(s->cons[i].e);
    free(s->cons[i].text);
    free(s->cons[i].reason);
  }
  for (int i = 0; i < 3; i++) {
    expr_free(s->grid[i]);
    expr_free(s->block[i]);
  }
  expr_free(s->smem);
  for (int i = 0; i < s->nbuffers; i++) {
    expr_free(s->bufs[i].count);
    expr_free(s->bufs[i].clear);
    expr_free(s->bufs[i].init_lo);
    expr_free(s->bufs[i].init_hi);
  }
  for (int i = 0; i < 3; i++) {
    expr_free(s->ref_grid[i]);
    expr_free(s->ref_block[i]);
  }
  expr_free(s->ref_smem);
  for (int i = 0; i < s->nargs; i++) {
    expr_free(s->args[i].e);
    for (int d = 0; d < SPEC_TMAP_RANK; d++) expr_free(s->args[i].dim[d]), expr_free(s->args[i].box[d]);
  }
  expr_free(s->flops);
  expr_free(s->bytes);
  free(s->knobs);
  free(s->dims);
  free(s->cons);
  free(s->bufs);
  free(s->args);
  char path[SPEC_PATH];
  memcpy(path, s->path, sizeof path);
  memset(s, 0, sizeof *s);
  memcpy(s->path, path, sizeof path);
}

int spec_knob_index(const spec *s, const char *name) {
  for (int k = 0; k < s->nknobs; k++)
    if (strcmp(s->knobs[k].name, name) == 0) return k;
  return -1;
}

int spec_dim_index(const spec *s, const char *name) {
  for (int d = 0; d < s->ndims; d++)
    if (strcmp(s->dims[d].name, name) == 0) return d;
  return -1;
}

int spec_value_index(const spec *s, int k, long long v) {
  for (int i = 0; i < s->knobs[k].nvalues; i++)
    if (s->knobs[k].values[i] == v) return i;
  return -1;
}

int spec_config_from_json(const spec *s, const cJSON *obj, const char *what, const char *file,
                          const char *where, config *out, tf_err *e) {
  const cJSON *it;
  if (!cJSON_IsObject(obj))
    return tf_fail(e, TF_EXIT_INPUT, "%s '%s': key '%s' must be an object of knob values", what,
                   file, where);
  cJSON_ArrayForEach(it, obj) if (spec_knob_index(s, it->string) < 0) return tf_fail(
      e, TF_EXIT_INPUT, "%s '%s': key '%s.%s': template '%s' has no knob '%s'", what, file, where,
      it->string, s->name, it->string);
  memset(out, 0, sizeof *out);
  out->n = s->nknobs;
  for (int k = 0; k < s->nknobs; k++) {
    long long v = s->knobs[k].def;
    if (jsonio_int(file, what, obj, where, s->knobs[k].name, !s->knobs[k].has_default,
                   -1000000000LL, 1000000000LL, &v, e))
      return -1;
    if (spec_value_index(s, k, v) < 0) {
      char dom[256] = "";
      for (int i = 0; i < s->knobs[k].nvalues; i++)
        snprintf(dom + strlen(dom), sizeof dom - strlen(dom), "%s%lld", i ? ", " : "",
                 s->knobs[k].values[i]);
      return tf_fail(e, TF_EXIT_INPUT, "%s '%s': key '%s.%s': %lld is not in the knob's domain {%s}",
                     what, file, where, s->knobs[k].name, v, dom);
    }
    out->v[k] = v;
  }
  return 0;
}

cJSON *spec_config_to_json(const spec *s, const config *c) {
  cJSON *o = cJSON_CreateObject();
  for (int k = 0; k < s->nknobs && k < c->n; k++)
    cJSON_AddNumberToObject(o, s->knobs[k].name, (double)c->v[k]);
  return o;
}

int config_equal(const config *a, const config *b) {
  if (a->n != b->n) return 0;
  for (int k = 0; k < a->n; k++)
    if (a->v[k] != b->v[k]) return 0;
  return 1;
}

int spec_dims_from_json(const spec *s, const cJSON *obj, const char *what, const char *file,
                        const char *where, long long *dims, tf_err *e) {
  const cJSON *it;
  cJSON_ArrayForEach(it, obj) if (spec_dim_index(s, it->string) < 0) return tf_fail(
      e, TF_EXIT_INPUT, "%s '%s': key '%s.%s': template '%s' has no problem dimension '%s'", what,
      file, where, it->string, s->name, it->string);
  for (int d = 0; d < s->ndims; d++)
    if (jsonio_int(file, what, obj, where, s->dims[d].name, 1, s->dims[d].lo, s->dims[d].hi,
                   &dims[d], e))
      return -1;
  return 0;
}

/* A configuration's names: the values in the slots load_expr bound them to, and the binding
 * for expressions parsed elsewhere (audit --where), which are looked up by name. */
typedef struct named {
  binding b;
  long long v[SPEC_MAX_KNOBS + SPEC_MAX_DIMS];
} named;

static void name_values(const spec *s, const long long *dims, const config *c, named *n) {
  n->b = (binding){s, dims, c};
  for (int k = 0; k < s->nknobs; k++) n->v[k] = c ? c->v[k] : 1;
  for (int d = 0; d < s->ndims; d++) n->v[SPEC_MAX_KNOBS + d] = dims ? dims[d] : 1;
}

/* The expression at key `what`, or at constraints[cons].expr when cons >= 0: the key is only
 * written out for a message, since an enumeration evaluates constraints billions of times. */
static int eval_named(const spec *s, const expr *x, const named *n, const char *what, int cons,
                      long long *out, tf_err *e) {
  char msg[256], k[64], cfg[512];
  if (expr_eval_slots(x, n->v, bind_name, (void *)&n->b, out, msg, sizeof msg) == 0) return 0;
  if (cons >= 0) snprintf(k, sizeof k, "constraints[%d].expr", cons);
  spec_config_str(s, n->b.c, cfg, sizeof cfg);
  return tf_fail(e, TF_EXIT_INPUT, WHAT " '%s': key '%s': %s (at %s)", s->path,
                 cons >= 0 ? k : what, msg, cfg);
}

static int eval(const spec *s, const expr *x, const long long *dims, const config *c,
                const char *what, long long *out, tf_err *e) {
  named n;
  name_values(s, dims, c, &n);
  return eval_named(s, x, &n, what, -1, out, e);
}

int spec_eval(const spec *s, const expr *x, const long long *dims, const config *c, long long *out,
              tf_err *e) {
  *out = 0;
  return x ? eval(s, x, dims, c, "expression", out, e) : 0;
}

int spec_check_all(const spec *s, const long long *dims, const config *c, unsigned char *broken,
                   tf_err *e) {
  named n;
  name_values(s, dims, c, &n);
  for (int i = 0; i < s->nconstraints; i++) {
    long long v;
    if (eval_named(s, s->cons[i].e, &n, NULL, i, &v, e)) return -1;
    broken[i] = v == 0;
  }
  return 0;
}

int spec_check(const spec *s, const long long *dims, const config *c, int *violated, tf_err *e) {
  *violated = -1;
  named n;
  name_values(s, dims, c, &n);
  for (int i = 0; i < s->nconstraints; i++) {
    long long v;
    if (eval_named(s, s->cons[i].e, &n, NULL, i, &v, e)) return -1;
    if (v == 0) {
      *violated = i;
      return 0;
    }
  }
  return 0;
}

/* What spec_launch computes, key by key, in its order: the grid's and the block's dimensions
 * (interleaved), the shared memory, each buffer's count and clear, each integer argument.
 * No text is built here: spec_launch runs for every candidate, and a key is spelt out only
 * for a message. */
int spec_launch_values(const spec *s, spec_launch_value *out) {
  static const long long gmax[3] = {2147483647LL, 65535, 65535};
  int n = 0;
  for (int i = 0; i < 3; i++) {
    out[n++] = (spec_launch_value){SPEC_VALUE_GRID, i, s->grid[i], 1, gmax[i]};
    out[n++] = (spec_launch_value){SPEC_VALUE_BLOCK, i, s->block[i], 1, 1024};
  }
  out[n++] = (spec_launch_value){SPEC_VALUE_THREADS, 0, NULL, 1, 1024};
  out[n++] = (spec_launch_value){SPEC_VALUE_SMEM, 0, s->smem, 0, 232448};
  for (int b = 0; b < s->nbuffers; b++) {
    out[n++] = (spec_launch_value){SPEC_VALUE_COUNT, b, s->bufs[b].count, 1, SPEC_MAX_ELEMENTS};
    if (s->bufs[b].clear)
      out[n++] = (spec_launch_value){SPEC_VALUE_CLEAR, b, s->bufs[b].clear, LLONG_MIN, LLONG_MAX};
  }
  for (int a = 0; a < s->nargs; a++)
    if (s->args[a].kind == SPEC_ARG_INT) {
      double lo = -2147483648.0, hi = 2147483647.0; /* untyped: an int */
      if (s->args[a].type >= 0) reference_type_range(s->args[a].type, &lo, &hi);
      if (s->args[a].type == REFERENCE_I64) lo = (double)LLONG_MIN, hi = 9.2e18;
      out[n++] = (spec_launch_value){SPEC_VALUE_ARG, a, s->args[a].e, (long long)lo,
                                     (long long)hi};
    }
  for (int a = 0; a < s->nargs; a++)
    for (int i = 0; s->args[a].kind == SPEC_ARG_TMAP && i < s->args[a].rank; i++) {
      out[n++] = (spec_launch_value){SPEC_VALUE_TMAP_DIM, a * 8 + i, s->args[a].dim[i], 1,
                                     1LL << 32};
      out[n++] = (spec_launch_value){SPEC_VALUE_TMAP_BOX, a * 8 + i, s->args[a].box[i], 1, 256};
    }
  return n;
}

const char *spec_launch_value_key(const spec_launch_value *v, char *buf, size_t len) {
  static const char *const grid[3] = {"launch.grid[0]", "launch.grid[1]", "launch.grid[2]"};
  static const char *const block[3] = {"launch.block[0]", "launch.block[1]", "launch.block[2]"};
  switch (v->kind) {
    case SPEC_VALUE_GRID: return grid[v->index];
    case SPEC_VALUE_BLOCK: return block[v->index];
    case SPEC_VALUE_THREADS: return "launch.block";
    case SPEC_VALUE_SMEM: return "launch.smem";
    case SPEC_VALUE_COUNT: snprintf(buf, len, "buffers[%d].count", v->index); return buf;
    case SPEC_VALUE_CLEAR: snprintf(buf, len, "buffers[%d].clear", v->index); return buf;
    case SPEC_VALUE_TMAP_DIM:
    case SPEC_VALUE_TMAP_BOX:
      snprintf(buf, len, "args[%d].tensormap.%s[%d]", v->index / 8,
               v->kind == SPEC_VALUE_TMAP_DIM ? "dims" : "box", v->index % 8);
      return buf;
    default: snprintf(buf, len, "args[%d]", v->index); return buf;
  }
}

/* The threads of a block, the product of its dimensions: at most 1024. */
static int threads(const spec *s, long long n, tf_err *e) {
  if (n <= 1024) return 0;
  return tf_fail(e, TF_EXIT_INPUT, WHAT " '%s': key 'launch.block': more than 1024 threads",
                 s->path);
}

int spec_launch_value_knobs(const spec *s, const spec_launch_value *v,
                            unsigned char used[SPEC_MAX_KNOBS]) {
  unsigned char slots[SPEC_MAX_KNOBS + SPEC_MAX_DIMS] = {0};
  int rc = 0;
  if (v->kind == SPEC_VALUE_THREADS)
    for (int i = 0; i < 3; i++) rc |= expr_slots(s->block[i], slots, SPEC_MAX_KNOBS + SPEC_MAX_DIMS);
  else
    rc = expr_slots(v->x, slots, SPEC_MAX_KNOBS + SPEC_MAX_DIMS);
  memcpy(used, slots, SPEC_MAX_KNOBS); /* slot_of: the knobs first */
  return rc ? -1 : 0;
}

int spec_launch_value_eval(const spec *s, const spec_launch_value *v, const long long *dims,
                           const config *c, long long *out, tf_err *e) {
  char buf[32];
  const char *k = spec_launch_value_key(v, buf, sizeof buf);
  if (v->kind == SPEC_VALUE_THREADS) {
    *out = 1;
    for (int i = 0; i < 3; i++) {
      long long d;
      spec_launch_value b = {SPEC_VALUE_BLOCK, i, s->block[i], 1, 1024};
      if (spec_launch_value_eval(s, &b, dims, c, &d, e)) return -1;
      *out *= d;
    }
    return threads(s, *out, e);
  }
  if (eval(s, v->x, dims, c, k, out, e)) return -1;
  if (*out >= v->lo && *out <= v->hi) return 0;
  if (v->kind == SPEC_VALUE_COUNT)
    return tf_fail(e, TF_EXIT_INPUT, WHAT " '%s': key '%s' gives %lld elements, outside [1, 2^32]",
                   s->path, k, *out);
  if (v->kind == SPEC_VALUE_ARG)
    return tf_fail(e, TF_EXIT_INPUT, WHAT " '%s': key '%s' does not fit %s (it gives %lld)",
                   s->path, k,
                   s->args[v->index].type >= 0 ? reference_type_name(s->args[v->index].type)
                                               : "an int", *out);
  return tf_fail(e, TF_EXIT_INPUT, WHAT " '%s': key '%s' evaluates to %lld, outside [%lld, %lld]",
                 s->path, k, *out, v->lo, v->hi);
}

/* v's value, checked, where it goes in g. */
static void store(const spec *s, launch_geom *g, const spec_launch_value *v, long long x) {
  const int slot = v->kind >= SPEC_VALUE_TMAP_DIM ? s->args[v->index / 8].tmap : 0;
  switch (v->kind) {
    case SPEC_VALUE_TMAP_DIM: g->tmap_dim[slot][v->index % 8] = x; break;
    case SPEC_VALUE_TMAP_BOX: g->tmap_box[slot][v->index % 8] = x; break;
    case SPEC_VALUE_GRID: g->grid[v->index] = (unsigned)x; break;
    case SPEC_VALUE_BLOCK: g->block[v->index] = (unsigned)x; break;
    case SPEC_VALUE_SMEM: g->smem = (unsigned)x; break;
    case SPEC_VALUE_COUNT: g->count[v->index] = x; break;
    case SPEC_VALUE_CLEAR: g->clear[v->index] = x != 0; break;
    case SPEC_VALUE_ARG: g->iarg[v->index] = x; break;
    default: break;
  }
}

/* The integer ranges of the inputs filled with {"int": [lo, hi]}, at this problem: lo <= hi,
 * both within the buffer's type. */
static int init_ranges(const spec *s, const long long *dims, launch_geom *g, tf_err *e) {
  for (int b = 0; b < s->nbuffers; b++) {
    const spec_buffer *x = &s->bufs[b];
    if (x->init.kind != REFERENCE_INIT_INT) continue;
    char k[64];
    snprintf(k, sizeof k, "buffers[%d].init.int", b);
    if (eval(s, x->init_lo, dims, NULL, k, &g->init_lo[b], e) ||
        eval(s, x->init_hi, dims, NULL, k, &g->init_hi[b], e))
      return -1;
    double lo, hi;
    reference_type_range(x->type, &lo, &hi);
    if (reference_type_is_float(x->type)) lo = -9007199254740992.0, hi = 9007199254740992.0;
    if (g->init_lo[b] > g->init_hi[b] || (double)g->init_lo[b] < lo || (double)g->init_hi[b] > hi)
      return tf_fail(e, TF_EXIT_INPUT, WHAT " '%s': key '%s' gives [%lld, %lld]: it must be lo <= "
                     "hi, within %s", s->path, k, g->init_lo[b], g->init_hi[b],
                     reference_type_name(x->type));
  }
  return 0;
}

/* What cuTensorMapEncodeTiled asks: extents within the buffer, rows and the box's inner
 * extent whole multiples of 16 bytes, that extent within the swizzle. */
static int tmaps_fit(const spec *s, const launch_geom *g, tf_err *e) {
  for (int a = 0; a < s->nargs; a++) {
    const spec_arg *x = &s->args[a];
    if (x->kind != SPEC_ARG_TMAP) continue;
    const long long *d = g->tmap_dim[x->tmap], *b = g->tmap_box[x->tmap];
    const long long es = (long long)reference_type_size(s->bufs[x->buffer].type);
    double n = 1;
    for (int i = 0; i < x->rank; i++) n *= (double)d[i];
    const char *why = NULL;
    if (n > (double)g->count[x->buffer]) why = "its dimensions hold more elements than the buffer";
    else if (x->rank > 1 && d[0] * es % 16) why = "a row (dims[0] elements) is not a multiple of 16 bytes";
    else if (b[0] * es % 16) why = "the box's inner extent is not a multiple of 16 bytes";
    else if (x->swizzle && b[0] * es > x->swizzle) why = "the box's inner extent exceeds the swizzle";
    if (why)
      return tf_fail(e, TF_EXIT_INPUT, WHAT " '%s': key 'args[%d].tensormap': %s (dims[0] %lld, "
                     "box[0] %lld, %lld-byte elements)", s->path, a, why, d[0], b[0], es);
  }
  return 0;
}

int spec_launch(const spec *s, const long long *dims, const config *c, launch_geom *g, tf_err *e) {
  spec_launch_value vals[SPEC_LAUNCH_VALUES];
  int n = spec_launch_values(s, vals);
  memset(g, 0, sizeof *g);
  for (int i = 0; i < n; i++) {
    long long x;
    if (vals[i].kind == SPEC_VALUE_THREADS) { /* of the dimensions just computed */
      if (threads(s, (long long)g->block[0] * g->block[1] * g->block[2], e)) return -1;
      continue;
    }
    if (spec_launch_value_eval(s, &vals[i], dims, c, &x, e)) return -1;
    store(s, g, &vals[i], x);
  }
  return init_ranges(s, dims, g, e) || tmaps_fit(s, g, e) ? -1 : 0;
}

int spec_reference_launch(const spec *s, const long long *dims, launch_geom *g, tf_err *e) {
  static const long long gmax[3] = {2147483647LL, 65535, 65535};
  memset(g, 0, sizeof *g);
  if (!s->ref_kernel[0] && !s->ref_library[0])
    return tf_fail(e, TF_EXIT_FAIL, WHAT " '%s': no reference kernel", s->path);
  spec_launch_value vals[SPEC_LAUNCH_VALUES];
  int n = 0;
  for (int i = 0; s->ref_kernel[0] && i < 3; i++) {
    vals[n++] = (spec_launch_value){SPEC_VALUE_GRID, i, s->ref_grid[i], 1, gmax[i]};
    vals[n++] = (spec_launch_value){SPEC_VALUE_BLOCK, i, s->ref_block[i], 1, 1024};
  }
  if (s->ref_kernel[0]) vals[n++] = (spec_launch_value){SPEC_VALUE_SMEM, 0, s->ref_smem, 0, 232448};
  spec_launch_value all[SPEC_LAUNCH_VALUES];
  int m = spec_launch_values(s, all);
  for (int i = 0; i < m; i++)
    if (all[i].kind == SPEC_VALUE_ARG) vals[n++] = all[i];
  for (int i = 0; i < n; i++) {
    long long x;
    char buf[32];
    if (eval(s, vals[i].x, dims, NULL, "reference.launch", &x, e)) return -1;
    if (x < vals[i].lo || x > vals[i].hi)
      return tf_fail(e, TF_EXIT_INPUT, WHAT " '%s': key '%s%s' evaluates to %lld, outside "
                     "[%lld, %lld]", s->path, vals[i].kind == SPEC_VALUE_ARG ? "" : "reference.",
                     spec_launch_value_key(&vals[i], buf, sizeof buf), x, vals[i].lo, vals[i].hi);
    store(s, g, &vals[i], x);
  }
  if (s->ref_kernel[0] && (long long)g->block[0] * g->block[1] * g->block[2] > 1024)
    return tf_fail(e, TF_EXIT_INPUT, WHAT " '%s': key 'reference.launch.block': more than 1024 "
                   "threads", s->path);
  return init_ranges(s, dims, g, e);
}

/* Appends the n bytes at p to buf (holding *at of len bytes, NUL-terminated); 0, or -1 and
 * nothing appended when they do not fit. */
static int put_bytes(char *buf, size_t len, size_t *at, const char *p, size_t n) {
  if (*at + n >= len) return -1;
  memcpy(buf + *at, p, n);
  *at += n;
  buf[*at] = '\0';
  return 0;
}

int spec_name_expr(const spec *s, const config *c, char *buf, size_t len) {
  size_t at = 0;
  if (len == 0) return -1;
  buf[0] = '\0';
  if (put_bytes(buf, len, &at, s->kernel, strlen(s->kernel))) return -1;
  for (int k = 0; k < s->nknobs; k++) {
    char num[24];
    int n = snprintf(num, sizeof num, "%lld", c->v[k]);
    if (put_bytes(buf, len, &at, k ? ", " : "<", k ? 2 : 1) ||
        put_bytes(buf, len, &at, num, (size_t)n))
      return -1;
  }
  return s->nknobs == 0 || put_bytes(buf, len, &at, ">", 1) == 0 ? 0 : -1;
}

void spec_config_str(const spec *s, const config *c, char *buf, size_t len) {
  size_t n = 0;
  buf[0] = '\0';
  if (!c) {
    snprintf(buf, len, "(no configuration)");
    return;
  }
  for (int k = 0; k < s->nknobs && k < c->n && n < len; k++)
    n += (size_t)snprintf(buf + n, len - n, "%s%s=%lld", k ? " " : "", s->knobs[k].name, c->v[k]);
  if (s->nknobs == 0) snprintf(buf, len, "%s", s->kernel);
}

/* One "KNOB=VALUE" into *cfg: a knob of s and one of its values; *knob its index. */
static int config_item(const spec *s, config *cfg, const char *item, const char *option, int *knob,
                       tf_err *e) {
  char name[SPEC_NAME];
  const char *eq = strchr(item, '=');
  if (!eq || eq == item || (size_t)(eq - item) >= sizeof name)
    return tf_fail(e, TF_EXIT_INPUT, "option '%s': '%s' is not KNOB=VALUE", option, item);
  memcpy(name, item, (size_t)(eq - item));
  name[eq - item] = '\0';
  int k = spec_knob_index(s, name);
  if (k < 0)
    return tf_fail(e, TF_EXIT_INPUT, "option '%s': key '%s' is not a knob of template '%s'",
                   option, name, s->name);
  char *end = NULL;
  errno = 0;
  long long v = strtoll(eq + 1, &end, 10);
  if (end == eq + 1 || *end || errno || spec_value_index(s, k, v) < 0)
    return tf_fail(e, TF_EXIT_INPUT, "option '%s': key '%s': '%s' is not one of its values",
                   option, name, eq + 1);
  cfg->v[k] = v;
  *knob = k;
  return 0;
}

int spec_config_parse(const spec *s, const config *start, const char *text, const char *option,
                      config *out, tf_err *e) {
  char buf[512];
  if (strlen(text) >= sizeof buf) return tf_fail(e, TF_EXIT_INPUT, "option '%s': too long", option);
  snprintf(buf, sizeof buf, "%s", text);
  *out = *start;
  int set[SPEC_MAX_KNOBS] = {0};
  for (char *item = buf, *next; item; item = next) {
    next = strchr(item, ',');
    if (next) *next++ = '\0';
    if (!item[0])
      return tf_fail(e, TF_EXIT_INPUT, "option '%s': '%s' has an empty item", option, text);
    int k = 0;
    if (config_item(s, out, item, option, &k, e)) return -1;
    if (set[k]++)
      return tf_fail(e, TF_EXIT_INPUT, "option '%s': key '%s' is given twice", option,
                     s->knobs[k].name);
  }
  return 0;
}

int spec_has_reference(const spec *s) { return s->ref_kernel[0] || s->ref_library[0]; }

int spec_same_interface(const spec *a, const spec *b) {
  int same = a->ndims == b->ndims && a->nbuffers == b->nbuffers && a->nargs == b->nargs;
  for (int d = 0; same && d < a->ndims; d++) same = strcmp(a->dims[d].name, b->dims[d].name) == 0;
  for (int i = 0; same && i < a->nbuffers; i++)
    same = strcmp(a->bufs[i].name, b->bufs[i].name) == 0 && a->bufs[i].type == b->bufs[i].type &&
           a->bufs[i].role == b->bufs[i].role;
  for (int i = 0; same && i < a->nargs; i++)
    same = a->args[i].kind == b->args[i].kind && a->args[i].type == b->args[i].type &&
           (a->args[i].kind != SPEC_ARG_BUFFER || a->args[i].buffer == b->args[i].buffer) &&
           (a->args[i].kind != SPEC_ARG_TMAP || (a->args[i].buffer == b->args[i].buffer &&
                                                 a->args[i].rank == b->args[i].rank));
  return same;
}
