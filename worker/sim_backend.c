/* sim_backend: the simulated device, a backend of the measure child that needs
 * no GPU. It serves CI, the statistical study of the decision rules and `run`
 * on machines without a GPU, and it never pretends to be a GPU: its backend is
 * "sim", its UUID starts with "SIM-", its name says what it is.
 *
 * Time of an arm: its noiseless time in the cost model (worker/simcost.h) of the spec the job
 * names for it (job.specs: the template's for a template arm, the committed kernel's for
 * the other), times the seeded noise of worker/sim_noise.h. Its device record says the noise
 * parameters (device.sim_noise), so that a ledger says what reproduces it. Faults are injected
 * per arm through job_arm.fault, in check(): "wrong" reports a relative error
 * of 0.5, "crash" raises SIGSEGV, "hang" never returns.
 *
 * Environment:
 *   TUNEFARM_SIM_UUID   the UUID to report (tests put two workers on "one" device)
 *   TUNEFARM_SIM_NOISE  noise parameters, "jitter=0.01,boost_p=0.1,..." (sim_noise.h)
 *   TUNEFARM_SIM_SLEEP  f: sleep f x the simulated time of every sample() call
 *   TUNEFARM_SIM_COMPILE  unset: compile each job's kernels with NVRTC (for SIM_ARCH) through
 *                       the cubin cache (compile/program.h), as the GPU does, so that a kernel
 *                       that does not compile is a compile_error here too, with NVRTC's log.
 *                       0: compile nothing (tests of the farm's own machinery).
 *                       s: a simulated compile taking s seconds per kernel missing from the
 *                       cache instead of NVRTC, so that compiling ahead
 *                       (worker/compile_pool.h) shortens the next job as it does on the GPU.
 *                       "s,l,f": l seconds for a fraction f of the kernels, the long tail
 *                       of the GPU's compiles (program_kernel_sim_seconds).
 *
 * The simulated device runs no kernel: its times are synthetic and check() compares no output
 * (rel_err 0, or an injected fault's), which every report of a simulated run says. */
// defines: backend_sim, sim_noise_defaults, sim_noise_parse, sim_noise_format, sim_noise_from_env,
//          sim_noise_start, sim_noise_sample, sim_noise_boosted, sim_noise_mhz
#include "worker/sim_noise.h"

#include <errno.h>
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

// defines: backend_ops, backend_opts
#include "worker/backend.h"
// defines: program_of_job, program_request, program_compile, program_source_path
#include "compile/program.h"
// defines: tf_mix64
#include "common/decide.h" /* defines: stats_rel_spread */
#include "common/mix.h"
// defines: simcost_us
#include "worker/simcost.h"

/* ---- random numbers: splitmix64 (Steele, Lea, Flood 2014) ---- */

static unsigned long long next64(unsigned long long *state) {
  *state += 0x9e3779b97f4a7c15ULL;
  return tf_mix64(*state);
}

/* Uniform in (0, 1): 53 random bits, never 0 (log is taken of it). */
static double uniform01(unsigned long long *state) {
  return ((double)(next64(state) >> 11) + 0.5) * (1.0 / 9007199254740992.0);
}

/* Standard normal by Box-Muller; one of the pair is discarded to keep no hidden state. */
static double normal01(unsigned long long *state) {
  double u1 = uniform01(state), u2 = uniform01(state);
  return sqrt(-2.0 * log(u1)) * cos(6.283185307179586 * u2);
}

/* ---- the noise model ---- */

void sim_noise_defaults(sim_noise_params *p) {
  p->jitter = 0.01;
  p->round = 0.005;
  p->boost_p = 0.10;
  p->boost = 0.10;
  p->drift = 0.002;
  p->cold = 0.05;
  p->cold_tau = 3.0;
  p->kjitter = 0.002;
  p->place = 0.0; /* off: tests of placement turn it on */
}

typedef struct noise_key {
  const char *name;
  size_t offset;
  double lo, hi; /* accepted range, inclusive */
} noise_key;

