/* msg: what travels between coordinator, worker and measure child.
 *
 * Every message is one JSON object (over MPI between ranks, one line per
 * object over the child's pipes). This module owns the C shapes and their
 * JSON codecs; nothing else builds or parses these objects by hand.
 *
 *   HELLO   worker -> coordinator: the device record (or an error).
 *   JOB     coordinator -> worker -> child: one generation, fully resolved:
 *           sources, the three arms' name expressions and launch geometry,
 *           buffers, the measurement protocol and the decision parameters.
 *   RESULT  child -> worker -> coordinator: correctness and every round.
 *   STOP    coordinator -> worker: no more jobs.
 *
 * A job is self-contained: `tunefarm measure < job.json` reruns it.
 * Ownership: *_from_json fill caller-owned structs and keep no pointer into
 * the cJSON tree; *_to_json return a new tree the caller deletes. */
#ifndef TF_MSG_H
#define TF_MSG_H

#include <cjson/cJSON.h>

#include "common/err.h"
#include "common/opts.h"
#include "common/spec.h"

enum { ARM_BEST = 0, ARM_NEW = 1, ARM_CONTROL = 2, ARM_COUNT = 3 };
extern const char *const arm_names[ARM_COUNT]; /* "best", "new", "control" */

#define MSG_MAX_ROUNDS 256

typedef struct device_record {
  char backend[8];      /* "cuda" or "sim" */
  char name[128];
  char uuid[64];        /* "GPU-...", or "SIM-..." for the simulated device */
  char pci_bus_id[32];
  int cc_major, cc_minor;
  char arch[16];        /* "sm_90": what NVRTC compiles for */
  int sm_count;
  long long mem_bytes, l2_bytes;
  int max_sm_mhz, cur_sm_mhz;
  int max_mem_mhz;      /* the memory's peak clock, and the width of its bus: the bandwidth */
  int mem_bus_bits;     /* peak is 2 x clock x width (double data rate); 0 when unknown */
  int driver_version, runtime_version;
  int nvrtc_major, nvrtc_minor;
  char host[64];
  int ordinal;          /* node-local index the worker bound */
  char sim_noise[256];  /* the simulated device's noise, "jitter=0.01,round=0.005,..."
                         * (worker/sim_noise.h), so that a sim ledger says what reproduces it;
                         * "" for a GPU */
} device_record;

cJSON *device_to_json(const device_record *d);
int device_from_json(const cJSON *o, device_record *d, tf_err *e);
/* First 8 hex digits of the UUID after its prefix ("GPU-3f2a..." -> "3f2a...") for file names. */
void device_uuid8(const device_record *d, char out[9]);

/* HELLO, both ways it travels: a measure child's answer to {"type":"hello"}, and a worker's to
 * the coordinator: the device it measures, or why there is none, and, when nobody asked for a
 * backend and it chose the simulated device itself, why (no GPU). The coordinator never
 * touches CUDA: the workers decide and say so here. */
typedef struct hello {
  int has_device;
  device_record dev;
  char error[1024];       /* why there is no device */
  char fallback[256];     /* why the simulated device was chosen; "" when it was asked for */
  int rank, worker_index; /* a worker's; -1 in a child's answer */
  int compile_jobs;       /* a worker's: the compiles ahead it runs at once (worker/
                           * compile_pool.h); 0: none, its jobs need no "prefetch" list */
} hello;

cJSON *hello_to_json(const hello *h);
int hello_from_json(const cJSON *o, hello *h, tf_err *e);

typedef struct job_arm {
  char name_expr[256];   /* what NVRTC instantiates, e.g. "tf_matmul<64,64,...>" */
  int from_template;     /* 1: template instantiation; 0: committed kernel */
  config cfg;            /* knob values (template arms) */
  launch_geom geom;
  char fault[8];         /* injected fault for tests: "", "crash", "hang", "wrong" */
  char library[16];      /* "": the arm is a kernel of the job's NVRTC program; a library
                          * routine otherwise (ARM_LIBRARY_GEMM: a campaign's GEMM peer in
                          * `bench`, which only the cuda backend runs): name_expr then only
                          * names it */
  int gemm[7];           /* ARM_LIBRARY_GEMM: buffers a, b, c, dimensions m, n, k (indices
                          * into the job's layout) and b_nk (common/campaign.h, peer_gemm) */
} job_arm;

