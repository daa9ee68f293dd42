/* trust: whether one device's measure processes can be trusted to decide, as a state machine,
 * pure: no MPI, no files, no clock.
 *
 * A measure process may carry a placement bias of its own for its whole life
 * (docs/design.md, "The canary"), so a generation decides only when its process was cleared
 * by the A/A canary: the canary runs in the first job of a run, after a fresh process, every
 * canary.every generations and after a fault; a process is fresh every
 * search.fresh_every generations and after a canary found it biased. A generation measured by
 * a process no canary cleared, or by a biased one, is untrusted: the search measures it again
 * and it counts toward nothing. After canary.max_restarts biased processes in a row, the
 * GPU's verdicts cannot be trusted and the search ends (trust.given_up).
 *
 * The search (coordinator/search.h) holds one trust, asks it what the next job needs
 * (canary_due, fresh_due) and hands it the facts of every measured generation, written or
 * read back, so a resumed run's trust is the interrupted one's. A trust holds no memory. */
#ifndef TF_TRUST_H
#define TF_TRUST_H

#include "common/campaign.h"
#include "common/msg.h"

/* The canary a job ran, and its verdict. */
typedef enum { TRUST_NO_CANARY, TRUST_CANARY_OK, TRUST_CANARY_BIASED } trust_canary;

/* What a measured generation's record says about its process. */
typedef struct trust_fact {
  result_status status;
  int correct;
  int child;             /* the measure process; 0: unknown */
  trust_canary canary;   /* the canary its job ran, and its verdict */
  int untrusted;         /* the process was not trusted: not decided */
  int asked_canary;      /* the job asked for the canary */
  int asked_fresh;       /* the job asked for a fresh process */
} trust_fact;

typedef struct trust {
  canary_opts canary;    /* the campaign's canary section */
  int fresh_every;       /* search.fresh_every; 0: never */
  int vetted_child;      /* the process the last canary cleared; 0: none in this run */
  int canary_due;        /* the next job runs the canary first */
  int fresh_due;         /* the next job runs in a fresh measure process */
  int since_canary;      /* measured generations since the last canary */
  int since_fresh;       /* measured generations in this process */
  int biased_in_row;     /* canaries in a row that found their process biased */
  int given_up;          /* more than canary.max_restarts of them: the search ends */
  int canaries, biased, untrusted; /* canaries run, biased ones, untrusted generations */
} trust;

void trust_init(trust *t, const canary_opts *canary, int fresh_every);

/* A run begins (a first one, or a resumed one after its records were applied): its measure
 * processes are all new, so none is vetted and the first job runs the canary. */
void trust_begin_run(trust *t);

/* May a measured result be decided? Not when its canary found its process biased, nor when
 * no canary has cleared the process that measured it. Faults, errors, wrong outputs and runs
 * without a canary decide as they are. */
int trust_allows(const trust *t, const trust_fact *f);

/* The facts of a measured generation: what its job carried, what its canary said, what the
 * next job needs. */
void trust_apply(trust *t, const trust_fact *f);

/* Why the search ends when the trust has given up, into buf. */
void trust_why(const trust *t, char *buf, size_t len);

#endif
