#include "tools/audit.h"

#include <getopt.h>
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "common/clock.h"
#include "common/cpuref.h" /* defines: cpuref_validate */
#include "compile/compile.h"
#include "compile/iface.h"
#include "common/jsonio.h"
#include "common/mpimsg.h"
#include "common/msg.h"
#include "coordinator/job.h"
#include "coordinator/search.h" /* defines: search_config_of */
#include "worker/backend.h"
#include "worker/protocol.h" /* defines: protocol_run */
#include <cuda_runtime_api.h>

/* ---- shared option parsing and the check report ---- */

typedef struct audit_opts {
  const char *campaign;
  const char *arch;
  int batch;
  int verbose;
  int run;     /* also launch every reachable configuration on the GPU and check it */
  int list;    /* print the reachable configurations' name expressions, compile nothing */
  const char *where; /* NULL, or keep only the reachable configurations where it is non-zero */
  int audit_only;    /* an option given that only audit has (check refuses it) */
} audit_opts;

static int parse(int argc, char **argv, const char *cmd, audit_opts *o, void (*usage)(FILE *)) {
  static const struct option longs[] = {{"arch", required_argument, 0, 'a'},
                                         {"batch", required_argument, 0, 'b'},
                                         {"verbose", no_argument, 0, 'v'},
                                         {"run", no_argument, 0, 'r'},
                                         {"list", no_argument, 0, 'l'},
                                         {"where", required_argument, 0, 'w'},
                                         {"help", no_argument, 0, 'h'},
                                         {0, 0, 0, 0}};
  int c;
  optind = 1;
  while ((c = getopt_long(argc, argv, "a:b:vrlw:h", longs, NULL)) != -1) {
    o->audit_only |= c != 'h' && c != '?';
    switch (c) {
      case 'w': o->where = optarg; break;
      case 'r': o->run = 1; break;
      case 'l': o->list = 1; break;
      case 'a': o->arch = optarg; break;
      case 'b': o->batch = atoi(optarg); break;
      case 'v': o->verbose = 1; break;
      case 'h': usage(stdout); return 1;
      default: usage(stderr); return 2;
    }
  }
  if (optind != argc - 1 || o->batch < 1 || o->batch > COMPILE_MAX_EXPRS ||
      strncmp(o->arch, "sm_", 3) != 0) {
    fprintf(stderr, "tunefarm %s: %s\n", cmd,
            optind != argc - 1 ? "give exactly one campaign file"
                               : "--batch wants 1..64 and --arch an sm_XY name");
    usage(stderr);
    return 2;
  }
  o->campaign = argv[optind];
  return 0;
}

static void print_space(FILE *out, const campaign *c, const space_view *v) {
  const spec *s = &c->tmpl;
  char cfg[512];
  fprintf(out, "campaign '%s': template '%s' (%d knobs, %d constraints), problem", c->path,
          s->name, s->nknobs, s->nconstraints);
  for (int d = 0; d < s->ndims; d++) fprintf(out, " %s=%lld", s->dims[d].name, c->dims[d]);
  fprintf(out, "\n  space:      %lld configurations\n", v->size);
  fprintf(out, "  accepted:   %lld (pass every constraint)\n", v->accepted);
  fprintf(out, "  reachable:  %d (accepted and reachable from start by one- and two-knob moves)\n",
          v->nall);
  fprintf(out, "  refusals by constraint (a configuration can break several):\n");
  for (int k = 0; k < s->nconstraints; k++) {
    char name[sizeof s->cons[k].name * 4], reason[sizeof s->cons[k].reason * 4];
    fprintf(out, "    %-22s %8lld  %s\n", tf_escape(name, sizeof name, s->cons[k].name),
            v->refused_by[k], tf_escape(reason, sizeof reason, s->cons[k].reason));
  }
  spec_config_str(s, &c->start, cfg, sizeof cfg);
  fprintf(out, "  start:      %s\n", cfg);
  if (c->control_is_kernel)
    fprintf(out, "  control:    committed kernel '%s'\n", c->control_kernel.name);
  else {
    spec_config_str(s, &c->control_cfg, cfg, sizeof cfg);
    fprintf(out, "  control:    %s\n", cfg);
  }
}

