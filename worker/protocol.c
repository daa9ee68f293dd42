#include "worker/protocol.h"

#include <math.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "common/clock.h"
#include "common/decide.h"
#include "common/mix.h" /* defines: tf_fnv64 */

/* Best and new swap places every round; the control moves through all positions. */
static const int orders[6][ARM_COUNT] = {
    {ARM_BEST, ARM_NEW, ARM_CONTROL}, {ARM_NEW, ARM_BEST, ARM_CONTROL},
    {ARM_CONTROL, ARM_BEST, ARM_NEW}, {ARM_CONTROL, ARM_NEW, ARM_BEST},
    {ARM_BEST, ARM_CONTROL, ARM_NEW}, {ARM_NEW, ARM_CONTROL, ARM_BEST}};

void protocol_order(int i, int order[ARM_COUNT]) {
  memcpy(order, orders[i % 6], sizeof orders[0]);
}

/* The order of round i under the job's measure.order. */
static void round_order(const measure_opts *m, int i, int order[ARM_COUNT]) {
  protocol_order(m->order == ORDER_FIXED ? 0 : i, order);
}

/* A backend error becomes the job's status; only a sticky one goes up. */
static int job_failed(result *r, tf_err *e) {
  if (e->code == TF_STICKY) return -1;
  r->status = e->code == TF_COMPILE_REFUSED ? RESULT_COMPILE_ERROR : RESULT_ERROR;
  snprintf(r->detail, sizeof r->detail, "%s", e->msg);
  return 0;
}

/* ---- the gate's memory (protocol.h) ---- */

static unsigned long long fnv_str(unsigned long long h, const char *s) {
  return tf_fnv64(h, s, strlen(s) + 1);
}

/* What decides arm a's verdict on input set `set`: its kernel (name, configuration, source,
 * geometry), the job's problem, layout and reference, and the inputs (seed, set). Fields one
 * by one: a struct's padding is not part of it. */
static unsigned long long gate_key(const job *j, int a, int set) {
  const job_arm *m = &j->arm[a];
  const launch_geom *g = &m->geom;
  unsigned long long h = TF_FNV64_BASIS;
  h = fnv_str(h, j->ref_kernel);
  h = fnv_str(h, j->ref_source);
  h = fnv_str(h, j->ref_library);
  h = fnv_str(h, j->sources[m->from_template ? 0 : 1]);
  h = fnv_str(h, m->name_expr);
  h = fnv_str(h, m->library);
  h = tf_fnv64(h, &m->from_template, sizeof m->from_template);
  h = tf_fnv64(h, &m->cfg.n, sizeof m->cfg.n);
  h = tf_fnv64(h, m->cfg.v, sizeof m->cfg.v[0] * (size_t)m->cfg.n);
  h = tf_fnv64(h, g->grid, sizeof g->grid);
  h = tf_fnv64(h, g->block, sizeof g->block);
  h = tf_fnv64(h, &g->smem, sizeof g->smem);
  h = tf_fnv64(h, g->count, sizeof g->count[0] * (size_t)j->nbuffers);
  h = tf_fnv64(h, g->clear, sizeof g->clear[0] * (size_t)j->nbuffers);
  h = tf_fnv64(h, g->iarg, sizeof g->iarg[0] * (size_t)j->nargs);
  h = tf_fnv64(h, j->dims, sizeof j->dims[0] * (size_t)j->ndims);
  h = tf_fnv64(h, j->buf_output, sizeof j->buf_output[0] * (size_t)j->nbuffers);
  h = tf_fnv64(h, j->buf_type, sizeof j->buf_type[0] * (size_t)j->nbuffers);
  h = tf_fnv64(h, j->buf_role, sizeof j->buf_role[0] * (size_t)j->nbuffers);
  h = tf_fnv64(h, j->arg_kind, sizeof j->arg_kind[0] * (size_t)j->nargs);
  h = tf_fnv64(h, j->arg_buffer, sizeof j->arg_buffer[0] * (size_t)j->nargs);
  h = tf_fnv64(h, j->arg_float, sizeof j->arg_float[0] * (size_t)j->nargs);
  h = tf_fnv64(h, &j->measure.seed, sizeof j->measure.seed);
  h = tf_fnv64(h, &set, sizeof set);
  return h ? h : 1;
}

/* The slot of key: where it is, or the empty one where it would go. */
static int memo_slot(const gate_memo *m, unsigned long long key) {
  int i = (int)(key % GATE_MEMO_SLOTS);
  while (m->key[i] && m->key[i] != key) i = (i + 1) % GATE_MEMO_SLOTS;
  return i;
}

static int memo_find(const gate_memo *m, unsigned long long key, double *err) {
  int i = memo_slot(m, key);
  if (!m->key[i]) return 0;
  *err = m->err[i];
  return 1;
}

