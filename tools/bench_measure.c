/* bench_measure: the device side of `tunefarm bench` (tools/bench.h).
 *
 * Every arm is measured by the farm's own protocol (worker/protocol.h: protocol_run) on the
 * measure child's backend (worker/backend.h), in this process. Arms are packed into jobs of
 * three built as the farm builds its jobs (coordinator/job.h): template configurations in the
 * best and new places, a committed kernel in the control place, since one NVRTC program
 * compiles at most one committed kernel, and cuBLAS SGEMM (an arm of the cuda backend) in the
 * first place left empty (plan_jobs). A place still empty repeats an arm of the same job: the
 * filler is measured with the others and left out of the table. The job's protocol is the
 * farm's with the decision rule "median" (exactly R recorded rounds), the shared layout, the L2
 * flushed, and no canary.
 *
 * The protocol checks every arm on every input set before any timing and times nothing when
 * one is wrong: that arm is then marked wrong and the job runs again with a filler in its
 * place, so a wrong arm never costs the others their rounds. When a job cannot be prepared
 * or an arm's check fails, its arms run one at a time, so that one arm's compile error or
 * launch limit is not charged to the others.
 *
 * A sticky device error (illegal address, trap) ends the bench: nothing touches the device
 * after it, and the error goes up (exit status 1). Any other failure is the arm's ERROR. */
#include "tools/bench.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "worker/backend.h"   /* defines: backend_ops, backend_find, backend_default, TF_STICKY */
#include "worker/cublas.h"    /* defines: cublas_load */
#include "worker/nvml.h"      /* defines: nvml_load, nvml_driver_version */
#include "worker/protocol.h"  /* defines: protocol_run */

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

/* ---------------------------------------------------------------- jobs */

/* Arm indices per job and place, -1 for an empty place; returns the number of jobs. Template
 * configurations take the best and new places two by two, committed kernels the control
 * place one per job; cuBLAS, which needs no program, takes the first place left empty, so
 * that it is timed in the same rounds as a kernel, or a job of its own. */
static int plan_jobs(const bench *b, int slots[][ARM_COUNT]) {
  int t[BENCH_MAX_ARMS], k[BENCH_MAX_ARMS], l[BENCH_MAX_ARMS], nt = 0, nk = 0, nl = 0;
  for (int i = 0; i < b->narms; i++) {
    if (b->arms[i].status != BENCH_PENDING) continue;
    bench_kind kind = b->arms[i].kind;
    if (kind == BENCH_TEMPLATE) t[nt++] = i;
    else if (kind == BENCH_KERNEL) k[nk++] = i;
    else l[nl++] = i;
  }
  int njobs = (nt + 1) / 2 > nk ? (nt + 1) / 2 : nk;
  for (int j = 0; j < njobs; j++) {
    slots[j][ARM_BEST] = 2 * j < nt ? t[2 * j] : -1;
    slots[j][ARM_NEW] = 2 * j + 1 < nt ? t[2 * j + 1] : -1;
    slots[j][ARM_CONTROL] = j < nk ? k[j] : -1;
  }
  for (int i = 0; i < nl; i++) {
    int placed = 0;
    for (int j = 0; j < njobs && !placed; j++)
      for (int p = 0; p < ARM_COUNT && !placed; p++)
        if (slots[j][p] < 0) slots[j][p] = l[i], placed = 1;
    if (!placed) {
      slots[njobs][ARM_BEST] = slots[njobs][ARM_NEW] = -1;
      slots[njobs++][ARM_CONTROL] = l[i];
    }
  }
  return njobs;
}

static int set_arm(job *j, const bench *b, int place, const bench_arm *a, tf_err *e) {
  switch (a->kind) {
  case BENCH_TEMPLATE: return job_set_template_arm(j, &b->c, place, &a->cfg, e);
  case BENCH_KERNEL: return job_set_kernel_arm(j, &b->c, place, a->kernel, e);
  default: return job_set_gemm_arm(j, &b->c, place, &b->c.peers[a->peer], e);
  }
}

/* The job of one place assignment; an empty place repeats `fill`. */
static int build_job(const bench *b, const bench_opts *o, const int slots[ARM_COUNT], int fill,
                     long long id, job *j, tf_err *e) {
  if (job_init(j, &b->c, id, 0, e)) return -1;
  for (int k = 0; k < ARM_COUNT; k++)
    if (set_arm(j, b, k, &b->arms[slots[k] >= 0 ? slots[k] : fill], e)) return -1;
  j->measure.flush_l2 = 1; /* whatever the campaign says: the bench always flushes */
  j->measure.layout = LAYOUT_SHARED; /* and measures as the farm does by default */
  j->measure.code = CODE_SHARED;
  j->measure.rounds = o->rounds;
  j->measure.samples = o->samples;
  j->measure.max_samples = o->samples; /* --samples is what every arm gets, as it says */
  j->canary_rounds = 0;
  snprintf(j->decide.rule, sizeof j->decide.rule, "median"); /* exactly R rounds, none screened */
  return 0;
}

