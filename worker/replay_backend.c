/* replay_backend: a backend of the measure child that answers jobs from a recorded space
 * (common/spacefile.h, written by `tunefarm sweep`), so that the farm's coordinator, search
 * and decision rules run against what one device measured, fast and deterministically, on a
 * machine without a GPU (comparing search strategies against the space's known optimum).
 *
 * The space is the file TUNEFARM_SPACE names (`tunefarm run --space FILE` sets it). Each
 * template arm is looked up in it: a configuration the file lacks fails the job with a message
 * naming the file and the configuration; one recorded as a compile error fails to compile
 * (the job's status compile_error), one that failed its check reports its recorded error, one
 * that faulted is a sticky error (its measure process ends, as on the GPU). A round of an arm
 * draws one of its configuration's recorded rounds, drift taken out against the reference
 * measured beside it (spacefile_round_us), chosen by a seeded stream of (measure.seed, job
 * id): the same job gives the same rounds. The control draws from the control's rounds of the
 * new arm's record, taken in the same sweep job. There is no kernel-time instrument
 * (kernel_us -1) and the clock is the recorded device's maximum.
 *
 * Time: the job's times and wall_s are the recorded device's, not this machine's
 * (backend_ops.elapsed): a kernel's recorded compile time the first time this process meets
 * it (its cubin cache), the new arm's recorded load and check times, and its recorded time
 * per round times the rounds run. The ledger's wall_s then sums to the time a search would
 * have taken on that device. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/mix.h"       // defines: tf_mix64
#include "common/spacefile.h" // defines: spacefile_load, spacefile_find, spacefile_round_us
#include "worker/backend.h"

#define REPLAY_ENV "TUNEFARM_SPACE"

typedef struct replay_dev {
  space_file sf;
  unsigned char *compiled;             /* per entry: its compile time was spent already */
  const space_entry *arm[ARM_COUNT];   /* the job's arms' records; NULL for a committed kernel */
  const space_entry *pair;             /* the record the control draws from: new's */
  int rounds_run;                      /* sample calls of new this job: its rounds */
  double compile_ms;
  unsigned long long rng;
} replay_dev;

static int replay_open(void **self, const backend_opts *o, tf_err *e) {
  (void)o;
  const char *path = getenv(REPLAY_ENV);
  if (!path || !*path)
    return tf_fail(e, TF_EXIT_INPUT, "replay: no recorded space: give `run --space FILE` (or "
                   "set %s)", REPLAY_ENV);
  replay_dev *d = calloc(1, sizeof *d);
  if (!d) return tf_fail(e, TF_EXIT_FAIL, "replay: out of memory");
  if (spacefile_load(&d->sf, path, e) ||
      !(d->compiled = calloc(d->sf.n > 0 ? (size_t)d->sf.n : 1, 1))) {
    if (d->sf.e) spacefile_release(&d->sf);
    free(d);
    return e->code ? -1 : tf_fail(e, TF_EXIT_FAIL, "replay: out of memory");
  }
  *self = d;
  return 0;
}

/* The recorded device, marked as a replay of it: its UUID keeps the recorded one's digits
 * (so its ledger is found again) behind "RPL-". */
static int replay_describe(void *self, device_record *rec, tf_err *e) {
  (void)e;
  replay_dev *d = self;
  *rec = d->sf.dev;
  const char *dash = strchr(d->sf.dev.uuid, '-');
  snprintf(rec->backend, sizeof rec->backend, "replay");
  snprintf(rec->uuid, sizeof rec->uuid, "RPL-%.58s", dash ? dash + 1 : d->sf.dev.uuid);
  snprintf(rec->name, sizeof rec->name, "replay of %.100s", d->sf.dev.name);
  snprintf(rec->sim_noise, sizeof rec->sim_noise, "space=%.240s", d->sf.path);
  return 0;
}

static int same_problem(const replay_dev *d, const job *j, tf_err *e) {
  int same = j->ndims == d->sf.ndims;
  for (int i = 0; same && i < j->ndims; i++)
    same = strcmp(j->dim_names[i], d->sf.dim_names[i]) == 0 && j->dims[i] == d->sf.dims[i];
  if (!same)
    return tf_fail(e, TF_EXIT_INPUT, "replay: space '%s' was recorded for another problem than "
                   "job %lld's (campaign '%s')", d->sf.path, j->id, j->campaign);
  return 0;
}

/* Its recorded compile time, the first time this process meets the kernel. */
static void compile_once(replay_dev *d, const space_entry *x) {
  size_t i = (size_t)(x - d->sf.e);
  if (d->compiled[i]) return;
  d->compiled[i] = 1;
  if (isfinite(x->compile_ms)) d->compile_ms += x->compile_ms;
}

/* The record of template arm a, or why the job cannot run as the GPU would not have run it. */
static int arm_record(replay_dev *d, const job *j, int a, tf_err *e) {
  char text[512];
  const space_entry *x = spacefile_find(&d->sf, &j->arm[a].cfg);
  spacefile_config_text(&d->sf, &j->arm[a].cfg, text, sizeof text);
  if (!x)
    return tf_fail(e, TF_EXIT_INPUT, "replay: space '%s' has no configuration %s (the %s arm "
                   "of job %lld): record the campaign's space with tunefarm sweep", d->sf.path,
                   text, arm_names[a], j->id);
  d->arm[a] = x;
  compile_once(d, x);
  if (x->check == SPACE_COMPILE_ERROR)
    return tf_fail(e, TF_COMPILE_REFUSED, "nvrtc refused the program (%s, as recorded in space "
                   "'%s'): %.400s", text, d->sf.path, x->detail);
  if (x->check == SPACE_FAULT)
    return tf_fail(e, TF_STICKY, "%s faulted as recorded in space '%s': %.400s", text,
                   d->sf.path, x->detail);
  if (x->check == SPACE_ERROR)
    return tf_fail(e, TF_EXIT_FAIL, "%s failed as recorded in space '%s': %.400s", text,
                   d->sf.path, x->detail);
  return 0;
}

