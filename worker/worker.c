#include "worker/worker.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "common/jsonio.h"
#include "common/mpimsg.h"
#include "common/msg.h"
#include "worker/backend.h"      /* defines: backend_simulated, sim_compile_seconds */
#include "worker/child.h"        /* defines: CHILD_DROP_SIGNAL */
#include "worker/compile_pool.h" /* defines: compile_pool_start, compile_pool_want, ... */
#include "worker/cpus.h"         /* defines: cpus_share_mine */
#include "worker/spawn.h"

/* A job as the worker handles it: the message, the text the child reads, what the worker
 * needs of it. */
typedef struct wjob {
  cJSON *msg;       /* NULL: no job */
  char *text;       /* the message as sent, or printed again; cJSON_free */
  long long id;     /* -1: one the child will refuse (its fault result still names one) */
  double deadline;  /* measure.deadline_s */
  int fresh;        /* fresh_child */
} wjob;

typedef struct worker_state {
  const worker_opts *o;
  MPI_Comm comm;
  int rank;
  childproc child;
  int nchild;  /* children started so far: the current one's instance number */
  char uuid[64];
  char arch[16];        /* the device's, from its record: what the compile pool compiles for */
  char backend[8];      /* the backend its children use: asked for, or the first one's choice */
  compile_pool *pool;   /* compiles ahead; NULL when off */
  wjob ahead;           /* the job sent ahead (coordinator.h, run-ahead); .msg NULL: none */
  int ahead_child;      /* the child it was written to (w->nchild then); 0: in none */
} worker_state;

/* Start a child and ask its device: the device record on success, else NULL and *why. */
/* Start a child and ask its device: *h says which, or why there is none. The first child
 * chooses the backend when nobody asked for one; the children after it take the same. */
static void start_child(worker_state *w, hello *h) {
  tf_err e = {0};
  cJSON *reply = NULL;
  memset(h, 0, sizeof *h);
  childproc_opts co = {.exe = w->o->exe, .backend = w->backend[0] ? w->backend : NULL,
                       .device = w->o->device, .instance = ++w->nchild};
  int rc = childproc_start(&w->child, &co, &e);
  if (rc == 0) {
    hello ask = {.rank = -1, .worker_index = -1};
    cJSON *msg = hello_to_json(&ask);
    rc = childproc_send(&w->child, msg, &e);
    cJSON_Delete(msg);
  }
  if (rc == 0) rc = childproc_recv(&w->child, w->o->hello_s, &reply, h->error, sizeof h->error, &e);
  if (rc == CHILD_LINE && hello_from_json(reply, h, &e)) rc = -1;
  if (rc == -1) snprintf(h->error, sizeof h->error, "%s", e.msg);
  cJSON_Delete(reply);
  if (rc == CHILD_LINE && h->has_device) {
    snprintf(w->backend, sizeof w->backend, "%s", h->dev.backend);
    return;
  }
  h->has_device = 0;
  childproc_kill(&w->child);
}

/* The compile pool, when this worker compiles ahead: a device that compiles (the GPU, or the
 * simulated device unless TUNEFARM_SIM_COMPILE=0), and compiles allowed (--compile-jobs). A pool
 * that cannot start is said and done without: the measure child compiles as before. Returns
 * how many compiles the pool runs at once, 0 when there is none. */
static int start_pool(worker_state *w) {
  sim_compile simulate = {0.0, 0.0, 0.0, 0};
  tf_err e = {0};
  const backend_ops *ops = backend_find(w->backend);
  if (ops && ops->recorded) return 0; /* its compiles are recorded, not run */
  int sim = backend_simulated(w->backend);
  if (!w->arch[0] || (sim && (sim_compile_seconds(&simulate, &e) || simulate.none)))
    return 0;
  cpus_share cpus = cpus_share_mine(w->o->workers_on_node);
  int jobs = compile_pool_jobs(w->o->compile_jobs, &cpus);
  if (jobs <= 0 && w->o->compile_jobs < 0 && !w->o->quiet)
    fprintf(stderr,
            "tunefarm: worker rank %d compiles nothing ahead: its CPU mask holds one CPU, its "
            "measure child's (--compile-jobs N compiles beside it anyway)\n",
            w->rank);
  if (jobs <= 0) return 0;
  compile_pool_opts po = {.exe = w->o->exe, .arch = w->arch, .simulate = simulate,
                          .jobs = jobs};
  w->pool = compile_pool_start(&po, &e);
  if (!w->pool)
    fprintf(stderr, "tunefarm: worker rank %d compiles nothing ahead: %s\n", w->rank, e.msg);
  return w->pool ? jobs : 0;
}

