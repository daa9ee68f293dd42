/* space: a campaign's knob space as the search can walk it: its size, what every constraint
 * accepts and refuses, and the configurations reachable from the start by one- and two-knob
 * moves through accepted ones. `run` enumerates it before it opens a ledger, so a template
 * whose expressions fail somewhere (division by zero) is refused before anything is written;
 * `check` prints it and `audit` compiles what it reaches (tools/audit.h). */
#ifndef TF_SPACE_H
#define TF_SPACE_H

#include "common/campaign.h"

#define SPACE_ACCEPTED 0xFF /* in space_view.first_broken: the point breaks no constraint */
#define SPACE_DIRECT 1024   /* knob values 0..SPACE_DIRECT-1 find their index in one load */

/* The space as the audit sees it. Ownership: space_release frees reach and first_broken; s is
 * the campaign's template, which must outlive the view. */
typedef struct space_view {
  const spec *s;
  long long size;            /* product of the knob domains */
  long long accepted;        /* pass every constraint */
  long long refused_by[SPEC_MAX_CONSTRAINTS];
  int nreachable;
  long long *reach;          /* accepted and reachable from start, start first, as indices
                              * (8 bytes each, not a config's 136: 2^24 of them fit) */
  int nall;                  /* reachable before audit --where kept a part of them */
  unsigned char *first_broken; /* per point of the whole space (space_config_at's index): the
                                * first constraint it breaks, as spec_check says, or
                                * SPACE_ACCEPTED: what the search asks of every candidate,
                                * answered by one lookup (a byte per point) */
  /* each knob's index of value x, or -1 (x < SPACE_DIRECT): a search's walks ask the table
   * thousands of times a decision, so a lookup must not scan the values */
  signed char index_of[SPEC_MAX_KNOBS][SPACE_DIRECT];
} space_view;

/* Enumerate. Refuses, as bad input naming the limit, spaces over 2^24 points (not a tuning
 * space) and spaces whose constraints and reachability walk would cost more than a bounded
 * number of steps (about 30 s on a 2-core machine; audit.c says how the walk is bounded). */
int space_enumerate(const campaign *c, space_view *v, tf_err *e);
void space_release(space_view *v);

/* The configuration at index idx (0 <= idx < size) of the whole space: mixed radix over the
 * knobs' domains, the last knob turning fastest. */
void space_config_at(const spec *s, long long idx, config *out);

/* The i-th reachable configuration (0 <= i < nreachable). */
void space_at(const space_view *v, int i, config *out);

/* spec_check's verdict on c at the campaign's problem: the first constraint c breaks, or -1;
 * -2 when c is not a point of the space (a value outside a knob's domain). */
int space_verdict(const space_view *v, const config *c);

#endif
