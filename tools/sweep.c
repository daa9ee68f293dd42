#include "tools/sweep.h"

#include <errno.h>
#include <getopt.h>
#include <math.h>
#include <signal.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include <zlib.h>

#include "common/campaign.h"  // defines: campaign_load
#include "common/clock.h"     // defines: tf_monotonic_s
#include "common/decide.h"    // defines: stats_median
#include "common/jsonio.h"
#include "compile/program.h"  // defines: program_of_job, program_kernels, program_to_json
#include "common/spacefile.h" // defines: space_file, spacefile_entry_to_json
#include "coordinator/job.h"  // defines: job_build
#include "coordinator/space.h" // defines: space_enumerate, space_at
#include "worker/backend.h"   // defines: sim_compile_seconds, backend_find, backend_simulated
#include "worker/child.h"     // defines: child_default_backend
#include "worker/spawn.h"     // defines: childproc

extern char **environ;

typedef struct sweep_opts {
  const char *campaign;
  const char *out;      /* NULL: <campaign>.tfspace */
  const char *backend;  /* NULL: cuda where a GPU is visible, else sim */
  int device;
  int rounds;           /* 0: the campaign's measure.rounds */
  int jobs;             /* compiles at once; 0: the cores less one */
  int quiet;
} sweep_opts;

/* What a sweep holds: the campaign, its space, the device, the file and every entry. */
typedef struct sweep {
  sweep_opts o;
  campaign c;
  space_view v;
  space_file sf;        /* the header; entries in done[] */
  char exe[4096], out[SPEC_PATH], part[SPEC_PATH + 8];
  space_entry *done;    /* by reachable index */
  unsigned char *have;  /* 1: done[i] is recorded */
  double *compile_ms;   /* by reachable index: NAN unknown */
  int *compile_state;   /* 0 not compiled, 1 compiled or cached, 2 refused */
  char (*refusal)[512];
  FILE *pf;             /* OUT.part, appended */
  childproc child;
  int nchild;
  job *j;
  result *r;
} sweep;

static void usage(FILE *f) {
  fprintf(f,
          "usage: tunefarm sweep [-o SPACE_FILE] [--backend cuda|sim] [--device N]\n"
          "                      [--rounds R] [--compile-jobs N] [--quiet] CAMPAIGN\n\n"
          "Measure every reachable configuration of the campaign's space on one device:\n"
          "compiled (N at once), checked against the reference, then timed beside the\n"
          "campaign's start (and its control) in R paired rounds. Writes a recorded space\n"
          "for `tunefarm run --backend replay --space SPACE_FILE` (docs/reference/sweep.md).\n\n"
          "  -o FILE          the space file (default: <campaign>.tfspace); FILE.part keeps\n"
          "                   what is measured so far, and the same command resumes from it\n"
          "  --backend B      cuda or sim (synthetic times; the file says so); default: cuda\n"
          "                   where a GPU is visible, else sim\n"
          "  --device N       the visible device to measure on (default 0)\n"
          "  --rounds R       recorded rounds per configuration (default: the campaign's)\n"
          "  --compile-jobs N compiles at once (default: the cores less one)\n"
          "  --quiet          no progress on stderr\n"
          "Compile times are NVRTC's for kernels the cubin cache does not hold; give an empty\n"
          "TUNEFARM_CACHE to record every one. Exit status: 0 done, 1 failure, 2 bad input or\n"
          "usage, 3 no device.\n");
}

static int int_opt(const char *name, const char *text, int lo, int hi, int *out) {
  char *end = NULL;
  long v = strtol(text, &end, 10);
  if (end == text || *end || v < lo || v > hi) {
    fprintf(stderr, "tunefarm sweep: %s wants a whole number %d..%d, not '%s'\n", name, lo, hi,
            text);
    return -1;
  }
  *out = (int)v;
  return 0;
}

