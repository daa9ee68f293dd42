/* backend: the device side of the measure child, one table of functions per
 * device kind (cuda: worker/cuda_backend.c; sim: worker/sim_backend.c; replay:
 * worker/replay_backend.c), and the list of
 * them (worker/backend.c), which every caller asks instead of comparing names: a backend is
 * one file exporting its backend_ops and one row of that list.
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
#include "compile/program.h"
#include "worker/placement.h"

typedef struct backend_opts {
  int ordinal;              /* device index among the visible ones */
  const char *cache_dir;    /* cubin cache; NULL: the default (common/cache.h) */
  int instance;             /* which measure process this is for its worker (1, 2, ...; 0 when
                             * standalone): the simulated device's placement draws from it */
} backend_opts;

typedef struct backend_ops {
  const char *name;
  /* 1: its times are not a GPU's (synthetic, or drawn from a record): never pooled with a
   * GPU's, never vouched for as one (a ledger's "simulated", report, export, bench). */
  int simulated;
  /* A simulated backend's words for the run's first and last lines, " (...)"; else NULL. */
  const char *note;
  /* 1: it answers from a recorded space (run --space FILE, TUNEFARM_SPACE): compile times
   * come from the record, and the worker compiles nothing ahead. */
  int recorded;
  /* Whether it can serve here: 1, or 0 with why not in why (len bytes). */
  int (*probe)(char *why, size_t len);
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
 * seconds for a fraction F of the programs (compile/program.h, sim_compile); TF_EXIT_INPUT
 * when it is none of these. */
int sim_compile_seconds(sim_compile *out, tf_err *e);

/* The table of the backend called name, NULL for a name no row holds (and for NULL). */
const backend_ops *backend_find(const char *name);

/* What a measure child opens when not told: the first row, in order of preference (cuda,
 * sim), whose probe accepts. When that is not the first row, why holds the first row's
 * reason ("the CUDA runtime sees no device"). A backend that must be named (one that needs
 * a file) answers its probe with 0 and comes after sim. */
const backend_ops *backend_default(char *why, size_t len);

/* Whether a device record's backend (as ledgers and HELLO carry it) is simulated; a name no
 * row holds counts as simulated: tunefarm vouches only for the GPUs it knows. */
int backend_simulated(const char *name);
/* The name of the backend that answers from a recorded space (run --space). */
const char *backend_recorded_name(void);

/* The backends' names for a message: "cuda or sim" (with more rows, "a, b or c"). */
void backend_names(char *buf, size_t len);

#endif
