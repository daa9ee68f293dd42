/* bench_measure: the device side of `tunefarm bench` (tools/bench.h).
 *
 * Template configurations and committed kernels go through the measure child's backend
 * (worker/backend.h) in this process, as jobs built like the farm's (common/msg.h): a job
 * holds three arms, and one NVRTC program compiles at most one committed kernel, so arms are
 * packed two template configurations (best and new slots) and one committed kernel (control
 * slot) to a job. A slot left empty repeats the job's first arm, since a job always holds
 * three; such a filler is compiled but neither checked nor timed. The cuBLAS arm follows, with
 * the same protocol, through worker/cublas.h.
 *
 * One loop (measure_unit) serves both: a bench_runner is the pair check/sample that the
 * backend table and the cuBLAS arm both provide. Arms are compared within a job in paired
 * rotated rounds; across jobs, and against cuBLAS, as separate measurements taken one after
 * the other on the same device (the table's spread says how steady each one was).
 *
 * A sticky device error (illegal address, trap) ends the bench: nothing touches the device
 * after it, and the error goes up (exit status 1). Any other failure is the arm's ERROR. */
#include "tools/bench.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "worker/backend.h"   /* defines: backend_ops, backend_find, TF_STICKY */
#include "worker/child.h"     /* defines: child_default_backend */
#include "worker/cublas.h"    /* defines: tf_cublas, cublas_load, cublas_sgemm_* */
#include "worker/nvml.h"      /* defines: nvml_load, nvml_driver_version */
#include "worker/protocol.h"  /* defines: protocol_order */

/* What measure_unit needs from whatever launches the arms. */
typedef struct bench_runner {
  void *self;
  int (*check)(void *self, const placement *p, int set, double *rel_err, tf_err *e);
  int (*sample)(void *self, const placement *p, int set, int samples, double *us,
                double *kernel_us, tf_err *e);
  int input_sets;
  int burn_in;
  double tolerance;
} bench_runner;

/* "farm best (GPU-7412f039)", "start", "committed kernel matmul_regtile", "cuBLAS". */
static void print_arm(FILE *f, const bench_arm *a) {
  fprintf(f, "%s%s%s", a->label, a->kind == BENCH_KERNEL ? " " : "",
          a->kind == BENCH_KERNEL ? a->what : "");
}

/* The arm's failure, recorded; -1 when the device is unusable and the bench must stop. */
static int arm_failed(bench_arm *a, const char *what, const tf_err *e) {
  a->status = BENCH_ERROR;
  snprintf(a->note, sizeof a->note, "error: %s", e->msg);
  fputs("tunefarm bench: ", stderr);
  print_arm(stderr, a);
  fprintf(stderr, ": %s failed: %s\n", what, e->msg);
  return e->code == TF_STICKY ? -1 : 0;
}

/* Every arm on every input set against the CPU reference; the worst error counts. */
static int gate(const bench_runner *u, bench_arm *slot[ARM_COUNT], tf_err *e) {
  for (int k = 0; k < ARM_COUNT; k++) {
    bench_arm *a = slot[k];
    if (!a) continue;
    a->rel_err = NAN; /* until a check succeeds: an arm whose check failed shows none */
    for (int set = 0, seen = 0; set < u->input_sets && a->status == BENCH_PENDING; set++) {
      double err = 0.0;
      placement p = {.arm = k}; /* the bench's jobs share one buffer slot and one module */
      if (u->check(u->self, &p, set, &err, e)) {
        if (arm_failed(a, "check", e)) return -1;
        tf_err_clear(e);
        continue;
      }
      /* the worst set counts, and a NaN error stays NaN (it fails the gate below) */
      if (!seen || isnan(err) || (!isnan(a->rel_err) && err > a->rel_err)) a->rel_err = err;
      seen = 1;
    }
    if (a->status == BENCH_PENDING && !(a->rel_err <= u->tolerance)) {
      a->status = BENCH_WRONG;
      snprintf(a->note, sizeof a->note, "wrong: relative error %.3g over tolerance %.3g",
               a->rel_err, u->tolerance);
    }
    if (a->status == BENCH_ERROR) continue;
    fputs("tunefarm bench:   ", stderr);
    print_arm(stderr, a);
    fprintf(stderr, ": rel_err %.2e%s\n", a->rel_err,
            a->status == BENCH_WRONG ? ", WRONG: not timed" : "");
  }
  return 0;
}