static void memo_keep(gate_memo *m, unsigned long long key, double err) {
  if (m->used >= GATE_MEMO_SLOTS * 3 / 4) memset(m, 0, sizeof *m); /* full: start again */
  int i = memo_slot(m, key);
  if (!m->key[i]) m->used++;
  m->key[i] = key;
  m->err[i] = err;
}

/* The checks of one job, remembered once the gate is through: within a job every arm is
 * checked, so that each of two identical kernels (the A/A pair) is launched before burn-in. */
typedef struct gate_new {
  int n;
  unsigned long long key[ARM_COUNT * 8]; /* measure.input_sets is at most 8 */
  double err[ARM_COUNT * 8];
} gate_new;

/* Arm a's check on input set s, or what a check of the same kernel on the same inputs found
 * in an earlier job of this process. */
static int check_arm(const backend_ops *ops, void *self, const job *j, const placement *p, int s,
                     gate_memo *memo, gate_new *found, result *r, double *err, tf_err *e) {
  int a = p->arm, remember = memo && !j->arm[a].fault[0];
  unsigned long long key = remember ? gate_key(j, a, s) : 0;
  if (remember && memo_find(memo, key, err)) return 0;
  if (ops->check(self, p, s, err, e)) return -1;
  r->checked |= 1 << a;
  if (remember && *err <= j->tolerance && found->n < ARM_COUNT * 8) {
    found->key[found->n] = key;
    found->err[found->n++] = *err;
  }
  return 0;
}

/* Every arm on every input set in the place its first round gives it (or what this process
 * found for the same kernel before); with a canary, the copy too (a second module is still
 * code that must compute the right thing, and its first launch, which loads it, stays out of
 * the timed rounds). */
static int gate(const backend_ops *ops, void *self, const job *j, result *r, gate_memo *memo,
                tf_err *e) {
  gate_new found = {0};
  r->correct = 1;
  for (int a = 0; a <= ARM_COUNT; a++) {
    int copy = a == ARM_COUNT;
    if (copy && j->canary_rounds == 0) break;
    placement p = copy ? placement_canary(&j->measure, 0, 1) : placement_of(&j->measure, 0, a);
    double *worst = &r->rel_err[copy ? ARM_BEST : a];
    if (!copy) *worst = 0;
    for (int s = 0; s < j->measure.input_sets; s++) {
      double err;
      if (copy ? ops->check(self, &p, s, &err, e)
               : check_arm(ops, self, j, &p, s, memo, &found, r, &err, e))
        return -1;
      if (!(err <= *worst)) *worst = err; /* NaN propagates */
      if (!(err <= j->tolerance)) r->correct = 0;
    }
  }
  for (int i = 0; i < found.n; i++) memo_keep(memo, found.key[i], found.err[i]);
  return 0;
}

/* Round i: every arm `samples` launches; spread[a] (when not NULL) each arm's launch spread. */
static int run_round(const backend_ops *ops, void *self, const job *j, int i, int samples,
                     round_rec *rec, double *spread, tf_err *e) {
  memset(rec, 0, sizeof *rec);
  round_order(&j->measure, i, rec->order);
  int set = i % j->measure.input_sets;
  ops->clock(self, &rec->sm_mhz[0], &rec->reasons[0]);
  for (int p = 0; p < ARM_COUNT; p++) {
    int a = rec->order[p];
    unsigned long long reasons;
    placement pl = placement_of(&j->measure, i, a);
    if (ops->sample(self, &pl, set, samples, &rec->us[a], &rec->kernel_us[a],
                    spread ? &spread[a] : NULL, e))
      return -1;
    ops->clock(self, &rec->arm_mhz[a], &reasons);
  }
  ops->clock(self, &rec->sm_mhz[1], &rec->reasons[1]);
  return 0;
}

/* Has the worker dropped the job? Then it ends here, as an error nobody reads. */
static int dropped(const protocol_ctx *ctx, tf_err *e) {
  if (!ctx || !ctx->dropped || !ctx->dropped()) return 0;
  return tf_fail(e, TF_EXIT_FAIL, "dropped by the worker (run ahead, then not wanted)");
}

int protocol_samples(const measure_opts *m, const decide_opts *d, double spread, int *wanted) {
  const double z = 3.09, k = 1.2533; /* 0.1% one-sided; a median's error over a mean's */
  const double min_gain = d->min_gain;
  double want = m->samples;
  if (decide_fixed_rounds(d) && isfinite(spread) && spread > 0) {
    want = min_gain > 0 ? 2.0 * pow(k * spread, 2) * pow(k * z, 2) /
                              (min_gain * min_gain * (double)m->rounds)
                        : (double)m->max_samples;
    want = ceil(fmin(want, 1e6));
  }
  int w = want > m->samples ? (int)want : m->samples;
  if (wanted) *wanted = w;
  return w < m->max_samples ? w : m->max_samples;
}

