/* program: what compile_program needs of a job, and nothing else: its source files (as jobs
 * carry them: relative to the project root, or absolute) and the name expressions of its
 * three arms in arm order (best, new, control).
 *
 * The measure child compiles a job's program through it, and the worker's compile pool
 * compiles the programs of jobs the coordinator may send next (a JOB message's "prefetch"
 * list, one program_to_json object per item) through it too, so both build the same
 * compile_req and the cubin compiled ahead is the one the measure child looks up (the cache
 * key covers the source paths, through the #line directives).
 *
 * JSON: {"sources": ["templates/matmul.cu", "kernels/matmul_regtile.cu"],
 *        "exprs": ["tf_matmul<...>", "tf_matmul<...>", "matmul_regtile"]}; the root is the
 * job's and travels once, in the job.
 * Ownership: plain values; program_request points into the program_req it fills. */
#ifndef TF_PROGRAM_H
#define TF_PROGRAM_H

#include <cjson/cJSON.h>

#include "common/compile.h"
#include "common/err.h"
#include "common/msg.h"

typedef struct program_ref {
  char root[SPEC_PATH];               /* the job's root: where relative sources lie */
  int nsources;
  char sources[2][SPEC_PATH];
  char exprs[ARM_COUNT][256];
} program_ref;

void program_of_job(const job *j, program_ref *out);

cJSON *program_to_json(const program_ref *p);
/* Sources and name expressions from o, root from the argument; TF_EXIT_INPUT naming the key. */
int program_from_json(const cJSON *o, const char *root, program_ref *p, tf_err *e);
int program_equal(const program_ref *a, const program_ref *b);

/* A file a job names (a source, a spec) as this process opens it: as given when absolute;
 * else under root (the job's: the coordinator sends it, a ledger does not keep it), else under
 * $TUNEFARM_ROOT, else from the working directory (a ledger's job rerun from the project
 * root). */
void program_source_path(const char *root, const char *path, char *out, size_t len);

/* The compile request of p for `arch` (simulate_s > 0: the simulated device's compile). */
typedef struct program_req {
  char paths[2][2 * SPEC_PATH + 2];
  const char *srcs[2];
  const char *exprs[ARM_COUNT];
  compile_req req;
} program_req;
void program_request(const program_ref *p, const char *arch, double simulate_s, program_req *out);

/* The simulated device's compile (TUNEFARM_SIM_COMPILE "S" or "S,L,F"): S seconds, except for
 * the fraction F of programs that a hash of their name expressions picks, which take L (on the
 * GPU about a fifth of matmul's programs take 0.5-4 s and hold most of the compile time,
 * docs/PERFORMANCE.md). short_s 0: no simulated compile. */
typedef struct sim_compile {
  double short_s, long_s, long_frac;
} sim_compile;

/* Seconds p's simulated compile takes under m: the same for the same program in the measure
 * child and in the compile pool. */
double program_sim_seconds(const program_ref *p, const sim_compile *m);

#endif
