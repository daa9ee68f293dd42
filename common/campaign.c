/* campaign: loading campaigns/NAME.json (see campaign.h). */
#include "common/campaign.h"

#include <libgen.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "common/cache.h"
#include "common/source.h" /* defines: source_includes_of */
#include "common/decide.h"
#include "common/jsonio.h"
#include "common/rule.h" /* defines: decide_select, decide_params_load, rule_names */

#define WHAT "campaign"

/* The installed templates, kernels and campaigns (CMake sets it to <prefix>/share/tunefarm). */
#ifndef TF_DATA_DIR
#define TF_DATA_DIR "/usr/local/share/tunefarm"
#endif


void campaign_defaults(campaign *c) {
  /* 16 ahead: a matmul compile (about 1.4 s of one host core) outlasts about 14 generations of
   * measuring (0.1 s each), and a program must be asked for that long before it is needed. */
  c->search = (search_opts){.enabled = 1, .budget = 40, .max_stale = 12, .two_knob_after = 6,
                            .mode = "neighbors", .proposer = "coordinate", .compile_ahead = 16};
  c->measure = (measure_opts){.burn_in = 4,
                              .rounds = 8,
                              .samples = 10,
                              .max_samples = 256,
                              .input_sets = 2,
                              .flush_l2 = 1,
                              .deadline_s = 120.0,
                              .seed = 1};
  decide_defaults(&c->decide);
  /* 16 paired rounds put the median's 95% interval at about +-0.1% for a 13 us kernel on a
   * quiet GPU; 50 generations between canaries cost ~4% of the time. */
  c->canary = (canary_opts){.rounds = 16, .every = 50, .max_restarts = 3, .threshold = -1.0};
}

/* The folder of the file at path, resolved; "" when it cannot be. */
static void folder_of(const char *path, char *out, size_t len) {
  char real[PATH_MAX];
  out[0] = '\0';
  if (realpath(path, real)) snprintf(out, len, "%s", dirname(real));
}

/* The installed data folder beside this binary (<prefix>/bin/tunefarm ->
 * <prefix>/share/tunefarm), so that an install that was moved still finds its templates. */
static void data_beside_binary(char *out, size_t len) {
  char exe[PATH_MAX], bin[PATH_MAX];
  out[0] = '\0';
  ssize_t n = readlink("/proc/self/exe", exe, sizeof exe - 1);
  if (n <= 0) return;
  exe[n] = '\0';
  folder_of(exe, bin, sizeof bin);
  if (bin[0]) snprintf(out, len, "%s/../share/tunefarm", bin);
}

static int has_template(const char *root, const char *name) {
  char p[SPEC_PATH + 128];
  snprintf(p, sizeof p, "%s/templates/%s.json", root, name);
  return access(p, F_OK) == 0;
}

/* The project root, where templates/ and kernels/ are: $TUNEFARM_ROOT when it is set (then
 * the only place looked at), else the first of the campaign folder's parent and the install's
 * data folder (beside the binary, then the configured prefix) that holds the template. */
static int find_root(campaign *c, const char *tmpl, tf_err *e) {
  const char *env = getenv("TUNEFARM_ROOT");
  if (env && env[0]) {
    snprintf(c->root, sizeof c->root, "%s", env);
    return 0;
  }
  char dir[PATH_MAX], parent[PATH_MAX] = "", beside[PATH_MAX];
  folder_of(c->path, dir, sizeof dir);
  if (!dir[0])
    return tf_fail(e, TF_EXIT_INPUT, WHAT " '%s': cannot resolve its folder", c->path);
  snprintf(parent, sizeof parent, "%s", dirname(dir));       /* .../campaigns -> ... */
  data_beside_binary(beside, sizeof beside);
  const char *roots[] = {parent, beside, TF_DATA_DIR};
  for (size_t i = 0; i < sizeof roots / sizeof roots[0]; i++)
    if (roots[i][0] && jsonio_safe_name(tmpl) && has_template(roots[i], tmpl)) {
      snprintf(c->root, sizeof c->root, "%s", roots[i]);
      return 0;
    }
  /* none holds it: the parent stays the root, so the message names the file looked for */
  snprintf(c->root, sizeof c->root, "%s", parent);
  if (!jsonio_safe_name(tmpl)) return 0; /* load_named_spec says what is wrong with the name */
  return tf_fail(e, TF_EXIT_INPUT,
                 WHAT " '%s': key 'template': no templates/%s.json in %s (the campaign folder's "
                 "parent) nor in the install (%s): put the campaign in a campaigns/ folder beside "
                 "templates/ and kernels/, or set TUNEFARM_ROOT to the folder that holds them",
                 c->path, tmpl, parent, TF_DATA_DIR);
}

static int base_name(campaign *c, tf_err *e) {
  char tmp[SPEC_PATH];
  snprintf(tmp, sizeof tmp, "%s", c->path);
  char *b = basename(tmp);
  size_t n = strlen(b);
  if (n < 6 || strcmp(b + n - 5, ".json") != 0)
    return tf_fail(e, TF_EXIT_INPUT, WHAT " '%s': the file name must end in .json", c->path);
  b[n - 5] = '\0';
  if (!jsonio_safe_name(b))
    return tf_fail(e, TF_EXIT_INPUT,
                   WHAT " '%s': the name '%s' may hold only letters, digits, '-', '_' and '.'",
                   c->path, b);
  snprintf(c->name, sizeof c->name, "%s", b);
  return 0;
}