static int replay_prepare(void *self, const job *j, result *r, tf_err *e) {
  replay_dev *d = self;
  memset(d->arm, 0, sizeof d->arm);
  d->pair = NULL;
  d->rounds_run = 0;
  d->compile_ms = 0.0;
  if (same_problem(d, j, e)) return -1;
  for (int a = 0; a < ARM_COUNT; a++) {
    if (j->arm[a].library[0])
      return tf_fail(e, TF_EXIT_FAIL, "replay: arm '%s' is library routine '%s', which only the "
                     "cuda backend runs", arm_names[a], j->arm[a].library);
    if (j->arm[a].from_template && arm_record(d, j, a, e)) return -1;
  }
  d->pair = d->arm[ARM_NEW] ? d->arm[ARM_NEW] : d->arm[ARM_BEST];
  if (!d->pair || d->pair->check == SPACE_FAIL)
    d->pair = d->arm[ARM_BEST]; /* a wrong new is never timed: best's record times the control */
  if (r) {
    r->compile_ms = d->compile_ms;
    r->cache_hit = d->compile_ms == 0.0;
  }
  d->rng = tf_mix64(tf_mix64(j->measure.seed ^ 0x7e91a9ULL) ^ (unsigned long long)j->id);
  return 0;
}

static int replay_check(void *self, const placement *p, int set, double *rel_err, tf_err *e) {
  (void)set;
  replay_dev *d = self;
  if (p->arm < 0 || p->arm >= ARM_COUNT)
    return tf_fail(e, TF_EXIT_FAIL, "replay: no arm %d", p->arm);
  const space_entry *x = d->arm[p->arm];
  *rel_err = x && isfinite(x->rel_err) ? x->rel_err : 0.0;
  if (x && x->check == SPACE_FAIL && !(*rel_err > 0)) *rel_err = INFINITY;
  return 0;
}

/* One recorded round of x (the control's when control is set), drawn from the job's stream. */
static double draw(replay_dev *d, const space_entry *x, int control) {
  d->rng += 0x9e3779b97f4a7c15ULL;
  int k = (int)(tf_mix64(d->rng) % (unsigned long long)x->nrounds);
  return control ? spacefile_control_us(&d->sf, x, k) : spacefile_round_us(&d->sf, x, k);
}

static int replay_sample(void *self, const placement *p, int set, int samples, double *us,
                         double *kernel_us, double *spread, tf_err *e) {
  (void)set, (void)samples;
  replay_dev *d = self;
  if (p->arm < 0 || p->arm >= ARM_COUNT)
    return tf_fail(e, TF_EXIT_FAIL, "replay: no arm %d", p->arm);
  const space_entry *x = p->arm == ARM_CONTROL ? d->pair : d->arm[p->arm];
  if (!x || x->nrounds < 1)
    return tf_fail(e, TF_EXIT_FAIL, "replay: space '%s' holds no rounds for the %s arm",
                   d->sf.path, arm_names[p->arm]);
  *us = draw(d, x, p->arm == ARM_CONTROL);
  if (kernel_us) *kernel_us = -1.0;
  if (spread) *spread = isfinite(x->launch_spread) ? x->launch_spread : 0.0;
  if (p->arm == ARM_NEW) d->rounds_run++;
  return 0;
}

static void replay_clock(void *self, double *mhz, unsigned long long *reasons) {
  replay_dev *d = self;
  *mhz = d->sf.dev.max_sm_mhz;
  *reasons = 0;
}

static double or0(double v) { return isfinite(v) ? v : 0.0; }

/* The recorded device's time for this job (see the top of the file). */
static void replay_elapsed(void *self, result *r) {
  replay_dev *d = self;
  const space_entry *x = d->pair;
  double per_round = 0.0;
  if (x && x->check == SPACE_PASS && x->nrounds + x->burn_in > 0)
    per_round = or0(x->measure_s) / (x->nrounds + x->burn_in);
  r->times.compile_s = d->compile_ms / 1e3;
  r->times.compile_wait_s = 0.0;
  r->times.load_s = x ? or0(x->load_s) : 0.0;
  r->times.check_s = x ? or0(x->check_s) : 0.0;
  r->times.measure_s = per_round * d->rounds_run;
  r->wall_s = r->times.compile_s + r->times.load_s + r->times.check_s + r->times.measure_s;
}

static void replay_finish(void *self) { (void)self; }

static void replay_close(void *self) {
  replay_dev *d = self;
  spacefile_release(&d->sf);
  free(d->compiled);
  free(d);
}

/* Never chosen by default: a replay needs its space file (run --space FILE). */
static int replay_probe(char *why, size_t len) {
  snprintf(why, len, "replay answers from a recorded space only: run --space FILE");
  return 0;
}

const backend_ops backend_replay = {
    .name = "replay",
    .simulated = 1,
    .note = " (replay of a recorded space: every round is drawn from its recorded rounds)",
    .recorded = 1,
    .probe = replay_probe,
    .open = replay_open,
    .describe = replay_describe,
    .prepare = replay_prepare,
    .check = replay_check,
    .sample = replay_sample,
    .clock = replay_clock,
    .finish = replay_finish,
    .close = replay_close,
    .elapsed = replay_elapsed,
};
