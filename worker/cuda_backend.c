/* cuda_backend: the measure child's real GPU (contract: worker/backend.h).
 *
 * One backend per process, bound to one visible device, with one non-blocking
 * stream. Per job (prepare):
 *   - each arm's name expression is a kernel compiled alone for the device's
 *     exact sm_XY through the cubin cache (compile/program.h: best and the
 *     control are usually cache hits) and loaded with cudaLibraryLoadData, a
 *     module per kernel; each arm is a cudaKernel_t launched with
 *     cudaLaunchKernel. Runtime API only: the binary never links libcuda.
 *   - buffers are allocated per input set and per buffer slot (worker/placement.h:
 *     one slot that every arm shares by default, one per arm in the layouts that
 *     measure placement), each slot sized for the largest arm; inputs come from
 *     reference_fill seeded by (measure.seed, set, buffer), so every arm of a
 *     set sees identical data. The inputs and the reference's outputs (a
 *     reference kernel's, or a reference library's: common/cpuref.h) are made
 *     once per shape, seed and set, not once per generation, and kept on the
 *     device as well as the host. So are the job's device buffers, for jobs of
 *     the same shape, slots and L2 flush: freeing and allocating them took
 *     milliseconds per generation. Each job copies its inputs from the device's
 *     pristine copy and zeroes its outputs again, so nothing a kernel of the job
 *     before wrote reaches it.
 *   - a job that needs a second copy of the code (new's own, or the canary)
 *     loads every kernel's cubin twice: two sets of libraries and kernels.
 *   - an arm may be a library call instead of a kernel (job_arm.library: a
 *     cuBLAS GEMM, worker/cublas.h, for `tunefarm bench`): it has no kernel in the
 *     program, and is otherwise an arm like the others: the same buffers,
 *     inputs, reference, check and sampler; only the launch differs (cb_run).
 * check poisons the outputs (0xFF bytes are NaN floats), restores the inputs,
 * launches once, compares every output with the reference's and the inputs with
 * their pristine copy, all on the device (worker/devcheck.h: a check moves a few
 * hundred bytes over PCIe, where copying outputs and inputs back took most of a
 * generation below a millisecond of kernel): the arms share their inputs, so an
 * arm that writes into them fails its check (its error reads inf) instead of
 * changing what the other arms are timed on.
 * sample times launches with
 * two events each (L2 flushed before each when asked) and, for the same
 * launches, CUPTI kernel records (worker/cupti_timer.h). NVML gives clocks.
 *
 * Faults injected by a job (job_arm.fault) happen for real in check: "crash"
 * launches the arm with every buffer pointer replaced by an unmapped address
 * (an illegal address on the GPU: sticky), "hang" blocks the stream with a host
 * function that never returns (the worker's deadline must end the child),
 * "wrong" overwrites half of the output on the device before it is compared.
 *
 * Notes (NVML or CUPTI missing) go to stderr once; stdout is the child's pipe. */
#include "worker/backend.h"

#include <cuda_runtime_api.h>
#include <limits.h>
#include <math.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "common/cpuref.h"      /* defines: cpuref_open, cpuref_run, cpuref_close */
#include "compile/compile.h"     /* defines: compile_result, TF_COMPILE_REFUSED */
#include "common/decide.h"      /* defines: stats_rel_spread */
#include "compile/program.h"     /* defines: program_of_job, program_request, program_compile */
#include "common/reference.h"  /* defines: reference_fill, reference_input_seed, reference_... */
#include "worker/cublas.h"      /* defines: tf_cublas, cublas_load, cublas_gemm_rowmajor */
#include "worker/cuda_util.h"   /* defines: CUDA_CHECK, cuda_device_count, cuda_describe */
#include "worker/cupti_timer.h" /* defines: cupti_timer_open/begin/collect/close */
#include "worker/devcheck.h"    /* defines: devcheck_open, devcheck_compare, devcheck_same */
#include "worker/nvml.h"        /* defines: nvml_load, nvml_device, nvml_sm_mhz, ... */
#include "worker/tmap.h"        /* defines: tmap_encode */

#define CB_MAX_SETS 8
#define CB_MAX_SAMPLES 100000
#define CB_SMEM_NO_OPTIN (48 * 1024) /* more per block needs the opt-in attribute */
#define CB_LOG_EXCERPT 900
#define CB_FLUSH_MIN (1u << 20)
#define CB_MAX_KERNELS_PER_CALL 4 /* a library call may add a split-K reduction or a setup kernel */

enum { NOTE_NVML = 1, NOTE_CUPTI = 2, NOTE_CUPTI_BATCH = 4, NOTE_PARAMS = 8, NOTE_SCRIBBLE = 16,
       NOTE_ONE_VISIBLE = 32 };

/* One kernel argument's storage, zeroed first so that a parameter wider than the value
 * (a long long where the spec says int) reads zeros above it. */
typedef union cb_arg {
  void *p;
  int i;
  long long ll;
  float f;
  double d;
  unsigned char raw[8]; /* a typed scalar's bytes (job.arg_type) */
  _Alignas(64) unsigned char tmap[SPEC_TMAP_BYTES]; /* a CUtensorMap (worker/tmap.h) */
} cb_arg;

/* Everything cudaLaunchKernel needs for one arm on one input set. */
typedef struct cb_launch {
  cudaKernel_t kern;
  dim3 grid, block;
  size_t smem;
  cb_arg store[SPEC_MAX_ARGS];
  void *argv[SPEC_MAX_ARGS];
} cb_launch;

/* What decides the host inputs and the reference: two jobs with equal shapes share them. */
typedef struct cb_shape {
  int ndims;
  char dim_names[SPEC_MAX_DIMS][SPEC_NAME];
  long long dims[SPEC_MAX_DIMS];
  int nbuffers;
  char buf_names[SPEC_MAX_BUFFERS][SPEC_NAME];
  int buf_output[SPEC_MAX_BUFFERS];
  int buf_role[SPEC_MAX_BUFFERS];
  int buf_type[SPEC_MAX_BUFFERS];
  reference_init buf_init[SPEC_MAX_BUFFERS];
  char ref_kernel[64];         /* the reference kernel, "" with a reference library */
  char ref_source[SPEC_PATH];
  char ref_library[SPEC_PATH]; /* or the CPU reference library (common/cpuref.h) */
  long long count[SPEC_MAX_BUFFERS]; /* the largest count of any arm */
  unsigned long long seed;
  int nsets;
} cb_shape;

/* The host side of the inputs and references, made once per shape; the filled inputs are
 * page-locked (cudaMallocHost), which halves the time of their copies to the device. */
typedef struct cb_host {
  int valid;
  cb_shape shape;
  void *buf[CB_MAX_SETS][SPEC_MAX_BUFFERS]; /* every buffer; the filled ones (input, inout)
                                             * page-locked, the others zeros */
  void *kref[CB_MAX_SETS][SPEC_MAX_BUFFERS]; /* the reference kernel's or library's outputs
                                              * per set */
  int kref_type[SPEC_MAX_BUFFERS];           /* their element type: the buffer's for a
                                              * kernel, cpuref_out_type's for a library */
  int out;                                   /* the first checked buffer ("wrong" halves it) */
  void *dev_in[CB_MAX_SETS][SPEC_MAX_BUFFERS];  /* the filled buffers as filled, on the device:
                                                 * every upload copies from them, and a check
                                                 * compares the inputs after it with them */
  void *dev_ref[CB_MAX_SETS][SPEC_MAX_BUFFERS]; /* kref on the device, for the check */
} cb_host;

/* The device buffers, kept from job to job while what sizes them stays the same. */
typedef struct cb_bufs {
  int valid;
  cb_shape shape;   /* the counts of every buffer */
  int nsets, nslots;
  size_t flush_bytes; /* 0: no L2 flush */
  void *dev[CB_MAX_SETS][PLACEMENT_MAX_SLOTS][SPEC_MAX_BUFFERS];
  void *flush;
} cb_bufs;