/* templates/NAME.json or kernels/NAME.json under the root; the name cannot leave the folder. */
static int load_named_spec(campaign *c, const char *key, const char *folder, const char *name,
                           spec *out, tf_err *e) {
  if (!jsonio_safe_name(name) || strstr(name, ".."))
    return tf_fail(e, TF_EXIT_INPUT,
                   WHAT " '%s': key '%s': '%s' must be a plain name (letters, digits, '-', '_')",
                   c->path, key, name);
  char path[SPEC_PATH];
  int n = snprintf(path, sizeof path, "%s/%s/%s.json", c->root, folder, name);
  if (n < 0 || (size_t)n >= sizeof path)
    return tf_fail(e, TF_EXIT_INPUT, WHAT " '%s': key '%s': path too long", c->path, key);
  if (spec_load(out, path, e) == 0) return 0;
  return tf_wrap(e, WHAT " '%s': key '%s'", c->path, key);
}

/* Every output of every arm is checked against the template's reference. */
static int need_reference(const campaign *c, tf_err *e) {
  if (spec_has_reference(&c->tmpl)) return 0;
  return tf_fail(e, TF_EXIT_INPUT,
                 WHAT " '%s': key 'template': template '%s': key 'reference': nothing checks "
                      "the kernel's outputs; name a reference kernel beside it or a reference "
                      "library (docs/reference/template.md)",
                 c->path, c->tmpl.path);
}

/* search.params: numbers by name, as written; which names a proposer takes and their ranges
 * are the proposer's (coordinator/propose.h), checked where the proposer is found. */
static int load_search_params(campaign *c, const cJSON *o, tf_err *e) {
  const cJSON *params, *p;
  if (jsonio_child(c->path, WHAT, o, "search", "params", 0, cJSON_Object, &params, e)) return -1;
  cJSON_ArrayForEach(p, params) {
    search_opts *so = &c->search;
    if (!jsonio_safe_name(p->string) || strlen(p->string) >= sizeof so->param_key[0])
      return tf_fail(e, TF_EXIT_INPUT, WHAT " '%s': key 'search.params' holds a key that is "
                     "not a short name", c->path);
    if (so->nparams == SEARCH_MAX_PARAMS)
      return tf_fail(e, TF_EXIT_INPUT, WHAT " '%s': key 'search.params' holds more than %d keys",
                     c->path, SEARCH_MAX_PARAMS);
    double v = 0;
    if (jsonio_num(c->path, WHAT, params, "search.params", p->string, 1, -1e300, 1e300, &v, e))
      return -1;
    snprintf(so->param_key[so->nparams], sizeof so->param_key[0], "%s", p->string);
    so->param_value[so->nparams++] = v;
  }
  return 0;
}

