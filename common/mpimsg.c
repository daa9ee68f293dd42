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

/* The table of doorbells from every rank's {pid space, pid, armed, receipts, eager limit}. */
static void fill_bells(const unsigned long long *all, int size, int rank) {
  const unsigned long long *me = all + 5 * rank;
  int by_all = (int)me[2];
  for (int r = 0; r < size; r++) {
    const unsigned long long *it = all + 5 * r;
    int near = r != rank && it[0] == me[0];
    bells.ring[r] = near && it[2] ? (pid_t)it[1] : 0;
    bells.receipt[r] = near && it[2] && it[3] ? (pid_t)it[1] : 0;
    bells.rung_by[r] = near && me[2];
    bells.receipted_by[r] = near && me[2] && me[3];
    if (r != rank && !bells.rung_by[r]) by_all = 0;
  }
  bells.rung_by_all = by_all;
}

/* A control variable of the MPI tool interface (MPI_T initialised): its value into buf, of
 * `size` bytes (a number of 4 or 8 bytes, or a string); 0 on success. Open MPI gives a string
 * a count of 0 and copies it whole: a string's buf must hold any value (MPIMSG_CVAR_TEXT). */
#define MPIMSG_CVAR_TEXT 4096
static int read_cvar(const char *name, void *buf, int size) {
  int idx, count = 0, verbosity, bind, scope, bytes = 0, rc = -1;
  MPI_Datatype type;
  MPI_T_cvar_handle h;
  if (MPI_T_cvar_get_index(name, &idx) != MPI_SUCCESS ||
      MPI_T_cvar_get_info(idx, NULL, NULL, &verbosity, &type, NULL, NULL, NULL, &bind, &scope) !=
          MPI_SUCCESS ||
      MPI_Type_size(type, &bytes) != MPI_SUCCESS ||
      MPI_T_cvar_handle_alloc(idx, NULL, &h, &count) != MPI_SUCCESS)
    return -1;
  if (type == MPI_CHAR ? count < size && size >= MPIMSG_CVAR_TEXT : count == 1 && bytes == size) {
    memset(buf, 0, (size_t)size);
    rc = MPI_T_cvar_read(h, buf) == MPI_SUCCESS ? 0 : -1;
  }
  MPI_T_cvar_handle_free(&h);
  return rc;
}

/* Whether point-to-point messages go through Open MPI's ob1 (its shared-memory transport within
 * a node), from the `pml` requested: `ob1`, or a list that excludes `ucx` (Debian's and
 * Ubuntu's default, `^ucx`). Where UCX may carry them, its own thresholds apply. */
static int ob1_requested(void) {
  char pml[MPIMSG_CVAR_TEXT];
  if (read_cvar("pml", pml, (int)sizeof pml)) return 0;
  return strcmp(pml, "ob1") == 0 || (pml[0] == '^' && strstr(pml, "ucx") != NULL);
}

/* Open MPI's shared-memory eager limit, through the MPI tool interface (the transport is
 * `vader` in Open MPI 4, `sm` in 5): 0 where neither is there, it cannot be read, or ob1 may
 * not be the messages' path. */
static size_t eager_limit(void) {
  static const char *const names[] = {"btl_vader_eager_limit", "btl_sm_eager_limit"};
  int provided, level = MPI_THREAD_SINGLE;
  MPI_Query_thread(&level); /* MPI_T takes it as the thread level MPI reports */
  if (MPI_T_init_thread(level, &provided) != MPI_SUCCESS) return 0;
  size_t limit = 0;
  for (size_t i = 0; i < sizeof names / sizeof names[0] && limit == 0 && ob1_requested(); i++) {
    uint64_t v8;
    uint32_t v4;
    if (read_cvar(names[i], &v8, 8) == 0)
      limit = (size_t)v8;
    else if (read_cvar(names[i], &v4, 4) == 0)
      limit = v4;
  }
  MPI_T_finalize();
  return limit;
}

/* The eager limit every rank read, or 0 (every message receipted) where any read another: a
 * sender and its receiver must judge a message alike, or a receipt it needs is not rung. */
static size_t common_limit(const unsigned long long *all, int size) {
  for (int r = 1; r < size; r++)
    if (all[5 * r + 4] != all[4]) return 0;
  return (size_t)all[4];
}

int mpimsg_doorbells(MPI_Comm comm, int receipts, tf_err *e) {
  int size, rank;
  if (MPI_CHECK(MPI_Comm_size(comm, &size), e) || MPI_CHECK(MPI_Comm_rank(comm, &rank), e))
    return -1;
  unsigned long long mine[5] = {doorbell_space(), (unsigned long long)getpid(),
                                (unsigned long long)doorbell_armed(), receipts != 0,
                                eager_limit()};
  unsigned long long *all = malloc(5 * sizeof *all * (size_t)size);
  free(bells.ring), free(bells.rung_by), free(bells.receipt), free(bells.receipted_by);
  bells.comm = MPI_COMM_NULL;
  bells.ring = calloc((size_t)size, sizeof *bells.ring);
  bells.receipt = calloc((size_t)size, sizeof *bells.receipt);
  bells.rung_by = calloc((size_t)size, sizeof *bells.rung_by);
  bells.receipted_by = calloc((size_t)size, sizeof *bells.receipted_by);
  int rc = all && bells.ring && bells.receipt && bells.rung_by && bells.receipted_by
               ? MPI_CHECK(MPI_Allgather(mine, 5, MPI_UNSIGNED_LONG_LONG, all, 5,
                                         MPI_UNSIGNED_LONG_LONG, comm), e)
               : tf_fail(e, TF_EXIT_FAIL, "out of memory");
  if (rc == 0) {
    fill_bells(all, size, rank);
    bells.comm = comm, bells.size = size, bells.rank = rank;
    bells.eager = common_limit(all, size);
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

/* Room for MPI's own header within the eager limit: Open MPI 4.1's is 56 bytes; the rest is a
 * margin for other versions and builds (a receipt too many costs a wake-up, one too few the
 * safety net's wait). */
#define MPIMSG_HEADER_BYTES 512

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

/* Polls, backing off from 20 us to MPIMSG_POLL_MAX_NS; where the receiver rings receipts or
 * any message to this rank rings, a ring cuts a sleep short (a large message completes only
 * as both sides take turns). Never one long sleep on a receipt: a send waited for after its
 * receiver took it (the worker's last result) has had its receipts taken by other waits. */
int mpimsg_wait(mpimsg_out *out, tf_err *e) {
  long ns = 20000;
  int rc = 0;
  int bell = out->text && (receipted_by(out->comm, out->dest, out->bytes) ||
                           rung_by(out->comm, out->dest));
  while (out->text) {
    int done = 0;
    if ((rc = MPI_CHECK(MPI_Test(&out->req, &done, MPI_STATUS_IGNORE), e)) || done) {
      cJSON_free(out->text);
      out->text = NULL;
      break;
    }
    if (bell) {
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