#define ARM_LIBRARY_GEMM "cublas_gemm"
#define ARM_GEMM_FIELDS 7

typedef struct job {
  long long id;
  int generation;
  char campaign[64];
  char root[SPEC_PATH];        /* where the paths below lie on this machine: the coordinator
                                * sends it, a ledger keeps the job without it (job_drop_root) */
  char sources[2][SPEC_PATH];  /* template source, committed control source ("" if none),
                                * relative to the root */
  char specs[2][SPEC_PATH];    /* their specs (templates/NAME.json, kernels/NAME.json): the
                                * simulated device's cost model reads them */
  int nsources;
  int arch_specific;           /* the template's: compile for the arch-specific target */
  /* the buffer and argument layout, shared by all arms */
  int ndims;
  char dim_names[SPEC_MAX_DIMS][SPEC_NAME];
  long long dims[SPEC_MAX_DIMS];
  int nbuffers;
  char buf_names[SPEC_MAX_BUFFERS][SPEC_NAME];
  int buf_output[SPEC_MAX_BUFFERS];  /* checked: the roles output and inout */
  /* Each buffer's role, element type, fill and check (common/spec.h); JSON carries them only
   * where they are not the defaults (input or output, f32, the default fill, the tolerance),
   * so a job of a float32 template reads as it always did. */
  int buf_role[SPEC_MAX_BUFFERS];
  int buf_type[SPEC_MAX_BUFFERS];
  reference_init buf_init[SPEC_MAX_BUFFERS]; /* an int range evaluated at the job's problem */
  reference_check buf_check[SPEC_MAX_BUFFERS];
  int nargs;
  spec_arg_kind arg_kind[SPEC_MAX_ARGS];
  int arg_buffer[SPEC_MAX_ARGS];
  double arg_float[SPEC_MAX_ARGS];
  int arg_type[SPEC_MAX_ARGS];       /* a typed scalar's reference_type + 1; 0: untyped, as
                                      * in a zeroed job */
  /* SPEC_ARG_TMAP: the map of buffer arg_buffer, its slot (launch_geom.tmap_dim, tmap_box),
   * rank and swizzle in bytes; ntmaps of them */
  int arg_tmap[SPEC_MAX_ARGS], arg_rank[SPEC_MAX_ARGS], arg_swizzle[SPEC_MAX_ARGS];
  int ntmaps;
  /* The reference kernel ("" with a reference library): its source
   * (relative to the root, as sources[]), its name and its launch (grid, block, smem, iargs). */
  char ref_source[SPEC_PATH];
  char ref_kernel[64];
  launch_geom ref_geom;
  /* Or the CPU reference library (include/tunefarm_ref.h; "" when there is none), relative to
   * the root; ref_geom.iarg then holds the integer arguments, arg_names the scalars' names. */
  char ref_library[SPEC_PATH];
  char arg_names[SPEC_MAX_ARGS][SPEC_NAME];
  job_arm arm[ARM_COUNT];
  double tolerance;
  measure_opts measure;
  decide_opts decide;
  int canary_rounds;           /* >0: run the A/A canary first, this many paired rounds */
  int fresh_child;             /* 1: the worker measures this job in a fresh measure process */
} job;

/* The largest job id: cJSON writes a number beyond an int with 15 significant digits, so an
 * id of 16 digits would travel as another (2^53 - 1 as 9007199254740990). */
#define MSG_MAX_ID 999999999999999LL

cJSON *job_to_json(const job *j);
/* The job as a ledger keeps it: without its root, which only says where this machine keeps
 * the files (a job reruns from the project root, or with TUNEFARM_ROOT). */
void job_drop_root(cJSON *o);
/* Refuses (TF_EXIT_INPUT) a job whose "id" is missing or not a whole number in
 * [0, MSG_MAX_ID]: one read as another id would be answered under that id (2^64 as 0). */
int job_from_json(const cJSON *o, job *j, tf_err *e);
/* The "id" of job message o into *id: 0, or -1 when it is missing or not such a number. */
int job_id_from_json(const cJSON *o, long long *id);

typedef enum {
  RESULT_OK = 0,        /* measured; may still be incorrect (see correct) */
  RESULT_FAULT,         /* the child died, hung or hit a sticky error */
  RESULT_COMPILE_ERROR, /* NVRTC refused the program */
  RESULT_ERROR          /* anything else that stopped the job (launch failed, out of memory) */
} result_status;