static int load_search(campaign *c, const cJSON *root, tf_err *e) {
  static const char *const keys[] = {"budget", "max_stale", "two_knob_after", "restarts",
                                     "mode", "pair", "fresh_every", "proposer",
                                     "compile_ahead", "params", NULL};
  const cJSON *o;
  long long v;
  if (jsonio_child(c->path, WHAT, root, "", "search", 0, cJSON_Object, &o, e)) return -1;
  if (!o) { /* a baseline run: start against the control, once */
    c->search.enabled = 0;
    c->search.budget = 1;
    c->search.fixed = 1;
    c->search.pair = c->start;
    snprintf(c->search.mode, sizeof c->search.mode, "aa");
    return 0;
  }
  const char *proposer = NULL;
  if (jsonio_only_keys(c->path, WHAT, o, "search", keys, e) ||
      jsonio_str(c->path, WHAT, o, "search", "proposer", 0, sizeof c->search.proposer - 1,
                 &proposer, e))
    return -1;
  if (proposer && !jsonio_safe_name(proposer))
    return tf_fail(e, TF_EXIT_INPUT, WHAT " '%s': key 'search.proposer' must be a name",
                   c->path);
  if (proposer) snprintf(c->search.proposer, sizeof c->search.proposer, "%s", proposer);
  if (load_search_params(c, o, e)) return -1;
  v = c->search.budget;
  if (jsonio_int(c->path, WHAT, o, "search", "budget", 0, 1, 100000, &v, e)) return -1;
  c->search.budget = (int)v;
  v = c->search.max_stale;
  if (jsonio_int(c->path, WHAT, o, "search", "max_stale", 0, 1, 100000, &v, e)) return -1;
  c->search.max_stale = (int)v;
  v = c->search.two_knob_after;
  if (jsonio_int(c->path, WHAT, o, "search", "two_knob_after", 0, 0, 100000, &v, e)) return -1;
  c->search.two_knob_after = (int)v;
  v = c->search.restarts;
  if (jsonio_int(c->path, WHAT, o, "search", "restarts", 0, 0, 1000, &v, e)) return -1;
  c->search.restarts = (int)v;
  v = c->search.fresh_every;
  if (jsonio_int(c->path, WHAT, o, "search", "fresh_every", 0, 0, 100000, &v, e)) return -1;
  c->search.fresh_every = (int)v;
  v = c->search.compile_ahead;
  if (jsonio_int(c->path, WHAT, o, "search", "compile_ahead", 0, 0, 32, &v, e)) return -1;
  c->search.compile_ahead = (int)v;
  const char *mode = NULL;
  if (jsonio_str(c->path, WHAT, o, "search", "mode", 0, 16, &mode, e)) return -1;
  if (mode && strcmp(mode, "aa") && strcmp(mode, "pair") && strcmp(mode, "neighbors"))
    return tf_fail(e, TF_EXIT_INPUT,
                   WHAT " '%s': key 'search.mode' must be \"neighbors\", \"aa\" or \"pair\"",
                   c->path);
  c->search.fixed = mode && strcmp(mode, "neighbors") != 0;
  snprintf(c->search.mode, sizeof c->search.mode, "%s", mode ? mode : "neighbors");
  if (c->search.fixed && c->search.restarts > 0)
    return tf_fail(e, TF_EXIT_INPUT,
                   WHAT " '%s': key 'search.restarts' needs mode \"neighbors\" (a study of the "
                   "rule never moves best, so there is nothing to restart)", c->path);
  c->search.pair = c->start;
  const cJSON *pair = cJSON_GetObjectItemCaseSensitive(o, "pair");
  if (mode && strcmp(mode, "pair") == 0) {
    if (!pair)
      return tf_fail(e, TF_EXIT_INPUT, WHAT " '%s': key 'search.pair' is missing (mode \"pair\")",
                     c->path);
    if (spec_config_from_json(&c->tmpl, pair, WHAT, c->path, "search.pair", &c->search.pair, e))
      return -1;
  } else if (pair) {
    return tf_fail(e, TF_EXIT_INPUT, WHAT " '%s': key 'search.pair' needs mode \"pair\"", c->path);
  }
  return 0;
}

static int get_int(campaign *c, const cJSON *o, const char *where, const char *key, long long lo,
                   long long hi, int *out, tf_err *e) {
  long long v = *out;
  if (jsonio_int(c->path, WHAT, o, where, key, 0, lo, hi, &v, e)) return -1;
  *out = (int)v;
  return 0;
}

/* An optional string key that must be one of names[] (NULL-terminated); *out its index. */
static int get_choice(campaign *c, const cJSON *o, const char *where, const char *key,
                      const char *const *names, int *out, tf_err *e) {
  const char *v = NULL;
  if (jsonio_str(c->path, WHAT, o, where, key, 0, 32, &v, e)) return -1;
  if (!v) return 0;
  char known[128] = "";
  size_t n = 0;
  for (int i = 0; names[i]; i++) {
    if (strcmp(v, names[i]) == 0) {
      *out = i;
      return 0;
    }
    n += (size_t)snprintf(known + n, sizeof known - n, "%s\"%s\"", i ? ", " : "", names[i]);
    if (n >= sizeof known) n = sizeof known - 1;
  }
  return tf_fail(e, TF_EXIT_INPUT, WHAT " '%s': key '%s.%s' must be one of %s", c->path, where,
                 key, known);
}

static int load_measure(campaign *c, const cJSON *root, tf_err *e) {
  static const char *const keys[] = {"burn_in",  "rounds", "samples", "max_samples",
                                     "input_sets", "flush_l2", "deadline_s", "seed",
                                     "layout",   "code",   "order",   NULL};
  const cJSON *o;
  measure_opts *m = &c->measure;
  if (jsonio_child(c->path, WHAT, root, "", "measure", 0, cJSON_Object, &o, e)) return -1;
  if (!o) return 0;
  long long seed = (long long)m->seed;
  if (jsonio_only_keys(c->path, WHAT, o, "measure", keys, e) ||
      get_int(c, o, "measure", "burn_in", 0, 1000, &m->burn_in, e) ||
      get_int(c, o, "measure", "rounds", 1, 200, &m->rounds, e) ||
      get_int(c, o, "measure", "samples", 1, 10000, &m->samples, e) ||
      get_int(c, o, "measure", "max_samples", 1, 10000, &m->max_samples, e) ||
      get_int(c, o, "measure", "input_sets", 1, 8, &m->input_sets, e) ||
      jsonio_bool(c->path, WHAT, o, "measure", "flush_l2", 0, &m->flush_l2, e) ||
      jsonio_num(c->path, WHAT, o, "measure", "deadline_s", 0, 0.1, 86400.0, &m->deadline_s, e) ||
      jsonio_int(c->path, WHAT, o, "measure", "seed", 0, 0, (1LL << 53), &seed, e) ||
      get_choice(c, o, "measure", "layout", measure_layout_names, &m->layout, e) ||
      get_choice(c, o, "measure", "code", measure_code_names, &m->code, e) ||
      get_choice(c, o, "measure", "order", measure_order_names, &m->order, e))
    return -1;
  m->seed = (unsigned long long)seed;
  /* max_samples absent: at least samples, so that a campaign asking for many samples keeps them. */
  if (!cJSON_GetObjectItemCaseSensitive(o, "max_samples") && m->max_samples < m->samples)
    m->max_samples = m->samples;
  if (m->max_samples < m->samples)
    return tf_fail(e, TF_EXIT_INPUT,
                   WHAT " '%s': key 'measure.max_samples' (%d) must be at least 'measure.samples' (%d)",
                   c->path, m->max_samples, m->samples);
  return 0;
}

