#include "common/mpimsg.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "common/clock.h"
#include "common/doorbell.h"
#include "common/jsonio.h"

/* The longest sleep between two polls. */
#define MPIMSG_POLL_MAX_NS 4000000L
/* The longest sleep on a doorbell that should ring: a look now and then in case a ring went
 * astray (two pid spaces whose keys collide), never needed otherwise. */
#define MPIMSG_RING_NET_S 0.25

/* Each rank of the doorbells' communicator: its pid where a send must ring it, else 0 (another
 * node or pid space, or a rank that cannot wait on its doorbell). */
static struct {
  MPI_Comm comm;
  int size, rank;
  pid_t *ring;       /* per rank */
  int rung_by_all;   /* this rank is rung by every other rank */
  int *rung_by;      /* per rank: 1 when that rank's sends ring this one */
  pid_t *receipt;    /* per rank: its pid where it asked to be rung when its messages are
                      * taken, else 0 */
  int *receipted_by; /* per rank: 1 when that rank rings this one as it takes its messages */
  size_t eager;      /* the shared-memory transport's eager limit; 0: unknown */
} bells = {.comm = MPI_COMM_NULL};

int mpi_check(int rc, const char *call, const char *file, int line, tf_err *e) {
  if (rc == MPI_SUCCESS) return 0;
  char msg[MPI_MAX_ERROR_STRING];
  int len = 0;
  if (MPI_Error_string(rc, msg, &len) != MPI_SUCCESS) snprintf(msg, sizeof msg, "code %d", rc);
  return tf_fail(e, TF_EXIT_FAIL, "%s failed at %s:%d: %s", call, file, line, msg);
}

void mpimsg_init(MPI_Comm comm) { MPI_Comm_set_errhandler(comm, MPI_ERRORS_RETURN); }

/* The table of doorbells from every rank's {pid space, pid, armed, receipts}. */
static void fill_bells(const unsigned long long *all, int size, int rank) {
  const unsigned long long *me = all + 4 * rank;
  int by_all = (int)me[2];
  for (int r = 0; r < size; r++) {
    const unsigned long long *it = all + 4 * r;
    int near = r != rank && it[0] == me[0];
    bells.ring[r] = near && it[2] ? (pid_t)it[1] : 0;
    bells.receipt[r] = near && it[2] && it[3] ? (pid_t)it[1] : 0;
    bells.rung_by[r] = near && me[2];
    bells.receipted_by[r] = near && me[2] && me[3];
    if (r != rank && !bells.rung_by[r]) by_all = 0;
  }
  bells.rung_by_all = by_all;
}

/* Open MPI's shared-memory eager limit, through the MPI tool interface (the transport is
 * `vader` in Open MPI 4, `sm` in 5): 0 where neither is there or it cannot be read. */
static size_t eager_limit(void) {
  static const char *const names[] = {"btl_vader_eager_limit", "btl_sm_eager_limit"};
  int provided, idx = -1, count = 0, verbosity, bind, scope, bytes = 0;
  if (MPI_T_init_thread(MPI_THREAD_SINGLE, &provided) != MPI_SUCCESS) return 0;
  for (size_t i = 0; i < sizeof names / sizeof names[0] && idx < 0; i++)
    if (MPI_T_cvar_get_index(names[i], &idx) != MPI_SUCCESS) idx = -1;
  MPI_Datatype type;
  MPI_T_cvar_handle h;
  uint64_t v8 = 0;
  uint32_t v4 = 0;
  size_t limit = 0;
  if (idx >= 0 &&
      MPI_T_cvar_get_info(idx, NULL, NULL, &verbosity, &type, NULL, NULL, NULL, &bind, &scope) ==
          MPI_SUCCESS &&
      MPI_Type_size(type, &bytes) == MPI_SUCCESS &&
      MPI_T_cvar_handle_alloc(idx, NULL, &h, &count) == MPI_SUCCESS) {
    if (count == 1 && bytes == 8 && MPI_T_cvar_read(h, &v8) == MPI_SUCCESS) limit = (size_t)v8;
    if (count == 1 && bytes == 4 && MPI_T_cvar_read(h, &v4) == MPI_SUCCESS) limit = v4;
    MPI_T_cvar_handle_free(&h);
  }
  MPI_T_finalize();
  return limit;
}

