/* audit: `tunefarm check` and `tunefarm audit`, the static view of a campaign.
 *
 * check: load and validate the campaign and its template (no compiling);
 *   print the size of the knob space, how many configurations every
 *   constraint accepts, how many are reachable from the start by one- and
 *   two-knob moves through accepted configurations (what a search can visit),
 *   and how many each constraint refuses.
 * audit: the same enumeration, then render and compile every reachable
 *   configuration with NVRTC (through the cubin cache, in batches of several
 *   instantiations per program), print counts and every failure with its
 *   NVRTC log, and fail if any accepted configuration does not compile. Under
 *   mpirun the batches are spread over the ranks. */
#ifndef TF_AUDIT_H
#define TF_AUDIT_H

#include "common/campaign.h"

/* The space as the audit sees it. Ownership: space_release frees reach; s is the
 * campaign's template, which must outlive the view. */
typedef struct space_view {
  const spec *s;
  long long size;            /* product of the knob domains */
  long long accepted;        /* pass every constraint */
  long long refused_by[SPEC_MAX_CONSTRAINTS];
  int nreachable;
  long long *reach;          /* accepted and reachable from start, start first, as indices
                              * (8 bytes each, not a config's 136: 2^24 of them fit) */
  int nall;                  /* reachable before audit --where kept a part of them */
} space_view;

/* Enumerate. Refuses, as bad input naming the limit, spaces over 2^24 points (not a tuning
 * space) and spaces whose constraints and reachability walk would cost more than a bounded
 * number of steps (about 30 s on a 2-core machine; audit.c says how the walk is bounded). */
int space_enumerate(const campaign *c, space_view *v, tf_err *e);
void space_release(space_view *v);

/* The i-th reachable configuration (0 <= i < nreachable). */
void space_at(const space_view *v, int i, config *out);

int check_main(int argc, char **argv);
int audit_main(int argc, char **argv); /* MPI is initialised by main when under mpirun */

#endif