static int load_decide(campaign *c, const cJSON *root, tf_err *e) {
  const char *keys[64] = {"rule", "min_gain", "drift_tolerance", "max_requeue", "clock_skew",
                          "throttle_mhz", "max_screened"};
  int nkeys = 7;
  decide_param_keys(keys, &nkeys, 64); /* and every rule's own parameters */
  const cJSON *o;
  decide_opts *d = &c->decide;
  if (jsonio_child(c->path, WHAT, root, "", "decide", 0, cJSON_Object, &o, e)) return -1;
  if (!o) return 0;
  const char *rule = NULL;
  if (jsonio_only_keys(c->path, WHAT, o, "decide", keys, e) ||
      jsonio_str(c->path, WHAT, o, "decide", "rule", 0, sizeof d->rule - 1, &rule, e))
    return -1;
  if (rule && decide_select(d, rule)) {
    char known[256];
    rule_names(known, sizeof known);
    return tf_fail(e, TF_EXIT_INPUT, WHAT " '%s': key 'decide.rule': unknown rule '%s' (known: %s)",
                   c->path, rule, known);
  }
  return jsonio_num(c->path, WHAT, o, "decide", "min_gain", 0, 0.0, 0.5, &d->min_gain, e) ||
                 jsonio_num(c->path, WHAT, o, "decide", "drift_tolerance", 0, 0.0, 1.0,
                            &d->drift_tolerance, e) ||
                 get_int(c, o, "decide", "max_requeue", 0, 100, &d->max_requeue, e) ||
                 decide_params_load(c->path, WHAT, o, d, e) ||
                 jsonio_num(c->path, WHAT, o, "decide", "clock_skew", 0, 0.0, 1.0, &d->clock_skew,
                            e) ||
                 jsonio_num(c->path, WHAT, o, "decide", "throttle_mhz", 0, 0.0, 10000.0,
                            &d->throttle_mhz, e) ||
                 get_int(c, o, "decide", "max_screened", 0, 1000, &d->max_screened, e)
             ? -1
             : 0;
}

static int load_canary(campaign *c, const cJSON *root, tf_err *e) {
  static const char *const keys[] = {"rounds", "every", "max_restarts", "threshold", NULL};
  const cJSON *o;
  canary_opts *k = &c->canary;
  if (jsonio_child(c->path, WHAT, root, "", "canary", 0, cJSON_Object, &o, e)) return -1;
  if (o && (jsonio_only_keys(c->path, WHAT, o, "canary", keys, e) ||
            get_int(c, o, "canary", "rounds", 0, 64, &k->rounds, e) ||
            get_int(c, o, "canary", "every", 0, 100000, &k->every, e) ||
            get_int(c, o, "canary", "max_restarts", 0, 100, &k->max_restarts, e) ||
            jsonio_num(c->path, WHAT, o, "canary", "threshold", 0, 0.0, 0.5, &k->threshold, e)))
    return -1;
  if (k->rounds > 0 && k->rounds < 6)
    return tf_fail(e, TF_EXIT_INPUT,
                   WHAT " '%s': key 'canary.rounds' must be 0 (off) or at least 6: fewer rounds "
                   "cannot bound the median's 95%% interval", c->path);
  if (k->threshold < 0) k->threshold = c->decide.min_gain / 4.0;
  return 0;
}

static int load_inject(campaign *c, const cJSON *root, tf_err *e) {
  static const char *const keys[] = {"when", "fault", NULL};
  const cJSON *arr, *it;
  if (jsonio_child(c->path, WHAT, root, "", "inject", 0, cJSON_Array, &arr, e)) return -1;
  cJSON_ArrayForEach(it, arr) {
    char k[64];
    snprintf(k, sizeof k, "inject[%d]", c->ninject);
    if (c->ninject == (int)(sizeof c->inject / sizeof c->inject[0]))
      return tf_fail(e, TF_EXIT_INPUT, WHAT " '%s': key 'inject': too many rules", c->path);
    inject_rule *r = &c->inject[c->ninject];
    const cJSON *when, *kv;
    const char *fault;
    if (!cJSON_IsObject(it) || jsonio_only_keys(c->path, WHAT, it, k, keys, e) ||
        jsonio_child(c->path, WHAT, it, k, "when", 1, cJSON_Object, &when, e) ||
        jsonio_str(c->path, WHAT, it, k, "fault", 1, 7, &fault, e))
      return e->code ? -1 : tf_fail(e, TF_EXIT_INPUT, WHAT " '%s': key '%s' must be an object",
                                     c->path, k);
    if (strcmp(fault, "crash") && strcmp(fault, "hang") && strcmp(fault, "wrong"))
      return tf_fail(e, TF_EXIT_INPUT,
                     WHAT " '%s': key '%s.fault' must be \"crash\", \"hang\" or \"wrong\"", c->path,
                     k);
    snprintf(r->fault, sizeof r->fault, "%s", fault);
    r->when.n = c->tmpl.nknobs;
    cJSON_ArrayForEach(kv, when) {
      int kn = spec_knob_index(&c->tmpl, kv->string);
      if (kn < 0 || !cJSON_IsNumber(kv) ||
          jsonio_whole(kv->valuedouble, LLONG_MIN, LLONG_MAX, &r->when.v[kn]))
        return tf_fail(e, TF_EXIT_INPUT,
                       WHAT " '%s': key '%s.when.%s': not a knob with a whole number", c->path, k,
                       kv->string);
      r->mask |= 1u << kn;
    }
    c->ninject++;
  }
  return 0;
}