static int send_hello(worker_state *w, tf_err *e) {
  hello h;
  start_child(w, &h);
  h.rank = w->rank;
  h.worker_index = w->o->device;
  if (h.has_device) {
    snprintf(w->uuid, sizeof w->uuid, "%s", h.dev.uuid);
    snprintf(w->arch, sizeof w->arch, "%s", h.dev.arch);
    h.compile_jobs = start_pool(w); /* so the coordinator lists programs only where they help */
  }
  cJSON *msg = hello_to_json(&h);
  int rc = mpimsg_send(w->comm, 0, TAG_HELLO, msg, e);
  cJSON_Delete(msg);
  return rc;
}

/* A fault result, as JSON; NULL when out of memory. */
static cJSON *fault_json(long long id, const char *uuid, const char *why) {
  result *r = malloc(sizeof *r); /* large: off the stack */
  if (!r) return NULL;
  result_fault(r, id, uuid, "%s", why);
  cJSON *o = result_to_json(r);
  free(r);
  return o;
}

/* Take msg (and its text when given, as it came: a relay need not print again what it did not
 * change) as a job; -1 out of memory. */
static int wjob_take(wjob *j, cJSON *msg, char *text) {
  const cJSON *idj = cJSON_GetObjectItemCaseSensitive(msg, "id");
  const cJSON *m = cJSON_GetObjectItemCaseSensitive(msg, "measure");
  const cJSON *dl = cJSON_GetObjectItemCaseSensitive(m, "deadline_s");
  j->msg = msg;
  j->id = -1;
  if (cJSON_IsNumber(idj) && jsonio_whole(idj->valuedouble, 0, 1LL << 53, &j->id)) j->id = -1;
  j->deadline = cJSON_IsNumber(dl) ? dl->valuedouble : 120.0;
  j->fresh = cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(msg, "fresh_child"));
  j->text = text ? text : cJSON_PrintUnformatted(msg);
  return j->text ? 0 : -1;
}

static void wjob_release(wjob *j) {
  cJSON_Delete(j->msg);
  cJSON_free(j->text);
  memset(j, 0, sizeof *j);
}

/* A child for the next job (a fresh one when it asks): NULL, or a fault result for job id
 * saying why there is none. */
static cJSON *ready_child(worker_state *w, long long id, int fresh) {
  char why[1024] = "";
  childproc_reap_if_exited(&w->child); /* a child that ended after its last answer */
  /* The coordinator wants this job in a new process (its canary found the old one biased). */
  if (fresh) childproc_stop(&w->child, 5.0);
  if (childproc_running(&w->child)) return NULL;
  hello h;
  start_child(w, &h);
  if (!h.has_device) return fault_json(id, w->uuid, h.error);
  /* Ordinals shift when a GPU falls off the bus: never measure on another device. */
  if (strcmp(h.dev.uuid, w->uuid) != 0) {
    snprintf(why, sizeof why, "the fresh measure child sees device %s at ordinal %d, not %s; "
             "this worker measures nothing else", h.dev.uuid, w->o->device, w->uuid);
    childproc_stop(&w->child, 5.0);
    return fault_json(id, w->uuid, why);
  }
  return NULL;
}

/* Write job j to the child, behind what it holds: NULL, or a fault result for j (the child
 * took no more: it has ended, and what it wrote before is still to be read). */
static cJSON *feed(worker_state *w, const wjob *j) {
  tf_err e = {0};
  return childproc_send_text(&w->child, j->text, &e) ? fault_json(j->id, w->uuid, e.msg) : NULL;
}

/* The child's answer to the oldest job it holds, job id, or a fault result saying why there
 * is none; the answer's text in *restext (NULL for a fault result the worker wrote). */
static cJSON *collect(worker_state *w, long long id, double deadline, char **restext) {
  char why[1024] = "";
  tf_err e = {0};
  cJSON *reply = NULL;
  int rc = childproc_recv_text(&w->child, deadline, &reply, restext, why, sizeof why, &e);
  if (rc == -1) {
    childproc_kill(&w->child);
    return fault_json(id, w->uuid, e.msg);
  }
  if (rc != CHILD_LINE) return fault_json(id, w->uuid, why);
  const cJSON *type = cJSON_GetObjectItemCaseSensitive(reply, "type");
  if (!cJSON_IsString(type) || strcmp(type->valuestring, "result") != 0) {
    const cJSON *msg = cJSON_GetObjectItemCaseSensitive(reply, "message");
    snprintf(why, sizeof why, "the measure child refused the job: %s",
             cJSON_IsString(msg) ? msg->valuestring : "(no message)");
    cJSON_Delete(reply);
    free(*restext);
    *restext = NULL;
    return fault_json(id, w->uuid, why);
  }
  /* A fault result means the child found its device unusable and is exiting: the next
   * job must not be sent to it, or that job would be blamed for this one's fault. */
  const cJSON *st = cJSON_GetObjectItemCaseSensitive(reply, "status");
  if (cJSON_IsString(st) && strcmp(st->valuestring, "fault") == 0) childproc_stop(&w->child, 10.0);
  return reply;
}

