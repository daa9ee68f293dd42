/* backend: the device side of the measure child, one table of functions per
 * device kind (cuda: worker/cuda_backend.c; sim: worker/sim_backend.c).
 *
 * The measurement protocol (worker/protocol.c) is written once against this
 * table: the backend provides primitives, the protocol decides their order
 * (correctness gate on every arm and input set, once per kernel and process, burn-in, rotated recorded
 * rounds, clock screening). So the simulated device goes through exactly the
 * steps the GPU does.
 *
 * Contract: every function returns 0 or -1 with *e filled. A failure the
 * device cannot recover from (a sticky CUDA error: illegal address, trap)
 * sets e->code = TF_STICKY: the child reports a fault and exits, and the
 * worker starts a fresh child. A `self` is owned by the backend: open
 * allocates it, close frees it; prepare's resources are freed by finish. */
#ifndef TF_BACKEND_H
#define TF_BACKEND_H

#include "common/err.h"
#include "common/msg.h"
#include "common/program.h"
#include "worker/placement.h"

typedef struct backend_opts {
  int ordinal;              /* device index among the visible ones */
  const char *cache_dir;    /* cubin cache; NULL: the default (common/cache.h) */
  int instance;             /* which measure process this is for its worker (1, 2, ...; 0 when
                             * standalone): the simulated device's placement draws from it */
} backend_opts;

typedef struct backend_ops {
  const char *name;
  int (*open)(void **self, const backend_opts *o, tf_err *e);
  int (*describe)(void *self, device_record *d, tf_err *e);
  /* Compile (through the cache), load placement_copies(j) copies of the code, allocate
   * placement_slots(j) buffer slots of measure.input_sets input sets each, filled from
   * measure.seed. Sets r->compile_ms, r->cache_hit. */
  int (*prepare)(void *self, const job *j, result *r, tf_err *e);
  /* Poison the outputs, launch p's kernel once on input set `set` in p's place, compare every
   * output with the CPU reference: *rel_err = ||out - ref|| / ||ref|| (inf if any output is
   * not finite, or if the launch changed an input: the arms share their inputs). */
  int (*check)(void *self, const placement *p, int set, double *rel_err, tf_err *e);
  /* `samples` launches of p's kernel in p's place on `set`, each between two events (L2
   * flushed before each when the job asks): medians of event span and kernel time, in
   * microseconds (*kernel_us < 0 when no kernel-time instrument is available), and when
   * `spread` is not NULL the launches' relative spread (stats_rel_spread of the spans). */
  int (*sample)(void *self, const placement *p, int set, int samples, double *us,
                double *kernel_us, double *spread, tf_err *e);
  /* SM clock now, MHz, and the clock-event reasons bit mask; 0 and 0 when unknown. */
  void (*clock)(void *self, double *mhz, unsigned long long *reasons);
  void (*finish)(void *self);
  void (*close)(void *self);
  /* Optional, NULL for a device whose time is real: a device whose time is simulated sets the
   * result's times and wall_s, once the protocol has run the job, to what the job took on the
   * device it stands for (replay: the recorded compile, check and round times). */
  void (*elapsed)(void *self, result *r);
} backend_ops;

extern const backend_ops backend_sim;
extern const backend_ops backend_cuda;
extern const backend_ops backend_replay; /* worker/replay_backend.c: a recorded space */

/* The simulated device's architecture, what its programs are "compiled" for. */
#define SIM_ARCH "sm_90"
/* TUNEFARM_SIM_COMPILE: unset, NVRTC compiles (all zeros); "0", the simulated device compiles
 * nothing (none); "S", seconds a simulated compile takes on a cache miss; or "S,L,F": L
 * seconds for a fraction F of the programs (common/program.h, sim_compile); TF_EXIT_INPUT
 * when it is none of these. */
int sim_compile_seconds(sim_compile *out, tf_err *e);

/* The table for "cuda" or "sim", NULL for anything else. */
const backend_ops *backend_find(const char *name);

#endif
