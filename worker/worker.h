/* worker: ranks 1..G. Each binds one GPU by its node-local worker index,
 * keeps one measure child alive for it, and relays jobs and results between
 * the coordinator and the child. It never exits because a child failed: a
 * crash, a sticky error or a hang past the job's deadline becomes a `fault`
 * result naming the cause, and the next job gets a fresh child. While the
 * child measures, the worker's compile pool (worker/compile_pool.h) compiles
 * the programs of the jobs the coordinator listed as likely next.
 * Run-ahead: a job may come with the job that follows it if it is rejected
 * ("next"); the worker writes that one to the child behind it, so the child
 * goes on without waiting for the decision, and holds it until the
 * coordinator says "go" (its answer is then passed on) or sends another job
 * (the child ends the one ahead at its next round, and its answer is thrown
 * away). A job ahead lost with its child is run afresh on "go". */
#ifndef TF_WORKER_H
#define TF_WORKER_H

#include <mpi.h>

#include "common/err.h"

typedef struct worker_opts {
  const char *exe;      /* the tunefarm binary, to start `tunefarm measure` */
  const char *backend;  /* a backend's name (worker/backend.h); NULL: the measure child
                         * chooses (a GPU where it sees one), and the worker's hello says so */
  int device;           /* node-local worker index = device ordinal */
  double hello_s;       /* how long the child may take to open its device */
  int compile_jobs;     /* compiles ahead at once (worker/compile_pool.h); -1: the node's cores
                         * per worker less one; 0: none */
  int workers_on_node;  /* for that default */
  int quiet;            /* no line on stderr at the end (the compile pool's figures) */
} worker_opts;

/* Serve the coordinator (rank 0 of comm) until STOP. */
int worker_run(MPI_Comm comm, const worker_opts *o, tf_err *e);

#endif