static void job_progress(bench *b, const int slots[ARM_COUNT], int n, int of) {
  fprintf(stderr, "tunefarm bench: job %d of %d:", n, of);
  for (int k = 0, first = 1; k < ARM_COUNT; k++)
    if (slots[k] >= 0) {
      fputs(first ? " " : ", ", stderr);
      print_arm(stderr, &b->arms[slots[k]]);
      first = 0;
    }
  fputc('\n', stderr);
}

/* A job and its result (large values: the caller frees them). */
typedef struct job_space {
  job j;
  result r;
} job_space;

/* The first place whose arm is still to be measured, or -1. */
static int pending_place(const bench *b, const int slots[ARM_COUNT]) {
  for (int k = 0; k < ARM_COUNT; k++)
    if (slots[k] >= 0 && b->arms[slots[k]].status == BENCH_PENDING) return k;
  return -1;
}

/* Each arm's worst error from the protocol's check; an arm over the tolerance becomes wrong
 * and leaves its place. Returns the number of wrong arms. */
static int take_errors(bench *b, int slots[ARM_COUNT], const job_space *x) {
  int wrong = 0;
  for (int k = 0; k < ARM_COUNT; k++) {
    if (slots[k] < 0) continue;
    bench_arm *a = &b->arms[slots[k]];
    a->rel_err = x->r.rel_err[k];
    int bad = !(a->rel_err <= x->j.tolerance); /* a NaN error is wrong too */
    fputs("tunefarm bench:   ", stderr);
    print_arm(stderr, a);
    if (backend_simulated(b->backend) && !bad) /* it ran nothing to compare */
      fputs(": not checked (simulated device)\n", stderr);
    else
      fprintf(stderr, ": rel_err %.2e%s\n", a->rel_err, bad ? ", WRONG: not timed" : "");
    if (!bad) continue;
    a->status = BENCH_WRONG;
    snprintf(a->note, sizeof a->note, "wrong: relative error %.3g over tolerance %.3g",
             a->rel_err, x->j.tolerance);
    slots[k] = -1;
    wrong++;
  }
  return wrong;
}

/* The recorded rounds of every arm of the job (fillers aside). */
static void take_rounds(bench *b, const int slots[ARM_COUNT], const result *r) {
  for (int k = 0; k < ARM_COUNT; k++) {
    if (slots[k] < 0) continue;
    bench_arm *a = &b->arms[slots[k]];
    for (int i = 0; i < r->nrounds && a->nrounds < BENCH_MAX_ROUNDS; i++) {
      if (r->rounds[i].screened) continue;
      a->us[a->nrounds] = r->rounds[i].us[k];
      a->kernel_us[a->nrounds] = r->rounds[i].kernel_us[k];
      a->nrounds++;
    }
    a->status = BENCH_MEASURED;
  }
}

/* One job through the protocol, again without its wrong arms until none is left. 1 when the
 * job could not be built or measured (*e says why), -1 after a sticky error. */
static int measure_job(bench *b, const bench_opts *o, const backend_ops *ops, void *self,
                       int slots[ARM_COUNT], long long id, job_space *x, tf_err *e) {
  for (int fill; (fill = pending_place(b, slots)) >= 0;) {
    memset(&x->r, 0, sizeof x->r);
    if (build_job(b, o, slots, slots[fill], id, &x->j, e)) return 1;
    if (protocol_run(ops, self, &x->j, &x->r, NULL, e)) return -1; /* sticky: never touch it again */
    if (x->r.status != RESULT_OK) {
      tf_fail(e, x->r.status == RESULT_COMPILE_ERROR ? TF_COMPILE_REFUSED : TF_EXIT_FAIL, "%s",
              x->r.detail);
      return 1;
    }
    if (take_errors(b, slots, x) == 0) {
      take_rounds(b, slots, &x->r);
      return 0;
    }
  }
  return 0;
}

static int run_job(bench *b, const bench_opts *o, const backend_ops *ops, void *self,
                   const int slots[ARM_COUNT], int n, int of, tf_err *e);

/* A job's arms share one program and one prepare: when that fails, each arm alone. */
static int run_arms_alone(bench *b, const bench_opts *o, const backend_ops *ops, void *self,
                          const int slots[ARM_COUNT], int n, int of, tf_err *e) {
  fprintf(stderr, "tunefarm bench: job %d of %d failed (%s); its arms one at a time\n", n, of,
          e->msg);
  tf_err_clear(e);
  for (int k = 0; k < ARM_COUNT; k++) {
    int alone[ARM_COUNT] = {-1, -1, -1};
    alone[k] = slots[k];
    if (slots[k] >= 0 && run_job(b, o, ops, self, alone, n, of, e)) return -1;
  }
  return 0;
}