/* A buffer of the template named by key `k.field`: its index, or -1 with the message. */
static int peer_buffer(campaign *c, const cJSON *o, const char *k, const char *field, int *out,
                       tf_err *e) {
  const char *name;
  if (jsonio_str(c->path, WHAT, o, k, field, 1, SPEC_NAME - 1, &name, e)) return -1;
  for (int i = 0; i < c->tmpl.nbuffers; i++)
    if (strcmp(c->tmpl.bufs[i].name, name) == 0) return *out = i, 0;
  return tf_fail(e, TF_EXIT_INPUT, WHAT " '%s': key '%s.%s': template '%s' has no buffer '%s'",
                 c->path, k, field, c->tmpl.name, name);
}

static int peer_dim(campaign *c, const cJSON *o, const char *k, const char *field, int *out,
                    tf_err *e) {
  const char *name;
  if (jsonio_str(c->path, WHAT, o, k, field, 1, SPEC_NAME - 1, &name, e)) return -1;
  if ((*out = spec_dim_index(&c->tmpl, name)) >= 0) return 0;
  return tf_fail(e, TF_EXIT_INPUT,
                 WHAT " '%s': key '%s.%s': template '%s' has no problem dimension '%s'", c->path,
                 k, field, c->tmpl.name, name);
}

/* The element types a GEMM peer takes: A and B alike and floating (f32, f16, bf16), C f32 or
 * A's type; A and B inputs, C an output. */
static int peer_types(campaign *c, const peer_gemm *p, const char *k, tf_err *e) {
  const spec_buffer *a = &c->tmpl.bufs[p->a], *b = &c->tmpl.bufs[p->b],
                    *o = &c->tmpl.bufs[p->c];
  int t = a->type;
  if (a->output || b->output || !o->output)
    return tf_fail(e, TF_EXIT_INPUT, WHAT " '%s': key '%s': a and b must be inputs of the "
                   "template and c an output", c->path, k);
  if ((t != REFERENCE_F32 && t != REFERENCE_F16 && t != REFERENCE_BF16) || b->type != t ||
      (o->type != REFERENCE_F32 && o->type != t))
    return tf_fail(e, TF_EXIT_INPUT, WHAT " '%s': key '%s': a GEMM takes a and b of one type "
                   "(f32, f16 or bf16) and c of f32 or that type", c->path, k);
  return 0;
}

static int load_peer(campaign *c, const cJSON *it, const char *k, peer_gemm *p, tf_err *e) {
  static const char *const keys[] = {"library", "routine", "a", "b", "c", "m", "n", "k",
                                     "b_layout", NULL};
  const char *lib, *routine, *layout = "kn";
  if (!cJSON_IsObject(it))
    return tf_fail(e, TF_EXIT_INPUT, WHAT " '%s': key '%s' must be an object", c->path, k);
  if (jsonio_only_keys(c->path, WHAT, it, k, keys, e) ||
      jsonio_str(c->path, WHAT, it, k, "library", 1, 15, &lib, e) ||
      jsonio_str(c->path, WHAT, it, k, "routine", 1, 15, &routine, e) ||
      jsonio_str(c->path, WHAT, it, k, "b_layout", 0, 2, &layout, e))
    return -1;
  if (strcmp(lib, "cublas") != 0 || strcmp(routine, "gemm") != 0)
    return tf_fail(e, TF_EXIT_INPUT, WHAT " '%s': key '%s': unknown peer '%s' '%s' (known: "
                   "library \"cublas\", routine \"gemm\")", c->path, k, lib, routine);
  if (strcmp(layout, "kn") != 0 && strcmp(layout, "nk") != 0)
    return tf_fail(e, TF_EXIT_INPUT, WHAT " '%s': key '%s.b_layout' must be \"kn\" (B[K][N]) "
                   "or \"nk\" (B[N][K])", c->path, k);
  p->b_nk = layout[0] == 'n';
  if (peer_buffer(c, it, k, "a", &p->a, e) || peer_buffer(c, it, k, "b", &p->b, e) ||
      peer_buffer(c, it, k, "c", &p->c, e) || peer_dim(c, it, k, "m", &p->m, e) ||
      peer_dim(c, it, k, "n", &p->n, e) || peer_dim(c, it, k, "k", &p->k, e))
    return -1;
  return peer_types(c, p, k, e);
}

