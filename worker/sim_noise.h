/* sim_noise: the noise model of the simulated device (worker/sim_backend.c),
 * exposed so that the decision study (tools/study.c) draws its rounds
 * from exactly the streams the `sim` backend produces.
 *
 * One sample() call measures one arm for one round: `samples` launches, and
 * the round's value is their median. Launch j of arm a in its round k costs
 *
 *   t = sim_us * R(k,a) * B(k,a) * C(c) * D(c) * exp(N(0, jitter^2))
 *
 *   R(k,a)  round state, exp(N(0, round^2)), one draw per (round, arm): what
 *           a round shares across its launches (clock phase, placement, the
 *           neighbours' traffic). The median over launches does not remove it,
 *           which is why decisions pair rounds instead of counting launches.
 *   B(k,a)  boost excursion: with probability boost_p per (round, arm) the arm
 *           runs at 1/(1+boost) of its time for that whole round (its SM clock
 *           reads (1+boost) x nominal). Decided by a hash of (seed, k, a), so
 *           it lands on either arm, independently of the order arms run in.
 *   C(c)    cold start: 1 + cold * exp(-c / cold_tau), c = sample() calls since
 *           the device was last idle (each job starts after idle). With three
 *           arms a round is three calls; four burn-in rounds leave < 0.1%.
 *   D(c)    slow drift: a random walk of the log, one N(0, drift^2) step per
 *           sample() call, multiplying every arm alike.
 *   jitter  per launch, log-normal.
 * The kernel-time instrument reads the round's value times 0.98 (no launch
 * overhead) times exp(N(0, kjitter^2)), independent per (round, arm): the two
 * instruments mostly agree.
 *
 * Placement (sim_noise_place): a measure process draws, once, a factor
 * exp(N(0, place^2)) per buffer (slot and input set, worker/placement.h), as
 * where the driver puts each arm's buffers moves identical kernels apart on a
 * GPU (docs/design.md, "Placement"), fixed for the life of a process and
 * different for each input set's buffers. With the shared layout
 * every arm has the same factor and it cancels in every ratio; with buffers per
 * arm it is a bias of one arm over another that no number of rounds removes.
 *
 * Everything is seeded: the same (seed, ordinal, job id) and the same calls
 * give the same numbers (a device's job ids count on from its ledger, so a resumed run
 * draws what the interrupted one would have). Defaults in sim_noise_defaults;
 * TUNEFARM_SIM_NOISE overrides any of them ("jitter=0.01,boost_p=0.1,..."), and the
 * simulated device's record says them all (sim_noise_format), so a ledger says what
 * reproduces it. The struct owns no heap memory. */
#ifndef TF_SIM_NOISE_H
#define TF_SIM_NOISE_H

#include <stddef.h>

#include "common/err.h"

#define SIM_NOISE_ARMS 3
#define SIM_NOMINAL_MHZ 1980.0
#define SIM_KERNEL_SHARE 0.98

typedef struct sim_noise_params {
  double jitter;   /* per-launch log-normal sigma */
  double round;    /* per-(round, arm) log-normal sigma */
  double boost_p;  /* probability of a boost excursion per (round, arm) */
  double boost;    /* an excursion runs the arm this fraction faster in clock */
  double drift;    /* random-walk sigma of the log per sample() call */
  double cold;     /* extra time of the first call after idle, as a fraction */
  double cold_tau; /* the cold penalty decays over this many sample() calls */
  double kjitter;  /* the kernel-time instrument's own log-normal sigma per round */
  double place;    /* log-normal sigma of a buffer slot's placement factor, per process */
} sim_noise_params;

typedef struct sim_noise {
  sim_noise_params p;
  unsigned long long key;                /* mixes seed, ordinal and job id */
  unsigned long long rng;                /* state of the draws (splitmix64) */
  int calls;                             /* sample() calls since idle */
  int arm_round[SIM_NOISE_ARMS];         /* next round index of each arm */
  double log_drift;
  int last_arm;                          /* the arm sampled last, -1 before any */
  int last_boosted;
  double last_spread;  /* the last sample's relative spread of its draws (stats_rel_spread) */
} sim_noise;

void sim_noise_defaults(sim_noise_params *p);

/* Parse "key=value,key=value" over the defaults already in *p. Returns 0, or -1
 * with a message naming the key in err. Keys: jitter, round, boost_p, boost,
 * drift, cold, cold_tau, kjitter. */
int sim_noise_parse(const char *text, sim_noise_params *p, char *err, size_t errlen);

/* Every parameter as "key=value,..." (what sim_noise_parse reads back to the same values),
 * for the simulated device's record (device_record.sim_noise). */
void sim_noise_format(const sim_noise_params *p, char *buf, size_t len);

/* Defaults, then TUNEFARM_SIM_NOISE if set; a parse error is TF_EXIT_INPUT. */
int sim_noise_from_env(sim_noise_params *p, tf_err *e);

/* Start a job's stream (the device has been idle: the cold start restarts). */
void sim_noise_start(sim_noise *n, const sim_noise_params *p, unsigned long long seed, int ordinal,
                     long long job_id);

/* One round of `arm`: the median over `samples` launches of sim_us times the
 * noise; *kernel_us (if not NULL) gets the kernel-time instrument's reading. */
double sim_noise_sample(sim_noise *n, int arm, double sim_us, int samples, double *kernel_us);

/* Is `arm`'s round `round` a boost excursion? (A pure function of the stream's key.) */
int sim_noise_boosted(const sim_noise *n, int arm, int round);

/* The placement factor of the buffers of slot `slot` and input set `set` in measure process
 * `instance` of device `ordinal` (1 when place is 0): a pure function, fixed for the life of
 * a process. */
double sim_noise_place(const sim_noise_params *p, unsigned long long seed, int ordinal,
                       int instance, int slot, int set);

/* SM clock the device reports now: nominal, or boosted when the arm sampled last was. */
double sim_noise_mhz(const sim_noise *n);

#endif
