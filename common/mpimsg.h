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

/* Send obj, printed unformatted (cJSON_PrintUnformatted), to dest with tag: MPI_Send, which
 * returns once the text is on its way or taken. Every message of the farm goes to a rank
 * that is waiting for it or will take it from its loop (a worker waits for its job, the
 * coordinator takes results from any worker), so a blocking send deadlocks nowhere. */
int mpimsg_send(MPI_Comm comm, int dest, int tag, const cJSON *obj, tf_err *e);

/* mpimsg_send of a message already written (NUL-terminated; the caller keeps it): for a relay
 * that passes a message on without parsing and printing it again. */
int mpimsg_send_text(MPI_Comm comm, int dest, int tag, const char *text, tf_err *e);

/* Blocking receive from `src` (or MPI_ANY_SOURCE) of any tag; returns the parsed object
 * (caller deletes) and sets *tag and *from. Waits by MPI_Iprobe and a short sleep that
 * doubles from 50 us to 1 ms, never by spinning, so a waiting rank leaves its core to the
 * measure children and the compile pool. */
cJSON *mpimsg_recv(MPI_Comm comm, int src, int *tag, int *from, tf_err *e);

/* mpimsg_recv that also hands over the message's text (*text, malloc'd, the caller frees),
 * for a relay that passes it on as it came. */
cJSON *mpimsg_recv_text(MPI_Comm comm, int src, int *tag, int *from, char **text, tf_err *e);

/* mpimsg_recv that gives up at `deadline` (CLOCK_MONOTONIC seconds; 0: never): NULL with *got
 * 0 when nothing came by then, NULL with *got 1 and e on an error. */
cJSON *mpimsg_recv_until(MPI_Comm comm, int src, double deadline, int *tag, int *from, int *got,
                         tf_err *e);

/* A message already there from `src` (or MPI_ANY_SOURCE), without waiting: the parsed
 * object (*tag, *from set), or NULL with *got 0 when none is there (and NULL with *got 1 and
 * e on an error). */
cJSON *mpimsg_try_recv(MPI_Comm comm, int src, int *tag, int *from, int *got, tf_err *e);

/* Node-local index of this worker among the workers of its node (rank 0, the coordinator,
 * excluded): collective over comm, every rank must call it. Coordinator gets -1. */
int mpimsg_local_worker_index(MPI_Comm comm, int *index, int *workers_on_node, tf_err *e);

#endif