static void check_usage(FILE *f) {
  fprintf(f, "usage: tunefarm check CAMPAIGN\n\n"
             "Load and validate a campaign and its template; compile the start configuration,\n"
             "the reference kernel and a committed control kernel with NVRTC for sm_90 (through\n"
             "the cubin cache) and compare each one's parameters and template parameters with\n"
             "the spec's arguments and knobs (docs/reference/check.md); print the size of the knob\n"
             "space, how many configurations are accepted and reachable, and how many each\n"
             "constraint refuses. A launch value (grid, block, shared memory,\n"
             "a buffer's size, an argument) that cannot be computed at some accepted\n"
             "configurations gets a warning line on stderr: its key, how many, the first and\n"
             "why (`run` refuses such a candidate).\n"
             "Exit status: 0 valid, 2 bad input (the message names the file and the key).\n");
}

/* The campaign at o->campaign into *c (a large value: the caller allocates it); "check" or
 * "audit" names the command in the message. */
static int load(const audit_opts *o, const char *cmd, campaign *c, int say) {
  tf_err e = {0};
  if (campaign_load(c, o->campaign, &e) == 0) return 0;
  if (say) fprintf(stderr, "tunefarm %s: %s\n", cmd, e.msg);
  return tf_exit_status(&e);
}

/* ---- the kernels' interfaces against their specs (compile/iface.h) ----
 *
 * NVRTC lowers each kernel's name expression to its mangled name, which holds the template
 * argument count and the parameter types: the start configuration's instantiation of the
 * template (the other configurations take the same arguments unless a knob changes a type:
 * audit checks each one it compiles), the reference kernel and a committed control kernel,
 * each compiled through the cubin cache as `run` and `audit` compile them. */

/* The first line of NVRTC's log that says "error", else its first line. */
static void log_error_line(const char *log, char *out, size_t len) {
  const char *at = log ? strstr(log, "error") : NULL;
  if (!log) log = "";
  if (at)
    while (at > log && at[-1] != '\n') at--;
  else
    at = log;
  size_t n = strcspn(at, "\n");
  snprintf(out, len, "%.*s", (int)(n < len ? n : len - 1), at);
}

/* Kernel `expr` of source `src` compiled for arch, its lowered name read and compared with s.
 * A refusal is s's defect (TF_EXIT_INPUT) unless quiet_refusal (audit reports those with
 * their log); a lowered name the parser cannot read leaves the kernel unchecked, with a
 * warning on `warn` (NULL: none). */
static int iface_kernel(const spec *s, const char *src, const char *name_expr, int reference,
                        const char *arch, int quiet_refusal, FILE *warn, tf_err *e) {
  const char *srcs[1] = {src};
  compile_req req = {.source_paths = srcs, .nsources = 1, .name_exprs = &name_expr, .nexprs = 1,
                     .arch = arch};
  compile_result r;
  memset(&r, 0, sizeof r);
  int rc = compile_program(&req, &r, e);
  if (rc && e->code == TF_COMPILE_REFUSED) {
    char line[400];
    log_error_line(r.log, line, sizeof line);
    compile_release(&r);
    if (quiet_refusal) return 0;
    return tf_fail(e, TF_EXIT_INPUT, "spec '%s': key '%s': NVRTC refuses '%s' for %s (`tunefarm "
                   "audit` prints the whole log): %s", s->path,
                   reference ? "reference.kernel" : "kernel", name_expr, arch, line);
  }
  if (rc) {
    compile_release(&r);
    return -1;
  }
  iface_sig sig;
  char why[600];
  if (iface_demangle(r.lowered[0], &sig, why, sizeof why)) {
    if (warn)
      fprintf(warn, "tunefarm: warning: spec '%s': the interface of '%s' is not checked: %s\n",
              s->path, name_expr, why);
    rc = 0;
  } else {
    rc = iface_check(s, &sig, name_expr, reference, e);
  }
  compile_release(&r);
  return rc;
}

/* The template's knob names against its kernel's template parameters, where its source
 * declares them plainly. */
static int iface_knob_names(const spec *s, tf_err *e) {
  char names[SPEC_MAX_KNOBS + 1][SPEC_NAME];
  int n = iface_template_params(s->source_path, s->kernel, names, SPEC_MAX_KNOBS + 1, e);
  if (n < 0) return -1;
  return n == 0 || s->nknobs == 0 ? 0 : iface_check_knob_names(s, names, n, e);
}

/* What the campaign's program compiles for given the GPU's arch: its arch-specific target
 * when the template asks for one ("arch_specific"), as the farm compiles it; the reference
 * kernel compiles for arch itself. buf holds it. */
static const char *program_arch(const campaign *c, const char *arch, char buf[16]) {
  if (!c->tmpl.arch_specific) return arch;
  compile_arch_specific(arch, buf, 16);
  return buf;
}

/* Every kernel of the campaign against its spec: the start's instantiation, the reference
 * kernel, a committed control kernel. */