static int load_peers(campaign *c, const cJSON *root, tf_err *e) {
  const cJSON *arr, *it;
  if (jsonio_child(c->path, WHAT, root, "", "peers", 0, cJSON_Array, &arr, e)) return -1;
  cJSON_ArrayForEach(it, arr) {
    char k[32];
    snprintf(k, sizeof k, "peers[%d]", c->npeers);
    if (c->npeers == CAMPAIGN_MAX_PEERS)
      return tf_fail(e, TF_EXIT_INPUT, WHAT " '%s': key 'peers': at most %d", c->path,
                     CAMPAIGN_MAX_PEERS);
    if (load_peer(c, it, k, &c->peers[c->npeers], e)) return -1;
    c->npeers++;
  }
  return 0;
}

static int load_control(campaign *c, const cJSON *root, tf_err *e) {
  const cJSON *ctl = cJSON_GetObjectItemCaseSensitive(root, "control");
  if (!ctl) return tf_fail(e, TF_EXIT_INPUT, WHAT " '%s': key 'control' is missing", c->path);
  if (cJSON_IsObject(ctl)) {
    c->control_is_kernel = 0;
    return spec_config_from_json(&c->tmpl, ctl, WHAT, c->path, "control", &c->control_cfg, e);
  }
  if (!cJSON_IsString(ctl))
    return tf_fail(e, TF_EXIT_INPUT,
                   WHAT " '%s': key 'control' must name a committed kernel or give a configuration",
                   c->path);
  c->control_is_kernel = 1;
  if (load_named_spec(c, "control", "kernels", ctl->valuestring, &c->control_kernel, e)) return -1;
  const spec *k = &c->control_kernel;
  if (!spec_same_interface(k, &c->tmpl))
    return tf_fail(e, TF_EXIT_INPUT,
                   WHAT " '%s': key 'control': kernel '%s' takes other dimensions, buffers or "
                        "arguments than the template '%s' (or in another order)",
                   c->path, k->name, c->tmpl.name);
  c->control_cfg.n = 0;
  return 0;
}

/* A configuration of the template at `key` must pass every constraint and launch. */
static int check_config(campaign *c, const char *key, const config *cfg, tf_err *e) {
  int bad;
  if (spec_check(&c->tmpl, c->dims, cfg, &bad, e)) return -1;
  if (bad >= 0)
    return tf_fail(e, TF_EXIT_INPUT, WHAT " '%s': key '%s' breaks constraint '%s': %s", c->path,
                   key, c->tmpl.cons[bad].name, c->tmpl.cons[bad].reason);
  launch_geom g;
  if (spec_launch(&c->tmpl, c->dims, cfg, &g, e)) return tf_wrap(e, "key '%s'", key);
  return 0;
}

/* One knob's narrowed domain: a non-empty list of the template's values, each once. */
static int narrow_knob(campaign *c, const cJSON *it, tf_err *e) {
  spec_knob *kn = NULL;
  int k = spec_knob_index(&c->tmpl, it->string);
  if (k < 0)
    return tf_fail(e, TF_EXIT_INPUT, WHAT " '%s': key 'knobs.%s': template '%s' has no knob '%s'",
                   c->path, it->string, c->tmpl.name, it->string);
  kn = &c->tmpl.knobs[k];
  int n = cJSON_GetArraySize(it);
  if (!cJSON_IsArray(it) || n < 1)
    return tf_fail(e, TF_EXIT_INPUT, WHAT " '%s': key 'knobs.%s' must be a non-empty array of "
                   "the knob's values", c->path, it->string);
  unsigned char keep[SPEC_MAX_VALUES] = {0};
  const cJSON *v;
  cJSON_ArrayForEach(v, it) {
    long long x;
    if (!cJSON_IsNumber(v) || jsonio_whole(v->valuedouble, LLONG_MIN, LLONG_MAX, &x))
      return tf_fail(e, TF_EXIT_INPUT, WHAT " '%s': key 'knobs.%s' must hold integers", c->path,
                     it->string);
    int i = spec_value_index(&c->tmpl, k, x);
    if (i < 0) {
      char dom[512] = "";
      for (int j = 0; j < kn->nvalues; j++)
        snprintf(dom + strlen(dom), sizeof dom - strlen(dom), "%s%lld", j ? ", " : "",
                 kn->values[j]);
      return tf_fail(e, TF_EXIT_INPUT, WHAT " '%s': key 'knobs.%s': %lld is not in the "
                     "template's domain {%s} (template '%s')", c->path, it->string, x, dom,
                     c->tmpl.path);
    }
    if (keep[i])
      return tf_fail(e, TF_EXIT_INPUT, WHAT " '%s': key 'knobs.%s' repeats %lld", c->path,
                     it->string, x);
    keep[i] = 1;
  }
  int m = 0; /* the kept values, in the template's order */
  for (int i = 0; i < kn->nvalues; i++) {
    if (!keep[i]) continue;
    kn->values[m] = kn->values[i];
    memmove(kn->labels[m], kn->labels[i], sizeof kn->labels[m]);
    m++;
  }
  kn->nvalues = m;
  /* a default outside the narrowed domain is no default: the campaign gives the knob */
  if (kn->has_default && spec_value_index(&c->tmpl, k, kn->def) < 0) kn->has_default = 0;
  return 0;
}