/* 0, 1 (help printed) or 2 (bad usage, said). */
static int parse(int argc, char **argv, sweep_opts *o) {
  static const struct option longs[] = {{"backend", required_argument, 0, 'b'},
                                         {"device", required_argument, 0, 'd'},
                                         {"rounds", required_argument, 0, 'r'},
                                         {"compile-jobs", required_argument, 0, 'j'},
                                         {"quiet", no_argument, 0, 'q'},
                                         {"help", no_argument, 0, 'h'},
                                         {0, 0, 0, 0}};
  int c;
  optind = 1;
  opterr = 0;
  while ((c = getopt_long(argc, argv, ":o:qh", longs, NULL)) != -1) {
    switch (c) {
      case 'o': o->out = optarg; break;
      case 'b': o->backend = optarg; break;
      case 'd': if (int_opt("--device", optarg, 0, 1024, &o->device)) return 2; break;
      case 'r': if (int_opt("--rounds", optarg, 1, SPACEFILE_MAX_ROUNDS, &o->rounds)) return 2; break;
      case 'j': if (int_opt("--compile-jobs", optarg, 1, 1024, &o->jobs)) return 2; break;
      case 'q': o->quiet = 1; break;
      case 'h': usage(stdout); return 1;
      default:
        fprintf(stderr, "tunefarm sweep: unknown option or missing value '%s' (see --help)\n",
                argv[optind - 1]);
        return 2;
    }
  }
  if (optind != argc - 1) {
    fprintf(stderr, "tunefarm sweep: one campaign file, after the options (see --help)\n");
    return 2;
  }
  const backend_ops *b = o->backend ? backend_find(o->backend) : NULL;
  if (o->backend && (!b || b->recorded)) { /* a recorded space is not swept again */
    fprintf(stderr, "tunefarm sweep: unknown backend '%s' (a GPU's, cuda, or the simulated "
            "device, sim)\n", o->backend);
    return 2;
  }
  o->campaign = argv[optind];
  return 0;
}

/* ---- the measure child ---- */

static int start_child(sweep *s, tf_err *e) {
  childproc_opts co = {.exe = s->exe, .backend = s->o.backend, .device = s->o.device,
                       .instance = ++s->nchild};
  if (childproc_start(&s->child, &co, e)) return -1;
  hello ask = {.rank = -1, .worker_index = -1}, h;
  cJSON *msg = hello_to_json(&ask), *reply = NULL;
  char why[512] = "";
  int rc = childproc_send(&s->child, msg, e);
  cJSON_Delete(msg);
  if (rc == 0) rc = childproc_recv(&s->child, 120.0, &reply, why, sizeof why, e);
  if (rc == CHILD_LINE) rc = hello_from_json(reply, &h, e) ? -1 : 0;
  else if (rc > 0) rc = tf_fail(e, TF_NO_DEVICE, "the measure child ended: %s", why);
  cJSON_Delete(reply);
  if (rc == 0 && !h.has_device) rc = tf_fail(e, TF_NO_DEVICE, "no device: %s", h.error);
  if (rc) {
    childproc_kill(&s->child);
    return -1;
  }
  if (s->nchild == 1) s->sf.dev = h.dev;
  return 0;
}

/* ---- the file's header and the part file ---- */

static void utc_now(char *buf, size_t len) {
  time_t now = time(NULL);
  struct tm tm;
  gmtime_r(&now, &tm);
  strftime(buf, len, "%Y-%m-%dT%H:%M:%SZ", &tm);
}

static void fill_header(sweep *s) {
  space_file *sf = &s->sf;
  const spec *t = &s->c.tmpl;
  snprintf(sf->path, sizeof sf->path, "%s", s->out);
  snprintf(sf->campaign, sizeof sf->campaign, "%s", s->c.name);
  snprintf(sf->campaign_hash, sizeof sf->campaign_hash, "%s", s->c.hash);
  snprintf(sf->tmpl, sizeof sf->tmpl, "%s", t->name);
  sf->nknobs = t->nknobs;
  for (int i = 0; i < t->nknobs; i++) snprintf(sf->knobs[i], SPEC_NAME, "%s", t->knobs[i].name);
  sf->ndims = t->ndims;
  for (int i = 0; i < t->ndims; i++) {
    snprintf(sf->dim_names[i], SPEC_NAME, "%s", t->dims[i].name);
    sf->dims[i] = s->c.dims[i];
  }
  sf->simulated = backend_simulated(sf->dev.backend);
  sf->reference = s->c.start;
  if (s->c.control_is_kernel)
    snprintf(sf->control, sizeof sf->control, "%s", s->c.control_kernel.name);
  else
    spacefile_config_text(sf, &s->c.control_cfg, sf->control, sizeof sf->control);
  utc_now(sf->date, sizeof sf->date);
  sf->reference_us = 1.0; /* set at the end, from every round */
  sf->n = s->v.nreachable;
}

