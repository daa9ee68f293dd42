/* mix: splitmix64's finalizer (Steele, Lea, Flood 2014), the one 64-bit mixer behind every
 * seeded choice: the proposer's knob order and random starts (coordinator/propose.c), the
 * simulated device's cost model and noise (worker/simcost.c, worker/sim_backend.c). Ledgers
 * recorded with a seed depend on its exact bits, so it must not change. And FNV-1a in 64
 * bits, the hash of what is only remembered within a run (the gate's memory of checked
 * kernels); the cubin cache's keys have their own, of 128 bits. */
#ifndef TF_MIX_H
#define TF_MIX_H

#include <stddef.h>

/* A well-spread function of z: every bit of the result depends on every bit of z. */
unsigned long long tf_mix64(unsigned long long z);

/* FNV-1a of n bytes at p, on from h (TF_FNV64_BASIS to begin): chain calls to hash several
 * fields, the end of each part of the hash. */
#define TF_FNV64_BASIS 14695981039346656037ULL
unsigned long long tf_fnv64(unsigned long long h, const void *p, size_t n);

#endif
