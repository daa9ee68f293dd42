/* mix: splitmix64's finalizer (Steele, Lea, Flood 2014), the one 64-bit mixer behind every
 * seeded choice: the proposer's knob order and random starts (coordinator/propose.c), the
 * simulated device's cost model and noise (worker/simcost.c, worker/sim_backend.c). Ledgers
 * recorded with a seed depend on its exact bits, so it must not change. */
#ifndef TF_MIX_H
#define TF_MIX_H

/* A well-spread function of z: every bit of the result depends on every bit of z. */
unsigned long long tf_mix64(unsigned long long z);

#endif