/* Burn-in at measure.samples, whose launches' spread (the median over best's and new's
 * batches) then sets the samples of every later round of the job (protocol_samples). */
static int burn_in(const backend_ops *ops, void *self, const job *j, result *r,
                   const protocol_ctx *ctx, tf_err *e) {
  round_rec scratch;
  double spreads[2 * 1000];
  int n = 0;
  for (int b = 0; b < j->measure.burn_in; b++) {
    double s[ARM_COUNT] = {0};
    if (dropped(ctx, e) || run_round(ops, self, j, b, j->measure.samples, &scratch, s, e))
      return -1;
    if (n + 2 <= (int)(sizeof spreads / sizeof spreads[0])) {
      spreads[n++] = s[ARM_BEST];
      spreads[n++] = s[ARM_NEW];
    }
  }
  r->burn_in = j->measure.burn_in;
  r->launch_spread = n > 0 ? stats_median(spreads, n) : NAN;
  r->samples = protocol_samples(&j->measure, &j->decide, r->launch_spread,
                                &r->samples_wanted);
  return 0;
}

/* The A/A canary: best against its second copy in new's place, the order alternating, on the
 * input sets in turn. Run after burn-in and before the generation's own rounds, so that it
 * sees the process exactly as the generation will. */
static int canary(const backend_ops *ops, void *self, const job *j, result *r,
                  const protocol_ctx *ctx, tf_err *e) {
  for (int i = 0; i < j->canary_rounds && i < MSG_MAX_CANARY; i++) {
    if (dropped(ctx, e)) return -1;
    canary_round *c = &r->canary[i];
    c->copy_first = placement_phase(&j->measure, i);
    for (int k = 0; k < 2; k++) {
      int which = c->copy_first ? 1 - k : k;
      placement p = placement_canary(&j->measure, i, which);
      if (ops->sample(self, &p, i % j->measure.input_sets, r->samples, &c->us[which],
                      &c->kernel_us[which], NULL, e))
        return -1;
    }
    r->ncanary = i + 1;
  }
  return 0;
}

static int recorded(const backend_ops *ops, void *self, const job *j, result *r,
                    const protocol_ctx *ctx, tf_err *e) {
  int used = 0, screened = 0;
  while (used < j->measure.rounds && r->nrounds < MSG_MAX_ROUNDS) {
    round_rec *rec = &r->rounds[r->nrounds];
    if (dropped(ctx, e) || run_round(ops, self, j, r->nrounds, r->samples, rec, NULL, e))
      return -1;
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

/* Burn-in, canary and the recorded rounds: the time the GPU measures. */
static int measure(const backend_ops *ops, void *self, const job *j, result *r,
                   const protocol_ctx *ctx, tf_err *e) {
  double t0 = tf_monotonic_s();
  int rc = burn_in(ops, self, j, r, ctx, e) || canary(ops, self, j, r, ctx, e) ||
           recorded(ops, self, j, r, ctx, e);
  r->times.measure_s = tf_monotonic_s() - t0;
  return rc ? -1 : 0;
}

/* What prepare took besides the compile (the backend reports compile_ms and the wait). */
static void prepared(result *r, double seconds) {
  r->times.compile_s = r->compile_ms / 1e3;
  r->times.load_s = seconds > r->times.compile_s ? seconds - r->times.compile_s : 0.0;
}

int protocol_run(const backend_ops *ops, void *self, const job *j, result *r,
                 const protocol_ctx *ctx, tf_err *e) {
  gate_memo *memo = ctx ? ctx->memo : NULL;
  double t0 = tf_monotonic_s();
  r->id = j->id;
  r->status = RESULT_OK;
  r->launch_spread = NAN;
  r->checked = 0;
  /* Every arm is checked against the job's reference: a job without one is refused on every
   * backend, the simulated one too, so that a job built without it fails where no GPU is. */
  if (!j->ref_kernel[0] && !j->ref_library[0]) {
    tf_fail(e, TF_EXIT_INPUT, "job %lld names no reference: nothing would check its outputs",
            j->id);
    r->wall_s = tf_monotonic_s() - t0;
    return job_failed(r, e);
  }
  int rc = 0;
  int failed = ops->prepare(self, j, r, e);
  double t1 = tf_monotonic_s();
  prepared(r, t1 - t0);
  if (failed) {
    rc = job_failed(r, e);
    if (rc == 0) ops->finish(self); /* prepare may have half-built the job */
  } else {
    int bad = dropped(ctx, e) || gate(ops, self, j, r, memo, e); /* after a long compile */
    r->times.check_s = tf_monotonic_s() - t1;
    if (bad || (r->correct && measure(ops, self, j, r, ctx, e))) rc = job_failed(r, e);
    if (rc == 0) ops->finish(self); /* never touch a device after a sticky error */
  }
  r->wall_s = tf_monotonic_s() - t0;
  if (rc == 0 && ops->elapsed) ops->elapsed(self, r);
  return rc;
}
