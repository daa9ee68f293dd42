/* bench: `tunefarm bench`, a reproducible side-by-side benchmark on one GPU.
 *
 * Arms, in the order of the table: the farm's final best of every --ledger (read as `tunefarm
 * report` reads it: coordinator/replay.h ledger_best), every --config (the campaign's start
 * with some knobs set: configurations found outside the farm, or its peers' choices), the
 * campaign's start configuration,
 * every committed kernel of the template's family (kernels/NAME.json, by name), and for family
 * matmul cuBLAS SGEMM (worker/cublas.h). Same shapes as the campaign unless --dims says
 * otherwise; an arm that breaks one of its constraints at those shapes is listed as refused
 * and never launched.
 *
 * Three files, one concern each:
 *   tools/bench.c          the command line, the inputs and the list of arms;
 *   tools/bench_measure.c  the device: every arm through the farm's protocol
 *                          (worker/protocol.h) on the measure child's backend, packed into
 *                          jobs of three (template configurations in the best and new
 *                          places, a committed kernel or cuBLAS in the control place);
 *   tools/bench_print.c    the Markdown table or the JSON lines.
 * Protocol, the same for every arm, the farm's: checked against the template's reference on
 * every input set before any timing (a wrong arm is not timed); the campaign's burn-in
 * rounds; then R recorded rounds, each S samples of every arm of the job in rotated order,
 * input sets alternating by round, the L2 flushed before every launch.
 *
 * Ownership: bench_main owns everything; a bench_arm points into its bench (kernel specs)
 * and into argv (ledger paths). */
#ifndef TF_BENCH_H
#define TF_BENCH_H

#include <stdio.h>

#include "common/campaign.h"
#include "common/err.h"
#include "common/msg.h"
#include "worker/cublas.h" /* defines: tf_cublas */
#include "coordinator/job.h"

#define BENCH_MAX_LEDGERS 16
#define BENCH_MAX_KERNELS 16
#define BENCH_MAX_CONFIGS 16
#define BENCH_STR(x) #x
#define BENCH_XSTR(x) BENCH_STR(x) /* "16": a limit named in the usage text */
#define BENCH_MAX_ARMS (BENCH_MAX_LEDGERS + BENCH_MAX_CONFIGS + BENCH_MAX_KERNELS + 2)
#define BENCH_MAX_ROUNDS MSG_MAX_ROUNDS

/* The command line, read once and passed down. */
typedef struct bench_opts {
  const char *campaign;
  const char *ledgers[BENCH_MAX_LEDGERS];
  int nledgers;
  const char *configs[BENCH_MAX_CONFIGS]; /* "BM=128,TM=8": the start with these knobs */
  int nconfigs;
  const char *dims;     /* "M=1000,N=1000,K=1000"; NULL: the campaign's */
  int rounds;           /* R, default 10 */
  int samples;          /* S, default 20 */
  int device;           /* visible device ordinal, default 0 */
  const char *backend;  /* "cuda" or "sim"; NULL: cuda where a GPU is visible, else sim */
  int no_cublas;
  int json;             /* JSON lines on stdout instead of the Markdown table */
} bench_opts;

typedef enum { BENCH_TEMPLATE, BENCH_KERNEL, BENCH_CUBLAS } bench_kind;

typedef enum {
  BENCH_PENDING,  /* not yet measured (after the check: correct, waiting for its rounds) */
  BENCH_MEASURED, /* correct and timed */
  BENCH_WRONG,    /* over the tolerance on some input set: not timed */
  BENCH_ERROR,    /* compile, launch or check failed: note says why */
  BENCH_REFUSED,  /* breaks a constraint at these shapes: never launched */
  BENCH_SKIPPED   /* a peer without the cuda backend or without libcublas */
} bench_status;

typedef struct bench_arm {
  char label[96];       /* "farm best (GPU-7412f039)", "start", "matmul_regtile", "cuBLAS" */
  char what[512];       /* the configuration, the kernel or the call */
  bench_kind kind;
  config cfg;           /* BENCH_TEMPLATE */
  const spec *kernel;   /* BENCH_KERNEL */
  int peer;             /* BENCH_CUBLAS: index into the campaign's peers */
  const char *ledger;   /* the ledger a farm best came from, else NULL */
  bench_status status;
  char note[1100];      /* why refused, skipped or failed (a tf_err message and a prefix) */
  double rel_err;       /* worst over the input sets; NAN until checked */
  double work;          /* flops or bytes of one launch (bench.unit); 0 when unknown */
  int nrounds;
  double us[BENCH_MAX_ROUNDS];        /* each recorded round's median event span */
  double kernel_us[BENCH_MAX_ROUNDS]; /* each round's median CUPTI kernel time; <0: none */
} bench_arm;

typedef struct bench {
  campaign c;           /* dims overridden by --dims */
  spec kernels[BENCH_MAX_KERNELS];
  int nkernels;
  bench_arm arms[BENCH_MAX_ARMS];
  int narms;
  const char *backend;  /* "cuda" or "sim", as chosen */
  device_record dev;
  char driver[64];      /* "580.65.06 (CUDA 13.0)", or what stands for it */
  char date[32];        /* UTC, when the bench started */
  char cublas_lib[32];  /* the libcublas that was used, "" if none */
  tf_cublas cublas;     /* it, loaded when the cuBLAS arm is measured and never unloaded:
                         * libcublas carries its own static CUDA runtime, whose teardown is
                         * left to the end of the process, as in any program linked with it */
  int unit_flops;       /* 1: throughput in TFLOP/s (flops), 0: GB/s (bytes) */
} bench;

int bench_main(int argc, char **argv);

/* bench_measure.c: open the device (b->dev, b->driver), run every job and the cuBLAS arm,
 * close it. -1 with e->code TF_NO_DEVICE (no usable device: exit status 3) or TF_EXIT_FAIL
 * (the device failed mid-way: the arms measured before stay measured, the others are left
 * pending). */
int bench_measure(bench *b, const bench_opts *o, tf_err *e);

/* bench_print.c: the table (or JSON lines) on f. */
void bench_print(FILE *f, const bench *b, const bench_opts *o);

#endif
