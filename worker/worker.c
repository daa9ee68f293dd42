#include "worker/worker.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "common/jsonio.h"
#include "common/mpimsg.h"
#include "common/msg.h"
#include "worker/backend.h"      /* defines: sim_compile_seconds */
#include "worker/compile_pool.h" /* defines: compile_pool_start, compile_pool_want, ... */
#include "worker/spawn.h"

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
 * simulated device with TUNEFARM_SIM_COMPILE), and compiles allowed (--compile-jobs). A pool
 * that cannot start is said and done without: the measure child compiles as before. Returns
 * how many compiles the pool runs at once, 0 when there is none. */
static int start_pool(worker_state *w) {
  sim_compile simulate = {0.0, 0.0, 0.0};
  tf_err e = {0};
  int sim = strcmp(w->backend, "sim") == 0;
  if (!w->arch[0] || (sim && (sim_compile_seconds(&simulate, &e) || simulate.short_s <= 0)))
    return 0;
  int jobs = compile_pool_jobs(w->o->compile_jobs, sysconf(_SC_NPROCESSORS_ONLN),
                               w->o->workers_on_node);
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

/* The child's answer to one job, or a fault result saying why there is none. The job goes to
 * the child as `jobtext` when that is given (the message as it came), and the child's own
 * answer comes back in *restext too (NULL for a fault result the worker wrote): a relay
 * need not print again what it did not change. */
static cJSON *run_job(worker_state *w, const cJSON *jobmsg, const char *jobtext, char **restext) {
  char why[1024] = "";
  tf_err e = {0};
  const cJSON *idj = cJSON_GetObjectItemCaseSensitive(jobmsg, "id");
  long long id = -1; /* a job the child will refuse; its fault result still names one */
  if (cJSON_IsNumber(idj) && jsonio_whole(idj->valuedouble, 0, 1LL << 53, &id)) id = -1;
  const cJSON *m = cJSON_GetObjectItemCaseSensitive(jobmsg, "measure");
  const cJSON *dl = cJSON_GetObjectItemCaseSensitive(m, "deadline_s");
  double deadline = cJSON_IsNumber(dl) ? dl->valuedouble : 120.0;
  childproc_reap_if_exited(&w->child); /* a child that ended after its last answer */
  /* The coordinator wants this job in a new process (its canary found the old one biased). */
  if (cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(jobmsg, "fresh_child")))
    childproc_stop(&w->child, 5.0);
  if (!childproc_running(&w->child)) {
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
  }
  cJSON *reply = NULL;
  int rc = jobtext ? childproc_send_text(&w->child, jobtext, &e)
                   : childproc_send(&w->child, jobmsg, &e);
  if (rc == 0) rc = childproc_recv_text(&w->child, deadline, &reply, restext, why, sizeof why, &e);
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

static void stop_worker(worker_state *w) {
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
  mpimsg_out send = {.text = NULL};
  return mpimsg_isend_text(w->comm, 0, TAG_RESULT, out, &send, e) || mpimsg_wait(&send, e) ? -1 : 0;
}

int worker_run(MPI_Comm comm, const worker_opts *o, tf_err *e) {
  worker_state w = {.o = o, .comm = comm};
  snprintf(w.backend, sizeof w.backend, "%s", o->backend ? o->backend : "");
  MPI_Comm_rank(comm, &w.rank);
  if (send_hello(&w, e)) return -1;
  for (;;) {
    int tag, from;
    char *jobtext = NULL, *restext = NULL;
    cJSON *msg = mpimsg_recv_text(comm, 0, &tag, &from, &jobtext, e);
    if (!msg) break;
    if (tag == TAG_STOP) {
      cJSON_Delete(msg);
      free(jobtext);
      stop_worker(&w);
      return 0;
    }
    cJSON *list = cJSON_DetachItemFromObjectCaseSensitive(msg, "prefetch");
    if (list) { /* the child must not see it: the job goes as printed again */
      free(jobtext);
      jobtext = NULL;
    }
    if (list && w.pool) prefetch(&w, msg, list);
    cJSON_Delete(list);
    cJSON *res = run_job(&w, msg, jobtext, &restext);
    cJSON_Delete(msg);
    free(jobtext);
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
  compile_pool_stop(w.pool, 0.0);
  childproc_kill(&w.child);
  return -1;
}