static const noise_key noise_keys[] = {
    {"jitter", offsetof(sim_noise_params, jitter), 0.0, 1.0},
    {"round", offsetof(sim_noise_params, round), 0.0, 1.0},
    {"boost_p", offsetof(sim_noise_params, boost_p), 0.0, 1.0},
    {"boost", offsetof(sim_noise_params, boost), 0.0, 10.0},
    {"drift", offsetof(sim_noise_params, drift), 0.0, 1.0},
    {"cold", offsetof(sim_noise_params, cold), 0.0, 10.0},
    {"cold_tau", offsetof(sim_noise_params, cold_tau), 0.001, 1e6},
    {"kjitter", offsetof(sim_noise_params, kjitter), 0.0, 1.0},
    {"place", offsetof(sim_noise_params, place), 0.0, 1.0},
};
#define NOISE_NKEYS (sizeof noise_keys / sizeof noise_keys[0])

static int parse_pair(const char *item, size_t len, sim_noise_params *p, char *err,
                      size_t errlen) {
  char buf[128];
  if (len >= sizeof buf) {
    snprintf(err, errlen, "'%.40s...' is too long", item);
    return -1;
  }
  memcpy(buf, item, len);
  buf[len] = '\0';
  char *eq = strchr(buf, '=');
  if (!eq) {
    snprintf(err, errlen, "'%s' is not key=value", buf);
    return -1;
  }
  *eq = '\0';
  const char *key = buf, *val = eq + 1;
  for (size_t i = 0; i < NOISE_NKEYS; i++) {
    if (strcmp(noise_keys[i].name, key) != 0) continue;
    char *end = NULL;
    errno = 0;
    double v = strtod(val, &end);
    if (end == val || *end != '\0' || errno != 0 || !isfinite(v)) {
      snprintf(err, errlen, "key '%s' needs a number, got '%s'", key, val);
      return -1;
    }
    if (v < noise_keys[i].lo || v > noise_keys[i].hi) {
      snprintf(err, errlen, "key '%s' must be in [%g, %g], got %g", key, noise_keys[i].lo,
               noise_keys[i].hi, v);
      return -1;
    }
    *(double *)(void *)((char *)p + noise_keys[i].offset) = v;
    return 0;
  }
  snprintf(err, errlen,
           "unknown key '%s' (known: jitter, round, boost_p, boost, drift, cold, cold_tau, "
           "kjitter, place)",
           key);
  return -1;
}

int sim_noise_parse(const char *text, sim_noise_params *p, char *err, size_t errlen) {
  const char *s = text;
  while (s && *s) {
    const char *comma = strchr(s, ',');
    size_t len = comma ? (size_t)(comma - s) : strlen(s);
    if (len > 0 && parse_pair(s, len, p, err, errlen) != 0) return -1;
    s = comma ? comma + 1 : NULL;
  }
  return 0;
}

/* v in the fewest digits that read back as the same double. */
static void shortest(double v, char *buf, size_t len) {
  for (int digits = 6; digits <= 17; digits++) {
    snprintf(buf, len, "%.*g", digits, v);
    if (strtod(buf, NULL) == v) return;
  }
}

void sim_noise_format(const sim_noise_params *p, char *buf, size_t len) {
  size_t n = 0;
  buf[0] = '\0';
  for (size_t i = 0; i < NOISE_NKEYS && n < len; i++) {
    char v[32];
    shortest(*(const double *)(const void *)((const char *)p + noise_keys[i].offset), v, sizeof v);
    n += (size_t)snprintf(buf + n, len - n, "%s%s=%s", i ? "," : "", noise_keys[i].name, v);
  }
}

int sim_noise_from_env(sim_noise_params *p, tf_err *e) {
  sim_noise_defaults(p);
  const char *text = getenv("TUNEFARM_SIM_NOISE");
  if (!text) return 0;
  char err[256];
  if (sim_noise_parse(text, p, err, sizeof err) != 0)
    return tf_fail(e, TF_EXIT_INPUT, "TUNEFARM_SIM_NOISE '%s': %s", text, err);
  return 0;
}