typedef struct cb_job {
  int active;
  job j;
  program_build pb;  /* holds the kernels' cubins until their libraries are unloaded */
  int have_pb;
  int kernel_of[ARM_COUNT];                        /* each arm's kernel in pb */
  cudaLibrary_t lib[PLACEMENT_MAX_COPIES][ARM_COUNT]; /* copy c of kernel k's module */
  int nlib[PLACEMENT_MAX_COPIES]; /* of copy c, modules loaded (none when every arm is a
                                   * library call) */
  int ncopies, nslots; /* what the job needs (worker/placement.h) */
  cudaKernel_t kern[PLACEMENT_MAX_COPIES][ARM_COUNT];
  size_t param_size[ARM_COUNT][SPEC_MAX_ARGS]; /* 0: unknown */
  int told[ARM_COUNT]; /* the arm's failing output was named on stderr in this job */
  sample_pool pool; /* events and scratch, kept for the job; kern: CB_MAX_KERNELS_PER_CALL
                     * records per sample */
} cb_job;

typedef struct cuda_backend {
  int ordinal;
  char cache_dir[SPEC_PATH];
  device_record dev;
  size_t smem_optin;
  int max_grid[3], max_block[3];
  cudaStream_t stream;
  int have_stream;
  int sticky; /* a sticky error happened: touch the device no more */
  tf_nvml nvml;
  nvmlDevice_t nvdev;
  int cupti_ok;
  unsigned noted; /* NOTE_* already printed */
  unsigned flush_value;
  cb_host host;
  cb_bufs bufs;
  cb_job job;
  devcheck check;    /* opened at the first job */
  tf_cublas blas;    /* loaded at the first job with a GEMM arm */
  cublasHandle_t blas_handle;
  int have_blas;     /* blas is loaded and blas_handle created on this stream */
} cuda_backend;

static void cb_finish(void *self);
static void cb_bufs_release(cb_bufs *d);
static void cb_close(void *self);

