#include "worker/protocol.h"

#include <math.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "common/decide.h"

/* Best and new swap places every round; the control moves through all positions. */
static const int orders[6][ARM_COUNT] = {
    {ARM_BEST, ARM_NEW, ARM_CONTROL}, {ARM_NEW, ARM_BEST, ARM_CONTROL},
    {ARM_CONTROL, ARM_BEST, ARM_NEW}, {ARM_CONTROL, ARM_NEW, ARM_BEST},
    {ARM_BEST, ARM_CONTROL, ARM_NEW}, {ARM_NEW, ARM_CONTROL, ARM_BEST}};

void protocol_order(int i, int order[ARM_COUNT]) {
  memcpy(order, orders[i % 6], sizeof orders[0]);
}

static double now_s(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

/* A backend error becomes the job's status; only a sticky one goes up. */
static int job_failed(result *r, tf_err *e) {
  if (e->code == BACKEND_STICKY) return -1;
  r->status = e->code == BACKEND_COMPILE ? RESULT_COMPILE_ERROR : RESULT_ERROR;
  snprintf(r->detail, sizeof r->detail, "%s", e->msg);
  return 0;
}

static int gate(const backend_ops *ops, void *self, const job *j, result *r, tf_err *e) {
  r->correct = 1;
  for (int a = 0; a < ARM_COUNT; a++) {
    r->rel_err[a] = 0;
    for (int s = 0; s < j->measure.input_sets; s++) {
      double err;
      if (ops->check(self, a, s, &err, e)) return -1;
      if (!(err <= r->rel_err[a])) r->rel_err[a] = err; /* NaN propagates */
      if (!(err <= j->tolerance)) r->correct = 0;
    }
  }
  return 0;
}

static int run_round(const backend_ops *ops, void *self, const job *j, int i, round_rec *rec,
                     tf_err *e) {
  memset(rec, 0, sizeof *rec);
  protocol_order(i, rec->order);
  int set = i % j->measure.input_sets;
  ops->clock(self, &rec->sm_mhz[0], &rec->reasons[0]);
  for (int p = 0; p < ARM_COUNT; p++) {
    int a = rec->order[p];
    unsigned long long reasons;
    if (ops->sample(self, a, set, j->measure.samples, &rec->us[a], &rec->kernel_us[a], e))
      return -1;
    ops->clock(self, &rec->arm_mhz[a], &reasons);
  }
  ops->clock(self, &rec->sm_mhz[1], &rec->reasons[1]);
  return 0;
}

static int burn_in(const backend_ops *ops, void *self, const job *j, result *r, tf_err *e) {
  round_rec scratch;
  for (int b = 0; b < j->measure.burn_in; b++)
    if (run_round(ops, self, j, b, &scratch, e)) return -1;
  r->burn_in = j->measure.burn_in;
  return 0;
}

static int recorded(const backend_ops *ops, void *self, const job *j, result *r, tf_err *e) {
  int used = 0, screened = 0;
  while (used < j->measure.rounds && r->nrounds < MSG_MAX_ROUNDS) {
    round_rec *rec = &r->rounds[r->nrounds];
    if (run_round(ops, self, j, r->nrounds, rec, e)) return -1;
    r->nrounds++;
    if (decide_screen_round(&j->decide, rec)) {
      rec->screened = 1;
      if (++screened > j->decide.max_screened) break;
      continue;
    }
    used++;
    if (decide_enough(&j->decide, &j->measure, r->rounds, r->nrounds)) break;
  }
  return 0;
}

int protocol_run(const backend_ops *ops, void *self, const job *j, result *r, tf_err *e) {
  double t0 = now_s();
  r->id = j->id;
  r->status = RESULT_OK;
  int rc = 0;
  if (ops->prepare(self, j, r, e)) {
    rc = job_failed(r, e);
    if (rc == 0) ops->finish(self); /* prepare may have half-built the job */
  } else {
    if (gate(ops, self, j, r, e) || (r->correct && (burn_in(ops, self, j, r, e) ||
                                                    recorded(ops, self, j, r, e))))
      rc = job_failed(r, e);
    if (rc == 0) ops->finish(self); /* never touch a device after a sticky error */
  }
  r->wall_s = now_s() - t0;
  return rc;
}