static int iface_campaign(const campaign *c, const char *gpu_arch, int quiet_refusal, FILE *warn,
                          tf_err *e) {
  const spec *s = &c->tmpl;
  char buf[16];
  const char *arch = program_arch(c, gpu_arch, buf);
  char name[512];
  if (spec_name_expr(s, &c->start, name, sizeof name))
    return tf_fail(e, TF_EXIT_INPUT, "spec '%s': the start's name expression is too long", s->path);
  if (iface_knob_names(s, e) ||
      iface_kernel(s, s->source_path, name, 0, arch, quiet_refusal, warn, e))
    return -1;
  if (s->ref_kernel[0] &&
      iface_kernel(s, s->ref_source_path, s->ref_kernel, 1, gpu_arch, quiet_refusal, warn, e))
    return -1;
  if (s->ref_library[0] &&
      cpuref_validate(s->path, "reference.library", s->ref_library_path, e))
    return -1;
  if (c->control_is_kernel) {
    const spec *k = &c->control_kernel;
    if (iface_kernel(k, k->source_path, k->kernel, 0, arch, quiet_refusal, warn, e)) return -1;
  }
  return 0;
}

/* ---- check: configurations that cannot launch ----
 *
 * A launch value (grid, block, shared memory, a buffer's size, an argument) reads only the
 * knobs it names, so, as space.c does for constraints, each is evaluated once per
 * combination of those knobs' values into a table of failures, and every accepted point
 * (what a search may propose: a restart draws from all of them) looks its values up. A point
 * counts against the first value that fails there, in spec_launch's order: the key `run`
 * names when it refuses that candidate. */

typedef struct launch_table {
  spec_launch_value v;
  int nk, knob[SPEC_MAX_KNOBS];     /* the knobs it reads */
  long long stride[SPEC_MAX_KNOBS]; /* each one's value index times this, summed: the entry */
  unsigned char *fails;             /* NULL when it fails nowhere */
  long long count, first;           /* accepted points where it fails first; the first one */
} launch_table;

/* t's table over its knobs' values, the others at the start's; -1 when out of memory. */
static int launch_tabulate(const campaign *c, launch_table *t) {
  const spec *s = &c->tmpl;
  unsigned char used[SPEC_MAX_KNOBS];
  if (spec_launch_value_knobs(s, &t->v, used)) memset(used, 1, sizeof used);
  long long n = 1;
  for (int j = s->nknobs - 1; j >= 0; j--)
    if (used[j]) {
      t->knob[t->nk] = j;
      t->stride[t->nk++] = n;
      n *= s->knobs[j].nvalues;
    }
  if (!(t->fails = calloc((size_t)n, 1))) return -1;
  int any = 0;
  config cfg = c->start;
  for (long long x = 0; x < n; x++) {
    for (int i = 0; i < t->nk; i++) {
      const spec_knob *kn = &s->knobs[t->knob[i]];
      cfg.v[t->knob[i]] = kn->values[x / t->stride[i] % kn->nvalues];
    }
    long long val;
    tf_err ignored = {0}; /* told again, for the first point where it counts */
    any |= t->fails[x] = spec_launch_value_eval(s, &t->v, c->dims, &cfg, &val, &ignored) != 0;
  }
  if (!any) {
    free(t->fails);
    t->fails = NULL;
  }
  return 0;
}

/* Every accepted point of v against the failing tables, in order. */
static void launch_count(const campaign *c, const space_view *v, launch_table *t, int n) {
  const spec *s = &c->tmpl;
  int d[SPEC_MAX_KNOBS] = {0}; /* the point's value indices, the last knob turning fastest */
  for (long long i = 0; i < v->size; i++) {
    for (int k = 0; k < n && v->first_broken[i] == SPACE_ACCEPTED; k++) {
      if (!t[k].fails) continue;
      long long x = 0;
      for (int j = 0; j < t[k].nk; j++) x += d[t[k].knob[j]] * t[k].stride[j];
      if (!t[k].fails[x]) continue;
      if (t[k].count++ == 0) t[k].first = i;
      break;
    }
    for (int j = s->nknobs - 1; j >= 0 && ++d[j] == s->knobs[j].nvalues; j--) d[j] = 0;
  }
}

/* A warning line per launch value that fails at some accepted configuration: `run` refuses
 * such a candidate (naming the same key) and goes on, so the campaign stays valid. The start
 * launches (campaign_load checks it), so no value fails at every configuration. */