/* The reachable index of configuration c, or -1. */
static int index_of(const sweep *s, const config *c) {
  for (int i = 0; i < s->v.nreachable; i++) {
    config x;
    space_at(&s->v, i, &x);
    if (memcmp(x.v, c->v, sizeof c->v[0] * (size_t)c->n) == 0) return i;
  }
  return -1;
}

/* A compile line of the part file: that kernel's compile is done (time, or refusal). */
static int resume_compile(sweep *s, const cJSON *o, long line, tf_err *e) {
  space_entry x;
  if (spacefile_entry_from_json(o, s->sf.nknobs, &x, s->part, line, e)) return -1;
  int i = index_of(s, &x.cfg);
  if (i < 0) return 0;
  s->compile_state[i] = x.check == SPACE_COMPILE_ERROR ? 2 : 1;
  s->compile_ms[i] = x.compile_ms;
  snprintf(s->refusal[i], sizeof s->refusal[i], "%s", x.detail);
  return 0;
}

/* What an earlier sweep of the same campaign on the same device left in OUT.part; a part of
 * another campaign or device is refused (it is not ours to overwrite). */
static int resume_part(sweep *s, FILE *f, tf_err *e) {
  char *line = NULL;
  size_t cap = 0;
  long n = 0;
  int rc = 0;
  while (rc == 0 && getline(&line, &cap, f) > 0) {
    cJSON *o = jsonio_parse(line, "line", &(tf_err){0});
    n++;
    if (!o) break; /* a line torn by the interruption: measured again */
    if (n == 1) {
      space_file old = {0};
      snprintf(old.path, sizeof old.path, "%.1000s", s->part);
      if (spacefile_header_from_json(o, &old, e) ||
          strcmp(old.campaign_hash, s->sf.campaign_hash) != 0 ||
          strcmp(old.dev.uuid, s->sf.dev.uuid) != 0)
        rc = tf_fail(e, TF_EXIT_INPUT, "'%s' holds a sweep of another campaign or "
                     "device (or is no sweep): remove it, or give another -o", s->part);
    } else if (cJSON_IsString(cJSON_GetObjectItemCaseSensitive(o, "type")) &&
               strcmp(cJSON_GetObjectItemCaseSensitive(o, "type")->valuestring, "compile") == 0) {
      rc = resume_compile(s, o, n, e);
    } else {
      space_entry x;
      if (spacefile_entry_from_json(o, s->sf.nknobs, &x, s->part, n, e)) {
        rc = -1;
      } else {
        int i = index_of(s, &x.cfg);
        if (i >= 0 && !s->have[i]) s->done[i] = x, s->have[i] = 1;
        else free(x.us);
      }
    }
    cJSON_Delete(o);
  }
  free(line);
  return rc;
}

static int open_part(sweep *s, tf_err *e) {
  FILE *old = fopen(s->part, "r");
  if (old) {
    int rc = resume_part(s, old, e);
    fclose(old);
    if (rc) return -1;
  }
  s->pf = fopen(s->part, old ? "a" : "w");
  if (!s->pf) return tf_fail(e, TF_EXIT_INPUT, "cannot write '%s': %s", s->part,
                             strerror(errno));
  if (!old) {
    cJSON *h = spacefile_header_to_json(&s->sf);
    jsonio_write_line(s->pf, h);
    cJSON_Delete(h);
  }
  return 0;
}

static int keep(sweep *s, int i, space_entry *x, tf_err *e) {
  cJSON *o = spacefile_entry_to_json(x);
  int rc = jsonio_write_line(s->pf, o);
  cJSON_Delete(o);
  s->done[i] = *x;
  s->have[i] = 1;
  if (rc) return tf_fail(e, TF_EXIT_FAIL, "cannot write '%s': %s", s->part,
                         strerror(errno));
  return 0;
}

/* ---- compile: every kernel alone, `tunefarm compile` processes side by side ---- */

/* The program of configuration i's kernel alone (the new arm's). */
static int kernel_program(sweep *s, int i, program_ref *out, tf_err *e) {
  config cfg;
  space_at(&s->v, i, &cfg);
  if (job_build(s->j, &s->c, 0, 0, &s->c.start, &cfg, e)) return -1;
  program_ref p, k[ARM_COUNT];
  program_of_job(s->j, &p);
  int n = program_kernels(&p, k);
  for (int m = 0; m < n; m++)
    if (strcmp(k[m].exprs[0], s->j->arm[ARM_NEW].name_expr) == 0) return *out = k[m], 0;
  return tf_fail(e, TF_EXIT_FAIL, "no kernel of configuration %d", i);
}

