#include "common/mpimsg.h"

#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "common/jsonio.h"

/* The longest sleep between two polls. */
#define MPIMSG_POLL_MAX_NS 4000000L

int mpi_check(int rc, const char *call, const char *file, int line, tf_err *e) {
  if (rc == MPI_SUCCESS) return 0;
  char msg[MPI_MAX_ERROR_STRING];
  int len = 0;
  if (MPI_Error_string(rc, msg, &len) != MPI_SUCCESS) snprintf(msg, sizeof msg, "code %d", rc);
  return tf_fail(e, TF_EXIT_FAIL, "%s failed at %s:%d: %s", call, file, line, msg);
}

void mpimsg_init(MPI_Comm comm) { MPI_Comm_set_errhandler(comm, MPI_ERRORS_RETURN); }

int mpimsg_isend(MPI_Comm comm, int dest, int tag, const cJSON *obj, mpimsg_out *out,
                 tf_err *e) {
  if (mpimsg_wait(out, e)) return -1;
  char *text = cJSON_PrintUnformatted(obj);
  if (!text) return tf_fail(e, TF_EXIT_FAIL, "out of memory serialising a message");
  size_t n = strlen(text) + 1;
  if (MPI_CHECK(MPI_Isend(text, (int)n, MPI_CHAR, dest, tag, comm, &out->req), e)) {
    cJSON_free(text);
    return -1;
  }
  out->text = text;
  return 0;
}

int mpimsg_wait(mpimsg_out *out, tf_err *e) {
  long ns = 20000;
  int rc = 0;
  while (out->text) {
    int done = 0;
    if ((rc = MPI_CHECK(MPI_Test(&out->req, &done, MPI_STATUS_IGNORE), e)) || done) {
      cJSON_free(out->text);
      out->text = NULL;
      break;
    }
    struct timespec ts = {0, ns};
    nanosleep(&ts, NULL);
    ns = 2 * ns < MPIMSG_POLL_MAX_NS ? 2 * ns : MPIMSG_POLL_MAX_NS;
  }
  return rc;
}

int mpimsg_send(MPI_Comm comm, int dest, int tag, const cJSON *obj, tf_err *e) {
  mpimsg_out out = {.text = NULL};
  return mpimsg_isend(comm, dest, tag, obj, &out, e) || mpimsg_wait(&out, e) ? -1 : 0;
}

static double monotonic_s(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

/* Wait for a message without spinning: MPI_Probe busy-polls a whole core, and the
 * coordinator and idle workers share their cores with the measure children whose timings
 * they collect. Backs off from 50 us to MPIMSG_POLL_MAX_NS: an answer that comes soon is
 * seen soon, and one that takes long (the coordinator busy with many devices) costs few
 * wake-ups, each a system call and a switch of process. 1 once `deadline` (0: none) passed. */
static int probe_politely(MPI_Comm comm, int src, double deadline, MPI_Status *st, tf_err *e) {
  long ns = 50000;
  for (;;) {
    int flag = 0;
    if (MPI_CHECK(MPI_Iprobe(src, MPI_ANY_TAG, comm, &flag, st), e)) return -1;
    if (flag) return 0;
    if (deadline > 0 && monotonic_s() >= deadline) return 1;
    struct timespec ts = {0, ns};
    nanosleep(&ts, NULL);
    ns = 2 * ns < MPIMSG_POLL_MAX_NS ? 2 * ns : MPIMSG_POLL_MAX_NS;
  }
}

/* The message `probed` found: received and parsed. */
static cJSON *receive(MPI_Comm comm, const MPI_Status *st, int *tag, int *from, tf_err *e) {
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
  free(buf);
  return o;
}

cJSON *mpimsg_recv(MPI_Comm comm, int src, int *tag, int *from, tf_err *e) {
  MPI_Status st;
  if (probe_politely(comm, src, 0, &st, e)) return NULL;
  return receive(comm, &st, tag, from, e);
}

cJSON *mpimsg_recv_until(MPI_Comm comm, int src, double deadline, int *tag, int *from, int *got,
                         tf_err *e) {
  MPI_Status st;
  int rc = probe_politely(comm, src, deadline, &st, e);
  *got = rc != 1;
  return rc == 0 ? receive(comm, &st, tag, from, e) : NULL;
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
  return receive(comm, &st, tag, from, e);
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