static int run_job(bench *b, const bench_opts *o, const backend_ops *ops, void *self,
                   const int slots[ARM_COUNT], int n, int of, tf_err *e) {
  int left[ARM_COUNT], arms = 0;
  memcpy(left, slots, sizeof left);
  job_progress(b, slots, n, of);
  job_space *x = malloc(sizeof *x);
  if (!x) return tf_fail(e, TF_EXIT_FAIL, "bench: out of memory");
  int rc = measure_job(b, o, ops, self, left, n, x, e);
  free(x);
  if (rc <= 0) return rc;
  for (int k = 0; k < ARM_COUNT; k++)
    arms += left[k] >= 0 && b->arms[left[k]].status == BENCH_PENDING;
  if (arms > 1) return run_arms_alone(b, o, ops, self, left, n, of, e);
  for (int k = 0; k < ARM_COUNT; k++)
    if (left[k] >= 0 && b->arms[left[k]].status == BENCH_PENDING)
      arm_failed(&b->arms[left[k]], "measuring its job", e);
  tf_err_clear(e);
  return 0;
}

/* ---------------------------------------------------------------- cuBLAS */

static void skip(bench_arm *a, const char *why) {
  a->status = BENCH_SKIPPED;
  snprintf(a->note, sizeof a->note, "skipped: %s", why);
  fprintf(stderr, "tunefarm bench: %s %s\n", a->label, a->note);
}

/* What the peer's call is: the routine, its types and math. */
static void peer_what(const bench *b, bench_arm *a) {
  const peer_gemm *p = &b->c.peers[a->peer];
  const spec_buffer *A = &b->c.tmpl.bufs[p->a], *C = &b->c.tmpl.bufs[p->c];
  if (A->type == REFERENCE_F32 && C->type == REFERENCE_F32)
    snprintf(a->what, sizeof a->what, "cublasSgemm_v2, CUBLAS_DEFAULT_MATH (FP32, no TF32)%s",
             p->b_nk ? ", B transposed" : "");
  else
    snprintf(a->what, sizeof a->what, "cublasGemmEx, %s inputs, %s output, CUBLAS_COMPUTE_32F%s",
             A->type == REFERENCE_BF16 ? "BF16" : "FP16", C->type == REFERENCE_F32 ? "FP32"
             : A->type == REFERENCE_BF16 ? "BF16" : "FP16", p->b_nk ? ", B transposed" : "");
}

/* A peer arm is measured where the cuda backend runs and libcublas loads; skipped, with the
 * reason, otherwise. */
static void ready_cublas(bench *b, bench_arm *a) {
  peer_what(b, a);
  if (backend_simulated(b->backend)) {
    skip(a, "needs the cuda backend");
    return;
  }
  job *j = malloc(sizeof *j);
  tf_err e = {0};
  if (!j) {
    skip(a, "out of memory");
    return;
  }
  int bad = job_init(j, &b->c, 0, 0, &e) ||
            job_set_gemm_arm(j, &b->c, ARM_CONTROL, &b->c.peers[a->peer], &e);
  free(j);
  if (bad) {
    skip(a, e.msg);
    return;
  }
  tf_cublas *lib = &b->cublas; /* never unloaded (tools/bench.h) */
  cublas_load(lib);
  if (!lib->ok) {
    skip(a, lib->why);
    return;
  }
  snprintf(b->cublas_lib, sizeof b->cublas_lib, "%s", lib->soname);
}

/* ---------------------------------------------------------------- the device */

static const char *pick_backend(const bench_opts *o) {
  if (o->backend) return o->backend;
  char why[256];
  const char *name = backend_default(why, sizeof why)->name;
  if (why[0])
    fprintf(stderr, "tunefarm bench: no GPU here (%s): measuring on the simulated device "
            "(--backend sim)\n", why);
  return name;
}

/* "580.65.06 (CUDA 13.0)": NVML's driver version and the driver's CUDA version. */
static void driver_text(bench *b) {
  if (backend_simulated(b->backend)) {
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
    if (!ops->simulated) e->code = TF_NO_DEVICE;
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
  for (int i = 0; i < b->narms; i++)
    if (b->arms[i].kind == BENCH_CUBLAS && b->arms[i].status == BENCH_PENDING)
      ready_cublas(b, &b->arms[i]);
  int slots[BENCH_MAX_ARMS][ARM_COUNT];
  int njobs = plan_jobs(b, slots), rc = 0;
  fprintf(stderr, "tunefarm bench: campaign %s on %s (%s), backend %s: %d arms, %d job(s), "
          "%d rounds x %d samples after %d burn-in rounds\n", b->c.name, b->dev.name, b->dev.uuid,
          b->backend, b->narms, njobs, o->rounds, o->samples, b->c.measure.burn_in);
  for (int j = 0; j < njobs && rc == 0; j++) rc = run_job(b, o, ops, self, slots[j], j + 1, njobs, e);
  if (rc == 0) {
    ops->close(self);
    return 0;
  }
  /* A sticky error: the process ends without touching the device again, and it is a failure of
   * the bench (exit status 1), not the absence of a device (3). */
  e->code = TF_EXIT_FAIL;
  return -1;
}
