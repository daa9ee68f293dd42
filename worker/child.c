#include "worker/child.h"

#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <pthread.h>
#include <signal.h>
#include <time.h>
#include <unistd.h>

#include "common/clock.h"
#include "common/jsonio.h"
#include "common/msg.h"
#include "worker/backend.h"
#include "worker/cpus.h"
#include "worker/protocol.h"

#define CHILD_EXIT_STICKY 3
#define CHILD_MAX_LINE (4L * 1024 * 1024)

typedef struct child_opts {
  const char *backend;
  int device;
  int instance;
  char fallback[256]; /* why it chose the simulated device itself; "" when asked for one */
} child_opts;

static void usage(FILE *f) {
  fprintf(f,
          "usage: tunefarm measure [--backend cuda|sim] [--device N] [--instance N]\n"
          "\n"
          "Measure jobs on one device: one JSON object per line on stdin, one result per\n"
          "line on stdout. {\"type\":\"hello\"} answers with the device record. A ledger\n"
          "record's job reruns from the project root (or with TUNEFARM_ROOT set to it):\n"
          "  jq -c .job LEDGER.jsonl | sed -n 3p | tunefarm measure\n"
          "\n"
          "  --backend B   cuda (the GPU) or sim (the simulated device); default: cuda\n"
          "                where a GPU is visible, else sim (said on stderr)\n"
          "  --device N    device ordinal among the visible ones (default 0); where\n"
          "                one GPU is visible, any N opens it, as ordinal 0\n"
          "  --instance N  which measure process of its worker this is (the worker\n"
          "                counts them from 1; 0 standalone); results carry it as\n"
          "                'child', and the simulated device draws its placement from it\n"
          "  -h, --help    this text\n"
          "Exit status: 0 at end of input, 2 bad usage, 3 after a job that left the\n"
          "device unusable or found no device (the result says why).\n");
}

static int parse_args(int argc, char **argv, child_opts *o) {
  static const struct option longs[] = {{"backend", required_argument, 0, 'b'},
                                         {"device", required_argument, 0, 'd'},
                                         {"instance", required_argument, 0, 'i'},
                                         {"help", no_argument, 0, 'h'},
                                         {0, 0, 0, 0}};
  int c;
  optind = 1;
  while ((c = getopt_long(argc, argv, "b:d:i:h", longs, NULL)) != -1) {
    char *end;
    switch (c) {
      case 'b': o->backend = optarg; break;
      case 'd':
        o->device = (int)strtol(optarg, &end, 10);
        if (*end || o->device < 0) {
          fprintf(stderr, "tunefarm measure: --device wants a non-negative integer, not '%s'\n",
                  optarg);
          return 2;
        }
        break;
      case 'i':
        o->instance = (int)strtol(optarg, &end, 10);
        if (*end || !optarg[0] || o->instance < 0 || o->instance > 1000000000) {
          fprintf(stderr, "tunefarm measure: --instance wants a non-negative integer, not '%s'\n",
                  optarg);
          return 2;
        }
        break;
      case 'h': usage(stdout); return 1;
      default: usage(stderr); return 2;
    }
  }
  if (optind < argc) {
    fprintf(stderr, "tunefarm measure: unexpected argument '%s' (jobs come on stdin)\n",
            argv[optind]);
    return 2;
  }
  return 0;
}

typedef struct child_state {
  const backend_ops *ops;
  void *self;
  device_record dev;
  int open;
  FILE *out; /* the protocol: the original stdout, which nothing else may write to */
  job *j;    /* the job being measured and its result: large, one of each for the child */
  result *r;
  protocol_ctx ctx; /* the checks this process has passed, and whether a job was dropped */
} child_state;

/* The worker drops a job it wrote ahead (worker/worker.h, run-ahead) with CHILD_DROP_SIGNAL,
 * which the child keeps blocked in every thread and takes between rounds: it never interrupts
 * a launch, and one that comes after its job ended is taken (and forgotten) as the next job
 * starts, before that job could mistake it for its own. */
static int drop_taken(void) {
  sigset_t s;
  sigemptyset(&s);
  sigaddset(&s, CHILD_DROP_SIGNAL);
  struct timespec now = {0, 0};
  return sigtimedwait(&s, NULL, &now) == CHILD_DROP_SIGNAL;
}