/* "knobs": {"BK": [16, 32]} narrows the template's domains for this campaign: its start, its
 * search and its enumeration see only those values. */
static int narrow_knobs(campaign *c, const cJSON *root, tf_err *e) {
  const cJSON *o, *it;
  if (jsonio_child(c->path, WHAT, root, "", "knobs", 0, cJSON_Object, &o, e)) return -1;
  cJSON_ArrayForEach(it, o) if (narrow_knob(c, it, e)) return -1;
  return 0;
}

static int load_root(campaign *c, const cJSON *root, tf_err *e) {
  static const char *const keys[] = {"doc", "template", "knobs", "problem", "start", "control",
                                     "search", "measure", "decide", "canary", "inject", "peers",
                                     NULL};
  const char *tmpl;
  const cJSON *prob, *start;
  if (jsonio_only_keys(c->path, WHAT, root, "", keys, e) ||
      jsonio_str(c->path, WHAT, root, "", "template", 1, 63, &tmpl, e) ||
      find_root(c, tmpl, e) ||
      load_named_spec(c, "template", "templates", tmpl, &c->tmpl, e) ||
      need_reference(c, e) || narrow_knobs(c, root, e) ||
      jsonio_child(c->path, WHAT, root, "", "problem", 1, cJSON_Object, &prob, e) ||
      spec_dims_from_json(&c->tmpl, prob, WHAT, c->path, "problem", c->dims, e) ||
      jsonio_child(c->path, WHAT, root, "", "start", 1, cJSON_Object, &start, e) ||
      spec_config_from_json(&c->tmpl, start, WHAT, c->path, "start", &c->start, e) ||
      load_control(c, root, e) || load_search(c, root, e) || load_measure(c, root, e) ||
      load_decide(c, root, e) || load_canary(c, root, e) || load_inject(c, root, e) ||
      load_peers(c, root, e))
    return -1;
  if (check_config(c, "start", &c->start, e)) return -1;
  /* the control and a pair are measured every generation and never pass the proposer's check */
  if (!c->control_is_kernel && check_config(c, "control", &c->control_cfg, e)) return -1;
  if (c->search.fixed && check_config(c, "search.pair", &c->search.pair, e)) return -1;
  launch_geom g;
  if (c->control_is_kernel && spec_launch(&c->control_kernel, c->dims, &c->control_cfg, &g, e))
    return tf_wrap(e, "key 'control'");
  return 0;
}

/* The keys a ledger may be resumed under when they change (docs/reference/campaign.md, "What resuming
 * needs"): how long a search goes on, how its measure processes are vetted and how far ahead
 * it compiles, never what it measures or how it decides. */
static const char *const resumable_search_keys[] = {"budget", "max_stale", "restarts",
                                                    "fresh_every", "compile_ahead", NULL};

/* The campaign as its identity sees it: the parsed file without the resumable keys, printed
 * without whitespace. NULL when out of memory. */
static char *identity_text(const cJSON *root) {
  cJSON *copy = cJSON_Duplicate(root, 1);
  if (!copy) return NULL;
  cJSON *search = cJSON_GetObjectItemCaseSensitive(copy, "search");
  for (int i = 0; search && resumable_search_keys[i]; i++)
    cJSON_DeleteItemFromObjectCaseSensitive(search, resumable_search_keys[i]);
  cJSON_DeleteItemFromObjectCaseSensitive(copy, "canary");
  cJSON_DeleteItemFromObjectCaseSensitive(copy, "peers"); /* what bench times beside, no more */
  char *text = cJSON_PrintUnformatted(copy);
  cJSON_Delete(copy);
  return text;
}

#define HASH_FILES 4
#define HASH_PARTS (1 + HASH_FILES + 2 + 3 * (1 + 2 * SOURCE_MAX_HEADERS))

/* The parts of an identity being hashed: fixed arrays, nothing owned. */
typedef struct hash_parts {
  int n;
  const void *p[HASH_PARTS];
  size_t len[HASH_PARTS];
} hash_parts;

static void add_part(hash_parts *h, const void *p, size_t len) {
  h->p[h->n] = p;
  h->len[h->n++] = len;
}

/* What the kernel source at `path` includes, as parts after a tag naming whose they are:
 * each file's name and bytes, in the order source_includes_of gives. Nothing at all for a
 * source that includes nothing, so that the identity of such a campaign is what it was
 * before included files counted. */
static int add_includes(campaign *c, hash_parts *h, const char *tag, const char *path,
                        source_includes *inc, tf_err *e) {
  if (source_includes_of(path, inc, e)) return tf_wrap(e, WHAT " '%s'", c->path);
  if (inc->n == 0) return 0;
  add_part(h, tag, strlen(tag));
  for (int i = 0; i < inc->n; i++) {
    add_part(h, inc->names[i], strlen(inc->names[i]));
    add_part(h, inc->texts[i], inc->lens[i]);
  }
  return 0;
}