static int check_launch(const campaign *c, const space_view *v, tf_err *e) {
  const spec *s = &c->tmpl;
  launch_table t[SPEC_LAUNCH_VALUES];
  spec_launch_value vals[SPEC_LAUNCH_VALUES];
  int n = spec_launch_values(s, vals), rc = 0, failing = 0;
  memset(t, 0, sizeof t);
  for (int k = 0; k < n && rc == 0; k++) {
    t[k].v = vals[k];
    rc = launch_tabulate(c, &t[k]);
    failing |= t[k].fails != NULL;
  }
  if (rc) rc = tf_fail(e, TF_EXIT_FAIL, "out of memory tabulating the launch of '%s'", s->path);
  if (rc == 0 && failing) launch_count(c, v, t, n);
  for (int k = 0; k < n && rc == 0; k++) {
    if (t[k].count == 0) continue;
    config cfg;
    char key[32], at[512];
    long long val;
    tf_err why = {0};
    space_config_at(s, t[k].first, &cfg);
    spec_config_str(s, &cfg, at, sizeof at);
    spec_launch_value_eval(s, &t[k].v, c->dims, &cfg, &val, &why);
    fprintf(stderr, "tunefarm check: warning: key '%s' fails at %lld of %lld accepted "
            "configurations (`run` refuses each as a candidate); the first, %s: %s\n",
            spec_launch_value_key(&t[k].v, key, sizeof key), t[k].count, v->accepted, at, why.msg);
  }
  for (int k = 0; k < n; k++) free(t[k].fails);
  return rc;
}

/* A warning line per tensor-map argument that TMA cannot map at some accepted configuration
 * (spec_launch's last test, after every launch value passed): `run` refuses each such
 * candidate as well. Templates with tensor maps only, whose spaces are small: each accepted
 * point's launch is computed. */
static void check_tmaps(const campaign *c, const space_view *v) {
  const spec *s = &c->tmpl;
  long long count[SPEC_MAX_ARGS] = {0}, first[SPEC_MAX_ARGS];
  char why[SPEC_MAX_ARGS][sizeof(((tf_err *)0)->msg)];
  for (long long i = 0; s->ntmaps > 0 && i < v->size; i++) {
    config cfg;
    launch_geom g;
    tf_err e = {0};
    if (v->first_broken[i] != SPACE_ACCEPTED) continue;
    space_config_at(s, i, &cfg);
    if (spec_launch(s, c->dims, &cfg, &g, &e) == 0) continue;
    /* the map's own refusal, not one of its extents' (check_launch warns of those) */
    const char *k = strstr(e.msg, "key 'args["), *b = k ? strchr(k, ']') : NULL;
    int a = b ? atoi(k + 10) : -1;
    if (a < 0 || a >= s->nargs || s->args[a].kind != SPEC_ARG_TMAP ||
        strncmp(b, "].tensormap':", 13) != 0)
      continue;
    if (count[a]++ == 0) first[a] = i, snprintf(why[a], sizeof why[a], "%s", e.msg);
  }
  for (int a = 0; a < s->nargs; a++) {
    if (count[a] == 0) continue;
    config cfg;
    char at[512];
    space_config_at(s, first[a], &cfg);
    spec_config_str(s, &cfg, at, sizeof at);
    fprintf(stderr, "tunefarm check: warning: key 'args[%d].tensormap' fails at %lld of %lld "
            "accepted configurations (`run` refuses each as a candidate); the first, %s: %s\n",
            a, count[a], v->accepted, at, why[a]);
  }
}

static int check_campaign(campaign *c) {
  tf_err e = {0};
  space_view v = {0};
  search_config sc; /* what `run` would refuse: a proposer there is none of */
  int rc = search_config_of(c, 0, &sc, &e);
  if (rc == 0) rc = iface_campaign(c, "sm_90", 0, stderr, &e);
  if (rc == 0) rc = space_enumerate(c, &v, &e);
  if (rc == 0) print_space(stdout, c, &v);
  if (rc == 0) rc = check_launch(c, &v, &e);
  else fprintf(stderr, "tunefarm check: %s\n", e.msg);
  if (rc == 0) check_tmaps(c, &v);
  space_release(&v);
  return rc ? tf_exit_status(&e) : 0;
}

int check_main(int argc, char **argv) {
  audit_opts o = {.arch = "sm_90", .batch = 16};
  int rc = parse(argc, argv, "check", &o, check_usage);
  if (rc) return rc == 1 ? 0 : 2;
  if (o.audit_only) {
    fprintf(stderr, "tunefarm check: --arch, --batch, --verbose, --run, --list and --where are "
                    "options of `tunefarm audit`\n");
    check_usage(stderr);
    return 2;
  }
  campaign *c = malloc(sizeof *c);
  if (!c) {
    fprintf(stderr, "tunefarm check: out of memory\n");
    return TF_EXIT_FAIL;
  }
  rc = load(&o, "check", c, 1);
  if (rc == 0) {
    rc = check_campaign(c);
    campaign_release(c);
  }
  free(c);
  return rc;
}