/* Asked between rounds: at most once per CHILD_DROP_POLL_S, as each asking is a system
 * call (a few microseconds on a virtual machine) and rounds on the simulated device take
 * none; a round on a GPU takes about that long or longer, so there it asks every round. */
#define CHILD_DROP_POLL_S 1e-3
static int job_dropped(void) {
  static double last;
  double now = tf_monotonic_s();
  if (now - last < CHILD_DROP_POLL_S) return 0;
  last = now;
  return drop_taken();
}

static void reply(child_state *st, cJSON *o) {
  jsonio_write_line(st->out, o);
  cJSON_Delete(o);
}

/* An error answer; to a job message (`jobmsg`, else NULL) it carries the job's id only when that
 * id was read as sent (job_id_from_json), so it never claims a job that was not asked. */
static void reply_error(child_state *st, const char *msg, const cJSON *jobmsg) {
  long long id;
  cJSON *o = cJSON_CreateObject();
  cJSON_AddStringToObject(o, "type", "error");
  if (jobmsg && job_id_from_json(jobmsg, &id) == 0) cJSON_AddNumberToObject(o, "id", (double)id);
  cJSON_AddStringToObject(o, "message", msg);
  reply(st, o);
}

static int ensure_open(child_state *st, const child_opts *o, tf_err *e) {
  if (st->open) return 0;
  backend_opts bo = {.ordinal = o->device, .cache_dir = NULL, .instance = o->instance};
  if (st->ops->open(&st->self, &bo, e)) return -1;
  if (st->ops->describe(st->self, &st->dev, e)) {
    st->ops->close(st->self);
    return -1;
  }
  st->open = 1;
  return 0;
}

static void do_hello(child_state *st, const child_opts *o) {
  tf_err e = {0};
  hello h = {.rank = -1, .worker_index = -1};
  h.has_device = ensure_open(st, o, &e) == 0;
  if (h.has_device) h.dev = st->dev;
  snprintf(h.error, sizeof h.error, "%s", h.has_device ? "" : e.msg);
  snprintf(h.fallback, sizeof h.fallback, "%s", o->fallback);
  reply(st, hello_to_json(&h));
}

/* Returns 1 when the device is unusable and the child must exit. */
static int do_job(child_state *st, const child_opts *o, const cJSON *msg) {
  job *j = st->j;
  result *r = st->r;
  tf_err e = {0};
  memset(r, 0, sizeof *r);
  if (job_from_json(msg, j, &e)) {
    reply_error(st, e.msg, msg);
    return 0;
  }
  if (ensure_open(st, o, &e)) {
    result_fault(r, j->id, "", "cannot open the device: %s", e.msg);
    reply(st, result_to_json(r));
    return 1;
  }
  while (drop_taken()) { /* a drop meant for the job before, which had ended */
  }
  int sticky = protocol_run(st->ops, st->self, j, r, &st->ctx, &e) != 0;
  if (sticky) result_fault(r, j->id, st->dev.uuid, "device error: %s", e.msg);
  snprintf(r->device, sizeof r->device, "%s", st->dev.uuid);
  r->child = o->instance;
  reply(st, result_to_json(r));
  return sticky;
}

/* One line of at most CHILD_MAX_LINE bytes, newline included, into *out (malloc'd, the
 * caller frees): 1, or 0 at the end of input, or -1 for a longer line, which is read to its
 * newline and dropped so that the lines after it are served as usual. The line is kept in
 * pieces of its length, never more than the limit, however long the input runs. */
static int read_line(FILE *f, char **out) {
  size_t n = 0, cap = 0, len = 0;
  char *buf = NULL;
  int c = EOF, over = 0;
  *out = NULL;
  while ((c = getc(f)) != EOF) {
    len++;
    over |= len > CHILD_MAX_LINE;
    if (!over && n + 2 > cap) {
      size_t want = cap ? 2 * cap : 4096;
      char *nb = realloc(buf, want < CHILD_MAX_LINE + 1 ? want : CHILD_MAX_LINE + 1);
      if (nb) buf = nb, cap = want < CHILD_MAX_LINE + 1 ? want : CHILD_MAX_LINE + 1;
      else over = 1; /* no memory for it: refused like a line past the limit */
    }
    if (!over) buf[n++] = (char)c;
    if (c == '\n') break;
  }
  if (over || len == 0) {
    free(buf);
    return over ? -1 : 0;
  }
  buf[n] = '\0';
  *out = buf;
  return 1;
}