typedef struct compiling {
  pid_t pid;
  int fd, index;
} compiling;

static pid_t spawn_compile(const sweep *s, const program_ref *p, const sim_compile *sim,
                           int *fd) {
  int in[2], out[2];
  if (pipe(in)) return -1;
  if (pipe(out)) return close(in[0]), close(in[1]), -1;
  char simtext[32];
  double sim_s = program_kernel_sim_seconds(p->exprs[0], sim);
  snprintf(simtext, sizeof simtext, "%.17g", sim_s);
  char arch[16];
  snprintf(arch, sizeof arch, "%s", s->sf.dev.arch);
  char *argv[] = {(char *)s->exe, "compile", "--arch", arch, sim_s > 0 ? "--simulate" : NULL,
                  simtext, NULL};
  posix_spawn_file_actions_t fa;
  posix_spawn_file_actions_init(&fa);
  posix_spawn_file_actions_adddup2(&fa, in[0], 0);
  posix_spawn_file_actions_adddup2(&fa, out[1], 1);
  posix_spawn_file_actions_addclose(&fa, in[1]);
  posix_spawn_file_actions_addclose(&fa, out[0]);
  pid_t pid = 0;
  int rc = posix_spawn(&pid, s->exe, &fa, NULL, argv, environ);
  posix_spawn_file_actions_destroy(&fa);
  close(in[0]);
  close(out[1]);
  if (rc == 0) {
    cJSON *req = program_to_json(p);
    cJSON_AddStringToObject(req, "root", p->root);
    char *text = cJSON_PrintUnformatted(req);
    cJSON_Delete(req);
    if (text && write(in[1], text, strlen(text)) < 0) { /* a dead child is its own report */
    }
    cJSON_free(text);
  }
  close(in[1]);
  if (rc != 0) return close(out[0]), -1;
  *fd = out[0];
  return pid;
}

/* The line a compile wrote: compiled (NVRTC's time), cached (unknown), refused (its log). */
static void take_compile(sweep *s, compiling *c) {
  char buf[16384];
  ssize_t n = 0, got;
  while (n < (ssize_t)sizeof buf - 1 && (got = read(c->fd, buf + n, sizeof buf - 1 - (size_t)n)) > 0)
    n += got;
  buf[n > 0 ? n : 0] = '\0';
  close(c->fd);
  char *nl = strchr(buf, '\n');
  if (nl) *nl = '\0';
  cJSON *o = jsonio_parse(buf, "compile", &(tf_err){0});
  const cJSON *st = cJSON_GetObjectItemCaseSensitive(o, "status");
  const cJSON *ms = cJSON_GetObjectItemCaseSensitive(o, "ms");
  const cJSON *msg = cJSON_GetObjectItemCaseSensitive(o, "message");
  const char *status = cJSON_IsString(st) ? st->valuestring : "error";
  int i = c->index;
  s->compile_state[i] = strcmp(status, "refused") == 0 ? 2 : 1;
  s->compile_ms[i] = strcmp(status, "compiled") == 0 && cJSON_IsNumber(ms) ? ms->valuedouble : NAN;
  if (s->compile_state[i] == 2)
    snprintf(s->refusal[i], sizeof s->refusal[i], "%s",
             cJSON_IsString(msg) ? msg->valuestring : "nvrtc refused the program");
  cJSON_Delete(o);
  /* kept in the part file, so that a resumed sweep knows the time the cache now hides */
  space_entry x = {.check = s->compile_state[i] == 2 ? SPACE_COMPILE_ERROR : SPACE_PASS,
                   .compile_ms = s->compile_ms[i], .rel_err = NAN, .nrounds = 0};
  space_at(&s->v, i, &x.cfg);
  snprintf(x.detail, sizeof x.detail, "%s", s->refusal[i]);
  cJSON *line = spacefile_entry_to_json(&x);
  cJSON_ReplaceItemInObjectCaseSensitive(line, "type", cJSON_CreateString("compile"));
  jsonio_write_line(s->pf, line);
  cJSON_Delete(line);
}

static void compile_progress(const sweep *s, int done, int of, double t0, int force) {
  static double last;
  double now = tf_monotonic_s();
  if (s->o.quiet || (!force && now - last < 2.0)) return;
  last = now;
  fprintf(stderr, "sweep: compiled %d of %d kernels (%.0f s)\n", done, of, now - t0);
}

