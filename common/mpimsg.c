#include "common/mpimsg.h"

#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "common/jsonio.h"

int mpi_check(int rc, const char *call, const char *file, int line, tf_err *e) {
  if (rc == MPI_SUCCESS) return 0;
  char msg[MPI_MAX_ERROR_STRING];
  int len = 0;
  if (MPI_Error_string(rc, msg, &len) != MPI_SUCCESS) snprintf(msg, sizeof msg, "code %d", rc);
  return tf_fail(e, TF_EXIT_FAIL, "%s failed at %s:%d: %s", call, file, line, msg);
}

void mpimsg_init(MPI_Comm comm) { MPI_Comm_set_errhandler(comm, MPI_ERRORS_RETURN); }

int mpimsg_send(MPI_Comm comm, int dest, int tag, const cJSON *obj, tf_err *e) {
  char *text = cJSON_PrintUnformatted(obj);
  if (!text) return tf_fail(e, TF_EXIT_FAIL, "out of memory serialising a message");
  size_t n = strlen(text) + 1;
  int rc = MPI_CHECK(MPI_Send(text, (int)n, MPI_CHAR, dest, tag, comm), e);
  cJSON_free(text);
  return rc;
}

/* Wait for a message without spinning: MPI_Probe busy-polls a whole core, and the
 * coordinator and idle workers share their cores with the measure children whose timings
 * they collect. Backs off from 50 us to 1 ms; a generation takes far longer than that. */
static int probe_politely(MPI_Comm comm, int src, MPI_Status *st, tf_err *e) {
  long ns = 50000;
  for (;;) {
    int flag = 0;
    if (MPI_CHECK(MPI_Iprobe(src, MPI_ANY_TAG, comm, &flag, st), e)) return -1;
    if (flag) return 0;
    struct timespec ts = {0, ns};
    nanosleep(&ts, NULL);
    if (ns < 1000000) ns *= 2;
  }
}

cJSON *mpimsg_recv(MPI_Comm comm, int src, int *tag, int *from, tf_err *e) {
  MPI_Status st;
  int count = 0;
  if (probe_politely(comm, src, &st, e) || MPI_CHECK(MPI_Get_count(&st, MPI_CHAR, &count), e))
    return NULL;
  char *buf = malloc((size_t)count + 1);
  if (!buf) {
    tf_fail(e, TF_EXIT_FAIL, "out of memory receiving %d bytes", count);
    return NULL;
  }
  if (MPI_CHECK(MPI_Recv(buf, count, MPI_CHAR, st.MPI_SOURCE, st.MPI_TAG, comm, MPI_STATUS_IGNORE),
                e)) {
    free(buf);
    return NULL;
  }
  buf[count] = '\0';
  *tag = st.MPI_TAG;
  *from = st.MPI_SOURCE;
  cJSON *o = jsonio_parse(buf, "MPI message", e);
  free(buf);
  return o;
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
