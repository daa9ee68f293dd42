/* simcost: the simulated device's noiseless time of a configuration, a cost
 * function of the knobs with a known optimum, so a search on the `sim`
 * backend has real structure and its result can be checked against the truth.
 *
 *   us = base * knob factor
 *   base = SIMCOST_LAUNCH_US + max(flops / SIMCOST_FLOPS, bytes / SIMCOST_BYTES) in us,
 *          flops and bytes from the spec's expressions (spec_eval; 0 when absent
 *          or when they cannot be evaluated)
 *   knob factor = prod_k (1 + p_k |i_k - o_k|)  *  (1 + q |d_a - d_b|)
 *     i_k  the index of knob k's value in its domain (a value outside the
 *          domain counts as one step beyond the far end),
 *     o_k  its optimal index, p_k its penalty per step (2% to 6%), both drawn
 *          deterministically from (seed, template name, knob name),
 *     a, b one pair of knobs, drawn from (seed, template name), with
 *          d = i - o signed and q = 1.5 max(p_a, p_b): from a point where both
 *          are off their optimum by the same steps, moving either one alone is
 *          slower and moving both is faster. Some gains need two-knob moves.
 * The optimum is every knob at o_k (factor 1), unless constraints exclude it:
 * simcost_optimum finds the best accepted configuration by enumeration.
 * Pure functions; nothing is allocated. */
#ifndef TF_SIMCOST_H
#define TF_SIMCOST_H

#include "common/spec.h"

#define SIMCOST_FLOPS 50e12    /* FLOP/s */
#define SIMCOST_BYTES 4e12     /* bytes/s */
#define SIMCOST_LAUNCH_US 3.0  /* the floor of any launch */
#define SIMCOST_MAX_SPACE (1LL << 24) /* simcost_optimum refuses larger spaces */

/* The base time in microseconds of a kernel doing `flops` and moving `bytes`. */
double simcost_base_us(double flops, double bytes);

/* The noiseless time in microseconds of configuration c of spec s on problem dims. */
double simcost_us(const spec *s, const long long *dims, const config *c, unsigned long long seed);

/* The optimum of the knob space among the configurations `accept` accepts (NULL
 * accepts all): *best and *us get the fastest (the first enumerated on a tie).
 * Returns the number of accepted configurations (0: none, *best untouched),
 * or -1 when the space has more than SIMCOST_MAX_SPACE points. */
int simcost_optimum(const spec *s, const long long *dims, unsigned long long seed,
                    int (*accept)(void *ctx, const config *c), void *ctx, config *best,
                    double *us);

/* The drawn structure, for tests and reports: knob k's optimal index and
 * penalty per step, and the interacting pair (-1, -1 when fewer than two
 * knobs have a choice). */
void simcost_knob(const spec *s, int k, unsigned long long seed, int *opt, double *penalty);
void simcost_pair(const spec *s, unsigned long long seed, int *a, int *b);

#endif
