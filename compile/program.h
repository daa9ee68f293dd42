/* program: what compile_program needs of a job, and nothing else: its source files (as jobs
 * carry them: relative to the project root, or absolute), the name expressions of its three
 * arms in arm order (best, new, control) and which source holds each arm's kernel.
 *
 * The measure child compiles a job's program through it, and the worker's compile pool
 * compiles the kernels of jobs the coordinator may send next (a JOB message's "prefetch"
 * list, one program_to_json object per item) through it too, so both build the same
 * compile_req and the cubin compiled ahead is the one the measure child looks up (the cache
 * key covers the source paths, through the #line directives).
 *
 * JSON: {"sources": ["templates/matmul.cu", "kernels/matmul_regtile.cu"],
 *        "exprs": ["tf_matmul<...>", "tf_matmul<...>", "matmul_regtile"], "from": [0, 0, 1]};
 * the root is the job's and travels once, in the job. A job's program names its three arms'
 * expressions; a program of one kernel (program_kernels, `tunefarm compile`) names one, the
 * rest empty, and its one source. Without "from", every kernel compiles from all sources.
 * Ownership: plain values; program_request points into the program_ref and the program_req
 * it fills; program_build holds the compiled kernels (program_build_release). */
#ifndef TF_PROGRAM_H
#define TF_PROGRAM_H

#include <cjson/cJSON.h>

#include "compile/compile.h"
#include "common/err.h"
#include "common/msg.h"

typedef struct program_ref {
  char root[SPEC_PATH];               /* the job's root: where relative sources lie */
  int nsources;
  char sources[2][SPEC_PATH];
  char exprs[ARM_COUNT][256];
  int from[ARM_COUNT];                /* the source holding arm k's kernel; -1: all of them */
  int arch_specific;                  /* compile for the arch-specific target ("arch_specific") */
} program_ref;

void program_of_job(const job *j, program_ref *out);

cJSON *program_to_json(const program_ref *p);
/* Sources, 1 to ARM_COUNT name expressions and "from" (optional) from o, root from the
 * argument; TF_EXIT_INPUT naming the key. */
int program_from_json(const cJSON *o, const char *root, program_ref *p, tf_err *e);
int program_equal(const program_ref *a, const program_ref *b);

/* A file a job names (a source, a spec) as this process opens it: as given when absolute;
 * else under root (the job's: the coordinator sends it, a ledger does not keep it), else under
 * $TUNEFARM_ROOT, else from the working directory (a ledger's job rerun from the project
 * root). */
void program_source_path(const char *root, const char *path, char *out, size_t len);

/* The simulated device's compile (TUNEFARM_SIM_COMPILE "S" or "S,L,F"): S seconds, except for
 * the fraction F of kernels that a hash of their name expression picks, which take L (on the
 * GPU about a fifth of matmul's programs take 0.5-4 s and hold most of the compile time,
 * docs/design.md, "Compiling ahead"). short_s 0: no simulated compile, so NVRTC compiles, unless `none`
 * (TUNEFARM_SIM_COMPILE=0: the simulated device compiles nothing at all). */
typedef struct sim_compile {
  double short_s, long_s, long_frac;
  int none;
} sim_compile;

/* A program compiles kernel by kernel: each distinct name expression of its arms is an NVRTC
 * program of its own (that expression and the one source that holds it: a committed kernel,
 * which is not a template, would otherwise be compiled again beside every instantiation), with
 * its own cubin and cache entry, and the measure child loads each as a module of its own. A
 * kernel compiled alone has the same machine code, byte for byte, as beside the others
 * (tests/unit/test_program.c compares two kernels so on every build), so
 * nothing measured changes; but a generation compiles only what is new to the cache: best was
 * compiled when it was new, the control once per campaign.
 *
 * Where and how: arch ("sm_90"), cache_dir (NULL: cache_dir()), sim (NULL, or short_s 0:
 * NVRTC; else the simulated device's compile, per kernel, program_kernel_sim_seconds). */
typedef struct program_target {
  const char *arch;
  const char *cache_dir;
  const sim_compile *sim;
} program_target;

typedef struct program_req {
  char paths[2][2 * SPEC_PATH + 2];
  const char *srcs[ARM_COUNT][2];  /* kernel i's sources */
  int nkernels;                  /* distinct name expressions, in arm order (1..ARM_COUNT) */
  const char *exprs[ARM_COUNT];  /* kernel i's name expression */
  int kernel_of[ARM_COUNT];      /* each arm's kernel; -1 for an arm without an expression */
  compile_req req[ARM_COUNT];    /* kernel i's compile */
  char arch[16];                 /* what they compile for: the target's arch, or its
                                  * arch-specific target (program_ref.arch_specific) */
} program_req;
void program_request(const program_ref *p, const program_target *t, program_req *out);

/* The kernels of p, each as a program of its one expression (exprs[0]), distinct, in arm
 * order: what the compile pool queues. Returns how many. */
int program_kernels(const program_ref *p, program_ref out[ARM_COUNT]);

/* A program compiled (or fetched), kernel by kernel. */
typedef struct program_build {
  int nkernels;
  compile_result kernel[ARM_COUNT]; /* kernel i's cubin and lowered name (lowered[0]) */
  double ms, wait_ms;               /* summed over the kernels */
  int cache_hit;                    /* every kernel's outcome came from the cache */
  int failed;                       /* the kernel that failed (its log in kernel[failed]); -1 */
} program_build;

/* Compile every kernel of pr in order, stopping at the first failure: -1 with e (an NVRTC
 * refusal: e->code TF_COMPILE_REFUSED, the log in out->kernel[out->failed].log). out is
 * always set up; program_build_release it, success or failure. */
int program_compile(const program_req *pr, program_build *out, tf_err *e);
void program_build_release(program_build *b);

/* After program_compile's refusal: e as both backends report it, TF_COMPILE_REFUSED with
 * "nvrtc refused the program for ARCH (EXPR): " and the first PROGRAM_LOG_EXCERPT bytes of
 * NVRTC's log, which the job's result carries as its detail. Returns -1. */
#define PROGRAM_LOG_EXCERPT 900
int program_refused(const program_req *pr, const program_build *pb, const char *arch,
                    tf_err *e);

/* Seconds the simulated compile of the kernel named `name_expr` takes under m: the same for the
 * same kernel in the measure child and in the compile pool. */
double program_kernel_sim_seconds(const char *name_expr, const sim_compile *m);

#endif