/* ---- audit: compile every reachable configuration ---- */

typedef struct audit_tally {
  int compiled, failed, cache_hits, programs, checked;
  cJSON *failures; /* [{"config": "...", "log": "..."}] */
} audit_tally;

static void add_failure(audit_tally *t, const char *what, const char *msg, const char *log) {
  cJSON *f = cJSON_CreateObject();
  cJSON_AddStringToObject(f, "config", what);
  cJSON_AddStringToObject(f, "error", msg);
  cJSON_AddStringToObject(f, "log", log ? log : "");
  cJSON_AddItemToArray(t->failures, f);
  t->failed++;
}

static int compile_names(const char *const *sources, int nsrc, const char *const *names, int n,
                         const char *arch, audit_tally *t, compile_result *r, tf_err *e) {
  compile_req req = {.source_paths = sources, .nsources = nsrc, .name_exprs = names,
                     .nexprs = n, .arch = arch, .cache_dir = NULL};
  memset(r, 0, sizeof *r);
  int rc = compile_program(&req, r, e);
  t->programs++;
  if (rc == 0) t->cache_hits += r->cache_hit;
  return rc;
}

/* A configuration whose parameters (a knob may change a type) do not fit the spec's
 * arguments is a failure; a name the parser cannot read was reported for the start. */
static void batch_iface(const spec *s, const char *name, const char *lowered, audit_tally *t) {
  iface_sig sig;
  char why[600];
  tf_err e = {0};
  if (iface_demangle(lowered, &sig, why, sizeof why) == 0 && iface_check(s, &sig, name, 0, &e))
    add_failure(t, name, e.msg, "");
}

/* One batch; on a refusal, compile its members one by one to name the culprits. */
static int audit_batch(const campaign *c, const space_view *v, int first, int n,
                       const char *arch, audit_tally *t) {
  char names[COMPILE_MAX_EXPRS][256];
  const char *ptrs[COMPILE_MAX_EXPRS] = {0};
  const char *src[1] = {c->tmpl.source_path};
  for (int i = 0; i < n; i++) {
    config cfg;
    space_at(v, first + i, &cfg);
    if (spec_name_expr(&c->tmpl, &cfg, names[i], sizeof names[i])) /* spec_load bounds it */
      return add_failure(t, "(name)", "an instantiation name is too long", ""), 0;
    ptrs[i] = names[i];
  }
  compile_result r;
  tf_err e = {0};
  if (compile_names(src, 1, ptrs, n, arch, t, &r, &e) == 0) {
    t->compiled += n;
    for (int i = 0; i < n; i++) batch_iface(&c->tmpl, names[i], r.lowered[i], t);
    compile_release(&r);
    return 0;
  }
  compile_release(&r);
  for (int i = 0; i < n; i++) {
    tf_err e1 = {0};
    if (compile_names(src, 1, &ptrs[i], 1, arch, t, &r, &e1) == 0)
      t->compiled++, batch_iface(&c->tmpl, names[i], r.lowered[0], t);
    else
      add_failure(t, names[i], e1.msg, r.log);
    compile_release(&r);
  }
  return 0;
}

static void audit_geometry(const campaign *c, const space_view *v, int rank, int size,
                           audit_tally *t) {
  for (int i = rank; i < v->nreachable; i += size) {
    launch_geom g;
    tf_err e = {0};
    config cfg;
    space_at(v, i, &cfg);
    if (spec_launch(&c->tmpl, c->dims, &cfg, &g, &e)) {
      char name[512];
      spec_config_str(&c->tmpl, &cfg, name, sizeof name);
      add_failure(t, name, e.msg, "");
    }
  }
}

static void audit_control(const campaign *c, const char *arch, audit_tally *t) {
  if (!c->control_is_kernel) return;
  const char *src[1] = {c->control_kernel.source_path};
  const char *name = c->control_kernel.kernel;
  compile_result r;
  tf_err e = {0};
  if (compile_names(src, 1, &name, 1, arch, t, &r, &e) == 0)
    t->compiled++;
  else
    add_failure(t, name, e.msg, r.log);
  compile_release(&r);
}