int mpimsg_doorbells(MPI_Comm comm, int receipts, tf_err *e) {
  int size, rank;
  if (MPI_CHECK(MPI_Comm_size(comm, &size), e) || MPI_CHECK(MPI_Comm_rank(comm, &rank), e))
    return -1;
  unsigned long long mine[4] = {doorbell_space(), (unsigned long long)getpid(),
                                (unsigned long long)doorbell_armed(), receipts != 0};
  unsigned long long *all = malloc(4 * sizeof *all * (size_t)size);
  free(bells.ring), free(bells.rung_by), free(bells.receipt), free(bells.receipted_by);
  bells.comm = MPI_COMM_NULL;
  bells.ring = calloc((size_t)size, sizeof *bells.ring);
  bells.receipt = calloc((size_t)size, sizeof *bells.receipt);
  bells.rung_by = calloc((size_t)size, sizeof *bells.rung_by);
  bells.receipted_by = calloc((size_t)size, sizeof *bells.receipted_by);
  int rc = all && bells.ring && bells.receipt && bells.rung_by && bells.receipted_by
               ? MPI_CHECK(MPI_Allgather(mine, 4, MPI_UNSIGNED_LONG_LONG, all, 4,
                                         MPI_UNSIGNED_LONG_LONG, comm), e)
               : tf_fail(e, TF_EXIT_FAIL, "out of memory");
  if (rc == 0) {
    fill_bells(all, size, rank);
    bells.comm = comm, bells.size = size, bells.rank = rank;
    bells.eager = eager_limit();
  }
  free(all);
  return rc;
}

/* Whether a message from src (or MPI_ANY_SOURCE) on comm will ring this rank's doorbell. */
static int rung_by(MPI_Comm comm, int src) {
  if (comm != bells.comm) return 0;
  if (src == MPI_ANY_SOURCE) return bells.rung_by_all;
  return src >= 0 && src < bells.size && bells.rung_by[src];
}

static void ring(MPI_Comm comm, int dest) {
  if (comm == bells.comm && dest >= 0 && dest < bells.size) doorbell_ring(bells.ring[dest]);
}

/* Room for MPI's own header within the eager limit (Open MPI's is under 64 bytes). */
#define MPIMSG_HEADER_BYTES 64

/* Whether a message of `bytes` needs its sender to move: above the eager limit, or any where
 * the limit is unknown. Sender and receiver judge alike: both read the same limit. */
static int needs_receipt(size_t bytes) {
  return bells.eager == 0 || bytes + MPIMSG_HEADER_BYTES > bells.eager;
}

/* Tell src that its message of `bytes` is being taken, where it needs its sender. */
static void receipt(MPI_Comm comm, int src, size_t bytes) {
  if (comm == bells.comm && src >= 0 && src < bells.size && needs_receipt(bytes))
    doorbell_ring(bells.receipt[src]);
}

static int receipted_by(MPI_Comm comm, int dest, size_t bytes) {
  return comm == bells.comm && dest >= 0 && dest < bells.size && bells.receipted_by[dest] &&
         needs_receipt(bytes);
}

int mpimsg_isend_text(MPI_Comm comm, int dest, int tag, char *text, mpimsg_out *out,
                      tf_err *e) {
  if (mpimsg_wait(out, e)) {
    cJSON_free(text);
    return -1;
  }
  size_t n = strlen(text) + 1;
  if (MPI_CHECK(MPI_Isend(text, (int)n, MPI_CHAR, dest, tag, comm, &out->req), e)) {
    cJSON_free(text);
    return -1;
  }
  out->text = text;
  out->comm = comm;
  out->dest = dest;
  out->bytes = n;
  ring(comm, dest); /* after the send has started: the receiver's probe must find it */
  return 0;
}

int mpimsg_isend(MPI_Comm comm, int dest, int tag, const cJSON *obj, mpimsg_out *out,
                 tf_err *e) {
  char *text = jsonio_print(obj);
  if (!text) return tf_fail(e, TF_EXIT_FAIL, "out of memory serialising a message");
  return mpimsg_isend_text(comm, dest, tag, text, out, e);
}

/* Where the receiver rings as it takes the message, sleeps until it does, then polls (a large
 * message completes only as both sides take turns); elsewhere polls, backing off from 20 us,
 * and a ring cuts a sleep short. */
