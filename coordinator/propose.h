/* propose: the next configuration to try on one device.
 *
 * Moves from `best` that were never tried on this device: single-knob moves
 * first (every other value of one knob, nearest first), knobs ordered by how
 * much they have paid off on this device (keeps count, rejections cost a
 * little), ties broken by a per-device seeded order; two-knob moves (each knob
 * one or two steps) once single moves stall for `two_knob_after` rejections
 * or run out, because the gains that matter can be interactions (the field
 * note's staging x step). Exhausted when neither finds an untried point.
 * Ownership: tried_set owns its array (tried_release). */
#ifndef TF_PROPOSE_H
#define TF_PROPOSE_H

#include "common/spec.h"

typedef struct tried_set {
  config *v;
  int n, cap;
} tried_set;

int tried_has(const tried_set *t, const config *c);
int tried_add(tried_set *t, const config *c); /* 0, or -1 out of memory */
void tried_release(tried_set *t);

typedef struct proposer {
  const spec *s;
  double payoff[SPEC_MAX_KNOBS];
  int tiebreak[SPEC_MAX_KNOBS]; /* seeded order for knobs of equal payoff */
} proposer;

void proposer_init(proposer *p, const spec *s, unsigned long long seed);

/* 1 and *out (and *nchanged: 1 or 2 knobs) when a candidate exists, 0 when exhausted. */
int propose_next(const proposer *p, const config *best, const tried_set *tried, int prefer_two,
                 config *out, int *nchanged);

/* Learn from a decision: the knobs that differ between best and cand gain or lose payoff. */
void propose_feedback(proposer *p, const config *best, const config *cand, int kept);

#endif