/* One round: S samples of every correct arm in the farm's rotated order. */
static int run_round(const bench_runner *u, bench_arm *slot[ARM_COUNT], int i, int samples,
                     int record, tf_err *e) {
  int order[ARM_COUNT];
  protocol_order(i, order);
  for (int p = 0; p < ARM_COUNT; p++) {
    int k = order[p];
    bench_arm *a = slot[k];
    double us = 0.0, kus = -1.0;
    if (!a || a->status != BENCH_PENDING) continue;
    placement pl = {.arm = k};
    if (u->sample(u->self, &pl, i % u->input_sets, samples, &us, &kus, e)) {
      if (arm_failed(a, "sampling", e)) return -1;
      tf_err_clear(e);
      continue;
    }
    if (record && a->nrounds < BENCH_MAX_ROUNDS) {
      a->us[a->nrounds] = us;
      a->kernel_us[a->nrounds] = kus;
      a->nrounds++;
    }
  }
  return 0;
}

static int measure_unit(const bench_runner *u, bench_arm *slot[ARM_COUNT], const bench_opts *o,
                        tf_err *e) {
  if (gate(u, slot, e)) return -1;
  for (int i = 0; i < u->burn_in; i++)
    if (run_round(u, slot, i, o->samples, 0, e)) return -1;
  for (int i = 0; i < o->rounds; i++)
    if (run_round(u, slot, i, o->samples, 1, e)) return -1;
  for (int k = 0; k < ARM_COUNT; k++)
    if (slot[k] && slot[k]->status == BENCH_PENDING) slot[k]->status = BENCH_MEASURED;
  return 0;
}

/* ---------------------------------------------------------------- jobs */

static int measurable(const bench_arm *a, bench_kind kind) {
  return a->kind == kind && a->status == BENCH_PENDING;
}

/* Arm indices per job and slot, -1 for an empty slot; returns the number of jobs. */
static int plan_jobs(const bench *b, int slots[][ARM_COUNT]) {
  int t[BENCH_MAX_ARMS], k[BENCH_MAX_ARMS], nt = 0, nk = 0;
  for (int i = 0; i < b->narms; i++) {
    if (measurable(&b->arms[i], BENCH_TEMPLATE)) t[nt++] = i;
    if (measurable(&b->arms[i], BENCH_KERNEL)) k[nk++] = i;
  }
  int njobs = (nt + 1) / 2 > nk ? (nt + 1) / 2 : nk;
  for (int j = 0; j < njobs; j++) {
    slots[j][ARM_BEST] = 2 * j < nt ? t[2 * j] : -1;
    slots[j][ARM_NEW] = 2 * j + 1 < nt ? t[2 * j + 1] : -1;
    slots[j][ARM_CONTROL] = j < nk ? k[j] : -1;
  }
  return njobs;
}

/* The job of one slot assignment; an empty slot repeats the first arm. */
static int build_job(const bench *b, const bench_opts *o, const int slots[ARM_COUNT], long long id,
                     job *j, tf_err *e) {
  int first = slots[ARM_BEST] >= 0 ? slots[ARM_BEST] : slots[ARM_NEW] >= 0 ? slots[ARM_NEW]
                                                                           : slots[ARM_CONTROL];
  job_init(j, &b->c, id, 0);
  for (int k = 0; k < ARM_COUNT; k++) {
    const bench_arm *a = &b->arms[slots[k] >= 0 ? slots[k] : first];
    if (a->kind == BENCH_KERNEL ? job_set_kernel_arm(j, &b->c, k, a->kernel, e)
                                : job_set_template_arm(j, &b->c, k, &a->cfg, e))
      return -1;
  }
  j->measure.flush_l2 = 1; /* whatever the campaign says: the bench always flushes */
  j->measure.layout = LAYOUT_SHARED; /* and measures as the farm does by default */
  j->measure.code = CODE_SHARED;
  j->canary_rounds = 0;
  j->measure.rounds = o->rounds;
  j->measure.samples = o->samples;
  return 0;
}

static void job_progress(bench_arm *slot[ARM_COUNT], int n, int of) {
  fprintf(stderr, "tunefarm bench: job %d of %d:", n, of);
  for (int k = 0, first = 1; k < ARM_COUNT; k++)
    if (slot[k]) {
      fputs(first ? " " : ", ", stderr);
      print_arm(stderr, slot[k]);
      first = 0;
    }
  fputc('\n', stderr);
}

static int run_job(bench *b, const bench_opts *o, const backend_ops *ops, void *self,
                   const int slots[ARM_COUNT], int n, int of, tf_err *e);

/* A job's arms share one NVRTC program and one prepare: when that fails, measure each arm
 * alone, so that one arm's compile error or launch limit is not charged to the others. */