static int serve(child_state *st, const child_opts *o) {
  char *line;
  int got;
  while ((got = read_line(stdin, &line)) != 0) {
    if (got < 0) {
      char msg[128];
      snprintf(msg, sizeof msg, "message: a line longer than %ld bytes (4 MiB, the limit) was skipped",
               (long)CHILD_MAX_LINE);
      reply_error(st, msg, NULL);
      continue;
    }
    if (strspn(line, " \t\r\n") == strlen(line)) {
      free(line);
      continue;
    }
    tf_err e = {0};
    cJSON *msg = jsonio_parse(line, "the message on stdin", &e);
    free(line);
    if (!msg) {
      reply_error(st, e.msg, NULL);
      continue;
    }
    const cJSON *type = cJSON_GetObjectItemCaseSensitive(msg, "type");
    int stop = 0;
    if (cJSON_IsString(type) && strcmp(type->valuestring, "hello") == 0)
      do_hello(st, o);
    else if (cJSON_IsString(type) && strcmp(type->valuestring, "job") == 0)
      stop = do_job(st, o, msg);
    else
      reply_error(st, "message: 'type' must be \"hello\" or \"job\"", NULL);
    cJSON_Delete(msg);
    if (stop) return CHILD_EXIT_STICKY;
  }
  return 0;
}

/* A child must never outlive its worker: a hung kernel would hold the GPU for good. */
static void tie_to_parent(void) {
  pid_t parent = getppid();
  prctl(PR_SET_PDEATHSIG, SIGKILL);
  if (getppid() != parent) _exit(0); /* the worker died before the line above */
  /* Descriptors a worker rank had open (MPI's sockets) are not ours to keep. */
  for (int fd = 3; fd < 1024; fd++) close(fd);
}

int child_main(int argc, char **argv) {
  child_opts o = {.backend = NULL, .device = 0, .instance = 0};
  tie_to_parent();
  sigset_t drop; /* before any thread starts (the CUDA runtime's): blocked in all of them */
  sigemptyset(&drop);
  sigaddset(&drop, CHILD_DROP_SIGNAL);
  pthread_sigmask(SIG_BLOCK, &drop, NULL);
  int rc = parse_args(argc, argv, &o);
  if (rc) return rc == 1 ? 0 : 2;
  if (!o.backend) { /* a worker's child says why in its hello; a standalone one here */
    char why[200];
    o.backend = backend_default(why, sizeof why)->name;
    if (why[0]) snprintf(o.fallback, sizeof o.fallback, "%s", why);
    if (o.fallback[0] && o.instance == 0)
      fprintf(stderr, "tunefarm measure: no GPU (%s): using the simulated device\n", why);
  }
  child_state st = {.ops = backend_find(o.backend)};
  if (!st.ops) {
    char names[128];
    backend_names(names, sizeof names);
    fprintf(stderr, "tunefarm measure: unknown backend '%s' (%s)\n", o.backend, names);
    return 2;
  }
  /* Libraries (NVRTC, CUPTI, the driver) may print to stdout; keep the protocol on a
   * descriptor of its own and send fd 1 to stderr. */
  int proto = dup(1);
  st.out = proto >= 0 ? fdopen(proto, "w") : NULL;
  if (!st.out || dup2(2, 1) < 0) {
    fprintf(stderr, "tunefarm measure: cannot set up the protocol pipe\n");
    return 1;
  }
  setvbuf(st.out, NULL, _IOLBF, 0);
  st.j = malloc(sizeof *st.j);
  st.r = malloc(sizeof *st.r);
  st.ctx.memo = calloc(1, sizeof *st.ctx.memo);
  st.ctx.dropped = job_dropped;
  if (!st.j || !st.r || !st.ctx.memo) {
    fprintf(stderr, "tunefarm measure: out of memory\n");
    rc = 1;
  } else {
    rc = serve(&st, &o);
  }
  if (st.open && rc == 0) st.ops->close(st.self);
  free(st.j);
  free(st.r);
  free(st.ctx.memo);
  return rc;
}
