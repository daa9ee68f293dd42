/* coordinator: rank 0 of `tunefarm run`. Loads the campaign, greets every
 * worker (HELLO with its device record), keeps one search per device, and
 * serves all of them from one receive loop, so a slow GPU never holds up a
 * fast one. For each device: propose, check statically (a refusal is written
 * with the constraint's reason and costs no compile), send the job, decide
 * on the result (common/decide.h), write the ledger line, move on; stop at the
 * budget, after max_stale rejections in a row, or when the space around best
 * is exhausted, and say which. Results are tagged by device and never pooled.
 * It is the only rank that writes files. */
#ifndef TF_COORDINATOR_H
#define TF_COORDINATOR_H

#include <mpi.h>
#include <stdio.h>

#include "common/err.h"

typedef struct run_opts {
  const char *campaign;  /* path of the campaign file */
  const char *ledgers;   /* ledgers folder */
  const char *backend;   /* the backend asked for; NULL: each worker's measure child chooses
                          * (a GPU where it sees one) and its hello says which */
  int fresh;             /* start new ledgers instead of resuming */
  int quiet;             /* no progress lines */
  int compile_jobs;      /* --compile-jobs: N at once, -1 auto (the default: cores per worker
                          * less one), 0 none: then the jobs carry no "prefetch" list */
  int run_ahead;         /* 1 (the default; --no-run-ahead: 0): each job goes with the job
                          * that follows it if it is rejected, which its worker starts at once;
                          * the coordinator then says "go" when the decision leads to that very
                          * job, or sends another (the worker drops the one ahead). Only time
                          * changes: the ledgers are the same either way */
  double worker_margin_s; /* --worker-margin: seconds a worker may take beyond a job's
                          * measure.deadline_s before it is declared lost */
  FILE *progress;        /* where progress goes (stderr) */
  const char *resume;    /* the commands that resume this run as it was launched, each a line
                          * "  CMD\n" (said at the start and when a signal stops the run);
                          * NULL: mpirun with the world's size and the options run_opts holds */
} run_opts;

/* 0: every search ran; -1: failed (e says why); 1: the searches ran but workers were lost
 * (a worker that sends no result within its job's measure.deadline_s plus worker_margin_s:
 * its job is recorded as a fault, its search stops, the others go on). A lost rank cannot
 * take part in MPI_Finalize: the caller ends the run with MPI_Abort, which tears it down. */
int coordinator_run(MPI_Comm comm, const run_opts *o, tf_err *e);

#endif