void sim_noise_start(sim_noise *n, const sim_noise_params *p, unsigned long long seed, int ordinal,
                     long long job_id) {
  memset(n, 0, sizeof *n);
  n->p = *p;
  n->key = tf_mix64(tf_mix64(tf_mix64(seed ^ 0x5eedULL) ^ (unsigned long long)(unsigned)ordinal) ^
                    (unsigned long long)job_id);
  n->rng = n->key;
  n->last_arm = -1;
}

int sim_noise_boosted(const sim_noise *n, int arm, int round) {
  if (n->p.boost_p <= 0.0) return 0;
  unsigned long long h = tf_mix64(n->key ^ tf_mix64(((unsigned long long)(unsigned)round << 8) |
                                                    (unsigned long long)(unsigned)arm));
  double u = ((double)(h >> 11) + 0.5) * (1.0 / 9007199254740992.0);
  return u < n->p.boost_p;
}

static int cmp_double(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return (x > y) - (x < y);
}

double sim_noise_sample(sim_noise *n, int arm, double sim_us, int samples, double *kernel_us) {
  if (arm < 0 || arm >= SIM_NOISE_ARMS) arm = 0;
  if (samples < 1) samples = 1;
  if (samples > 4096) samples = 4096;
  int round = n->arm_round[arm]++;
  int boosted = sim_noise_boosted(n, arm, round);
  n->log_drift += n->p.drift * normal01(&n->rng);
  double state = exp(n->p.round * normal01(&n->rng));
  double boost = boosted ? 1.0 / (1.0 + n->p.boost) : 1.0;
  double cold = 1.0 + n->p.cold * exp(-(double)n->calls / n->p.cold_tau);
  double base = sim_us * state * boost * cold * exp(n->log_drift);
  double draws[4096];
  for (int j = 0; j < samples; j++) draws[j] = base * exp(n->p.jitter * normal01(&n->rng));
  qsort(draws, (size_t)samples, sizeof draws[0], cmp_double);
  double med = samples % 2 ? draws[samples / 2]
                           : 0.5 * (draws[samples / 2 - 1] + draws[samples / 2]);
  n->last_spread = stats_rel_spread(draws, samples);
  double k = med * SIM_KERNEL_SHARE * exp(n->p.kjitter * normal01(&n->rng));
  if (kernel_us) *kernel_us = k;
  n->calls++;
  n->last_arm = arm;
  n->last_boosted = boosted;
  return med;
}

double sim_noise_place(const sim_noise_params *p, unsigned long long seed, int ordinal,
                       int instance, int slot, int set) {
  if (p->place <= 0.0) return 1.0;
  unsigned long long st =
      tf_mix64(tf_mix64(seed ^ 0x91ace0ULL) ^ (unsigned long long)(unsigned)ordinal);
  st = tf_mix64(st ^ ((unsigned long long)(unsigned)instance << 16) ^
                ((unsigned long long)(unsigned)set << 8) ^ (unsigned long long)(unsigned)slot);
  return exp(p->place * normal01(&st));
}

double sim_noise_mhz(const sim_noise *n) {
  return n->last_boosted ? SIM_NOMINAL_MHZ * (1.0 + n->p.boost) : SIM_NOMINAL_MHZ;
}

/* ---- the backend ---- */

int sim_compile_seconds(sim_compile *out, tf_err *e) {
  const char *text = getenv("TUNEFARM_SIM_COMPILE");
  *out = (sim_compile){0.0, 0.0, 0.0, 0};
  if (!text || !*text) return 0; /* NVRTC */
  double v[3] = {0.0, 0.0, 0.0};
  const double max[3] = {3600.0, 3600.0, 1.0};
  const char *at = text;
  int n = 0, ok = 1;
  for (; ok && n < 3; n++) {
    char *end = NULL;
    v[n] = strtod(at, &end);
    ok = end != at && isfinite(v[n]) && v[n] >= 0.0 && v[n] <= max[n];
    if (!ok || *end == '\0') break;
    ok = *end == ',';
    at = end + 1;
  }
  if (!ok || (n != 0 && n != 2))
    return tf_fail(e, TF_EXIT_INPUT, "TUNEFARM_SIM_COMPILE '%s' must be seconds per compile "
                   "(0 to 3600), or S,L,F: S seconds, L for a fraction F (0 to 1) of the "
                   "kernels", text);
  *out = (sim_compile){v[0], v[1], v[2], v[0] == 0.0};
  return 0;
}