/* The campaign's identity for resume: the campaign without its resumable keys, and the bytes
 * of every file it names (the template's .json and .cu, its reference kernel's .cu, the
 * committed control's) and of every file those kernels include, so an edited kernel or header is a new campaign. hash_v1 is the
 * identity ledgers were started with before (the campaign file's own bytes, every key, and
 * the same files): resuming accepts either. */
static int hash_inputs(campaign *c, const cJSON *root, const char *text, size_t len, tf_err *e) {
  const char *files[HASH_FILES] = {c->tmpl.path, c->tmpl.source_path,
                                   c->control_is_kernel ? c->control_kernel.path : NULL,
                                   c->control_is_kernel ? c->control_kernel.source_path : NULL};
  hash_parts h = {0};
  char *bufs[HASH_FILES] = {0};
  source_includes inc[3] = {0};
  int rc = 0;
  add_part(&h, text, len);
  for (int i = 0; i < HASH_FILES && files[i] && rc == 0; i++) {
    size_t n = 0;
    bufs[i] = jsonio_slurp(files[i], "file", JSONIO_MAX_BYTES, &n, e);
    if (bufs[i]) add_part(&h, bufs[i], n);
    else rc = -1;
  }
  /* a reference kernel's source, after a tag, only where the template names one: the identity
   * of every campaign without one is what it was */
  char *ref = NULL;
  if (rc == 0 && c->tmpl.ref_kernel[0]) {
    size_t n = 0;
    if ((ref = jsonio_slurp(c->tmpl.ref_source_path, "file", JSONIO_MAX_BYTES, &n, e))) {
      add_part(&h, "reference kernel", 16);
      add_part(&h, ref, n);
    } else {
      rc = -1;
    }
  }
  if (rc == 0) rc = add_includes(c, &h, "template includes", files[1], &inc[0], e);
  if (rc == 0 && files[3]) rc = add_includes(c, &h, "control includes", files[3], &inc[1], e);
  /* a reference in a file of its own: what that file includes (the template's file's counted) */
  if (rc == 0 && c->tmpl.ref_kernel[0] && strcmp(c->tmpl.ref_source_path, files[1]) != 0)
    rc = add_includes(c, &h, "reference includes", c->tmpl.ref_source_path, &inc[2], e);
  char *id = rc == 0 ? identity_text(root) : NULL;
  if (rc == 0 && !id) rc = tf_fail(e, TF_EXIT_FAIL, WHAT " '%s': out of memory", c->path);
  if (rc == 0) {
    cache_key(h.p, h.len, h.n, c->hash_v1);
    h.p[0] = id;
    h.len[0] = strlen(id);
    cache_key(h.p, h.len, h.n, c->hash);
  }
  free(id);
  free(ref);
  for (int i = 0; i < HASH_FILES; i++) free(bufs[i]);
  source_includes_release(&inc[0]);
  source_includes_release(&inc[1]);
  source_includes_release(&inc[2]);
  return rc;
}

int campaign_load(campaign *c, const char *path, tf_err *e) {
  memset(c, 0, sizeof *c);
  if (strlen(path) >= sizeof c->path)
    return tf_fail(e, TF_EXIT_INPUT, WHAT " '%.64s...': path too long", path);
  snprintf(c->path, sizeof c->path, "%s", path);
  campaign_defaults(c);
  size_t len;
  char *text = jsonio_slurp(path, WHAT, JSONIO_MAX_BYTES, &len, e);
  if (!text) return -1;
  cJSON *root = jsonio_load(path, WHAT, e);
  if (!root) {
    free(text);
    return -1;
  }
  int rc = base_name(c, e) || load_root(c, root, e) ||
                   hash_inputs(c, root, text, len, e)
               ? -1
               : 0;
  free(text);
  cJSON_Delete(root);
  if (rc) campaign_release(c);
  return rc;
}

void campaign_release(campaign *c) {
  spec_release(&c->tmpl);
  spec_release(&c->control_kernel);
}

const char *campaign_fault_for(const campaign *c, const config *cfg) {
  for (int i = 0; i < c->ninject; i++) {
    const inject_rule *r = &c->inject[i];
    int match = 1;
    for (int k = 0; k < cfg->n; k++)
      if ((r->mask & (1u << k)) && r->when.v[k] != cfg->v[k]) match = 0;
    if (match) return r->fault;
  }
  return NULL;
}

void campaign_rel_path(const campaign *c, const char *path, char *out, size_t len) {
  char real[PATH_MAX], root[PATH_MAX];
  size_t n = strlen(c->root);
  if (n > 0 && strncmp(path, c->root, n) == 0 && path[n] == '/') { /* built from the root */
    snprintf(out, len, "%s", path + n + 1);
    return;
  }
  if (realpath(path, real) && realpath(c->root, root) && (n = strlen(root)) > 1 &&
      strncmp(real, root, n) == 0 && real[n] == '/') {
    snprintf(out, len, "%s", real + n + 1);
    return;
  }
  snprintf(out, len, "%s", path);
}