static int run_arms_alone(bench *b, const bench_opts *o, const backend_ops *ops, void *self,
                          const int slots[ARM_COUNT], int n, int of, tf_err *e) {
  fprintf(stderr, "tunefarm bench: job %d of %d failed (%s); its arms one at a time\n", n, of,
          e->msg);
  ops->finish(self); /* prepare may have half-built the job */
  tf_err_clear(e);
  for (int k = 0; k < ARM_COUNT; k++) {
    int alone[ARM_COUNT] = {-1, -1, -1};
    alone[k] = slots[k];
    if (slots[k] >= 0 && run_job(b, o, ops, self, alone, n, of, e)) return -1;
  }
  return 0;
}

/* A job and its result for one slot assignment (large values: the caller frees them). */
typedef struct job_space {
  job j;
  result r;
} job_space;

/* The job's arms checked and timed; 1 when its job could not be built or prepared (*e says
 * why, and the device was left as prepare left it), -1 after a sticky error. */
static int measure_job(bench *b, const bench_opts *o, const backend_ops *ops, void *self,
                       const int slots[ARM_COUNT], int n, bench_arm *slot[ARM_COUNT],
                       job_space *x, tf_err *e) {
  memset(&x->r, 0, sizeof x->r);
  if (build_job(b, o, slots, n, &x->j, e) || ops->prepare(self, &x->j, &x->r, e)) return 1;
  bench_runner u = {.self = self, .check = ops->check, .sample = ops->sample,
                    .input_sets = x->j.measure.input_sets, .burn_in = x->j.measure.burn_in,
                    .tolerance = x->j.tolerance};
  if (measure_unit(&u, slot, o, e)) return -1; /* never touch a device after a sticky error */
  ops->finish(self);
  return 0;
}

static int run_job(bench *b, const bench_opts *o, const backend_ops *ops, void *self,
                   const int slots[ARM_COUNT], int n, int of, tf_err *e) {
  bench_arm *slot[ARM_COUNT];
  for (int k = 0; k < ARM_COUNT; k++) slot[k] = slots[k] >= 0 ? &b->arms[slots[k]] : NULL;
  job_progress(slot, n, of);
  job_space *x = malloc(sizeof *x);
  if (!x) return tf_fail(e, TF_EXIT_FAIL, "bench: out of memory");
  int rc = measure_job(b, o, ops, self, slots, n, slot, x, e);
  free(x);
  if (rc <= 0) return rc;
  int sticky = e->code == TF_STICKY, arms = 0;
  for (int k = 0; k < ARM_COUNT; k++) arms += slots[k] >= 0;
  if (!sticky && arms > 1) return run_arms_alone(b, o, ops, self, slots, n, of, e);
  for (int k = 0; k < ARM_COUNT; k++)
    if (slot[k]) arm_failed(slot[k], "preparing its job", e);
  if (sticky) return -1;
  ops->finish(self); /* prepare may have half-built the job */
  tf_err_clear(e);
  return 0;
}

/* ---------------------------------------------------------------- cuBLAS */

static int cublas_check_slot(void *self, const placement *p, int set, double *rel_err,
                             tf_err *e) {
  (void)p;
  return cublas_sgemm_check(self, set, rel_err, e);
}

static int cublas_sample_slot(void *self, const placement *p, int set, int samples, double *us,
                              double *kernel_us, tf_err *e) {
  (void)p;
  return cublas_sgemm_sample(self, set, samples, us, kernel_us, e);
}

static void skip(bench_arm *a, const char *why) {
  a->status = BENCH_SKIPPED;
  snprintf(a->note, sizeof a->note, "skipped: %s", why);
  fprintf(stderr, "tunefarm bench: %s %s\n", a->label, a->note);
}

/* The SGEMM's problem from the template: dimensions M, N, K and buffers A, B. */
static int cublas_problem(const bench *b, const bench_opts *o, cublas_sgemm_opts *so) {
  const spec *t = &b->c.tmpl;
  int m = spec_dim_index(t, "M"), n = spec_dim_index(t, "N"), k = spec_dim_index(t, "K");
  *so = (cublas_sgemm_opts){.ordinal = o->device, .input_sets = b->c.measure.input_sets,
                            .seed = b->c.measure.seed, .buffer_a = -1, .buffer_b = -1,
                            .math_mode = TF_CUBLAS_DEFAULT_MATH};
  for (int i = 0; i < t->nbuffers; i++) {
    if (strcmp(t->bufs[i].name, "A") == 0) so->buffer_a = i;
    if (strcmp(t->bufs[i].name, "B") == 0) so->buffer_b = i;
  }
  if (m < 0 || n < 0 || k < 0 || so->buffer_a < 0 || so->buffer_b < 0) return -1;
  so->m = b->c.dims[m], so->n = b->c.dims[n], so->k = b->c.dims[k];
  return 0;
}