typedef struct sim_dev {
  int ordinal;
  int instance;            /* backend_opts.instance: which process, for the placement draw */
  sim_noise_params params;
  double sleep_factor;     /* TUNEFARM_SIM_SLEEP, 0 when unset */
  sim_compile compile;     /* TUNEFARM_SIM_COMPILE: zeros (NVRTC) when unset */
  const char *cache_dir;   /* backend_opts.cache_dir: NULL, the default */
  int have_job;
  job j;                   /* the job prepare() was given */
  double us[ARM_COUNT];    /* its arms' noiseless times */
  spec *specs[2];          /* the specs the last jobs named (loaded once: they rarely change) */
  char spec_paths[2][2 * SPEC_PATH + 2];
  sim_noise noise;
} sim_dev;

static int sim_open(void **self, const backend_opts *o, tf_err *e) {
  sim_dev *d = calloc(1, sizeof *d);
  if (!d) return tf_fail(e, TF_EXIT_FAIL, "sim device: out of memory");
  d->ordinal = o ? o->ordinal : 0;
  d->instance = o ? o->instance : 0;
  if (sim_noise_from_env(&d->params, e) != 0) {
    free(d);
    return -1;
  }
  const char *sleep_text = getenv("TUNEFARM_SIM_SLEEP");
  if (sleep_text && *sleep_text) {
    char *end = NULL;
    double f = strtod(sleep_text, &end);
    if (end == sleep_text || *end != '\0' || !isfinite(f) || f < 0.0 || f > 1e6) {
      free(d);
      return tf_fail(e, TF_EXIT_INPUT,
                     "TUNEFARM_SIM_SLEEP '%s' must be a non-negative number (a factor of the "
                     "simulated time)",
                     sleep_text);
    }
    d->sleep_factor = f;
  }
  if (sim_compile_seconds(&d->compile, e)) {
    free(d);
    return -1;
  }
  d->cache_dir = o ? o->cache_dir : NULL;
  *self = d;
  return 0;
}

/* 128 bits of identity from (host, ordinal), as 32 hex digits. */
static void sim_uuid(const char *host, int ordinal, char *out, size_t len) {
  unsigned long long h = 0xcbf29ce484222325ULL; /* FNV-1a over the host name */
  for (const char *p = host; *p; p++) h = (h ^ (unsigned char)*p) * 0x100000001b3ULL;
  unsigned long long a = tf_mix64(h ^ tf_mix64((unsigned long long)(unsigned)ordinal + 1));
  unsigned long long b = tf_mix64(a ^ 0x51adeULL);
  snprintf(out, len, "SIM-%016llx%016llx", a, b);
}

static int sim_describe(void *self, device_record *rec, tf_err *e) {
  (void)e;
  sim_dev *d = self;
  memset(rec, 0, sizeof *rec);
  snprintf(rec->backend, sizeof rec->backend, "sim");
  snprintf(rec->name, sizeof rec->name, "tunefarm simulated device");
  if (gethostname(rec->host, sizeof rec->host) != 0) snprintf(rec->host, sizeof rec->host, "localhost");
  rec->host[sizeof rec->host - 1] = '\0';
  const char *forced = getenv("TUNEFARM_SIM_UUID");
  if (forced && *forced)
    snprintf(rec->uuid, sizeof rec->uuid, "%s", forced);
  else
    sim_uuid(rec->host, d->ordinal, rec->uuid, sizeof rec->uuid);
  snprintf(rec->pci_bus_id, sizeof rec->pci_bus_id, "sim:%02x", (unsigned)d->ordinal & 0xffu);
  rec->cc_major = 9;
  rec->cc_minor = 0;
  snprintf(rec->arch, sizeof rec->arch, "%s", SIM_ARCH);
  rec->sm_count = 132;
  rec->mem_bytes = 141LL * 1000 * 1000 * 1000;
  rec->l2_bytes = 50LL * 1024 * 1024;
  rec->max_sm_mhz = (int)SIM_NOMINAL_MHZ;
  rec->cur_sm_mhz = (int)SIM_NOMINAL_MHZ;
  rec->ordinal = d->ordinal; /* driver, runtime and NVRTC versions stay 0: there are none */
  sim_noise_format(&d->params, rec->sim_noise, sizeof rec->sim_noise);
  return 0;
}

