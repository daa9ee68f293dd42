/* compile: NVRTC compilation of one program with several instantiations,
 * through the cubin cache.
 *
 * The program is the concatenation of the given source files (each preceded
 * by a #line directive naming it, so NVRTC's log points at the right file).
 * Every name expression ("tf_matmul<64,64,...>") is registered with
 * nvrtcAddNameExpression; the lowered (mangled) names come back in the same
 * order. The farm's jobs compile each arm's kernel as a program of its own
 * (compile/program.h); `tunefarm audit` compiles many in one. No driver is
 * needed (CI compiles).
 *
 * One program is compiled by one process at a time: a compile takes the program's lock in
 * the cache (<key>.lock, flock: released when its holder dies), and a process that finds the
 * lock held waits for the holder (at most wait_s) and then reads the holder's cubin instead
 * of compiling again. So the measure child and the worker's compile pool (compiling ahead,
 * worker/compile_pool.h) never run NVRTC twice on one program. NVRTC's refusals are cached
 * too (<key>.refused holds the log): a program is refused once, and every later request
 * (the measure child after a compile ahead) gets the same refusal and log at once.
 * A simulated compile (simulate_s > 0, the simulated device's) takes the same path with a
 * sleep in NVRTC's place and a stand-in cubin, under keys of their own.
 *
 * Ownership: compile_result holds malloc'd cubin and log; compile_release. */
#ifndef TF_COMPILE_H
#define TF_COMPILE_H

#include <stddef.h>

#include "common/cache.h"
#include "common/err.h"

#define COMPILE_MAX_EXPRS 64

typedef struct compile_req {
  const char *const *source_paths; /* files concatenated in order */
  int nsources;
  const char *text;                /* or, with no files, the program's own text (tunefarm's
                                    * built-in kernels: no includes are read for it) */
  const char *text_name;           /* its name in NVRTC's log */
  const char *const *name_exprs;
  int nexprs;
  const char *arch;                /* "sm_90" */
  const char *cache_dir;           /* NULL: cache_dir() */
  double wait_s;                   /* how long to wait for another process compiling the same
                                    * program before compiling it here; 0: COMPILE_WAIT_S */
  double simulate_s;               /* > 0: a simulated compile that takes this long on a miss */
} compile_req;

/* Far longer than a committed template's compile takes; a holder that takes longer is most
 * likely stuck, and the waiter compiles the program itself. */
#define COMPILE_WAIT_S 300.0

typedef struct compile_result {
  void *cubin;
  size_t cubin_size;
  char lowered[COMPILE_MAX_EXPRS][512];
  char *log;        /* NVRTC's program log (may be empty, never NULL after a compile) */
  int cache_hit;    /* the cache held the outcome (a cubin or a refusal) */
  double ms;        /* wall time of this call, cache lookup and waiting included */
  double wait_ms;   /* of which waiting for another process compiling the same program */
} compile_result;

/* Compile (or fetch). On an NVRTC refusal returns -1 with e->code = TF_COMPILE_REFUSED and the
 * log kept in out->log. */
int compile_program(const compile_req *req, compile_result *out, tf_err *e);
void compile_release(compile_result *r);

/* Whether the cache already holds the program's outcome (a cubin or a refusal): 1 yes, 0 no,
 * -1 when the request cannot be read (e). key (may be NULL) receives the cache key. */
int compile_cached(const compile_req *req, char key[CACHE_KEY_HEX], tf_err *e);

/* "13.0" */
void compile_nvrtc_version(int *major, int *minor);

/* Whether this NVRTC builds machine code for arch ("sm_90", "sm_90a": the digits count). */
int compile_arch_supported(const char *arch);

/* The arch-specific target of arch ("sm_90" -> "sm_90a": wgmma, setmaxnreg), which a template
 * asks for with "arch_specific": from compute capability 9.0 on, with NVRTC 12.0 or later;
 * else arch as it is (NVRTC then refuses what the kernel needs of it). A cubin for it loads
 * only on that architecture, which is the GPU the farm compiles it for. */
void compile_arch_specific(const char *arch, char *out, size_t len);

/* One check macro for NVRTC: fetch the program log before judging (see compile.c). */

#endif
