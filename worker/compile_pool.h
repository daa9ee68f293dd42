/* compile_pool: a worker's compiles ahead, so that its measure child finds the next job's
 * cubins in the cache and the GPU does not wait for NVRTC.
 *
 * The coordinator attaches to each job the programs of the jobs its search may send next,
 * most likely first (a JOB message's "prefetch"). The worker hands them to its pool, which
 * compiles their kernels (compile/program.h: a program compiles kernel by kernel), in that
 * order, each distinct kernel once, up to `jobs` at a time, each in a process of its own
 * (`tunefarm compile`: NVRTC's memory and any crash stay there), into the cubin cache. A new
 * list replaces the old: kernels of the old list still waiting are dropped, and compiles of
 * kernels the new list no longer holds are stopped (SIGKILL: the cache's entries are atomic
 * and the lock dies with its holder; at worst a hidden temporary file is left), so that the
 * cores go to what the search may still ask for. Kernels the cache already holds (best and
 * the control, mostly), or that are being compiled, are not started again; compile/compile.h's
 * lock keeps the measure child from compiling a kernel the pool is compiling: it waits for
 * the cubin.
 *
 * A pool is a thread of the worker that starts and reaps its processes; it never calls MPI.
 * The pool's thread and its processes keep off the cores mpirun bound the worker to, where the
 * measure child runs (on any core when the worker is not bound; inside the worker's own mask
 * when something else confined it: worker/cpus.h), and its processes run in the
 * scheduler's idle class from their start (else at nice 10), below the measure child, whose
 * launches are timed.
 *
 * A compile that fails here costs nothing but the core: the measure child of the job that
 * needs the program reads the refusal from the cache (compile/compile.h caches NVRTC's
 * refusals with their log) or, after any other failure, compiles it itself and records what
 * happens against its generation, as without the pool.
 *
 * Ownership: compile_pool_start allocates the pool; compile_pool_stop kills its compiles,
 * joins the thread and frees it. compile_pool_want copies what it is given. */
#ifndef TF_COMPILE_POOL_H
#define TF_COMPILE_POOL_H

#include "common/err.h"
#include "compile/program.h"
#include "worker/cpus.h"

/* The most programs one list holds; the rest of a longer one is ignored. */
#define COMPILE_POOL_MAX_WANT 64

typedef struct compile_pool_opts {
  const char *exe;       /* the tunefarm binary: `EXE compile` compiles one kernel */
  const char *arch;      /* the device's ("sm_90") */
  sim_compile simulate;  /* short_s > 0: the simulated device's (TUNEFARM_SIM_COMPILE) */
  int jobs;              /* compiles at once, >= 1 */
} compile_pool_opts;

typedef struct compile_pool compile_pool;

/* How many compiles at once: `asked` when it is 0 or more, else (auto) the worker's CPUs
 * (worker/cpus.h: its own mask, or its share of the node's) less one for the measure child,
 * at least 1; and 0 when the worker may use one CPU only, the measure child's, where a
 * compile would run beside the launches it times. 0 means no pool. */
int compile_pool_jobs(int asked, const cpus_share *cpus);


compile_pool *compile_pool_start(const compile_pool_opts *o, tf_err *e);

/* The programs wanted next, most likely first (n may be 0: nothing more). `current` (may be
 * NULL) is the program of the job the measure child is preparing now: a compile of one of its
 * kernels that is running is left to finish, since the child waits for it; of those the cache
 * lacks, the child compiles the first and the pool starts the others before any of the list. */
void compile_pool_want(compile_pool *p, const program_ref *current, const program_ref *next,
                       int n);

typedef struct compile_pool_stats {
  long started;   /* compiles (of one kernel each) started */
  long finished;  /* of which ended by themselves (compiled, refused or failed) */
  long stopped;   /* of which stopped: their kernel was no longer wanted */
  long skipped;   /* wanted kernels the cache already held */
  long dropped;   /* wanted kernels replaced by a new list before they could start */
  double finished_cpu_s; /* CPU time (user and system) of the compiles that ended by themselves */
  double stopped_cpu_s;  /* and of those stopped: spent on guesses the search left */
  double open_s;         /* since its first list: with `jobs`, what its cores could have given */
  int jobs;              /* compiles at once */
} compile_pool_stats;
void compile_pool_get_stats(compile_pool *p, compile_pool_stats *out);

/* Let whatever runs finish for up to grace_s (then kill it); join; free. NULL is fine. */
void compile_pool_stop(compile_pool *p, double grace_s);

/* `tunefarm compile [--arch A] [--simulate S]`: compile the kernels of the program given on
 * stdin as {"root": R, "sources": [...], "exprs": [...]} into the cache, each alone; one line
 * on stdout per kernel, {"key": K, "status": "compiled"|"cached"|"refused"|"error", "ms": T,
 * "message": ...}.
 * Exit status 0 (compiled, cached or refused), 1 (any other failure), 2 (bad usage). */
int compile_main(int argc, char **argv);

#endif