/* The job's kernels through the cubin cache, as the cuda backend compiles them: with NVRTC,
 * or a simulated compile in its place (d->compile.short_s > 0). A refusal is reported as the
 * cuda backend reports it (program_refused), so the job's status is compile_error. */
static int sim_compile_job(const sim_dev *d, const job *j, result *r, tf_err *e) {
  program_ref p;
  program_req pr;
  program_of_job(j, &p);
  const program_target t = {.arch = SIM_ARCH, .cache_dir = d->cache_dir, .sim = &d->compile};
  program_request(&p, &t, &pr);
  program_build *pb = malloc(sizeof *pb); /* three compile results: not for the stack */
  if (!pb) return tf_fail(e, TF_EXIT_FAIL, "sim: out of memory");
  int rc = program_compile(&pr, pb, e);
  if (r) {
    r->compile_ms = pb->ms;
    r->cache_hit = pb->cache_hit;
    r->times.compile_wait_s = pb->wait_ms / 1e3;
  }
  if (rc && e && e->code == TF_COMPILE_REFUSED) program_refused(&pr, pb, pr.arch, e);
  program_build_release(pb);
  free(pb);
  return rc;
}

/* Spec `which` of the job (0: the template's, 1: the committed kernel's), loaded. */
static const spec *job_spec(sim_dev *d, const job *j, int which, tf_err *e) {
  char path[sizeof d->spec_paths[0]];
  if (!j->specs[which][0])
    return tf_fail(e, TF_EXIT_FAIL, "sim device: job %lld names no spec for its %s arm (its "
                   "cost model reads it: job.specs)", j->id,
                   which ? "committed kernel's" : "template's"), NULL;
  program_source_path(j->root, j->specs[which], path, sizeof path);
  if (d->specs[which] && strcmp(path, d->spec_paths[which]) == 0) return d->specs[which];
  if (!d->specs[which] && !(d->specs[which] = calloc(1, sizeof *d->specs[which])))
    return tf_fail(e, TF_EXIT_FAIL, "sim device: out of memory"), NULL;
  if (d->spec_paths[which][0]) spec_release(d->specs[which]);
  d->spec_paths[which][0] = '\0';
  if (spec_load(d->specs[which], path, e)) return NULL;
  snprintf(d->spec_paths[which], sizeof d->spec_paths[which], "%s", path);
  return d->specs[which];
}

/* Each arm's noiseless time: the cost model of its spec at the job's problem and seed. */
static int arm_times(sim_dev *d, const job *j, tf_err *e) {
  for (int a = 0; a < ARM_COUNT; a++) {
    if (j->arm[a].library[0]) /* it has no cost model, and no program to simulate */
      return tf_fail(e, TF_EXIT_FAIL, "sim device: arm '%s' is library routine '%s', which "
                     "only the cuda backend runs", arm_names[a], j->arm[a].library);
    const spec *s = job_spec(d, j, !j->arm[a].from_template, e);
    if (!s) return -1;
    d->us[a] = simcost_us(s, j->dims, &j->arm[a].cfg, j->measure.seed);
  }
  return 0;
}