static int compile_all(sweep *s, tf_err *e) {
  sim_compile sim = {0.0, 0.0, 0.0, 0};
  if (backend_simulated(s->sf.dev.backend) && sim_compile_seconds(&sim, e)) return -1;
  if (sim.none) return 0; /* the simulated device compiles nothing: times stay unknown */
  int jobs = s->o.jobs;
  if (jobs <= 0) jobs = (int)sysconf(_SC_NPROCESSORS_ONLN) > 1 ? (int)sysconf(_SC_NPROCESSORS_ONLN) - 1 : 1;
  compiling *run = calloc((size_t)jobs, sizeof *run);
  if (!run) return tf_fail(e, TF_EXIT_FAIL, "out of memory");
  int next = 0, nrun = 0, done = 0, todo = 0, rc = 0;
  double t0 = tf_monotonic_s();
  for (int i = 0; i < s->v.nreachable; i++) todo += !s->have[i] && !s->compile_state[i];
  while (rc == 0 && (next < s->v.nreachable || nrun > 0)) {
    while (rc == 0 && nrun < jobs && next < s->v.nreachable) {
      int i = next++;
      program_ref p;
      if (s->have[i] || s->compile_state[i]) continue;
      if (kernel_program(s, i, &p, e)) { rc = -1; break; }
      pid_t pid = spawn_compile(s, &p, &sim, &run[nrun].fd);
      if (pid < 0) { rc = tf_fail(e, TF_EXIT_FAIL, "cannot start a compile: %s", strerror(errno)); break; }
      run[nrun].pid = pid, run[nrun].index = i, nrun++;
    }
    if (nrun == 0) break;
    pid_t pid = waitpid(-1, NULL, 0);
    for (int k = 0; k < nrun; k++)
      if (run[k].pid == pid) {
        take_compile(s, &run[k]);
        run[k] = run[--nrun];
        compile_progress(s, ++done, todo, t0, 0);
        break;
      }
  }
  for (int k = 0; k < nrun; k++) kill(run[k].pid, SIGKILL), waitpid(run[k].pid, NULL, 0), close(run[k].fd);
  if (rc == 0) compile_progress(s, done, todo, t0, 1);
  free(run);
  return rc;
}

/* ---- measure ---- */

/* The simulated device runs no kernel: this machine's time for its job says nothing of a
 * device and differs from sweep to sweep. Its job's time is then the launches' synthetic time,
 * every round run (burn-in included) of samples launches of the three arms at their recorded
 * mean, and its load and check take none: the space is a function of the seed alone, and the
 * replay's wall_s is device time. */
static void synthetic_times(const result *r, space_entry *x) {
  double round_us = 0.0;
  for (int k = 0; k < x->nrounds; k++) round_us += x->us[k] + x->ref_us[k] + x->control_us[k];
  round_us = x->nrounds > 0 ? round_us / x->nrounds : 0.0;
  x->load_s = x->check_s = 0.0;
  x->measure_s = (r->burn_in + r->nrounds) * r->samples * round_us * 1e-6;
}

/* The entry of a job's result: its check, and the rounds the clock screen kept. */
static void entry_of(const sweep *s, const result *r, space_entry *x) {
  x->rel_err = r->rel_err[ARM_NEW];
  x->samples = r->samples;
  x->burn_in = r->burn_in;
  x->launch_spread = r->launch_spread;
  x->load_s = r->times.load_s;
  x->check_s = r->times.check_s;
  x->measure_s = r->times.measure_s;
  x->us = malloc(sizeof(double) * 3 * (size_t)(r->nrounds > 0 ? r->nrounds : 1));
  if (!x->us) {
    x->check = SPACE_ERROR;
    snprintf(x->detail, sizeof x->detail, "out of memory");
    return;
  }
  x->ref_us = x->us + r->nrounds;
  x->control_us = x->us + 2 * r->nrounds;
  for (int k = 0; k < r->nrounds; k++) {
    if (r->rounds[k].screened) continue;
    x->us[x->nrounds] = r->rounds[k].us[ARM_NEW];
    x->ref_us[x->nrounds] = r->rounds[k].us[ARM_BEST];
    x->control_us[x->nrounds++] = r->rounds[k].us[ARM_CONTROL];
  }
  /* the three arrays sit nrounds apart in the block: close the gaps screened rounds left */
  memmove(x->us + x->nrounds, x->ref_us, sizeof(double) * (size_t)x->nrounds);
  x->ref_us = x->us + x->nrounds;
  memmove(x->us + 2 * x->nrounds, x->control_us, sizeof(double) * (size_t)x->nrounds);
  x->control_us = x->us + 2 * x->nrounds;
  if (x->nrounds == 0) {
    x->check = SPACE_ERROR;
    snprintf(x->detail, sizeof x->detail, "every round was screened out (clock)");
  }
  spacefile_entry_stats(x);
  if (backend_simulated(s->sf.dev.backend)) synthetic_times(r, x);
}