static int run_cublas(bench *b, const bench_opts *o, bench_arm *a, tf_err *e) {
  snprintf(a->what, sizeof a->what, "cublasSgemm_v2, CUBLAS_DEFAULT_MATH (FP32, no TF32)");
  cublas_sgemm_opts so;
  if (strcmp(b->backend, "cuda") != 0) {
    skip(a, "needs the cuda backend");
    return 0;
  }
  if (cublas_problem(b, o, &so)) {
    skip(a, "the template has no dimensions M, N, K or no buffers A, B");
    return 0;
  }
  tf_cublas *lib = &b->cublas; /* never unloaded (tools/bench.h) */
  cublas_load(lib);
  if (!lib->ok) {
    skip(a, lib->why);
    return 0;
  }
  snprintf(b->cublas_lib, sizeof b->cublas_lib, "%s", lib->soname);
  fprintf(stderr, "tunefarm bench: cuBLAS from %s: the CPU reference, then %d rounds\n",
          lib->soname, o->rounds);
  cublas_sgemm *s = NULL;
  if (cublas_sgemm_open(&s, lib, &so, e)) return arm_failed(a, "setting up cuBLAS", e);
  bench_arm *slot[ARM_COUNT] = {a, NULL, NULL};
  bench_runner u = {.self = s, .check = cublas_check_slot, .sample = cublas_sample_slot,
                    .input_sets = so.input_sets, .burn_in = b->c.measure.burn_in,
                    .tolerance = b->c.tmpl.tolerance};
  int rc = measure_unit(&u, slot, o, e);
  cublas_sgemm_close(s);
  return rc;
}

/* ---------------------------------------------------------------- the device */

static const char *pick_backend(const bench_opts *o) {
  if (o->backend) return o->backend;
  char why[256];
  const char *name = child_default_backend(why, sizeof why);
  if (strcmp(name, "sim") == 0)
    fprintf(stderr, "tunefarm bench: no GPU here (%s): measuring on the simulated device "
            "(--backend sim)\n", why);
  return name;
}

/* "580.65.06 (CUDA 13.0)": NVML's driver version and the driver's CUDA version. */
static void driver_text(bench *b) {
  if (strcmp(b->backend, "cuda") != 0) {
    snprintf(b->driver, sizeof b->driver, "none (simulated device)");
    return;
  }
  tf_nvml nv;
  char v[32];
  nvml_load(&nv);
  nvml_driver_version(&nv, v, sizeof v);
  nvml_unload(&nv);
  int d = b->dev.driver_version;
  snprintf(b->driver, sizeof b->driver, "%s%sCUDA %d.%d%s", v, v[0] ? " (" : "", d / 1000,
           d % 1000 / 10, v[0] ? ")" : "");
}

static int open_device(bench *b, const bench_opts *o, const backend_ops *ops, void **self,
                       tf_err *e) {
  backend_opts bo = {.ordinal = o->device, .cache_dir = NULL};
  if (ops->open(self, &bo, e)) {
    if (strcmp(ops->name, "cuda") == 0) e->code = TF_NO_DEVICE;
    return tf_wrap(e, "cannot open %s device %d", ops->name, o->device);
  }
  if (ops->describe(*self, &b->dev, e)) {
    ops->close(*self);
    return -1;
  }
  driver_text(b);
  return 0;
}

int bench_measure(bench *b, const bench_opts *o, tf_err *e) {
  b->backend = pick_backend(o);
  const backend_ops *ops = backend_find(b->backend);
  void *self = NULL;
  if (open_device(b, o, ops, &self, e)) return -1;
  int slots[BENCH_MAX_ARMS][ARM_COUNT];
  int njobs = plan_jobs(b, slots), rc = 0;
  fprintf(stderr, "tunefarm bench: campaign %s on %s (%s), backend %s: %d arms, %d job(s), "
          "%d rounds x %d samples after %d burn-in rounds\n", b->c.name, b->dev.name, b->dev.uuid,
          b->backend, b->narms, njobs, o->rounds, o->samples, b->c.measure.burn_in);
  for (int j = 0; j < njobs && rc == 0; j++) rc = run_job(b, o, ops, self, slots[j], j + 1, njobs, e);
  for (int i = 0; i < b->narms && rc == 0; i++)
    if (b->arms[i].kind == BENCH_CUBLAS) rc = run_cublas(b, o, &b->arms[i], e);
  if (rc == 0) {
    ops->close(self);
    return 0;
  }
  /* A sticky error: the process ends without touching the device again, and it is a failure of
   * the bench (exit status 1), not the absence of a device (3). */
  e->code = TF_EXIT_FAIL;
  return -1;
}