/* The job ahead is in the child that runs now. */
static int ahead_in_child(const worker_state *w) {
  return w->ahead.msg && w->ahead_child == w->nchild && childproc_running(&w->child);
}

/* The coordinator sent a job other than the one ahead: the child ends that one at its next
 * round, and its answer is thrown away. */
static void drop_ahead(worker_state *w) {
  if (ahead_in_child(w)) {
    char *text = NULL;
    kill(w->child.pid, CHILD_DROP_SIGNAL); /* it stops at its next round */
    cJSON_Delete(collect(w, w->ahead.id, w->ahead.deadline, &text));
    free(text);
  }
  wjob_release(&w->ahead);
  w->ahead_child = 0;
}

/* The child's answer to job j (written to the child already when held), or a fault result
 * saying why there is none; `next`, the job to run after it when the coordinator sent one,
 * follows it into the child at once and becomes the job ahead. */
static cJSON *run_job(worker_state *w, wjob *j, int held, wjob *next, char **restext) {
  cJSON *res = held ? NULL : ready_child(w, j->id, j->fresh);
  if (!res && !held && (res = feed(w, j))) childproc_kill(&w->child);
  wjob_release(&w->ahead);
  w->ahead = *next;
  memset(next, 0, sizeof *next);
  w->ahead_child = 0;
  if (res) return res;
  if (w->ahead.msg) {
    cJSON *lost = feed(w, &w->ahead); /* a child that took no more has its answer to j ready */
    if (!lost) w->ahead_child = w->nchild;
    cJSON_Delete(lost);
  }
  return collect(w, j->id, j->deadline, restext);
}

/* Hand a job's "prefetch" list (taken out of the job: the measure child and the ledger never
 * see it) to the compile pool, with the job's own program, which the child compiles now. */
static void prefetch(worker_state *w, const cJSON *jobmsg, const cJSON *list) {
  job *j = malloc(sizeof *j);
  program_ref *next = calloc(COMPILE_POOL_MAX_WANT, sizeof *next), current;
  tf_err e = {0};
  int n = 0;
  if (j && next && job_from_json(jobmsg, j, &e) == 0) {
    program_of_job(j, &current);
    const cJSON *it;
    cJSON_ArrayForEach(it, list) {
      if (n < COMPILE_POOL_MAX_WANT && program_from_json(it, j->root, &next[n], &e) == 0) n++;
    }
    compile_pool_want(w->pool, &current, next, n);
  }
  free(next);
  free(j);
}

/* What the compile pool did over the run, on stderr: how busy its cores were, and how much of
 * that went to compiles stopped unfinished (guesses the search left). Busy and mostly on
 * compiles that ended: the cores bound what it hides; much of it stopped: the guesses do.
 * Which ended compiles the search then asked for, only the ledger tells (its cache hits).
 * Compiles still running at the stop are not counted. */
static void report_pool(const worker_state *w) {
  if (!w->pool || w->o->quiet) return;
  compile_pool_stats s;
  compile_pool_get_stats(w->pool, &s);
  if (s.open_s <= 0) return; /* no list came: nothing was asked of it */
  double cpu = s.finished_cpu_s + s.stopped_cpu_s;
  fprintf(stderr,
          "[rank %d %.12s] compile pool, %d at once for %.1f s: %ld compiles ended (%.1f CPU s), "
          "%ld stopped as no longer wanted (%.1f CPU s), %ld found in the cache, %ld dropped "
          "before starting; its cores busy %.0f%%, %.0f%% of that on compiles stopped\n",
          w->rank, w->uuid, s.jobs, s.open_s, s.finished, s.finished_cpu_s, s.stopped,
          s.stopped_cpu_s, s.skipped, s.dropped, 100.0 * cpu / (s.jobs * s.open_s),
          cpu > 0 ? 100.0 * s.stopped_cpu_s / cpu : 0.0);
}

static void stop_worker(worker_state *w) {
  report_pool(w);
  compile_pool_stop(w->pool, 0.0);
  w->pool = NULL;
  childproc_stop(&w->child, 5.0);
}