static int sim_prepare(void *self, const job *j, result *r, tf_err *e) {
  sim_dev *d = self;
  if (arm_times(d, j, e)) return -1;
  if (r) {
    r->compile_ms = 0.0;
    r->cache_hit = 0;
  }
  if (!d->compile.none && sim_compile_job(d, j, r, e)) return -1;
  d->j = *j;
  d->have_job = 1;
  sim_noise_start(&d->noise, &d->params, j->measure.seed, d->ordinal, j->id);
  return 0;
}

static int sim_valid(const sim_dev *d, const placement *p, tf_err *e) {
  if (!d->have_job) return tf_fail(e, TF_EXIT_FAIL, "sim device: no job prepared");
  if (p->arm < 0 || p->arm >= ARM_COUNT || p->code < 0 || p->code >= placement_copies(&d->j) ||
      p->bufs < 0 || p->bufs >= placement_slots(&d->j))
    return tf_fail(e, TF_EXIT_FAIL, "sim device: no arm %d in module copy %d and buffer slot %d",
                   p->arm, p->code, p->bufs);
  return 0;
}

static int sim_check(void *self, const placement *p, int set, double *rel_err, tf_err *e) {
  (void)set;
  sim_dev *d = self;
  if (sim_valid(d, p, e)) return -1;
  int arm = p->arm;
  const char *fault = d->j.arm[arm].fault;
  if (strcmp(fault, "crash") == 0) raise(SIGSEGV);
  if (strcmp(fault, "hang") == 0) {
    for (;;) sleep(1); /* the worker's deadline ends this child */
  }
  *rel_err = strcmp(fault, "wrong") == 0 ? 0.5 : 0.0;
  return 0;
}

static void sleep_us(double us) {
  if (!(us > 0.0)) return;
  struct timespec ts;
  ts.tv_sec = (time_t)(us / 1e6);
  ts.tv_nsec = (long)((us - (double)ts.tv_sec * 1e6) * 1e3);
  while (nanosleep(&ts, &ts) != 0 && errno == EINTR) {
  }
}

/* The copy of best that the canary times in new's place draws new's noise stream: a canary
 * round is then a generation's round without the control. */
static int sim_sample(void *self, const placement *p, int set, int samples, double *us,
                      double *kernel_us, double *spread, tf_err *e) {
  sim_dev *d = self;
  if (sim_valid(d, p, e)) return -1;
  int stream = p->arm == ARM_BEST && p->code == 1 ? ARM_NEW : p->arm;
  double place =
      sim_noise_place(&d->params, d->j.measure.seed, d->ordinal, d->instance, p->bufs, set);
  double k = 0.0;
  *us = sim_noise_sample(&d->noise, stream, d->us[p->arm] * place, samples, &k);
  if (kernel_us) *kernel_us = k;
  if (spread) *spread = d->noise.last_spread;
  if (d->sleep_factor > 0.0) sleep_us(d->sleep_factor * *us * (samples > 0 ? samples : 1));
  return 0;
}

static void sim_clock(void *self, double *mhz, unsigned long long *reasons) {
  sim_dev *d = self;
  *mhz = sim_noise_mhz(&d->noise);
  *reasons = 0;
}

static void sim_finish(void *self) {
  sim_dev *d = self;
  d->have_job = 0;
}

static void sim_close(void *self) {
  sim_dev *d = self;
  for (int i = 0; i < 2; i++) {
    if (d->spec_paths[i][0]) spec_release(d->specs[i]);
    free(d->specs[i]);
  }
  free(d);
}

/* Usable everywhere: it needs no device. */
static int sim_probe(char *why, size_t len) {
  (void)why, (void)len;
  return 1;
}

const backend_ops backend_sim = {
    .name = "sim",
    .simulated = 1,
    .note = " (simulated device: its times are synthetic, from a cost model, and no kernel's "
            "output is checked)",
    .probe = sim_probe,
    .open = sim_open,
    .describe = sim_describe,
    .prepare = sim_prepare,
    .check = sim_check,
    .sample = sim_sample,
    .clock = sim_clock,
    .finish = sim_finish,
    .close = sim_close,
};