typedef struct round_rec {
  int order[ARM_COUNT];          /* arm indices in the order they ran */
  double us[ARM_COUNT];          /* median event span per launch, microseconds */
  double kernel_us[ARM_COUNT];   /* median CUPTI kernel time, microseconds; <0 if unavailable */
  double sm_mhz[2];              /* SM clock before and after the round; 0 if unavailable */
  double arm_mhz[ARM_COUNT];     /* SM clock read right after each arm; 0 if unavailable */
  unsigned long long reasons[2]; /* clock-event reasons before/after (NVML bit mask) */
  int screened;                  /* 1: rejected by the clock screen and run again (kept for audit) */
} round_rec;

#define MSG_MAX_CANARY 64

/* One paired round of the canary: best in its own place and a second loaded copy of best in
 * new's place (new's buffers, new's code addresses), in alternating order. */
typedef struct canary_round {
  int copy_first;                /* 1: the copy ran first in this round */
  double us[2];                  /* median event span: [0] best, [1] the copy */
  double kernel_us[2];           /* median CUPTI kernel time; <0 if unavailable */
} canary_round;

/* Where a job's time went in the measure child, seconds: busy fraction = measure_s over the
 * GPU's wall time. compile_s includes compile_wait_s; load_s is the rest of preparing the
 * job (modules, buffers, inputs); the four parts and the protocol's bookkeeping add up to
 * the result's wall_s. */
typedef struct result_times {
  double compile_s;       /* in compile_program: the cache, waiting for it, compiling */
  double compile_wait_s;  /* of which waiting for another process compiling the program */
  double load_s;
  double check_s;         /* the correctness gate, every arm on every input set */
  double measure_s;       /* burn-in, canary and recorded rounds */
} result_times;

cJSON *result_times_to_json(const result_times *t);
/* Absent keys read as 0; -1 when a key is unknown or not a non-negative number. */
int result_times_from_json(const cJSON *o, result_times *t);

typedef struct result {
  long long id;
  result_status status;
  char detail[1024];             /* fault cause, compile log excerpt, error text */
  char device[64];               /* UUID of the device that measured */
  int correct;                   /* every arm passed on every input set */
  double rel_err[ARM_COUNT];     /* the worst relative error over the input sets */
  int checked;                   /* bit 1 << arm: the arm's check ran in this job; an arm
                                  * without it took the errors its measure process found for
                                  * the same kernel before (worker/protocol.h, gate_memo); -1:
                                  * not known (a record written before it) */
  int nrounds;                   /* recorded rounds, screened ones included */
  round_rec rounds[MSG_MAX_ROUNDS];
  int burn_in;
  int samples;                   /* launches per arm in each canary and recorded round */
  int samples_wanted;            /* what the launches' spread asked for (> samples: capped by
                                  * measure.max_samples); 0 when not known */
  double launch_spread;          /* the launches' relative spread in burn-in (protocol_samples);
                                  * NAN when not measured */
  double compile_ms;
  int cache_hit;
  double wall_s;
  result_times times;
  int child;                     /* the measure process: the worker's count of children started
                                  * (1, 2, ...); 0 when measured outside a worker */
  int ncanary;                   /* canary rounds (0: the job asked for none) */
  canary_round canary[MSG_MAX_CANARY];
} result;

/* One round as the ledger writes it: {"order": [...], "best_us": ..., "best_kernel_us": ..., "sm_mhz": [..]}. */
cJSON *round_to_json(const round_rec *r);
int round_from_json(const cJSON *o, round_rec *r); /* 0, or -1 if malformed */
cJSON *decide_opts_to_json(const decide_opts *d);

cJSON *canary_round_to_json(const canary_round *c);
int canary_round_from_json(const cJSON *o, canary_round *c); /* 0, or -1 if malformed */

/* "checked": the names of the arms in the bit mask, as a JSON array; and back (-1 for anything
 * but an array of arm names). */
cJSON *checked_to_json(int checked);
int checked_from_json(const cJSON *o, int *checked);

cJSON *result_to_json(const result *r);
int result_from_json(const cJSON *o, result *r, tf_err *e);
/* A fault result for a job whose child died or overran. */
void result_fault(result *r, long long id, const char *device, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));

#endif
