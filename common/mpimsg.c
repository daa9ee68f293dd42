#include "common/mpimsg.h"

#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "common/clock.h"
#include "common/jsonio.h"

/* The first and the longest sleep between two polls of a wait: an answer that comes soon is
 * seen within tens of microseconds, and none waits more than 1 ms past its arrival (0.2% of a
 * half-second generation, the shortest a GPU makes), for a thousand wake-ups a second. */
#define MPIMSG_POLL_MIN_NS 50000L
#define MPIMSG_POLL_MAX_NS 1000000L

int mpi_check(int rc, const char *call, const char *file, int line, tf_err *e) {
  if (rc == MPI_SUCCESS) return 0;
  char msg[MPI_MAX_ERROR_STRING];
  int len = 0;
  if (MPI_Error_string(rc, msg, &len) != MPI_SUCCESS) snprintf(msg, sizeof msg, "code %d", rc);
  return tf_fail(e, TF_EXIT_FAIL, "%s failed at %s:%d: %s", call, file, line, msg);
}

void mpimsg_init(MPI_Comm comm) { MPI_Comm_set_errhandler(comm, MPI_ERRORS_RETURN); }

int mpimsg_send_text(MPI_Comm comm, int dest, int tag, const char *text, tf_err *e) {
  return MPI_CHECK(MPI_Send(text, (int)strlen(text) + 1, MPI_CHAR, dest, tag, comm), e);
}

int mpimsg_send(MPI_Comm comm, int dest, int tag, const cJSON *obj, tf_err *e) {
  char *text = cJSON_PrintUnformatted(obj);
  if (!text) return tf_fail(e, TF_EXIT_FAIL, "out of memory serialising a message");
  int rc = mpimsg_send_text(comm, dest, tag, text, e);
  cJSON_free(text);
  return rc;
}

/* Wait for a message with MPI_Iprobe and a sleep that doubles from MPIMSG_POLL_MIN_NS to
 * MPIMSG_POLL_MAX_NS: MPI_Probe would spin a whole core, which the measure children and the
 * compile pool of the same node need. 1 once `deadline` (0: none) passed. */
static int probe(MPI_Comm comm, int src, double deadline, MPI_Status *st, tf_err *e) {
  long ns = MPIMSG_POLL_MIN_NS;
  for (;;) {
    int flag = 0;
    if (MPI_CHECK(MPI_Iprobe(src, MPI_ANY_TAG, comm, &flag, st), e)) return -1;
    if (flag) return 0;
    if (deadline > 0 && tf_monotonic_s() >= deadline) return 1;
    struct timespec ts = {0, ns};
    nanosleep(&ts, NULL);
    ns = 2 * ns < MPIMSG_POLL_MAX_NS ? 2 * ns : MPIMSG_POLL_MAX_NS;
  }
}

/* The message `probe` found: received and parsed; its text handed over in *keep when keep
 * is not NULL, else freed. */
static cJSON *receive(MPI_Comm comm, const MPI_Status *st, int *tag, int *from, char **keep,
                      tf_err *e) {
  int count = 0;
  if (MPI_CHECK(MPI_Get_count(st, MPI_CHAR, &count), e)) return NULL;
  char *buf = malloc((size_t)count + 1);
  if (!buf) {
    tf_fail(e, TF_EXIT_FAIL, "out of memory receiving %d bytes", count);
    return NULL;
  }
  if (MPI_CHECK(MPI_Recv(buf, count, MPI_CHAR, st->MPI_SOURCE, st->MPI_TAG, comm,
                         MPI_STATUS_IGNORE), e)) {
    free(buf);
    return NULL;
  }
  buf[count] = '\0';
  *tag = st->MPI_TAG;
  *from = st->MPI_SOURCE;
  cJSON *o = jsonio_parse(buf, "MPI message", e);
  if (o && keep)
    *keep = buf;
  else
    free(buf);
  return o;
}

cJSON *mpimsg_recv(MPI_Comm comm, int src, int *tag, int *from, tf_err *e) {
  MPI_Status st;
  if (probe(comm, src, 0, &st, e)) return NULL;
  return receive(comm, &st, tag, from, NULL, e);
}

cJSON *mpimsg_recv_text(MPI_Comm comm, int src, int *tag, int *from, char **text, tf_err *e) {
  MPI_Status st;
  *text = NULL;
  if (probe(comm, src, 0, &st, e)) return NULL;
  return receive(comm, &st, tag, from, text, e);
}

cJSON *mpimsg_recv_until(MPI_Comm comm, int src, double deadline, int *tag, int *from, int *got,
                         tf_err *e) {
  MPI_Status st;
  int rc = probe(comm, src, deadline, &st, e);
  *got = rc != 1;
  return rc == 0 ? receive(comm, &st, tag, from, NULL, e) : NULL;
}

cJSON *mpimsg_try_recv(MPI_Comm comm, int src, int *tag, int *from, int *got, tf_err *e) {
  MPI_Status st;
  int flag = 0;
  *got = 1;
  if (MPI_CHECK(MPI_Iprobe(src, MPI_ANY_TAG, comm, &flag, &st), e)) return NULL;
  if (!flag) {
    *got = 0;
    return NULL;
  }
  return receive(comm, &st, tag, from, NULL, e);
}

int mpimsg_local_worker_index(MPI_Comm comm, int *index, int *workers_on_node, tf_err *e) {
  int rank;
  MPI_Comm node, workers;
  if (MPI_CHECK(MPI_Comm_rank(comm, &rank), e) ||
      MPI_CHECK(MPI_Comm_split_type(comm, MPI_COMM_TYPE_SHARED, rank, MPI_INFO_NULL, &node), e))
    return -1;
  /* The coordinator takes no GPU: split it out so worker indices start at 0 on every node. */
  int rc = MPI_CHECK(MPI_Comm_split(node, rank == 0 ? MPI_UNDEFINED : 0, rank, &workers), e);
  MPI_Comm_free(&node);
  if (rc) return -1;
  *index = -1;
  *workers_on_node = 0;
  if (workers == MPI_COMM_NULL) return 0;
  rc = MPI_CHECK(MPI_Comm_rank(workers, index), e) ||
       MPI_CHECK(MPI_Comm_size(workers, workers_on_node), e);
  MPI_Comm_free(&workers);
  return rc ? -1 : 0;
}
