/* mpimsg: JSON messages over MPI point-to-point, one tag per kind.
 *
 * The farm's ranks exchange small JSON objects (common/msg.h shapes). MPI
 * errors are returned, not fatal: mpimsg_init sets MPI_ERRORS_RETURN on the
 * communicator, and MPI_CHECK turns a failing call into a tf_err that names
 * the call and MPI's own error string. */
#ifndef TF_MPIMSG_H
#define TF_MPIMSG_H

#include <cjson/cJSON.h>
#include <mpi.h>

#include "common/err.h"

enum { TAG_HELLO = 1, TAG_JOB = 2, TAG_RESULT = 3, TAG_STOP = 4, TAG_AUDIT = 5 };

int mpi_check(int rc, const char *call, const char *file, int line, tf_err *e);
#define MPI_CHECK(call, e) mpi_check((call), #call, __FILE__, __LINE__, (e))

void mpimsg_init(MPI_Comm comm);

/* Send obj (serialised unformatted) to dest with tag. */
int mpimsg_send(MPI_Comm comm, int dest, int tag, const cJSON *obj, tf_err *e);

/* Blocking receive from `src` (or MPI_ANY_SOURCE) of any tag; returns the parsed object
 * (caller deletes) and sets *tag and *from. Waits by polling with a short sleep, not by
 * spinning, so a waiting rank leaves its core to the measure children. */
cJSON *mpimsg_recv(MPI_Comm comm, int src, int *tag, int *from, tf_err *e);

/* Node-local index of this worker among the workers of its node (rank 0, the coordinator,
 * excluded): collective over comm, every rank must call it. Coordinator gets -1. */
int mpimsg_local_worker_index(MPI_Comm comm, int *index, int *workers_on_node, tf_err *e);

#endif