/* What the job's result says of configuration i; -1 with e when the reference or the
 * control fails, which no configuration can be measured beside. */
static int judge(sweep *s, const result *r, space_entry *x, tf_err *e) {
  static const int status_check[] = {SPACE_PASS, SPACE_FAULT, SPACE_COMPILE_ERROR, SPACE_ERROR};
  x->check = status_check[r->status];
  snprintf(x->detail, sizeof x->detail, "%.500s", r->detail);
  if (r->status == RESULT_OK && !r->correct) {
    for (int a = 0; a < ARM_COUNT; a++)
      if (a != ARM_NEW && !(r->rel_err[a] <= s->j->tolerance))
        return tf_fail(e, TF_EXIT_FAIL, "the %s (%s) fails its check (relative error "
                       "%g, tolerance %g): no configuration can be measured beside it",
                       a == ARM_BEST ? "reference" : "control", s->j->arm[a].name_expr,
                       r->rel_err[a], s->j->tolerance);
    x->check = SPACE_FAIL;
    x->rel_err = r->rel_err[ARM_NEW];
    snprintf(x->detail, sizeof x->detail, "relative error %g over the tolerance %g",
             r->rel_err[ARM_NEW], s->j->tolerance);
  }
  if (x->check == SPACE_PASS) entry_of(s, r, x);
  return 0;
}

/* Configuration i's job in the measure child; a child that died or overran is replaced. */
static int measure_one(sweep *s, int i, space_entry *x, tf_err *e) {
  config cfg;
  space_at(&s->v, i, &cfg);
  if (job_build(s->j, &s->c, i + 1, 0, &s->c.start, &cfg, e)) return -1;
  snprintf(s->j->decide.rule, sizeof s->j->decide.rule, "median"); /* every round, no early stop */
  if (s->o.rounds > 0) s->j->measure.rounds = s->o.rounds;
  s->j->measure.max_samples = s->j->measure.samples; /* rounds as the farm's sequential rule takes them */
  cJSON *msg = job_to_json(s->j), *reply = NULL;
  char why[512] = "";
  int rc = childproc_send(&s->child, msg, e);
  cJSON_Delete(msg);
  if (rc == 0) rc = childproc_recv(&s->child, s->j->measure.deadline_s + 60.0, &reply, why,
                                   sizeof why, e);
  memset(s->r, 0, sizeof *s->r);
  if (rc == CHILD_LINE) rc = result_from_json(reply, s->r, e) ? -1 : 0;
  else if (rc > 0) result_fault(s->r, i + 1, s->sf.dev.uuid, "%s", why);
  cJSON_Delete(reply);
  if (rc < 0) return -1;
  if (s->r->status == RESULT_FAULT) {
    childproc_kill(&s->child);
    if (start_child(s, e)) return -1;
  }
  memset(x, 0, sizeof *x);
  x->cfg = cfg;
  x->compile_ms = s->compile_ms[i];
  x->rel_err = NAN;
  return judge(s, s->r, x, e);
}

static void measure_progress(const sweep *s, int done, int of, int failed, double t0, int force) {
  static double last;
  double now = tf_monotonic_s();
  if (s->o.quiet || (!force && now - last < 2.0)) return;
  last = now;
  double eta = done > 0 ? (now - t0) / done * (of - done) : 0;
  fprintf(stderr, "sweep: measured %d of %d configurations (%d failed), ETA %.0fm%02.0fs\n", done,
          of, failed, floor(eta / 60), fmod(eta, 60));
}