int mpimsg_wait(mpimsg_out *out, tf_err *e) {
  long ns = 20000;
  int rc = 0, rang = 0;
  int bell = out->text && receipted_by(out->comm, out->dest, out->bytes);
  int rung = out->text && rung_by(out->comm, out->dest);
  while (out->text) {
    int done = 0;
    if ((rc = MPI_CHECK(MPI_Test(&out->req, &done, MPI_STATUS_IGNORE), e)) || done) {
      cJSON_free(out->text);
      out->text = NULL;
      break;
    }
    if (bell && !rang) {
      rang = doorbell_wait(MPIMSG_RING_NET_S);
      continue;
    }
    if (bell || rung) {
      doorbell_wait(1e-9 * (double)ns);
    } else {
      struct timespec ts = {0, ns};
      nanosleep(&ts, NULL);
    }
    ns = 2 * ns < MPIMSG_POLL_MAX_NS ? 2 * ns : MPIMSG_POLL_MAX_NS;
  }
  return rc;
}

int mpimsg_send(MPI_Comm comm, int dest, int tag, const cJSON *obj, tf_err *e) {
  mpimsg_out out = {.text = NULL};
  return mpimsg_isend(comm, dest, tag, obj, &out, e) || mpimsg_wait(&out, e) ? -1 : 0;
}

/* Wait for a message without spinning: MPI_Probe busy-polls a whole core, and the
 * coordinator and idle workers share their cores with the measure children whose timings
 * they collect. Where the senders ring, sleeps until they do; after a ring, or where they do
 * not, polls backing off from 50 us to MPIMSG_POLL_MAX_NS: an answer that comes soon is seen
 * soon, and one that takes long (the coordinator busy with many devices) costs few wake-ups,
 * each a system call and a switch of process. (A ring can come before its message shows: a
 * send that found the receiver's queue full is delivered when its sender next calls MPI.)
 * 1 once `deadline` (0: none) passed. */
static int probe_politely(MPI_Comm comm, int src, double deadline, MPI_Status *st, tf_err *e) {
  long ns = 50000;
  int bell = rung_by(comm, src), rang = 0;
  for (;;) {
    int flag = 0;
    if (MPI_CHECK(MPI_Iprobe(src, MPI_ANY_TAG, comm, &flag, st), e)) return -1;
    if (flag) return 0;
    double now = deadline > 0 || bell ? tf_monotonic_s() : 0;
    if (deadline > 0 && now >= deadline) return 1;
    if (bell && !rang) {
      double wait = MPIMSG_RING_NET_S;
      if (deadline > 0 && deadline - now < wait) wait = deadline - now;
      rang = doorbell_wait(wait);
      continue;
    }
    if (bell) { /* rung: the message is on its way; a new ring cuts the sleep short */
      doorbell_wait(1e-9 * (double)ns);
    } else {
      struct timespec ts = {0, ns};
      nanosleep(&ts, NULL);
    }
    ns = 2 * ns < MPIMSG_POLL_MAX_NS ? 2 * ns : MPIMSG_POLL_MAX_NS;
  }
}

/* The message `probed` found: received and parsed; its text handed over in *keep when keep
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
  receipt(comm, st->MPI_SOURCE, (size_t)count); /* a large message needs its sender now */
  int rc = MPI_CHECK(MPI_Recv(buf, count, MPI_CHAR, st->MPI_SOURCE, st->MPI_TAG, comm,
                              MPI_STATUS_IGNORE), e);
  receipt(comm, st->MPI_SOURCE, (size_t)count); /* its send can complete */
  if (rc) {
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
  if (probe_politely(comm, src, 0, &st, e)) return NULL;
  return receive(comm, &st, tag, from, NULL, e);
}

cJSON *mpimsg_recv_text(MPI_Comm comm, int src, int *tag, int *from, char **text, tf_err *e) {
  MPI_Status st;
  *text = NULL;
  if (probe_politely(comm, src, 0, &st, e)) return NULL;
  return receive(comm, &st, tag, from, text, e);
}

cJSON *mpimsg_recv_until(MPI_Comm comm, int src, double deadline, int *tag, int *from, int *got,
                         tf_err *e) {
  MPI_Status st;
  int rc = probe_politely(comm, src, deadline, &st, e);
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
