#include "worker/worker.h"

#include <stdio.h>
#include <string.h>

#include "common/mpimsg.h"
#include "common/msg.h"
#include "worker/spawn.h"

typedef struct worker_state {
  const worker_opts *o;
  MPI_Comm comm;
  int rank;
  childproc child;
  int nchild;  /* children started so far: the current one's instance number */
  char uuid[64];
} worker_state;

/* Start a child and ask its device: the device record on success, else NULL and *why. */
static cJSON *start_child(worker_state *w, char *why, size_t len) {
  tf_err e = {0};
  childproc_opts co = {.exe = w->o->exe, .backend = w->o->backend, .device = w->o->device,
                       .instance = ++w->nchild};
  if (childproc_start(&w->child, &co, &e)) {
    snprintf(why, len, "%s", e.msg);
    return NULL;
  }
  cJSON *hello = cJSON_CreateObject(), *reply = NULL;
  cJSON_AddStringToObject(hello, "type", "hello");
  int rc = childproc_send(&w->child, hello, &e);
  cJSON_Delete(hello);
  if (rc == 0) rc = childproc_recv(&w->child, w->o->hello_s, &reply, why, len, &e);
  if (rc == -1) snprintf(why, len, "%s", e.msg);
  const cJSON *dev = rc == CHILD_LINE ? cJSON_GetObjectItemCaseSensitive(reply, "device") : NULL;
  if (rc == CHILD_LINE && !dev) {
    const cJSON *m = cJSON_GetObjectItemCaseSensitive(reply, "message");
    snprintf(why, len, "%s", cJSON_IsString(m) ? m->valuestring : "the child sent no device record");
  }
  cJSON *out = dev ? cJSON_Duplicate(dev, 1) : NULL;
  cJSON_Delete(reply);
  if (!out) childproc_kill(&w->child);
  return out;
}

static int send_hello(worker_state *w, tf_err *e) {
  char why[1024] = "";
  cJSON *dev = start_child(w, why, sizeof why);
  cJSON *msg = cJSON_CreateObject();
  cJSON_AddStringToObject(msg, "type", "hello");
  cJSON_AddNumberToObject(msg, "rank", w->rank);
  cJSON_AddNumberToObject(msg, "worker_index", w->o->device);
  if (dev) {
    const cJSON *u = cJSON_GetObjectItemCaseSensitive(dev, "uuid");
    if (cJSON_IsString(u)) snprintf(w->uuid, sizeof w->uuid, "%s", u->valuestring);
    cJSON_AddItemToObject(msg, "device", dev);
  } else {
    cJSON_AddStringToObject(msg, "error", why);
  }
  int rc = mpimsg_send(w->comm, 0, TAG_HELLO, msg, e);
  cJSON_Delete(msg);
  return rc;
}

static cJSON *fault_json(long long id, const char *uuid, const char *why) {
  static result r;
  result_fault(&r, id, uuid, "%s", why);
  return result_to_json(&r);
}

/* The child's answer to one job, or a fault result saying why there is none. */
static cJSON *run_job(worker_state *w, const cJSON *jobmsg) {
  char why[1024] = "";
  tf_err e = {0};
  const cJSON *idj = cJSON_GetObjectItemCaseSensitive(jobmsg, "id");
  long long id = cJSON_IsNumber(idj) ? (long long)idj->valuedouble : -1;
  const cJSON *m = cJSON_GetObjectItemCaseSensitive(jobmsg, "measure");
  const cJSON *dl = cJSON_GetObjectItemCaseSensitive(m, "deadline_s");
  double deadline = cJSON_IsNumber(dl) ? dl->valuedouble : 120.0;
  childproc_reap_if_exited(&w->child); /* a child that ended after its last answer */
  /* The coordinator wants this job in a new process (its canary found the old one biased). */
  if (cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(jobmsg, "fresh_child")))
    childproc_stop(&w->child, 5.0);
  if (!childproc_running(&w->child)) {
    cJSON *dev = start_child(w, why, sizeof why);
    if (!dev) return fault_json(id, w->uuid, why);
    /* Ordinals shift when a GPU falls off the bus: never measure on another device. */
    const char *u = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(dev, "uuid"));
    int same = u && strcmp(u, w->uuid) == 0;
    if (!same) snprintf(why, sizeof why, "the fresh measure child sees device %s at ordinal %d, "
                                         "not %s; this worker measures nothing else",
                        u ? u : "(none)", w->o->device, w->uuid);
    cJSON_Delete(dev);
    if (!same) {
      childproc_stop(&w->child, 5.0);
      return fault_json(id, w->uuid, why);
    }
  }
  cJSON *reply = NULL;
  int rc = childproc_send(&w->child, jobmsg, &e);
  if (rc == 0) rc = childproc_recv(&w->child, deadline, &reply, why, sizeof why, &e);
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
    return fault_json(id, w->uuid, why);
  }
  /* A fault result means the child found its device unusable and is exiting: the next
   * job must not be sent to it, or that job would be blamed for this one's fault. */
  const cJSON *st = cJSON_GetObjectItemCaseSensitive(reply, "status");
  if (cJSON_IsString(st) && strcmp(st->valuestring, "fault") == 0) childproc_stop(&w->child, 10.0);
  return reply;
}

int worker_run(MPI_Comm comm, const worker_opts *o, tf_err *e) {
  worker_state w = {.o = o, .comm = comm};
  MPI_Comm_rank(comm, &w.rank);
  if (send_hello(&w, e)) return -1;
  for (;;) {
    int tag, from;
    cJSON *msg = mpimsg_recv(comm, 0, &tag, &from, e);
    if (!msg) break;
    if (tag == TAG_STOP) {
      cJSON_Delete(msg);
      childproc_stop(&w.child, 5.0);
      return 0;
    }
    cJSON *res = run_job(&w, msg);
    cJSON_Delete(msg);
    cJSON_AddNumberToObject(res, "rank", w.rank);
    if (!cJSON_GetObjectItemCaseSensitive(res, "child")) /* a fault the worker wrote */
      cJSON_AddNumberToObject(res, "child", w.nchild);
    int rc = mpimsg_send(comm, 0, TAG_RESULT, res, e);
    cJSON_Delete(res);
    if (rc) break;
  }
  childproc_kill(&w.child);
  return -1;
}