static int measure_all(sweep *s, tf_err *e) {
  int todo = 0, done = 0, failed = 0;
  double t0 = tf_monotonic_s();
  for (int i = 0; i < s->v.nreachable; i++) todo += !s->have[i];
  for (int i = 0; i < s->v.nreachable; i++) {
    if (s->have[i]) continue;
    space_entry x = {0};
    if (s->compile_state[i] == 2) {
      space_at(&s->v, i, &x.cfg);
      x.check = SPACE_COMPILE_ERROR, x.compile_ms = s->compile_ms[i], x.rel_err = NAN;
      snprintf(x.detail, sizeof x.detail, "%s", s->refusal[i]);
    } else if (measure_one(s, i, &x, e)) {
      return -1;
    }
    failed += x.check != SPACE_PASS;
    if (keep(s, i, &x, e)) return -1;
    measure_progress(s, ++done, todo, failed, t0, 0);
  }
  measure_progress(s, done, todo, failed, t0, 1);
  return 0;
}

/* ---- the file ---- */

static double reference_median(const sweep *s) {
  long n = 0;
  for (int i = 0; i < s->v.nreachable; i++) n += s->done[i].nrounds;
  double *all = malloc(sizeof *all * (size_t)(n > 0 ? n : 1)), m = 1.0;
  if (!all) return m;
  n = 0;
  for (int i = 0; i < s->v.nreachable; i++)
    for (int k = 0; k < s->done[i].nrounds; k++) all[n++] = s->done[i].ref_us[k];
  if (n > 0) m = stats_median(all, (int)n);
  free(all);
  return m;
}

static int gz_line(gzFile f, const cJSON *o) {
  char *text = cJSON_PrintUnformatted(o);
  int ok = text && gzputs(f, text) >= 0 && gzputc(f, '\n') >= 0;
  cJSON_free(text);
  return ok ? 0 : -1;
}

/* OUT from every entry: written to a temporary file beside it, then renamed. */
static int write_space(sweep *s, tf_err *e) {
  char tmp[sizeof s->out + 16];
  snprintf(tmp, sizeof tmp, "%s.tmp", s->out);
  s->sf.reference_us = reference_median(s);
  s->sf.n = s->v.nreachable;
  gzFile f = gzopen(tmp, "wb9");
  if (!f) return tf_fail(e, TF_EXIT_INPUT, "cannot write '%s': %s", tmp, strerror(errno));
  cJSON *h = spacefile_header_to_json(&s->sf);
  int rc = gz_line(f, h);
  cJSON_Delete(h);
  for (int i = 0; rc == 0 && i < s->v.nreachable; i++) {
    cJSON *o = spacefile_entry_to_json(&s->done[i]);
    rc = gz_line(f, o);
    cJSON_Delete(o);
  }
  cJSON *end = cJSON_CreateObject();
  cJSON_AddStringToObject(end, "type", "end");
  cJSON_AddNumberToObject(end, "configs", s->v.nreachable);
  if (rc == 0) rc = gz_line(f, end);
  cJSON_Delete(end);
  if (gzclose(f) != Z_OK) rc = -1;
  if (rc == 0 && rename(tmp, s->out) == 0) return 0;
  unlink(tmp);
  return tf_fail(e, TF_EXIT_FAIL, "cannot write '%s': %s", s->out, strerror(errno));
}

/* ---- the command ---- */

static int setup(sweep *s, tf_err *e) {
  if (campaign_load(&s->c, s->o.campaign, e) || space_enumerate(&s->c, &s->v, e)) return -1;
  if (s->o.out) snprintf(s->out, sizeof s->out, "%s", s->o.out);
  else snprintf(s->out, sizeof s->out, "%s.tfspace", s->c.name);
  snprintf(s->part, sizeof s->part, "%s.part", s->out);
  ssize_t n = readlink("/proc/self/exe", s->exe, sizeof s->exe - 1);
  if (n <= 0) return tf_fail(e, TF_EXIT_FAIL, "cannot find its own binary");
  s->exe[n] = '\0';
  size_t m = (size_t)s->v.nreachable;
  s->done = calloc(m, sizeof *s->done);
  s->have = calloc(m, 1);
  s->compile_ms = malloc(m * sizeof *s->compile_ms);
  s->compile_state = calloc(m, sizeof *s->compile_state);
  s->refusal = calloc(m, sizeof *s->refusal);
  s->j = malloc(sizeof *s->j);
  s->r = malloc(sizeof *s->r);
  if (!s->done || !s->have || !s->compile_ms || !s->compile_state || !s->refusal || !s->j || !s->r)
    return tf_fail(e, TF_EXIT_FAIL, "out of memory");
  for (size_t i = 0; i < m; i++) s->compile_ms[i] = NAN;
  return 0;
}