static void run_share(const campaign *c, const space_view *v, const audit_opts *o, int rank,
                      int size, audit_tally *t) {
  int nbatches = (v->nreachable + o->batch - 1) / o->batch;
  double t0 = tf_monotonic_s(), last = t0;
  char buf[16];
  const char *arch = program_arch(c, o->arch, buf);
  for (int b = rank; b < nbatches; b += size) {
    int first = b * o->batch;
    int n = v->nreachable - first < o->batch ? v->nreachable - first : o->batch;
    audit_batch(c, v, first, n, arch, t);
    if (rank == 0 && tf_monotonic_s() - last > 5.0) {
      last = tf_monotonic_s();
      fprintf(stderr, "tunefarm audit: batch %d of %d, %.0f s\n", b + 1, nbatches, last - t0);
    }
  }
  audit_geometry(c, v, rank, size, t);
  if (rank == 0) audit_control(c, arch, t);
}

/* ---- --run: every reachable configuration launched on the GPU and checked ---- */

/* A job and its result, reused by every triple of one rank's share (large values). */
typedef struct triple_scratch {
  job j;
  result r;
} triple_scratch;

/* What the protocol's check found for each arm of the triple. */
static void tally_arms(const triple_scratch *x, const campaign *c, const config *cfg[3],
                       audit_tally *t) {
  char name[512], msg[160];
  if (x->r.status != RESULT_OK) {
    spec_config_str(&c->tmpl, cfg[0], name, sizeof name);
    add_failure(t, name, x->r.detail, "");
    return;
  }
  for (int a = 0; a < ARM_COUNT; a++)
    if (!(x->r.rel_err[a] <= x->j.tolerance)) {
      spec_config_str(&c->tmpl, cfg[a], name, sizeof name);
      snprintf(msg, sizeof msg, "wrong result: relative error %.3g over tolerance %.3g (the worst "
               "of %d input sets)", x->r.rel_err[a], x->j.tolerance, x->j.measure.input_sets);
      add_failure(t, name, msg, "");
    }
}

/* Three configurations as a job (best, new, control arms) through the farm's protocol
 * (worker/protocol.h) with no rounds: prepared, and every arm checked on every input set
 * against the template's reference in the place its first round gives it. -1 after a sticky error. */
static int run_triple(const backend_ops *ops, void *self, const campaign *c, const config *cfg[3],
                      long long id, triple_scratch *x, audit_tally *t) {
  job *j = &x->j;
  tf_err e = {0};
  if (job_build(j, c, id, 0, cfg[0], cfg[1], &e) ||
      job_set_template_arm(j, c, ARM_CONTROL, cfg[2], &e)) {
    add_failure(t, "(job)", e.msg, "");
    return 0;
  }
  j->measure.input_sets = 2;
  j->measure.burn_in = j->measure.rounds = 0; /* the check alone */
  j->canary_rounds = 0;
  memset(&x->r, 0, sizeof x->r);
  int sticky = protocol_run(ops, self, j, &x->r, NULL, &e) != 0;
  if (sticky) {
    char name[512];
    spec_config_str(&c->tmpl, cfg[0], name, sizeof name);
    add_failure(t, name, e.msg, "");
  } else {
    tally_arms(x, c, cfg, t);
  }
  t->checked += 3;
  return sticky ? -1 : 0;
}

static void run_checks(const campaign *c, const space_view *v, int rank, int size,
                       audit_tally *t) {
  int ndev = 0;
  void *self = NULL;
  tf_err e = {0};
  if (cudaGetDeviceCount(&ndev) != cudaSuccess || ndev == 0) ndev = 1;
  backend_opts bo = {.ordinal = rank % ndev, .cache_dir = NULL};
  triple_scratch *x = malloc(sizeof *x);
  if (!x) {
    add_failure(t, "(audit)", "out of memory", "");
    return;
  }
  if (backend_cuda.open(&self, &bo, &e)) {
    add_failure(t, "(device)", e.msg, "");
    free(x);
    return;
  }
  for (int i = 3 * rank; i < v->nreachable; i += 3 * size) {
    config arms[3];
    const config *cfg[3];
    for (int k = 0; k < 3; k++) {
      space_at(v, i + k < v->nreachable ? i + k : i, &arms[k]);
      cfg[k] = &arms[k];
    }
    if (run_triple(&backend_cuda, self, c, cfg, i, x, t)) {
      add_failure(t, "(device)", "a sticky CUDA error: the rest of this rank's share is unchecked", "");
      free(x);
      return; /* the context is gone: never touch the device again */
    }
  }
  free(x);
  backend_cuda.close(self);
}