/* The result to the coordinator, with this worker's rank and, where the child did not say it,
 * its child's number: the child's text passed on as it came when there is one. */
static int send_result(worker_state *w, cJSON *res, char *text, tf_err *e) {
  int has_child = cJSON_GetObjectItemCaseSensitive(res, "child") != NULL;
  if (!text) {
    cJSON_AddNumberToObject(res, "rank", w->rank);
    if (!has_child) cJSON_AddNumberToObject(res, "child", w->nchild); /* a fault the worker wrote */
    return mpimsg_send(w->comm, 0, TAG_RESULT, res, e);
  }
  char members[64];
  snprintf(members, sizeof members, has_child ? "\"rank\":%d" : "\"rank\":%d,\"child\":%d",
           w->rank, w->nchild);
  char *out = jsonio_prepend_members(text, members);
  if (!out) return tf_fail(e, TF_EXIT_FAIL, "worker rank %d: out of memory", w->rank);
  int rc = mpimsg_send_text(w->comm, 0, TAG_RESULT, out, e);
  free(out);
  return rc;
}

/* One message of the coordinator: a job ("job"), or the word to go on with the job it sent
 * ahead ("go", with that job's id; coordinator.h, run-ahead). Either may carry the job to run
 * after it ("next") and the programs to compile ahead ("prefetch"), which the child never
 * sees. `text` is the message as it came (taken). The answer, or NULL when out of memory. */
static cJSON *serve(worker_state *w, cJSON *msg, char *text, char **restext) {
  cJSON *list = cJSON_DetachItemFromObjectCaseSensitive(msg, "prefetch");
  cJSON *nextmsg = cJSON_DetachItemFromObjectCaseSensitive(msg, "next");
  if (list || nextmsg) { /* the child must not see them: the job goes as printed again */
    free(text);
    text = NULL;
  }
  wjob j = {0}, next = {0};
  const char *type = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(msg, "type"));
  int go = type && strcmp(type, "go") == 0, held = 0, bad = 0;
  cJSON *res = NULL;
  if (nextmsg && wjob_take(&next, nextmsg, NULL)) bad = 1;
  if (bad) {
    cJSON_Delete(msg);
    free(text);
  } else if (go) {
    const cJSON *idj = cJSON_GetObjectItemCaseSensitive(msg, "id");
    long long id = cJSON_IsNumber(idj) ? (long long)idj->valuedouble : -1;
    cJSON_Delete(msg);
    if (!w->ahead.msg || w->ahead.id != id) {
      char why[160];
      snprintf(why, sizeof why, "the coordinator went on with job %lld, which this worker was "
               "not sent ahead", id);
      res = fault_json(id, w->uuid, why);
    } else {
      held = ahead_in_child(w);
      j = w->ahead;
      memset(&w->ahead, 0, sizeof w->ahead);
    }
  } else if (wjob_take(&j, msg, text)) {
    bad = 1;
  }
  if (j.msg && !bad) {
    if (list && w->pool) prefetch(w, j.msg, list);
    if (!go) drop_ahead(w); /* after the pool has its new list: the dropped job takes a while */
    res = run_job(w, &j, held, &next, restext);
  }
  wjob_release(&j);
  wjob_release(&next);
  cJSON_Delete(list);
  return bad ? NULL : res;
}

int worker_run(MPI_Comm comm, const worker_opts *o, tf_err *e) {
  worker_state w = {.o = o, .comm = comm};
  snprintf(w.backend, sizeof w.backend, "%s", o->backend ? o->backend : "");
  MPI_Comm_rank(comm, &w.rank);
  if (send_hello(&w, e)) return -1;
  for (;;) {
    int tag, from;
    char *text = NULL, *restext = NULL;
    cJSON *msg = mpimsg_recv_text(comm, 0, &tag, &from, &text, e);
    if (!msg) break;
    if (tag == TAG_STOP) {
      cJSON_Delete(msg);
      free(text);
      if (ahead_in_child(&w)) kill(w.child.pid, CHILD_DROP_SIGNAL); /* no one wants it now */
      wjob_release(&w.ahead);
      stop_worker(&w);
      return 0;
    }
    cJSON *res = serve(&w, msg, text, &restext);
    if (!res) {
      free(restext);
      tf_fail(e, TF_EXIT_FAIL, "worker rank %d: out of memory", w.rank);
      break;
    }
    int rc = send_result(&w, res, restext, e);
    cJSON_Delete(res);
    free(restext);
    if (rc) break;
  }
  wjob_release(&w.ahead);
  compile_pool_stop(w.pool, 0.0);
  childproc_kill(&w.child);
  return -1;
}