static void cb_note(cuda_backend *s, unsigned which, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
static void cb_note(cuda_backend *s, unsigned which, const char *fmt, ...) {
  if (s->noted & which) return;
  s->noted |= which;
  va_list ap;
  va_start(ap, fmt);
  fprintf(stderr, "tunefarm (cuda, device %d): note: ", s->ordinal);
  vfprintf(stderr, fmt, ap);
  fputc('\n', stderr);
  va_end(ap);
}

/* Remember a sticky failure so that nothing touches the device again; returns -1. */
static int cb_failed(cuda_backend *s, tf_err *e) {
  if (e && e->code == TF_STICKY) s->sticky = 1;
  return -1;
}

static int cb_usable(cuda_backend *s, const placement *p, int set, tf_err *e) {
  if (s->sticky)
    return tf_fail(e, TF_STICKY, "cuda device %d: the context is unusable after an earlier "
                                      "error", s->ordinal);
  if (!s->job.active) return tf_fail(e, TF_EXIT_FAIL, "cuda backend: no job prepared");
  if (p->arm < 0 || p->arm >= ARM_COUNT || p->code < 0 || p->code >= s->job.ncopies ||
      p->bufs < 0 || p->bufs >= s->job.nslots)
    return tf_fail(e, TF_EXIT_FAIL, "cuda backend: no arm %d in module copy %d and buffer slot "
                   "%d (the job has %d and %d)", p->arm, p->code, p->bufs, s->job.ncopies,
                   s->job.nslots);
  if (set < 0 || set >= s->job.j.measure.input_sets)
    return tf_fail(e, TF_EXIT_FAIL, "cuda backend: no input set %d (the job has %d)", set,
                   s->job.j.measure.input_sets);
  return 0;
}

/* ---- open, describe, clock, close ------------------------------------------------------- */

static void cb_open_cupti(cuda_backend *s) {
  const char *off = getenv("TUNEFARM_NO_CUPTI");
  if (off && off[0] && strcmp(off, "0") != 0) {
    cb_note(s, NOTE_CUPTI, "TUNEFARM_NO_CUPTI is set: no kernel-only times (reported as -1)");
    return;
  }
  tf_err ce;
  tf_err_clear(&ce);
  if (cupti_timer_open(&ce) == 0) {
    s->cupti_ok = 1;
    return;
  }
  cb_note(s, NOTE_CUPTI, "no kernel-only times (reported as -1): %s", ce.msg);
}

/* After describe (which read the clocks through s->nvml): the handle for later readings. */
static void cb_open_nvml(cuda_backend *s) {
  if (!s->nvml.ok) {
    cb_note(s, NOTE_NVML, "NVML %s; SM clocks read as 0", s->nvml.why);
    return;
  }
  tf_err ne;
  tf_err_clear(&ne);
  if (nvml_device(&s->nvml, s->dev.uuid, s->dev.pci_bus_id, &s->nvdev, &ne) != 0) {
    s->nvdev = NULL;
    cb_note(s, NOTE_NVML, "NVML does not know this device (%s); SM clocks read as 0", ne.msg);
  }
}

static int cb_open(void **self, const backend_opts *o, tf_err *e) {
  *self = NULL;
  int n = 0, asked = o ? o->ordinal : 0, ordinal = -1;
  const char *vis = getenv("CUDA_VISIBLE_DEVICES");
  if (cuda_device_count(&n, e) || cuda_choose_ordinal(asked, n, vis, &ordinal, e)) return -1;
  cuda_backend *s = calloc(1, sizeof *s);
  if (!s) return tf_fail(e, TF_EXIT_FAIL, "cuda backend: out of memory");
  s->ordinal = ordinal;
  /* The record says the ordinal opened, so a GPU's ledger name follows the GPU, not the rank. */
  if (ordinal != asked)
    cb_note(s, NOTE_ONE_VISIBLE, "asked for device %d, but one device is visible%s%.100s%s: "
            "measuring on it, as ordinal 0", asked, vis ? " (CUDA_VISIBLE_DEVICES='" : "",
            vis ? vis : "", vis ? "')" : "");
  if (o && o->cache_dir) snprintf(s->cache_dir, sizeof s->cache_dir, "%s", o->cache_dir);
  /* CUPTI first, so that it is attached when the context is created. */
  cb_open_cupti(s);
  int optin = 0;
  if (CUDA_CHECK(cudaSetDevice(ordinal), e) ||
      CUDA_CHECK(cudaStreamCreateWithFlags(&s->stream, cudaStreamNonBlocking), e))
    goto fail;
  s->have_stream = 1;
  if (CUDA_CHECK(cudaDeviceGetAttribute(&optin, cudaDevAttrMaxSharedMemoryPerBlockOptin, ordinal),
                 e))
    goto fail;
  s->smem_optin = optin > 0 ? (size_t)optin : CB_SMEM_NO_OPTIN;
  const enum cudaDeviceAttr grid_attr[3] = {cudaDevAttrMaxGridDimX, cudaDevAttrMaxGridDimY,
                                            cudaDevAttrMaxGridDimZ};
  const enum cudaDeviceAttr block_attr[3] = {cudaDevAttrMaxBlockDimX, cudaDevAttrMaxBlockDimY,
                                             cudaDevAttrMaxBlockDimZ};
  for (int d = 0; d < 3; d++)
    if (CUDA_CHECK(cudaDeviceGetAttribute(&s->max_grid[d], grid_attr[d], ordinal), e) ||
        CUDA_CHECK(cudaDeviceGetAttribute(&s->max_block[d], block_attr[d], ordinal), e))
      goto fail;
  nvml_load(&s->nvml);
  if (cuda_describe(ordinal, &s->nvml, &s->dev, e)) goto fail;
  cb_open_nvml(s);
  *self = s;
  return 0;
fail:
  cb_failed(s, e);
  tf_wrap(e, "cuda device %d", ordinal);
  cb_close(s);
  return -1;
}

static int cb_describe(void *self, device_record *d, tf_err *e) {
  cuda_backend *s = self;
  (void)e;
  *d = s->dev;
  if (s->nvdev) d->cur_sm_mhz = (int)nvml_sm_mhz(&s->nvml, s->nvdev);
  return 0;
}

static void cb_clock(void *self, double *mhz, unsigned long long *reasons) {
  cuda_backend *s = self;
  *mhz = s->nvdev ? (double)nvml_sm_mhz(&s->nvml, s->nvdev) : 0.0;
  *reasons = s->nvdev ? nvml_clock_reasons(&s->nvml, s->nvdev) : 0;
}

/* Page-locked host memory, or NULL with e. */
static void *cb_host_alloc(size_t bytes, const char *what, tf_err *e) {
  void *p = NULL;
  if (CUDA_CHECK(cudaMallocHost(&p, bytes ? bytes : sizeof(float)), e)) {
    tf_wrap(e, "page-locked host memory for %s (%zu bytes)", what, bytes);
    return NULL;
  }
  return p;
}

/* Bytes of buffer b at the shape's count: elements of its type (f32 unless the spec says). */
static size_t cb_bytes(const cb_shape *sh, int b) {
  return (size_t)sh->count[b] * reference_type_size(sh->buf_type[b]);
}

/* After a sticky error the device copies are left alone: the context is gone with them. */
static void cb_host_release(cb_host *h, int sticky) {
  for (int set = 0; set < CB_MAX_SETS; set++) {
    for (int b = 0; b < SPEC_MAX_BUFFERS; b++) {
      if (!SPEC_ROLE_FILLED(h->shape.buf_role[b]))
        free(h->buf[set][b]);
      else if (h->buf[set][b])
        (void)cudaFreeHost(h->buf[set][b]);
      free(h->kref[set][b]);
      if (!sticky && h->dev_in[set][b]) (void)cudaFree(h->dev_in[set][b]);
      if (!sticky && h->dev_ref[set][b]) (void)cudaFree(h->dev_ref[set][b]);
    }
  }
  memset(h, 0, sizeof *h);
}

static void cb_close(void *self) {
  cuda_backend *s = self;
  if (!s) return;
  cb_finish(s);
  if (!s->sticky) cb_bufs_release(&s->bufs);
  cb_host_release(&s->host, s->sticky);
  if (s->check.open && !s->sticky) devcheck_close(&s->check);
  if (s->have_blas && !s->sticky) (void)s->blas.cublasDestroy_v2(s->blas_handle);
  cublas_unload(&s->blas);
  if (s->have_stream && !s->sticky) (void)cudaStreamDestroy(s->stream);
  /* After a sticky error CUPTI's flush could wait on a dead context; the process ends anyway. */
  if (s->cupti_ok && !s->sticky) cupti_timer_close();
  nvml_unload(&s->nvml);
  free(s);
}

/* ---- prepare: compile, load, host data, device buffers, launches ------------------------ */

static int cb_validate(const job *j, tf_err *e) {
  const char *bad = NULL;
  if (j->nsources < 1 || j->nsources > 2) bad = "nsources must be 1 or 2";
  else if (j->nbuffers < 1 || j->nbuffers > SPEC_MAX_BUFFERS) bad = "nbuffers out of range";
  else if (j->nargs < 0 || j->nargs > SPEC_MAX_ARGS) bad = "nargs out of range";
  else if (j->ndims < 0 || j->ndims > SPEC_MAX_DIMS) bad = "ndims out of range";
  else if (j->measure.input_sets < 1 || j->measure.input_sets > CB_MAX_SETS)
    bad = "measure.input_sets must be in [1, 8]";
  for (int a = 0; !bad && a < j->nargs; a++)
    if (j->arg_kind[a] == SPEC_ARG_BUFFER && (j->arg_buffer[a] < 0 || j->arg_buffer[a] >= j->nbuffers))
      bad = "an argument names a buffer that does not exist";
  for (int k = 0; !bad && k < ARM_COUNT; k++) {
    const launch_geom *g = &j->arm[k].geom;
    if (!j->arm[k].name_expr[0]) bad = "an arm has no name expression";
    if (j->arm[k].library[0] && strcmp(j->arm[k].library, ARM_LIBRARY_GEMM) != 0)
      bad = "an arm names an unknown library routine";
    for (int d = 0; !bad && d < 3; d++)
      if (!g->grid[d] || !g->block[d]) bad = "an arm has an empty grid or block";
    for (int b = 0; !bad && b < j->nbuffers; b++)
      if (g->count[b] <= 0 || g->count[b] > SPEC_MAX_ELEMENTS) bad = "a buffer count is out of range";
  }
  if (bad) return tf_fail(e, TF_EXIT_INPUT, "job %lld: %s", j->id, bad);
  return 0;
}

/* The job's kernels (compile/program.h: the compile pool compiles ahead the same requests). */
static int cb_compile(cuda_backend *s, result *r, tf_err *e) {
  cb_job *b = &s->job;
  program_ref p;
  program_req pr;
  program_of_job(&b->j, &p);
  if (!p.nsources) return tf_fail(e, TF_EXIT_INPUT, "job %lld names no source file", b->j.id);
  const program_target t = {.arch = s->dev.arch, .cache_dir = s->cache_dir[0] ? s->cache_dir : NULL};
  program_request(&p, &t, &pr);
  memcpy(b->kernel_of, pr.kernel_of, sizeof b->kernel_of);
  b->have_pb = 1; /* program_build_release is safe on a failed build */
  int rc = program_compile(&pr, &b->pb, e);
  if (r) {
    r->compile_ms = b->pb.ms;
    r->cache_hit = b->pb.cache_hit;
    r->times.compile_wait_s = b->pb.wait_ms / 1e3;
  }
  if (rc == 0) return 0;
  if (e && e->code == TF_COMPILE_REFUSED) {
    const compile_result *cr = &b->pb.kernel[b->pb.failed];
    char excerpt[CB_LOG_EXCERPT + 1];
    snprintf(excerpt, sizeof excerpt, "%s", cr->log ? cr->log : "(no log)");
    return tf_fail(e, TF_COMPILE_REFUSED, "nvrtc refused the program for %s (%s): %s",
                   pr.arch, pr.exprs[b->pb.failed], excerpt);
  }
  return tf_wrap(e, "compiling job %lld for %s", b->j.id, pr.arch);
}

/* Parameter sizes from the kernel itself, to catch a spec whose argument list does not match
 * the kernel (which would otherwise read garbage on the GPU). Unknown (0) where the runtime
 * cannot say. */
static int cb_param_sizes(cuda_backend *s, int k, tf_err *e) {
  cb_job *b = &s->job;
  const void *f = (const void *)b->kern[0][k];
  size_t off = 0, size = 0;
  if (b->j.nargs == 0) return 0;
  if (cudaFuncGetParamInfo(f, 0, &off, &size) != cudaSuccess) {
    (void)cudaGetLastError();
    cb_note(s, NOTE_PARAMS, "cudaFuncGetParamInfo unavailable: kernel arguments not cross-checked");
    return 0;
  }
  for (int a = 0; a <= b->j.nargs; a++) {
    cudaError_t r = cudaFuncGetParamInfo(f, (size_t)a, &off, &size);
    if (r != cudaSuccess) (void)cudaGetLastError();
    if (a == b->j.nargs) {
      if (r == cudaSuccess)
        return tf_fail(e, TF_EXIT_FAIL, "arm '%s' (%s): the kernel takes more than the %d "
                       "arguments the spec lists", arm_names[k], b->j.arm[k].name_expr, b->j.nargs);
      break;
    }
    if (r != cudaSuccess)
      return tf_fail(e, TF_EXIT_FAIL, "arm '%s' (%s): the kernel takes %d arguments, the spec "
                     "lists %d", arm_names[k], b->j.arm[k].name_expr, a, b->j.nargs);
    /* a typed scalar is exactly its type's size; an untyped one an int, a long long, a float
     * or a double */
    const int kind = b->j.arg_kind[a];
    int ok = kind == SPEC_ARG_BUFFER ? size == sizeof(void *)
             : kind == SPEC_ARG_TMAP ? size == SPEC_TMAP_BYTES
             : b->j.arg_type[a] > 0  ? size == reference_type_size(b->j.arg_type[a] - 1)
                                     : (size == 4 || size == 8);
    if (!ok)
      return tf_fail(e, TF_EXIT_FAIL, "arm '%s' (%s): kernel parameter %d is %zu bytes, which "
                     "does not fit the spec's %s argument", arm_names[k], b->j.arm[k].name_expr,
                     a, size, kind == SPEC_ARG_BUFFER ? "buffer"
                              : kind == SPEC_ARG_TMAP ? "tensor map (128 bytes)" : "scalar");
    b->param_size[k][a] = size;
  }
  return 0;
}

/* Resource limits of one loaded arm, checked against its geometry; the opt-in for large
 * dynamic shared memory. */
static int cb_arm_limits(cuda_backend *s, int copy, int k, tf_err *e) {
  cb_job *b = &s->job;
  const launch_geom *g = &b->j.arm[k].geom;
  cudaKernel_t kern = b->kern[copy][k];
  struct cudaFuncAttributes fa;
  memset(&fa, 0, sizeof fa);
  /* Also forces the (lazy) load of the module, so a bad cubin fails here, not at a launch. */
  if (CUDA_CHECK(cudaFuncGetAttributes(&fa, (const void *)kern), e)) return -1;
  for (int d = 0; d < 3; d++) {
    if (s->max_grid[d] > 0 && g->grid[d] > (unsigned)s->max_grid[d])
      return tf_fail(e, TF_EXIT_FAIL, "arm '%s' (%s): grid %c is %u blocks, the device allows "
                     "at most %d", arm_names[k], b->j.arm[k].name_expr, "xyz"[d], g->grid[d],
                     s->max_grid[d]);
    if (s->max_block[d] > 0 && g->block[d] > (unsigned)s->max_block[d])
      return tf_fail(e, TF_EXIT_FAIL, "arm '%s' (%s): block %c is %u threads, the device allows "
                     "at most %d", arm_names[k], b->j.arm[k].name_expr, "xyz"[d], g->block[d],
                     s->max_block[d]);
  }
  unsigned long long threads = (unsigned long long)g->block[0] * g->block[1] * g->block[2];
  if (threads > (unsigned long long)fa.maxThreadsPerBlock)
    return tf_fail(e, TF_EXIT_FAIL, "arm '%s' (%s): %llu threads per block, but this kernel "
                   "allows at most %d on %s (%d registers per thread)", arm_names[k],
                   b->j.arm[k].name_expr, threads, fa.maxThreadsPerBlock, s->dev.arch, fa.numRegs);
  size_t total = (size_t)g->smem + fa.sharedSizeBytes;
  if (total > s->smem_optin)
    return tf_fail(e, TF_EXIT_FAIL, "arm '%s' (%s): needs %zu bytes of shared memory per block "
                   "(%u dynamic + %zu static), the device allows %zu", arm_names[k],
                   b->j.arm[k].name_expr, total, g->smem, fa.sharedSizeBytes, s->smem_optin);
  if (total > CB_SMEM_NO_OPTIN &&
      CUDA_CHECK(cudaKernelSetAttributeForDevice(kern, cudaFuncAttributeMaxDynamicSharedMemorySize,
                                                 (int)g->smem, s->ordinal), e))
    return -1;
  return copy == 0 ? cb_param_sizes(s, k, e) : 0;
}

/* Each copy loads every kernel's cubin again, in arm order: modules of its own, code
 * addresses of its own. Arms with one name expression (an A/A job) run one module's code. */
static int cb_load(cuda_backend *s, tf_err *e) {
  cb_job *b = &s->job;
  for (int c = 0; c < b->ncopies; c++) {
    for (int k = 0; k < b->pb.nkernels; k++) {
      const compile_result *cr = &b->pb.kernel[k];
      if (CUDA_CHECK(cudaLibraryLoadData(&b->lib[c][k], cr->cubin, NULL, NULL, 0, NULL, NULL, 0),
                     e))
        return tf_wrap(e, "module copy %d of %s", c, cr->lowered[0]);
      b->nlib[c] = k + 1;
    }
    for (int a = 0; a < ARM_COUNT; a++) {
      if (b->j.arm[a].library[0]) continue; /* no kernel of its own (compile/program.h) */
      int k = b->kernel_of[a];
      if (CUDA_CHECK(cudaLibraryGetKernel(&b->kern[c][a], b->lib[c][k], b->pb.kernel[k].lowered[0]),
                     e))
        return tf_wrap(e, "arm '%s' (%s)", arm_names[a], b->j.arm[a].name_expr);
      if (cb_arm_limits(s, c, a, e)) return -1;
    }
  }
  return 0;
}

static void cb_shape_of(const job *j, cb_shape *sh) {
  memset(sh, 0, sizeof *sh); /* padding too: shapes are compared with memcmp */
  sh->ndims = j->ndims;
  for (int d = 0; d < j->ndims; d++) {
    memcpy(sh->dim_names[d], j->dim_names[d], SPEC_NAME);
    sh->dim_names[d][SPEC_NAME - 1] = '\0';
    sh->dims[d] = j->dims[d];
  }
  sh->nbuffers = j->nbuffers;
  for (int b = 0; b < j->nbuffers; b++) {
    memcpy(sh->buf_names[b], j->buf_names[b], SPEC_NAME);
    sh->buf_names[b][SPEC_NAME - 1] = '\0';
    sh->buf_output[b] = j->buf_output[b];
    /* a job built with "output" alone (a zeroed role) has an output's role */
    sh->buf_role[b] = j->buf_output[b] && !SPEC_ROLE_CHECKED(j->buf_role[b]) ? SPEC_ROLE_OUTPUT
                                                                             : j->buf_role[b];
    sh->buf_type[b] = j->buf_type[b];
    sh->buf_init[b] = j->buf_init[b];
    for (int k = 0; k < ARM_COUNT; k++)
      if (j->arm[k].geom.count[b] > sh->count[b]) sh->count[b] = j->arm[k].geom.count[b];
  }
  sh->seed = j->measure.seed;
  sh->nsets = j->measure.input_sets;
  snprintf(sh->ref_kernel, sizeof sh->ref_kernel, "%s", j->ref_kernel);
  snprintf(sh->ref_source, sizeof sh->ref_source, "%s", j->ref_source);
  snprintf(sh->ref_library, sizeof sh->ref_library, "%s", j->ref_library);
}

/* The job's reference kernel compiled through the cubin cache (the arms' path, one kernel)
 * and loaded: *lib and *kern; compile_release(cr) after unloading. */
static int cb_ref_load(cuda_backend *s, compile_result *cr, cudaLibrary_t *lib, cudaKernel_t *kern,
                       tf_err *e) {
  const job *j = &s->job.j;
  char path[2 * SPEC_PATH + 2];
  program_source_path(j->root, j->ref_source, path, sizeof path);
  const char *srcs[1] = {path}, *exprs[1] = {j->ref_kernel};
  const compile_req req = {.source_paths = srcs, .nsources = 1, .name_exprs = exprs, .nexprs = 1,
                           .arch = s->dev.arch,
                           .cache_dir = s->cache_dir[0] ? s->cache_dir : NULL};
  if (compile_program(&req, cr, e)) {
    if (e && e->code == TF_COMPILE_REFUSED) {
      char excerpt[CB_LOG_EXCERPT + 1];
      snprintf(excerpt, sizeof excerpt, "%s", cr->log ? cr->log : "(no log)");
      return tf_fail(e, TF_COMPILE_REFUSED, "nvrtc refused the reference kernel '%s' for %s: %s",
                     j->ref_kernel, s->dev.arch, excerpt);
    }
    return tf_wrap(e, "reference kernel '%s'", j->ref_kernel);
  }
  if (CUDA_CHECK(cudaLibraryLoadData(lib, cr->cubin, NULL, NULL, 0, NULL, NULL, 0), e))
    return tf_wrap(e, "reference kernel '%s'", j->ref_kernel);
  if (CUDA_CHECK(cudaLibraryGetKernel(kern, *lib, cr->lowered[0]), e)) {
    (void)cudaLibraryUnload(*lib);
    *lib = NULL;
    return tf_wrap(e, "reference kernel '%s'", j->ref_kernel);
  }
  return 0;
}

/* One scalar argument of the job into v, as the kernel's parameter of `size` bytes (0:
 * unknown) takes it: a typed scalar in its type's bytes, an untyped one as the size says. */
static int cb_scalar(const job *j, int a, long long iarg, size_t size, cb_arg *v, tf_err *e) {
  const int t = j->arg_type[a] - 1;
  if (t >= 0) {
    const double x = j->arg_kind[a] == SPEC_ARG_FLOAT ? j->arg_float[a] : (double)iarg;
    if (j->arg_kind[a] == SPEC_ARG_INT && t == REFERENCE_I64) v->ll = iarg; /* exact */
    else if (j->arg_kind[a] == SPEC_ARG_INT && t == REFERENCE_U32) {
      const unsigned u = (unsigned)iarg; /* spec_launch checked the range */
      memcpy(v->raw, &u, sizeof u);
    } else reference_put(t, v->raw, 0, x);
    return 0;
  }
  if (j->arg_kind[a] == SPEC_ARG_FLOAT) {
    if (size == 8) v->d = j->arg_float[a];
    else v->f = (float)j->arg_float[a];
  } else if (size == 8) {
    v->ll = iarg;
  } else if (iarg < INT_MIN || iarg > INT_MAX) {
    return tf_fail(e, TF_EXIT_FAIL, "argument %d is %lld, beyond the kernel's int", a, iarg);
  } else {
    v->i = (int)iarg;
  }
  return 0;
}

/* The reference kernel on input set `set`: its own device buffers (filled ones uploaded, the
 * others zeroed), one launch, its checked outputs copied into h->kref[set]. */
static int cb_ref_run(cuda_backend *s, cudaKernel_t kern, int set, tf_err *e) {
  cb_host *h = &s->host;
  const cb_shape *sh = &h->shape;
  const job *j = &s->job.j;
  const launch_geom *g = &j->ref_geom;
  void *dev[SPEC_MAX_BUFFERS] = {0};
  cb_arg store[SPEC_MAX_ARGS];
  void *argv[SPEC_MAX_ARGS];
  int rc = 0;
  for (int b = 0; b < sh->nbuffers && rc == 0; b++) {
    size_t bytes = cb_bytes(sh, b);
    rc = CUDA_CHECK(cudaMalloc(&dev[b], bytes), e);
    if (rc == 0)
      rc = SPEC_ROLE_FILLED(sh->buf_role[b])
               ? CUDA_CHECK(cudaMemcpyAsync(dev[b], h->buf[set][b], bytes, cudaMemcpyHostToDevice,
                                            s->stream), e)
               : CUDA_CHECK(cudaMemsetAsync(dev[b], 0, bytes, s->stream), e);
  }
  /* the reference takes the arguments but the tensor maps, in order: r counts its own */
  for (int a = 0, r = 0; a < j->nargs && rc == 0; a++) {
    if (j->arg_kind[a] == SPEC_ARG_TMAP) continue;
    memset(&store[r], 0, sizeof store[r]);
    argv[r] = &store[r];
    /* an untyped scalar goes as the reference's own parameter takes it (a double, a long
     * long), as it does for the arms; 0 where the runtime cannot say */
    size_t off = 0, size = 0;
    if (j->arg_kind[a] != SPEC_ARG_BUFFER &&
        cudaFuncGetParamInfo((const void *)kern, (size_t)r, &off, &size) != cudaSuccess)
      (void)cudaGetLastError(), size = 0;
    if (j->arg_kind[a] == SPEC_ARG_BUFFER) store[r].p = dev[j->arg_buffer[a]];
    else rc = cb_scalar(j, a, g->iarg[a], size, &store[r], e);
    r++;
  }
  dim3 grid = {g->grid[0], g->grid[1], g->grid[2]}, block = {g->block[0], g->block[1], g->block[2]};
  /* over 48 KB a block, static and dynamic together, the dynamic part needs the opt-in */
  struct cudaFuncAttributes fa;
  memset(&fa, 0, sizeof fa);
  if (rc == 0) rc = CUDA_CHECK(cudaFuncGetAttributes(&fa, (const void *)kern), e);
  if (rc == 0 && (size_t)g->smem + fa.sharedSizeBytes > CB_SMEM_NO_OPTIN)
    rc = CUDA_CHECK(cudaKernelSetAttributeForDevice(kern,
                                                    cudaFuncAttributeMaxDynamicSharedMemorySize,
                                                    (int)g->smem, s->ordinal), e);
  if (rc == 0)
    rc = CUDA_CHECK(cudaLaunchKernel((const void *)kern, grid, block, argv, g->smem, s->stream), e);
  for (int b = 0; b < sh->nbuffers && rc == 0; b++) {
    if (!sh->buf_output[b]) continue;
    if (!(h->kref[set][b] = malloc(cb_bytes(sh, b) ? cb_bytes(sh, b) : 1)))
      rc = tf_fail(e, TF_EXIT_FAIL, "out of memory for the reference of '%s'", sh->buf_names[b]);
    else
      rc = CUDA_CHECK(cudaMemcpyAsync(h->kref[set][b], dev[b], cb_bytes(sh, b),
                                      cudaMemcpyDeviceToHost, s->stream), e);
  }
  if (rc == 0) rc = CUDA_CHECK(cudaStreamSynchronize(s->stream), e);
  if (!(rc && e->code == TF_STICKY))
    for (int b = 0; b < sh->nbuffers; b++) (void)cudaFree(dev[b]);
  return rc ? tf_wrap(e, "reference kernel '%s', input set %d", j->ref_kernel, set) : 0;
}

/* The reference kernel's outputs for every input set. */
static int cb_kernel_reference(cuda_backend *s, tf_err *e) {
  cb_host *h = &s->host;
  compile_result cr;
  memset(&cr, 0, sizeof cr);
  cudaLibrary_t lib = NULL; /* set only once loaded */
  cudaKernel_t kern;
  int rc = cb_ref_load(s, &cr, &lib, &kern, e);
  for (int set = 0; rc == 0 && set < h->shape.nsets; set++) rc = cb_ref_run(s, kern, set, e);
  if (lib && (rc == 0 || e->code != TF_STICKY)) (void)cudaLibraryUnload(lib);
  compile_release(&cr);
  h->out = -1;
  for (int b = h->shape.nbuffers - 1; b >= 0; b--) {
    if (h->shape.buf_output[b]) h->out = b;
    h->kref_type[b] = h->shape.buf_type[b];
  }
  return rc;
}

/* The reference library's outputs for every input set, called on the host inputs the arms
 * are fed from (include/tunefarm_ref.h). */
static int cb_library_reference(cuda_backend *s, tf_err *e) {
  cb_host *h = &s->host;
  const job *j = &s->job.j;
  char path[2 * SPEC_PATH + 2];
  program_source_path(j->root, j->ref_library, path, sizeof path);
  cpuref r;
  if (cpuref_open(&r, path, e)) return tf_wrap(e, "reference library");
  int rc = 0;
  for (int set = 0; rc == 0 && set < h->shape.nsets; set++) {
    const void *in[SPEC_MAX_BUFFERS];
    for (int b = 0; b < h->shape.nbuffers; b++) in[b] = h->buf[set][b];
    const cpuref_set cs = {.j = j, .counts = h->shape.count, .in = in, .iargs = j->ref_geom.iarg,
                           .set = set};
    rc = cpuref_run(&r, &cs, h->kref[set], h->kref_type, e);
  }
  cpuref_close(&r);
  h->out = -1;
  for (int b = h->shape.nbuffers - 1; b >= 0; b--)
    if (h->shape.buf_output[b]) h->out = b;
  return rc;
}

/* A device copy of n bytes at host p, in *d. */
static int cb_device_copy(cuda_backend *s, void **d, const void *p, size_t bytes, tf_err *e) {
  return CUDA_CHECK(cudaMalloc(d, bytes ? bytes : 1), e) ||
                 CUDA_CHECK(cudaMemcpyAsync(*d, p, bytes, cudaMemcpyHostToDevice, s->stream), e)
             ? -1
             : 0;
}

/* The filled inputs and the reference's outputs on the device, where the check reads them;
 * and the check itself, at the first job. */
static int cb_host_to_device(cuda_backend *s, tf_err *e) {
  cb_host *h = &s->host;
  const cb_shape *sh = &h->shape;
  for (int set = 0; set < sh->nsets; set++)
    for (int b = 0; b < sh->nbuffers; b++) {
      if (SPEC_ROLE_FILLED(sh->buf_role[b]) &&
          cb_device_copy(s, &h->dev_in[set][b], h->buf[set][b], cb_bytes(sh, b), e))
        return tf_wrap(e, "input '%s', set %d", sh->buf_names[b], set);
      if (sh->buf_output[b] &&
          cb_device_copy(s, &h->dev_ref[set][b], h->kref[set][b],
                         (size_t)sh->count[b] * reference_type_size(h->kref_type[b]), e))
        return tf_wrap(e, "the reference of '%s', set %d", sh->buf_names[b], set);
    }
  if (CUDA_CHECK(cudaStreamSynchronize(s->stream), e)) return -1;
  if (!s->check.open && devcheck_open(&s->check, s->dev.arch, s->cache_dir[0] ? s->cache_dir : NULL, e))
    return -1;
  return 0;
}

/* Host inputs and references for the job's shape; reused when the shape did not change. */
static int cb_host_prepare(cuda_backend *s, tf_err *e) {
  cb_host *h = &s->host;
  cb_shape sh;
  cb_shape_of(&s->job.j, &sh);
  if (h->valid && memcmp(&h->shape, &sh, sizeof sh) == 0) return 0;
  cb_host_release(h, 0);
  h->shape = sh;
  for (int set = 0; set < sh.nsets; set++) {
    for (int b = 0; b < sh.nbuffers; b++) {
      size_t n = (size_t)sh.count[b], bytes = cb_bytes(&sh, b);
      if (!SPEC_ROLE_FILLED(sh.buf_role[b])) {
        h->buf[set][b] = calloc(bytes ? bytes : 1, 1);
        if (!h->buf[set][b])
          return tf_fail(e, TF_EXIT_FAIL, "out of memory for buffer '%s' (%zu bytes)",
                         sh.buf_names[b], bytes);
        continue;
      }
      if (!(h->buf[set][b] = cb_host_alloc(bytes, sh.buf_names[b], e))) return -1;
      reference_fill_typed(h->buf[set][b], sh.buf_type[b], n, &sh.buf_init[b],
                           reference_input_seed(sh.seed, set, b));
    }
  }
  if (!sh.ref_kernel[0] && !sh.ref_library[0])
    return tf_fail(e, TF_EXIT_INPUT, "the job names no reference: nothing would check its outputs");
  if (sh.ref_kernel[0] && cb_kernel_reference(s, e)) return -1;
  if (sh.ref_library[0] && cb_library_reference(s, e)) return -1;
  if (cb_host_to_device(s, e)) return -1;
  h->valid = 1;
  return 0;
}

static void cb_bufs_release(cb_bufs *d) {
  for (int set = 0; set < CB_MAX_SETS; set++)
    for (int k = 0; k < PLACEMENT_MAX_SLOTS; k++)
      for (int i = 0; i < SPEC_MAX_BUFFERS; i++)
        if (d->dev[set][k][i]) (void)cudaFree(d->dev[set][k][i]);
  if (d->flush) (void)cudaFree(d->flush);
  memset(d, 0, sizeof *d);
}

/* Buffers per input set and slot, each as large as the largest arm needs, and the L2 flush's;
 * those of the job before when they are the same. */
static int cb_bufs_ready(cuda_backend *s, tf_err *e) {
  const cb_job *b = &s->job;
  const cb_host *h = &s->host;
  cb_bufs *d = &s->bufs;
  size_t flush_bytes = 0;
  if (b->j.measure.flush_l2) {
    size_t l2 = s->dev.l2_bytes > 0 ? (size_t)s->dev.l2_bytes : 0;
    flush_bytes = 2 * l2 > CB_FLUSH_MIN ? 2 * l2 : CB_FLUSH_MIN;
  }
  if (d->valid && memcmp(&d->shape, &h->shape, sizeof d->shape) == 0 &&
      d->nsets == b->j.measure.input_sets && d->nslots == b->nslots &&
      d->flush_bytes == flush_bytes)
    return 0;
  cb_bufs_release(d);
  d->shape = h->shape;
  d->nsets = b->j.measure.input_sets;
  d->nslots = b->nslots;
  d->flush_bytes = flush_bytes;
  for (int set = 0; set < d->nsets; set++)
    for (int slot = 0; slot < d->nslots; slot++)
      for (int i = 0; i < b->j.nbuffers; i++) {
        size_t bytes = cb_bytes(&h->shape, i);
        if (CUDA_CHECK(cudaMalloc(&d->dev[set][slot][i], bytes), e))
          return tf_wrap(e, "buffer '%s', slot %d, set %d", b->j.buf_names[i], slot, set);
      }
  if (flush_bytes && CUDA_CHECK(cudaMalloc(&d->flush, flush_bytes), e))
    return tf_wrap(e, "l2 flush buffer of %zu bytes", flush_bytes);
  d->valid = 1;
  return 0;
}

/* The job's buffers, its inputs uploaded and its outputs zeroed. */
static int cb_device_alloc(cuda_backend *s, tf_err *e) {
  cb_job *b = &s->job;
  const cb_host *h = &s->host;
  for (int k = 0; k < ARM_COUNT; k++)
    for (int o = 0; o < h->shape.nbuffers; o++)
      if (h->shape.buf_output[o] &&
          b->j.arm[k].geom.count[o] != h->shape.count[o])
        return tf_fail(e, TF_EXIT_FAIL, "arm '%s': output '%s' has %lld elements, another arm "
                       "has %lld: the arms must share the output's shape", arm_names[k],
                       h->shape.buf_names[o], b->j.arm[k].geom.count[o], h->shape.count[o]);
  if (cb_bufs_ready(s, e)) return -1;
  for (int set = 0; set < b->j.measure.input_sets; set++)
    for (int slot = 0; slot < b->nslots; slot++)
      for (int i = 0; i < b->j.nbuffers; i++) {
        size_t bytes = cb_bytes(&h->shape, i);
        void *p = s->bufs.dev[set][slot][i];
        if (!SPEC_ROLE_FILLED(h->shape.buf_role[i])
                ? CUDA_CHECK(cudaMemsetAsync(p, 0, bytes, s->stream), e)
                : CUDA_CHECK(cudaMemcpyAsync(p, h->dev_in[set][i], bytes, cudaMemcpyDeviceToDevice,
                                             s->stream), e))
          return -1;
      }
  return CUDA_CHECK(cudaStreamSynchronize(s->stream), e);
}

/* The launch of p's kernel in p's place on input set `set`. */
static int cb_launch_args(cuda_backend *s, const placement *p, int set, cb_launch *L, tf_err *e) {
  cb_job *b = &s->job;
  int k = p->arm;
  const launch_geom *g = &b->j.arm[k].geom;
  L->kern = b->kern[p->code][k];
  if (b->j.arm[k].library[0]) return 0; /* cb_run calls the library: no kernel arguments */
  L->grid.x = g->grid[0], L->grid.y = g->grid[1], L->grid.z = g->grid[2];
  L->block.x = g->block[0], L->block.y = g->block[1], L->block.z = g->block[2];
  L->smem = g->smem;
  for (int a = 0; a < b->j.nargs; a++) {
    cb_arg *v = &L->store[a];
    size_t size = b->param_size[k][a];
    memset(v, 0, sizeof *v);
    L->argv[a] = v;
    if (b->j.arg_kind[a] == SPEC_ARG_BUFFER)
      v->p = s->bufs.dev[set][p->bufs][b->j.arg_buffer[a]];
    else if (b->j.arg_kind[a] == SPEC_ARG_TMAP) {
      if (tmap_encode(&b->j, a, g, s->bufs.dev[set][p->bufs][b->j.arg_buffer[a]], v->tmap, e))
        return tf_wrap(e, "arm '%s'", arm_names[k]);
    } else if (cb_scalar(&b->j, a, g->iarg[a], size, v, e))
      return tf_wrap(e, "arm '%s'", arm_names[k]);
  }
  return 0;
}

/* For a job with a GEMM arm: cuBLAS on this stream (loaded once, kept for the process). The
 * arm's buffers and dimensions were checked against the job's layout when it was read
 * (common/msg.c). */
static int cb_blas_setup(cuda_backend *s, tf_err *e) {
  const job *j = &s->job.j;
  int any = 0;
  for (int k = 0; k < ARM_COUNT; k++) any |= j->arm[k].library[0] != '\0';
  if (!any || s->have_blas) return 0;
  cublas_load(&s->blas);
  if (!s->blas.ok) return tf_fail(e, TF_EXIT_FAIL, "cuBLAS: %s", s->blas.why);
  if (CUBLAS_CHECK(s->blas.cublasCreate_v2(&s->blas_handle), e)) return -1;
  /* ready only on this stream: a handle left on the default stream would run outside the
   * timed span and race the copy-back */
  if (CUBLAS_CHECK(s->blas.cublasSetStream_v2(s->blas_handle, s->stream), e) ||
      CUBLAS_CHECK(s->blas.cublasSetMathMode(s->blas_handle, TF_CUBLAS_DEFAULT_MATH), e)) {
    (void)s->blas.cublasDestroy_v2(s->blas_handle);
    return -1;
  }
  s->have_blas = 1;
  return 0;
}

/* 1 when some arm is a kernel of the job's NVRTC program. */
static int cb_has_program(const job *j) {
  for (int k = 0; k < ARM_COUNT; k++)
    if (!j->arm[k].library[0]) return 1;
  return 0;
}

static int cb_prepare(void *self, const job *j, result *r, tf_err *e) {
  cuda_backend *s = self;
  if (s->sticky)
    return tf_fail(e, TF_STICKY, "cuda device %d: the context is unusable", s->ordinal);
  cb_finish(s);
  if (cb_validate(j, e)) return -1;
  cb_job *b = &s->job;
  memset(b, 0, sizeof *b);
  b->j = *j;
  b->active = 1;
  b->ncopies = placement_copies(j);
  b->nslots = placement_slots(j);
  if ((cb_has_program(j) && (cb_compile(s, r, e) || cb_load(s, e))) || cb_blas_setup(s, e) ||
      cb_host_prepare(s, e) || cb_device_alloc(s, e))
    goto fail;
  cb_launch L; /* every arm's arguments fit the kernel: fail here, not in the middle of timing */
  for (int k = 0; k < ARM_COUNT; k++) {
    placement p = {.arm = k};
    if (cb_launch_args(s, &p, 0, &L, e)) goto fail;
  }
  return 0;
fail:
  cb_failed(s, e);
  cb_finish(s);
  return -1;
}

/* ---- launches, check, sample ------------------------------------------------------------ */

/* cuBLAS's name of an element type (common/campaign.c lets f32, f16 and bf16 through). */
static cudaDataType_t cb_blas_type(int t) {
  return t == REFERENCE_F16 ? CUDA_R_16F : t == REFERENCE_BF16 ? CUDA_R_16BF : CUDA_R_32F;
}

/* The GEMM arm's call on p's buffers. A failed execution usually leaves a sticky CUDA error
 * behind: it is classified as the runtime does, so that nothing touches the device again. */
static int cb_gemm(cuda_backend *s, const placement *p, int set, tf_err *e) {
  const job *j = &s->job.j;
  const int *g = j->arm[p->arm].gemm;
  void *const *dev = s->bufs.dev[set][p->bufs];
  cublas_gemm_args a = {.m = j->dims[g[3]], .n = j->dims[g[4]], .k = j->dims[g[5]],
                        .b_nk = g[6], .ab_type = cb_blas_type(j->buf_type[g[0]]),
                        .c_type = cb_blas_type(j->buf_type[g[2]]), .A = dev[g[0]],
                        .B = dev[g[1]], .C = dev[g[2]]};
  if (cublas_gemm_rowmajor(&s->blas, s->blas_handle, &a, e) == 0) return 0;
  tf_err ce;
  tf_err_clear(&ce);
  if (CUDA_CHECK(cudaStreamSynchronize(s->stream), &ce) && ce.code == TF_STICKY) *e = ce;
  return -1;
}

/* One launch of p's arm: its kernel with L's arguments, or its library call. */
static int cb_run(cuda_backend *s, const placement *p, int set, cb_launch *L, tf_err *e) {
  if (s->job.j.arm[p->arm].library[0]) return cb_gemm(s, p, set, e);
  return CUDA_CHECK(cudaLaunchKernel((const void *)L->kern, L->grid, L->block, L->argv, L->smem,
                                     s->stream), e);
}

/* Zero the buffers the arm's geometry asks to be cleared before each launch. */
static int cb_clears(cuda_backend *s, const placement *p, int set, tf_err *e) {
  cb_job *b = &s->job;
  const launch_geom *g = &b->j.arm[p->arm].geom;
  for (int i = 0; i < b->j.nbuffers; i++)
    if (g->clear[i] &&
        CUDA_CHECK(cudaMemsetAsync(s->bufs.dev[set][p->bufs][i], 0,
                                   (size_t)g->count[i] * reference_type_size(s->host.shape.buf_type[i]),
                                   s->stream), e))
      return -1;
  return 0;
}

static void CUDART_CB cb_never_return(void *unused) {
  (void)unused;
  for (;;) pause();
}

/* The injected faults (see the top of the file); 1 when the fault replaced the launch. */
static int cb_inject(cuda_backend *s, const placement *p, int set, const cb_launch *L,
                     int *replaced, tf_err *e) {
  const char *fault = s->job.j.arm[p->arm].fault;
  *replaced = 0;
  if (!strcmp(fault, "crash")) {
    cb_launch bad = *L;
    for (int a = 0; a < s->job.j.nargs; a++)
      if (s->job.j.arg_kind[a] == SPEC_ARG_BUFFER) bad.store[a].p = (void *)(uintptr_t)0x100;
    for (int a = 0; a < s->job.j.nargs; a++) bad.argv[a] = &bad.store[a];
    *replaced = 1;
    return cb_run(s, p, set, &bad, e);
  }
  if (!strcmp(fault, "hang")) {
    fprintf(stderr, "tunefarm (cuda, device %d): injected fault 'hang': the stream blocks\n",
            s->ordinal);
    return CUDA_CHECK(cudaLaunchHostFunc(s->stream, cb_never_return, NULL), e);
  }
  return 0;
}

static int cb_check_launch(cuda_backend *s, const placement *p, int set, tf_err *e) {
  cb_job *b = &s->job;
  int k = p->arm;
  const launch_geom *g = &b->j.arm[k].geom;
  void *const *dev = s->bufs.dev[set][p->bufs];
  const cb_shape *sh = &s->host.shape;
  for (int i = 0; i < b->j.nbuffers; i++) {
    /* outputs poisoned (0xFF bytes: NaN floats, -1 integers), inputs and inouts uploaded,
     * scratch zeroed */
    size_t bytes = cb_bytes(sh, i);
    int err = sh->buf_role[i] == SPEC_ROLE_OUTPUT
                  ? CUDA_CHECK(cudaMemsetAsync(dev[i], 0xFF, bytes, s->stream), e)
              : sh->buf_role[i] == SPEC_ROLE_SCRATCH
                  ? CUDA_CHECK(cudaMemsetAsync(dev[i], 0, bytes, s->stream), e)
                  : CUDA_CHECK(cudaMemcpyAsync(dev[i], s->host.dev_in[set][i], bytes,
                                               cudaMemcpyDeviceToDevice, s->stream), e);
    if (err) return -1;
  }
  cb_launch L;
  if (cb_launch_args(s, p, set, &L, e) || cb_clears(s, p, set, e)) return -1;
  int replaced = 0;
  if (cb_inject(s, p, set, &L, &replaced, e)) return -1;
  if (!replaced && cb_run(s, p, set, &L, e)) return -1;
  if (!strcmp(b->j.arm[k].fault, "wrong")) {
    size_t half = (size_t)g->count[s->host.out] / 2 * reference_type_size(sh->buf_type[s->host.out]);
    if (CUDA_CHECK(cudaMemsetAsync(dev[s->host.out], 0, half, s->stream), e)) return -1;
  }
  return CUDA_CHECK(cudaStreamSynchronize(s->stream), e);
}

/* 1 when the launch left every input of the slot as uploaded, 0 when it wrote into one. */
static int cb_inputs_intact(cuda_backend *s, const placement *p, int set, tf_err *e) {
  cb_job *b = &s->job;
  for (int i = 0; i < b->j.nbuffers; i++) {
    if (s->host.shape.buf_role[i] != SPEC_ROLE_INPUT) continue; /* written by the kernel */
    int same = 0;
    if (devcheck_same(&s->check, s->stream, s->bufs.dev[set][p->bufs][i], s->host.dev_in[set][i],
                      cb_bytes(&s->host.shape, i), &same, e))
      return -1;
    if (!same) {
      cb_note(s, NOTE_SCRIBBLE, "arm '%s' (%s) wrote into its input '%s': the arms share their "
              "inputs, so its check fails", arm_names[p->arm], b->j.arm[p->arm].name_expr,
              b->j.buf_names[i]);
      return 0;
    }
  }
  return 1;
}

/* The arm's error against the reference kernel's or library's outputs: the worst over the
 * checked outputs of each one's error under its own check (reference_verdict_error); the
 * first failing output of the arm is named on stderr once per job. */
static int cb_kernel_check(cuda_backend *s, const placement *p, int set, double *err, tf_err *e) {
  const cb_shape *sh = &s->host.shape;
  cb_job *b = &s->job;
  *err = 0.0;
  for (int o = 0; o < sh->nbuffers; o++) {
    if (!sh->buf_output[o]) continue;
    reference_verdict v;
    if (devcheck_compare(&s->check, s->stream, s->bufs.dev[set][p->bufs][o], sh->buf_type[o],
                         s->host.dev_ref[set][o], s->host.kref_type[o], (size_t)sh->count[o],
                         &b->j.buf_check[o], b->j.tolerance, &v, e))
      return -1;
    double x = reference_verdict_error(&v, b->j.tolerance);
    if (!(x <= *err)) *err = x; /* NaN propagates */
    if (!v.pass && !b->told[p->arm]) {
      char text[512];
      reference_verdict_text(&v, sh->buf_names[o], text, sizeof text);
      fprintf(stderr, "tunefarm (cuda, device %d): arm '%s' (%s), input set %d: %s\n",
              s->ordinal, arm_names[p->arm], b->j.arm[p->arm].name_expr, set, text);
      b->told[p->arm] = 1;
    }
  }
  return 0;
}

static int cb_check(void *self, const placement *p, int set, double *rel_err, tf_err *e) {
  cuda_backend *s = self;
  if (cb_usable(s, p, set, e)) return -1;
  cb_job *b = &s->job;
  int arm = p->arm, intact = 0;
  double err = 0.0;
  if (cb_check_launch(s, p, set, e) || cb_kernel_check(s, p, set, &err, e) ||
      (intact = cb_inputs_intact(s, p, set, e)) < 0) {
    cb_failed(s, e);
    return tf_wrap(e, "check of arm '%s' (%s), input set %d", arm_names[arm],
                   b->j.arm[arm].name_expr, set);
  }
  *rel_err = intact ? err : INFINITY;
  return 0;
}

static int cb_cmp_double(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return (x > y) - (x < y);
}

/* Median of v[0..n), n >= 1; sorts v. */
static double cb_median(double *v, int n) {
  qsort(v, (size_t)n, sizeof *v, cb_cmp_double);
  return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

static int cb_enqueue_samples(cuda_backend *s, const placement *p, int set, int n, tf_err *e) {
  cb_job *b = &s->job;
  cb_launch L;
  if (cb_launch_args(s, p, set, &L, e)) return -1;
  for (int i = 0; i < n; i++) {
    if (s->bufs.flush && CUDA_CHECK(cudaMemsetAsync(s->bufs.flush, (int)(s->flush_value++ & 0xFFu),
                                                    s->bufs.flush_bytes, s->stream), e))
      return -1;
    /* A clear (split-K's zeroed C) is part of the operation's cost, so it lies inside the
     * event span; CUPTI's kernel time still counts the kernel alone. */
    if (CUDA_CHECK(cudaEventRecord(b->pool.ev[2 * i], s->stream), e) || cb_clears(s, p, set, e) ||
        cb_run(s, p, set, &L, e) ||
        CUDA_CHECK(cudaEventRecord(b->pool.ev[2 * i + 1], s->stream), e))
      return -1;
  }
  return CUDA_CHECK(cudaStreamSynchronize(s->stream), e);
}

/* Median CUPTI kernel time of the batch's n launches, or -1 (with a note once) when the
 * records do not account for exactly those launches: one kernel each, or for a library call
 * the same number each (up to CB_MAX_KERNELS_PER_CALL), summed per call. */
static double cb_kernel_median(cuda_backend *s, int cupti_batch, int n, int library) {
  cb_job *b = &s->job;
  if (!cupti_batch) return -1.0;
  tf_err ce;
  tf_err_clear(&ce);
  int max = library ? n * CB_MAX_KERNELS_PER_CALL : n;
  int got = cupti_timer_collect(b->pool.kern, max, &ce);
  if (got < 0) {
    cb_note(s, NOTE_CUPTI_BATCH, "a batch without kernel-only time: %s", ce.msg);
    return -1.0;
  }
  if (got < n || got > max || got % n != 0) {
    cb_note(s, NOTE_CUPTI_BATCH, "a batch without kernel-only time: %d kernel records for %d "
            "launches", got, n);
    return -1.0;
  }
  int per = got / n;
  for (int i = 0; i < n; i++) { /* in place: call i's records lie at i*per and after */
    double sum = 0.0;
    for (int k = 0; k < per; k++) sum += b->pool.kern[i * per + k];
    b->pool.kern[i] = sum;
  }
  return cb_median(b->pool.kern, n) / 1000.0;
}

static int cb_sample(void *self, const placement *p, int set, int samples, double *us,
                     double *kernel_us, double *spread, tf_err *e) {
  cuda_backend *s = self;
  *us = 0.0;
  *kernel_us = -1.0;
  if (cb_usable(s, p, set, e)) return -1;
  int arm = p->arm;
  if (samples < 1 || samples > CB_MAX_SAMPLES)
    return tf_fail(e, TF_EXIT_FAIL, "cuda backend: %d samples (allowed: 1 to %d)", samples,
                   CB_MAX_SAMPLES);
  if (sample_pool_reserve(&s->job.pool, samples, CB_MAX_KERNELS_PER_CALL, e))
    return cb_failed(s, e);
  int cupti_batch = 0;
  if (s->cupti_ok) {
    tf_err ce;
    tf_err_clear(&ce);
    cupti_batch = cupti_timer_begin(&ce) == 0;
    if (!cupti_batch) cb_note(s, NOTE_CUPTI_BATCH, "a batch without kernel-only time: %s", ce.msg);
  }
  cb_job *b = &s->job;
  if (cb_enqueue_samples(s, p, set, samples, e)) {
    cb_failed(s, e);
    return tf_wrap(e, "sampling arm '%s' (%s), input set %d", arm_names[arm],
                   b->j.arm[arm].name_expr, set);
  }
  for (int i = 0; i < samples; i++) {
    float ms = 0.0f;
    if (CUDA_CHECK(cudaEventElapsedTime(&ms, b->pool.ev[2 * i], b->pool.ev[2 * i + 1]), e))
      return cb_failed(s, e);
    b->pool.span[i] = 1000.0 * (double)ms;
  }
  *us = cb_median(b->pool.span, samples);
  if (spread) *spread = stats_rel_spread(b->pool.span, samples);
  *kernel_us = cb_kernel_median(s, cupti_batch, samples, b->j.arm[arm].library[0] != '\0');
  return 0;
}

/* ---- finish ----------------------------------------------------------------------------- */

static void cb_finish(void *self) {
  cuda_backend *s = self;
  cb_job *b = &s->job;
  if (!b->active) return;
  if (!s->sticky) {
    (void)cudaStreamSynchronize(s->stream); /* the buffers stay for the next job (cb_bufs) */
    sample_pool_release(&b->pool, 1);
    for (int c = 0; c < PLACEMENT_MAX_COPIES; c++)
      for (int k = 0; k < b->nlib[c]; k++) (void)cudaLibraryUnload(b->lib[c][k]);
    (void)cudaGetLastError();
  }
  if (b->have_pb) program_build_release(&b->pb);
  sample_pool_release(&b->pool, 0); /* frees only after a sticky error; else already released */
  memset(b, 0, sizeof *b);
}

/* Usable where the runtime sees a device. */
static int cb_probe(char *why, size_t len) {
  int n = 0;
  cudaError_t rc = cudaGetDeviceCount(&n);
  if (rc == cudaSuccess && n > 0) return 1;
  snprintf(why, len, "%s", rc == cudaSuccess ? "the CUDA runtime sees no device"
                                             : cudaGetErrorString(rc));
  return 0;
}

const backend_ops backend_cuda = {
    .name = "cuda",
    .simulated = 0,
    .probe = cb_probe,
    .open = cb_open,
    .describe = cb_describe,
    .prepare = cb_prepare,
    .check = cb_check,
    .sample = cb_sample,
    .clock = cb_clock,
    .finish = cb_finish,
    .close = cb_close,
};
