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

/* Doorbells (common/doorbell.h), collective over comm: every rank tells the others its pid and
 * where it runs. After it, a send on comm to a rank in the same pid space rings that rank, and
 * a rank waiting for messages that only such ranks send sleeps until rung instead of polling
 * (a wait that no ring ends still looks every MPIMSG_RING_NET_S: the safety net). A rank that
 * asks for `receipts` is rung when a message of its that needs it is taken, before and after
 * the receive: a message above the transport's eager limit moves only while its sender calls
 * MPI, so a sender asleep on its doorbell (waiting for its next message, or in mpimsg_wait)
 * must be woken, or the message waits for the safety net. A message within the limit is in
 * shared memory already and needs nothing of its sender; ringing for it only woke the sender
 * for nothing, three times per decision in a farm of 64 simulated workers. The limit is read
 * from Open MPI's shared-memory transport (MPI_T) where the `pml` asked for is ob1 (or a list
 * that excludes UCX, Debian's default); where it cannot be read, UCX may carry the messages,
 * or the ranks read different limits, every message is receipted. Every rank of `tunefarm run` asks for receipts. Only ranks whose process blocked
 * the doorbell before MPI_Init (doorbell_block) are rung; without this call every wait polls.
 * One communicator at a time: a later call replaces the table. */
int mpimsg_doorbells(MPI_Comm comm, int receipts, tf_err *e);

/* A message on its way. A message of more than a few hundred bytes (a job, a result) completes
 * only once the receiver takes it, and MPI_Send waits for that by spinning, which takes the
 * core from the very ranks it waits for: a farm of 64 simulated workers on two cores spent 790
 * of its 800 s of CPU spinning. So sends start with mpimsg_isend and end with mpimsg_wait,
 * which polls with a short sleep that the receiver's receipt cuts short where it rings one;
 * the sender does other work meanwhile, or waits for its next message, which also completes
 * the send as it polls. Ownership: the struct holds the text until the send completes;
 * zero-initialise it. */
typedef struct mpimsg_out {
  MPI_Request req;
  char *text;           /* NULL: nothing on its way */
  MPI_Comm comm;        /* where it goes: whether its receiver rings when it takes it */
  int dest;
  size_t bytes;         /* the message's size: whether its receiver rings a receipt */
} mpimsg_out;

int mpimsg_isend(MPI_Comm comm, int dest, int tag, const cJSON *obj, mpimsg_out *out, tf_err *e);
/* mpimsg_isend of a message already written: takes text (NUL-terminated, from malloc or
 * cJSON's printers: cJSON_free releases it), also on failure. For a relay that passes a
 * message on without parsing and printing it again. */
int mpimsg_isend_text(MPI_Comm comm, int dest, int tag, char *text, mpimsg_out *out, tf_err *e);

/* Complete out's send, if one is on its way (polling with a short sleep, not spinning). */
int mpimsg_wait(mpimsg_out *out, tf_err *e);

/* Send obj (serialised unformatted) to dest with tag: mpimsg_isend, then mpimsg_wait. */
int mpimsg_send(MPI_Comm comm, int dest, int tag, const cJSON *obj, tf_err *e);

/* Blocking receive from `src` (or MPI_ANY_SOURCE) of any tag; returns the parsed object
 * (caller deletes) and sets *tag and *from. Waits on the doorbell where the senders ring it,
 * else by polling with a short sleep; never by spinning, so a waiting rank leaves its core to the measure children. */
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