static cJSON *tally_json(const audit_tally *t) {
  cJSON *o = cJSON_CreateObject();
  cJSON_AddNumberToObject(o, "compiled", t->compiled);
  cJSON_AddNumberToObject(o, "failed", t->failed);
  cJSON_AddNumberToObject(o, "cache_hits", t->cache_hits);
  cJSON_AddNumberToObject(o, "programs", t->programs);
  cJSON_AddNumberToObject(o, "checked", t->checked);
  cJSON_AddItemToObject(o, "failures", cJSON_Duplicate(t->failures, 1));
  return o;
}

static void merge(audit_tally *t, const cJSON *o) {
  t->compiled += (int)cJSON_GetNumberValue(cJSON_GetObjectItem(o, "compiled"));
  t->cache_hits += (int)cJSON_GetNumberValue(cJSON_GetObjectItem(o, "cache_hits"));
  t->programs += (int)cJSON_GetNumberValue(cJSON_GetObjectItem(o, "programs"));
  t->checked += (int)cJSON_GetNumberValue(cJSON_GetObjectItem(o, "checked"));
  const cJSON *f;
  cJSON_ArrayForEach(f, cJSON_GetObjectItem(o, "failures")) {
    cJSON_AddItemToArray(t->failures, cJSON_Duplicate(f, 1));
    t->failed++;
  }
}

static int gather(MPI_Comm comm, int rank, int size, audit_tally *t) {
  tf_err e = {0};
  if (rank != 0) {
    cJSON *o = tally_json(t);
    int rc = mpimsg_send(comm, 0, TAG_AUDIT, o, &e);
    cJSON_Delete(o);
    return rc;
  }
  for (int r = 1; r < size; r++) {
    int tag, from;
    cJSON *o = mpimsg_recv(comm, MPI_ANY_SOURCE, &tag, &from, &e);
    if (!o) return -1;
    merge(t, o);
    cJSON_Delete(o);
  }
  return 0;
}

static void print_audit(const audit_tally *t, const space_view *v, double secs, int size) {
  const cJSON *f;
  cJSON_ArrayForEach(f, t->failures) {
    printf("FAILED %s: %s\n", cJSON_GetStringValue(cJSON_GetObjectItem(f, "config")),
           cJSON_GetStringValue(cJSON_GetObjectItem(f, "error")));
    const char *log = cJSON_GetStringValue(cJSON_GetObjectItem(f, "log"));
    if (log && log[0]) printf("--- NVRTC log ---\n%s\n-----------------\n", log);
  }
  if (v->nreachable == v->nall)
    printf("audit: %d reachable configurations; ", v->nreachable);
  else
    printf("audit: %d of the %d reachable configurations (--where); ", v->nreachable, v->nall);
  printf("compiled %d, failed %d; %d NVRTC programs (%d from the cache) on %d rank(s) in %.1f s\n",
         t->compiled, t->failed, t->programs, t->cache_hits, size, secs);
  if (t->checked)
    printf("run: %d arms launched on the GPU and checked against the template's reference (its "
           "reference kernel or library) on 2 input sets each\n", t->checked);
}

/* --where: keep the reachable configurations where the expression (over knobs and problem
 * dimensions, the constraints' language) is non-zero, e.g. "FRAG == 1" to check a new knob's
 * share of the space without the rest. The start stays first when it is kept. */
static int filter_where(const campaign *c, const char *text, space_view *v, tf_err *e) {
  char err[256];
  expr *x = expr_parse(text, err, sizeof err);
  if (!x) return tf_fail(e, TF_EXIT_INPUT, "--where '%s': %s", text, err);
  int kept = 0;
  for (int i = 0; i < v->nreachable; i++) {
    long long keep = 0;
    config cfg;
    space_at(v, i, &cfg);
    if (spec_eval(&c->tmpl, x, c->dims, &cfg, &keep, e)) {
      expr_free(x);
      e->code = TF_EXIT_INPUT;
      return tf_wrap(e, "--where '%s'", text);
    }
    if (keep) v->reach[kept++] = v->reach[i];
  }
  expr_free(x);
  v->nreachable = kept;
  return 0;
}

/* --verbose: every refused configuration with the first constraint it breaks and why. */
static void print_refusals(const campaign *c, const space_view *v) {
  for (long long i = 0; i < v->size; i++) {
    config cfg;
    int bad = -1;
    space_config_at(&c->tmpl, i, &cfg);
    if (spec_check(&c->tmpl, c->dims, &cfg, &bad, NULL) || bad < 0) continue;
    char name[512];
    spec_config_str(&c->tmpl, &cfg, name, sizeof name);
    printf("  refused %s: constraint '%s': %s\n", name, c->tmpl.cons[bad].name,
           c->tmpl.cons[bad].reason);
  }
}