static void release(sweep *s) {
  if (s->child.pid) childproc_stop(&s->child, 5.0);
  if (s->pf) fclose(s->pf);
  for (int i = 0; s->done && i < s->v.nreachable; i++) free(s->done[i].us);
  free(s->done), free(s->have), free(s->compile_ms), free(s->compile_state), free(s->refusal);
  free(s->j), free(s->r);
  space_release(&s->v);
  campaign_release(&s->c);
}

static int sweep_run(sweep *s, tf_err *e) {
  if (setup(s, e) || start_child(s, e)) return -1;
  fill_header(s);
  if (!s->o.quiet)
    fprintf(stderr, "sweep: campaign %s, %d reachable configurations, on %s (%s, backend %s)%s\n",
            s->c.name, s->v.nreachable, s->sf.dev.name, s->sf.dev.uuid, s->sf.dev.backend,
            s->sf.simulated ? ": synthetic times" : "");
  if (open_part(s, e) || compile_all(s, e) || measure_all(s, e)) return -1;
  fclose(s->pf);
  s->pf = NULL;
  if (write_space(s, e)) return -1;
  unlink(s->part);
  if (!s->o.quiet) fprintf(stderr, "sweep: wrote '%s'\n", s->out);
  return 0;
}

int sweep_main(int argc, char **argv) {
  sweep *s = calloc(1, sizeof *s);
  if (!s) return fprintf(stderr, "tunefarm sweep: out of memory\n"), 1;
  int rc = parse(argc, argv, &s->o);
  if (rc) {
    free(s);
    return rc == 1 ? 0 : 2;
  }
  signal(SIGPIPE, SIG_IGN); /* a dead child is an error of its pipe, not our end */
  tf_err e = {0};
  rc = sweep_run(s, &e) ? tf_exit_status(&e) : 0;
  if (rc) fprintf(stderr, "tunefarm sweep: %s\n", e.msg);
  release(s);
  free(s);
  return rc;
}

/* ---- a space against a campaign (run --space) ---- */

static int space_fits(const campaign *c, const space_file *sf, tf_err *e) {
  const spec *t = &c->tmpl;
  int same = strcmp(t->name, sf->tmpl) == 0 && t->nknobs == sf->nknobs && t->ndims == sf->ndims;
  for (int i = 0; same && i < t->nknobs; i++) same = strcmp(t->knobs[i].name, sf->knobs[i]) == 0;
  for (int i = 0; same && i < t->ndims; i++)
    same = strcmp(t->dims[i].name, sf->dim_names[i]) == 0 && c->dims[i] == sf->dims[i];
  if (!same)
    return tf_fail(e, TF_EXIT_INPUT, "space '%s' was recorded for template '%s' at another "
                   "problem or with other knobs than campaign '%s' asks", sf->path, sf->tmpl,
                   c->path);
  return 0;
}

static int space_covers(const space_view *v, const space_file *sf, const campaign *c,
                        tf_err *e) {
  int missing = 0, first = -1;
  for (int i = 0; i < v->nreachable; i++) {
    config x;
    space_at(v, i, &x);
    if (!spacefile_find(sf, &x)) missing++, first = first < 0 ? i : first;
  }
  if (!missing) return 0;
  config x;
  char text[512];
  space_at(v, first, &x);
  spacefile_config_text(sf, &x, text, sizeof text);
  return tf_fail(e, TF_EXIT_INPUT, "space '%s' has no configuration %s (%d of the %d that "
                 "campaign '%s' can reach are missing): record them with tunefarm sweep",
                 sf->path, text, missing, v->nreachable, c->path);
}

int sweep_load_space(const campaign *c, const space_view *v, const char *space, space_file *sf,
                     tf_err *e) {
  memset(sf, 0, sizeof *sf);
  if (spacefile_load(sf, space, e) || space_fits(c, sf, e) || space_covers(v, sf, c, e)) {
    spacefile_release(sf);
    return -1;
  }
  return 0;
}

int sweep_check_space(const char *campaign_path, const char *space, tf_err *e) {
  campaign *c = calloc(1, sizeof *c);
  space_view v = {0};
  space_file sf = {0};
  if (!c) return tf_fail(e, TF_EXIT_FAIL, "out of memory");
  int rc = campaign_load(c, campaign_path, e) || space_enumerate(c, &v, e) ||
                   sweep_load_space(c, &v, space, &sf, e)
               ? -1
               : 0;
  spacefile_release(&sf);
  space_release(&v);
  campaign_release(c);
  free(c);
  return rc;
}