static void audit_usage(FILE *f) {
  fprintf(f,
          "usage: tunefarm audit [--arch sm_XY] [--batch N] [--verbose] [--run] [--list]\n"
          "                      [--where EXPR] CAMPAIGN\n"
          "       mpirun -np R tunefarm audit CAMPAIGN   (spreads the compiles over R ranks)\n\n"
          "Enumerate the campaign's reachable configurations, check each statically, and\n"
          "compile every accepted one with NVRTC for --arch (default sm_90), N instantiations\n"
          "per program (default 16), through the cubin cache ($TUNEFARM_CACHE, else\n"
          "$XDG_CACHE_HOME/tunefarm, else ~/.cache/tunefarm). Prints every failure with\n"
          "its NVRTC log. --verbose also lists every refused configuration with the\n"
          "constraint it breaks and why, and every reachable one. --run also\n"
          "launches every reachable configuration on the GPU (three per job, as a measurement\n"
          "runs them) and checks it against the template's reference on two fresh input sets.\n"
          "--list prints the name expression of every reachable configuration, one per\n"
          "line (for other tools, e.g. bench/spills.sh), and compiles nothing.\n"
          "--where EXPR keeps only the reachable configurations where EXPR (over knobs and\n"
          "problem dimensions, as in the template's constraints) is non-zero, e.g.\n"
          "--where 'FRAG == 1' to check what a new knob adds.\n"
          "Exit status: 0 all compiled, 1 some failed, 2 bad input.\n");
}

/* The audit of the campaign loaded in *c, on this rank's share. */
static int audit_campaign(const audit_opts *o, campaign *c, int inited, int rank, int size) {
  tf_err e = {0};
  space_view v = {0};
  int rc = 0;
  if (space_enumerate(c, &v, &e) || (o->where && filter_where(c, o->where, &v, &e))) {
    if (rank == 0) fprintf(stderr, "tunefarm audit: %s\n", e.msg);
    space_release(&v);
    return tf_exit_status(&e);
  }
  if (o->list) {
    for (int i = 0; rank == 0 && i < v.nreachable; i++) {
      char name[512];
      config cfg;
      space_at(&v, i, &cfg);
      if (spec_name_expr(&c->tmpl, &cfg, name, sizeof name) == 0) printf("%s\n", name);
    }
    space_release(&v);
    return 0;
  }
  if (iface_campaign(c, o->arch, 1, rank == 0 ? stderr : NULL, &e)) {
    if (rank == 0) fprintf(stderr, "tunefarm audit: %s\n", e.msg);
    space_release(&v);
    return tf_exit_status(&e);
  }
  if (rank == 0) print_space(stdout, c, &v);
  if (rank == 0 && o->where) printf("  --where:    %d of them: %s\n", v.nreachable, o->where);
  if (rank == 0 && o->verbose) print_refusals(c, &v);
  if (rank == 0 && o->verbose)
    for (int i = 0; i < v.nreachable; i++) {
      char name[512];
      config cfg;
      space_at(&v, i, &cfg);
      spec_config_str(&c->tmpl, &cfg, name, sizeof name);
      printf("  reachable %d: %s\n", i, name);
    }
  fflush(stdout);
  double t0 = tf_monotonic_s();
  audit_tally t = {.failures = cJSON_CreateArray()};
  run_share(c, &v, o, rank, size, &t);
  if (o->run) run_checks(c, &v, rank, size, &t);
  if (inited) gather(MPI_COMM_WORLD, rank, size, &t);
  if (rank == 0) print_audit(&t, &v, tf_monotonic_s() - t0, size);
  rc = t.failed ? 1 : 0;
  if (inited) MPI_Bcast(&rc, 1, MPI_INT, 0, MPI_COMM_WORLD);
  cJSON_Delete(t.failures);
  space_release(&v);
  return rc;
}

int audit_main(int argc, char **argv) {
  audit_opts o = {.arch = "sm_90", .batch = 16};
  int rc = parse(argc, argv, "audit", &o, audit_usage);
  if (rc) return rc == 1 ? 0 : 2;
  int inited = 0, rank = 0, size = 1;
  MPI_Initialized(&inited);
  if (inited) {
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    mpimsg_init(MPI_COMM_WORLD);
  }
  campaign *c = malloc(sizeof *c);
  if (!c) {
    fprintf(stderr, "tunefarm audit: out of memory\n");
    return TF_EXIT_FAIL;
  }
  rc = load(&o, "audit", c, rank == 0);
  if (rc == 0) {
    rc = audit_campaign(&o, c, inited, rank, size);
    campaign_release(c);
  }
  free(c);
  return rc;
}
