/* Unit tests of worker/protocol.c's gate memory (a measure process checks each kernel once
 * per input set, and a job that brings it again takes the errors found before; anything
 * that could change a kernel's outputs checks it again) and of a dropped job's end. On the
 * simulated device, through a table that counts the checks. */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "tests/unit/testutil.h"
#include "worker/backend.h"
#include "common/decide.h"
#include "common/rule.h"
#include "worker/protocol.h"

static int checks[ARM_COUNT]; /* checks that reached the device, per arm */

static int counting_check(void *self, const placement *p, int set, double *rel_err, tf_err *e) {
  checks[p->arm]++;
  return backend_sim.check(self, p, set, rel_err, e);
}

static backend_ops counted(void) {
  backend_ops ops = backend_sim;
  ops.check = counting_check;
  return ops;
}

/* The chain template's job with two input sets: arms at ITERS best, new, control. */
static void chain_job(job *j, long long best, long long new_iters, long long control) {
  memset(j, 0, sizeof *j);
  j->id = 1;
  snprintf(j->root, sizeof j->root, "%s", source_dir());
  snprintf(j->sources[0], SPEC_PATH, "templates/chain.cu");
  snprintf(j->specs[0], SPEC_PATH, "templates/chain.json");
  snprintf(j->ref_kernel, sizeof j->ref_kernel, "ref_scale2");
  snprintf(j->ref_source, SPEC_PATH, "templates/ref_scale2.cu");
  j->nsources = 1;
  j->ndims = 1;
  snprintf(j->dim_names[0], SPEC_NAME, "N");
  j->dims[0] = 1 << 20;
  const long long iters[ARM_COUNT] = {best, new_iters, control};
  for (int a = 0; a < ARM_COUNT; a++) {
    j->arm[a].from_template = 1;
    j->arm[a].cfg = (config){1, {iters[a]}};
    snprintf(j->arm[a].name_expr, sizeof j->arm[a].name_expr, "tf_chain<%lld>", iters[a]);
  }
  j->tolerance = 1e-5;
  j->measure = (measure_opts){.burn_in = 1, .rounds = 2, .samples = 3, .max_samples = 3, .input_sets = 2,
                              .deadline_s = 60, .seed = 7};
  snprintf(j->decide.rule, sizeof j->decide.rule, "median");
}

typedef struct fixture {
  backend_ops ops;
  void *self;
  job *j;
  result *r;
  gate_memo *memo;
} fixture;

static int setup(void **state) {
  fixture *f = calloc(1, sizeof *f);
  f->ops = counted();
  f->j = calloc(1, sizeof *f->j);
  f->r = calloc(1, sizeof *f->r);
  f->memo = calloc(1, sizeof *f->memo);
  backend_opts o = {0, NULL, 0};
  tf_err e = {0};
  if (!f->j || !f->r || !f->memo || backend_sim.open(&f->self, &o, &e)) return -1;
  *state = f;
  return 0;
}

static int teardown(void **state) {
  fixture *f = *state;
  backend_sim.close(f->self);
  free(f->j), free(f->r), free(f->memo), free(f);
  return 0;
}

/* Run f's job with memo m; the checks per arm it made land in got[]. */
static void run(fixture *f, gate_memo *m, int got[ARM_COUNT]) {
  tf_err e = {0};
  protocol_ctx ctx = {.memo = m};
  memset(checks, 0, sizeof checks);
  assert_int_equal(protocol_run(&f->ops, f->self, f->j, f->r, m ? &ctx : NULL, &e), 0);
  assert_int_equal(f->r->status, RESULT_OK);
  memcpy(got, checks, sizeof checks);
}

static void a_kernel_should_be_checked_once_per_input_set_in_a_process(void **state) {
  fixture *f = *state;
  int got[ARM_COUNT];
  chain_job(f->j, 1000, 1030, 1100);
  run(f, f->memo, got);
  assert_int_equal(got[ARM_BEST], 2);
  assert_int_equal(got[ARM_NEW], 2);
  assert_int_equal(got[ARM_CONTROL], 2);
  assert_int_equal(f->r->checked, 7);
  assert_true(f->r->correct);
  /* the next generation: the same best and control, another candidate */
  chain_job(f->j, 1000, 1060, 1100);
  run(f, f->memo, got);
  assert_int_equal(got[ARM_BEST], 0);
  assert_int_equal(got[ARM_NEW], 2);
  assert_int_equal(got[ARM_CONTROL], 0);
  assert_int_equal(f->r->checked, 1 << ARM_NEW);
  assert_true(f->r->correct);
  for (int a = 0; a < ARM_COUNT; a++) assert_true(f->r->rel_err[a] == 0.0);
  /* a candidate kept: the old candidate is best now, and was checked as new */
  chain_job(f->j, 1060, 1090, 1100);
  run(f, f->memo, got);
  assert_int_equal(got[ARM_BEST] + got[ARM_CONTROL], 0);
  assert_int_equal(got[ARM_NEW], 2);
}

static void identical_arms_of_one_job_should_each_be_checked(void **state) {
  fixture *f = *state;
  int got[ARM_COUNT];
  chain_job(f->j, 1000, 1000, 1100); /* the A/A pair: both launched before burn-in */
  run(f, f->memo, got);
  assert_int_equal(got[ARM_BEST], 2);
  assert_int_equal(got[ARM_NEW], 2);
  run(f, f->memo, got);
  assert_int_equal(got[ARM_BEST] + got[ARM_NEW] + got[ARM_CONTROL], 0);
  assert_int_equal(f->r->checked, 0);
}

static void without_a_memo_every_arm_should_be_checked(void **state) {
  fixture *f = *state;
  int got[ARM_COUNT];
  chain_job(f->j, 1000, 1030, 1100);
  run(f, NULL, got);
  run(f, NULL, got);
  for (int a = 0; a < ARM_COUNT; a++) assert_int_equal(got[a], 2);
  assert_int_equal(f->r->checked, 7);
}

static void other_inputs_or_shape_should_check_again(void **state) {
  fixture *f = *state;
  int got[ARM_COUNT];
  chain_job(f->j, 1000, 1030, 1100);
  run(f, f->memo, got);
  f->j->measure.seed = 8; /* other inputs */
  run(f, f->memo, got);
  for (int a = 0; a < ARM_COUNT; a++) assert_int_equal(got[a], 2);
  chain_job(f->j, 1000, 1030, 1100);
  f->j->dims[0] = 1 << 21; /* another problem */
  run(f, f->memo, got);
  for (int a = 0; a < ARM_COUNT; a++) assert_int_equal(got[a], 2);
  chain_job(f->j, 1000, 1030, 1100);
  f->j->arm[ARM_BEST].geom.block[0] = 64; /* another launch */
  run(f, f->memo, got);
  assert_int_equal(got[ARM_BEST], 2);
  assert_int_equal(got[ARM_NEW] + got[ARM_CONTROL], 0);
}

static void a_failed_or_faulty_check_should_never_be_remembered(void **state) {
  fixture *f = *state;
  int got[ARM_COUNT];
  chain_job(f->j, 1000, 1030, 1100);
  snprintf(f->j->arm[ARM_NEW].fault, sizeof f->j->arm[ARM_NEW].fault, "wrong");
  run(f, f->memo, got);
  assert_false(f->r->correct);
  run(f, f->memo, got);
  assert_int_equal(got[ARM_NEW], 2); /* injected: checked every time */
  assert_false(f->r->correct);
  assert_true(f->r->rel_err[ARM_NEW] == 0.5);
  /* a tolerance the kernel fails: the failure is found again, not remembered as a pass */
  chain_job(f->j, 1000, 1030, 1100);
  f->j->tolerance = -1.0;
  run(f, f->memo, got);
  assert_false(f->r->correct);
  run(f, f->memo, got);
  assert_int_equal(got[ARM_NEW], 2);
  assert_false(f->r->correct);
}

static void a_full_memo_should_start_again(void **state) {
  fixture *f = *state;
  int got[ARM_COUNT];
  for (int i = 0; i < GATE_MEMO_SLOTS; i++) { /* more kernels than it keeps */
    chain_job(f->j, 1000, 2000 + i, 1100);
    run(f, f->memo, got);
    assert_int_equal(got[ARM_NEW], 2);
    assert_true(f->memo->used <= GATE_MEMO_SLOTS * 3 / 4);
  }
}

static int asked, drop_at; /* the question "dropped?": asked so often, yes from drop_at on */

static int dropped_at_third_round(void) { return ++asked >= drop_at; }

static void a_dropped_job_should_end_at_its_next_round(void **state) {
  fixture *f = *state;
  tf_err e = {0};
  protocol_ctx ctx = {.memo = f->memo, .dropped = dropped_at_third_round};
  chain_job(f->j, 1000, 1030, 1100);
  f->j->measure.burn_in = 2;
  f->j->measure.rounds = 8;
  asked = 0, drop_at = 1000;
  assert_int_equal(protocol_run(&f->ops, f->self, f->j, f->r, &ctx, &e), 0);
  assert_int_equal(f->r->status, RESULT_OK);
  assert_int_equal(asked, 1 + 2 + f->r->nrounds); /* before the gate and every round */
  asked = 0, drop_at = 4;                         /* yes before the first recorded round */
  memset(f->r, 0, sizeof *f->r);                  /* as the child gives each job */
  assert_int_equal(protocol_run(&f->ops, f->self, f->j, f->r, &ctx, &e), 0);
  assert_int_equal(f->r->status, RESULT_ERROR);
  assert_non_null(strstr(f->r->detail, "dropped by the worker"));
  assert_int_equal(f->r->nrounds, 0);
  chain_job(f->j, 1000, 1040, 1100); /* a new candidate, dropped before its check */
  asked = 0, drop_at = 1;
  memset(checks, 0, sizeof checks);
  memset(f->r, 0, sizeof *f->r);
  assert_int_equal(protocol_run(&f->ops, f->self, f->j, f->r, &ctx, &e), 0);
  assert_int_equal(f->r->status, RESULT_ERROR);
  assert_int_equal(checks[ARM_NEW], 0);
}

/* Where arm a ran in round rec: its position in rec->order, or -1. */
static int place_of(const round_rec *rec, int a) {
  for (int p = 0; p < ARM_COUNT; p++)
    if (rec->order[p] == a) return p;
  return -1;
}

/* The recorded rounds' arm orders (protocol.h): under "rotate" every six rounds run all six
 * permutations, best before new in every other round, so that neither an arm's place nor its
 * neighbour favours it; under "fixed" every round runs best, new, control. */
static void the_arm_order_should_rotate_through_every_permutation(void **state) {
  fixture *f = *state;
  tf_err e = {0};
  chain_job(f->j, 1000, 1030, 1100);
  f->j->measure.rounds = 12;
  assert_int_equal(protocol_run(&f->ops, f->self, f->j, f->r, NULL, &e), 0);
  assert_int_equal(f->r->status, RESULT_OK);
  assert_int_equal(f->r->nrounds, 12);
  int seen[ARM_COUNT * ARM_COUNT * ARM_COUNT] = {0};
  for (int i = 0; i < f->r->nrounds; i++) {
    const round_rec *rec = &f->r->rounds[i];
    int best = place_of(rec, ARM_BEST), new_at = place_of(rec, ARM_NEW);
    int control = place_of(rec, ARM_CONTROL);
    assert_true(best >= 0 && new_at >= 0 && control >= 0); /* a permutation */
    assert_int_equal(best < new_at, i % 2 == 0);
    seen[(rec->order[0] * ARM_COUNT + rec->order[1]) * ARM_COUNT + rec->order[2]]++;
    if (i >= 6) assert_memory_equal(rec->order, f->r->rounds[i - 6].order, sizeof rec->order);
  }
  for (int i = 0; i < f->r->nrounds; i++) { /* each round starts from nothing */
    assert_int_equal(f->r->rounds[i].screened, 0);
    assert_true(f->r->rounds[i].sm_mhz[0] > 0 && f->r->rounds[i].sm_mhz[1] > 0);
  }
  int distinct = 0;
  for (size_t k = 0; k < sizeof seen / sizeof seen[0]; k++) distinct += seen[k] > 0;
  assert_int_equal(distinct, 6);
  int order[ARM_COUNT];
  protocol_order(7, order); /* the table the rounds follow */
  assert_memory_equal(order, f->r->rounds[7].order, sizeof order);

  f->j->measure.order = ORDER_FIXED;
  memset(f->r, 0, sizeof *f->r);
  assert_int_equal(protocol_run(&f->ops, f->self, f->j, f->r, NULL, &e), 0);
  assert_int_equal(f->r->nrounds, 12);
  for (int i = 0; i < f->r->nrounds; i++) {
    assert_int_equal(f->r->rounds[i].order[0], ARM_BEST);
    assert_int_equal(f->r->rounds[i].order[1], ARM_NEW);
    assert_int_equal(f->r->rounds[i].order[2], ARM_CONTROL);
  }
}

static int finished; /* the backend's finish calls */

static int refused_prepare(void *self, const job *j, result *r, tf_err *e) {
  (void)self, (void)j, (void)r;
  return tf_fail(e, TF_EXIT_FAIL, "prepare says no");
}

static int failing_check(void *self, const placement *p, int set, double *rel_err, tf_err *e) {
  (void)self, (void)p, (void)set, (void)rel_err;
  return tf_fail(e, TF_EXIT_FAIL, "check says no");
}

static int failing_sample(void *self, const placement *p, int set, int n, double *us,
                          double *kernel_us, double *spread, tf_err *e) {
  (void)self, (void)p, (void)set, (void)n, (void)us, (void)kernel_us, (void)spread;
  return tf_fail(e, TF_EXIT_FAIL, "sample says no");
}

static void counting_finish(void *self) {
  finished++;
  backend_sim.finish(self);
}

/* A backend error in prepare or in the check is the job's status (an error the coordinator
 * records), not the worker's: protocol_run returns 0 and the backend is finished once. */
static void a_backend_error_should_become_the_jobs_status(void **state) {
  fixture *f = *state;
  tf_err e = {0};
  chain_job(f->j, 1000, 1030, 1100);
  f->ops.finish = counting_finish;
  f->ops.prepare = refused_prepare;
  finished = 0;
  assert_int_equal(protocol_run(&f->ops, f->self, f->j, f->r, NULL, &e), 0);
  assert_int_equal(f->r->status, RESULT_ERROR);
  assert_non_null(strstr(f->r->detail, "prepare says no"));
  assert_int_equal(finished, 1);
  f->ops.prepare = backend_sim.prepare;
  f->ops.check = failing_check;
  finished = 0;
  memset(f->r, 0, sizeof *f->r);
  assert_int_equal(protocol_run(&f->ops, f->self, f->j, f->r, NULL, &e), 0);
  assert_int_equal(f->r->status, RESULT_ERROR);
  assert_non_null(strstr(f->r->detail, "check says no"));
  assert_int_equal(f->r->nrounds, 0);
  assert_int_equal(finished, 1);
  /* and in a round, burn-in's first */
  f->ops.check = backend_sim.check;
  f->ops.sample = failing_sample;
  finished = 0;
  memset(f->r, 0, sizeof *f->r);
  assert_int_equal(protocol_run(&f->ops, f->self, f->j, f->r, NULL, &e), 0);
  assert_int_equal(f->r->status, RESULT_ERROR);
  assert_non_null(strstr(f->r->detail, "sample says no"));
  assert_int_equal(f->r->nrounds, 0);
  assert_int_equal(finished, 1);
}

static int prepared_count; /* the backend's prepare calls */

static int counting_prepare(void *self, const job *j, result *r, tf_err *e) {
  prepared_count++;
  return backend_sim.prepare(self, j, r, e);
}

/* A job that names no reference is refused on every backend before it is prepared: nothing
 * would check its outputs, and the simulated device would not notice. */
static void a_job_without_a_reference_should_be_refused_unprepared(void **state) {
  fixture *f = *state;
  tf_err e = {0};
  chain_job(f->j, 1000, 1030, 1100);
  f->j->ref_kernel[0] = '\0';
  f->ops.prepare = counting_prepare;
  prepared_count = 0;
  assert_int_equal(protocol_run(&f->ops, f->self, f->j, f->r, NULL, &e), 0);
  assert_int_equal(f->r->status, RESULT_ERROR);
  assert_non_null(strstr(f->r->detail, "names no reference"));
  assert_int_equal(prepared_count, 0);
  assert_int_equal(f->r->nrounds, 0);
  /* with its reference it runs */
  chain_job(f->j, 1000, 1030, 1100);
  memset(f->r, 0, sizeof *f->r);
  assert_int_equal(protocol_run(&f->ops, f->self, f->j, f->r, NULL, &e), 0);
  assert_int_equal(f->r->status, RESULT_OK);
  assert_int_equal(prepared_count, 1);
}

/* Samples per round follow the launches' spread (protocol_samples' model): at 4.2% (the
 * spread of a 6 us layernorm, design.md's example) the median of 8 ratios needs 104 launches
 * per arm to put an identical pair's false keep at 0.1%; a narrow spread keeps
 * measure.samples; the cap holds; max_samples == samples is a fixed count. */
static void samples_should_follow_the_launch_spread(void **state) {
  (void)state;
  measure_opts m = {.rounds = 8, .samples = 20, .max_samples = 256};
  decide_opts d;
  decide_defaults(&d);
  snprintf(d.rule, sizeof d.rule, "median");
  int wanted = 0;
  assert_int_equal(protocol_samples(&m, &d, NAN, &wanted), 20);
  assert_int_equal(wanted, 20);
  assert_int_equal(protocol_samples(&m, &d, 0.01, &wanted), 20);
  assert_int_equal(wanted, 20);
  assert_int_equal(protocol_samples(&m, &d, 0.042, &wanted), 104);
  assert_int_equal(wanted, 104);
  /* the model's promise at that count: z = min_gain sqrt(rounds) / (1.2533 noise) >= 3.09 */
  double noise = sqrt(2.0) * 1.2533 * 0.042 / sqrt(104.0);
  assert_true(0.01 * sqrt(8.0) / (1.2533 * noise) >= 3.09);
  assert_int_equal(protocol_samples(&m, &d, 0.10, &wanted), 256);
  assert_true(wanted > 256);
  m.rounds = 32; /* four times the rounds, a quarter of the samples */
  assert_int_equal(protocol_samples(&m, &d, 0.042, NULL), 26);
  m.rounds = 8;
  m.max_samples = 20;
  assert_int_equal(protocol_samples(&m, &d, 0.10, &wanted), 20);
  assert_true(wanted > 20);
  m.max_samples = 256; /* the sequential rule measures more rounds instead */
  snprintf(d.rule, sizeof d.rule, "sequential");
  assert_int_equal(protocol_samples(&m, &d, 0.10, &wanted), 20);
  assert_int_equal(wanted, 20);
  snprintf(d.rule, sizeof d.rule, "median"); /* no minimum gain: the most samples allowed */
  d.min_gain = 0.0;
  assert_int_equal(protocol_samples(&m, &d, 0.05, &wanted), 256);
  assert_int_equal(wanted, 256);
}

/* On a device whose launches spread by 5%, the job measures its canary and recorded rounds at
 * the count burn-in's spread asks for, and records spread, wanted and used. */
static void a_wide_launch_spread_should_raise_the_samples(void **state) {
  (void)state;
  setenv("TUNEFARM_SIM_NOISE", "jitter=0.05", 1);
  void *self = NULL;
  backend_opts o = {0, NULL, 0};
  tf_err e = {0};
  assert_int_equal(backend_sim.open(&self, &o, &e), 0);
  unsetenv("TUNEFARM_SIM_NOISE");
  job *j = calloc(1, sizeof *j);
  result *r = calloc(1, sizeof *r);
  assert_non_null(j);
  assert_non_null(r);
  chain_job(j, 1000, 1000, 1100);
  j->measure.burn_in = 4, j->measure.rounds = 8, j->measure.samples = 20;
  j->measure.max_samples = 256;
  j->decide.min_gain = 0.01;
  assert_int_equal(protocol_run(&backend_sim, self, j, r, NULL, &e), 0);
  assert_int_equal(r->status, RESULT_OK);
  assert_true(fabs(r->launch_spread - 0.05) < 0.015);
  assert_true(r->samples > 100 && r->samples < 256); /* 2 (1.2533^2 3.09 0.05)^2 / (0.01^2 8): ~150 */
  assert_int_equal(r->samples, r->samples_wanted < 256 ? r->samples_wanted : 256);
  assert_int_equal(r->samples, protocol_samples(&j->measure, &j->decide, r->launch_spread, NULL));
  j->measure.max_samples = 20; /* a fixed count stays fixed */
  memset(r, 0, sizeof *r);
  assert_int_equal(protocol_run(&backend_sim, self, j, r, NULL, &e), 0);
  assert_int_equal(r->samples, 20);
  assert_true(r->samples_wanted > 20);
  backend_sim.close(self);
  free(j), free(r);
}

/* ---- a backend that logs what the protocol asks of it ---- */

typedef struct sample_call {
  placement p;
  int set, samples;
} sample_call;

static sample_call calls[2048];
static int ncalls;
static placement checked_at[64];
static int nchecked;
static double exact_err = -1.0; /* >= 0: every check reads exactly this error */

static int logging_sample(void *self, const placement *p, int set, int samples, double *us,
                          double *kernel_us, double *spread, tf_err *e) {
  if (ncalls < (int)(sizeof calls / sizeof calls[0]))
    calls[ncalls++] = (sample_call){*p, set, samples};
  return backend_sim.sample(self, p, set, samples, us, kernel_us, spread, e);
}

static int logging_check(void *self, const placement *p, int set, double *rel_err, tf_err *e) {
  checks[p->arm]++;
  if (nchecked < (int)(sizeof checked_at / sizeof checked_at[0])) checked_at[nchecked++] = *p;
  int rc = backend_sim.check(self, p, set, rel_err, e);
  if (rc == 0 && exact_err >= 0) *rel_err = exact_err;
  return rc;
}

static void run_logged(fixture *f, gate_memo *m) {
  tf_err e = {0};
  protocol_ctx ctx = {.memo = m};
  f->ops.sample = logging_sample;
  f->ops.check = logging_check;
  ncalls = nchecked = 0;
  memset(checks, 0, sizeof checks);
  memset(f->r, 0, sizeof *f->r);
  assert_int_equal(protocol_run(&f->ops, f->self, f->j, f->r, m ? &ctx : NULL, &e), 0);
  assert_int_equal(f->r->status, RESULT_OK);
}

/* The canary: after burn-in, best against its second copy (code 1, in new's buffers), the
 * copy first in the rounds whose phase says so, at the job's samples, on the sets in turn. The
 * gate checks the copy too, in the copy's place. */
static void the_canary_should_alternate_best_and_its_copy(void **state) {
  fixture *f = *state;
  chain_job(f->j, 1000, 1030, 1100);
  f->j->canary_rounds = 6;
  f->j->measure.burn_in = 2;
  run_logged(f, NULL);
  assert_int_equal(f->r->ncanary, 6);
  int copy_checked = 0;
  for (int i = 0; i < nchecked; i++)
    copy_checked += checked_at[i].arm == ARM_BEST && checked_at[i].code == 1;
  assert_int_equal(copy_checked, f->j->measure.input_sets);
  int at = 2 * ARM_COUNT; /* burn-in first */
  for (int i = 0; i < 6; i++) {
    const canary_round *c = &f->r->canary[i];
    assert_int_equal(c->copy_first, placement_phase(&f->j->measure, i));
    for (int k = 0; k < 2; k++) {
      const sample_call *s = &calls[at + 2 * i + k];
      int which = c->copy_first ? 1 - k : k;
      placement want = placement_canary(&f->j->measure, i, which);
      assert_int_equal(s->p.arm, ARM_BEST);
      assert_int_equal(s->p.code, want.code);
      assert_int_equal(s->p.bufs, want.bufs);
      assert_int_equal(s->set, i % f->j->measure.input_sets);
      assert_int_equal(s->samples, f->r->samples);
    }
    assert_true(c->us[0] > 0 && c->us[1] > 0);
  }
  /* then the recorded rounds, each arm once a round */
  assert_int_equal(ncalls, at + 2 * 6 + ARM_COUNT * f->r->nrounds);
}

/* Best's second copy fails to sample: the canary's error is the job's, and no round follows. */
static int copy_failing_sample(void *self, const placement *p, int set, int n, double *us,
                               double *kernel_us, double *spread, tf_err *e) {
  if (p->arm == ARM_BEST && p->code == 1) return tf_fail(e, TF_EXIT_FAIL, "the copy says no");
  return backend_sim.sample(self, p, set, n, us, kernel_us, spread, e);
}

static void a_canary_that_fails_should_fail_the_job(void **state) {
  fixture *f = *state;
  tf_err e = {0};
  chain_job(f->j, 1000, 1030, 1100);
  f->j->canary_rounds = 6;
  f->ops.sample = copy_failing_sample;
  assert_int_equal(protocol_run(&f->ops, f->self, f->j, f->r, NULL, &e), 0);
  assert_int_equal(f->r->status, RESULT_ERROR);
  assert_non_null(strstr(f->r->detail, "the copy says no"));
  assert_int_equal(f->r->ncanary, 0);
  assert_int_equal(f->r->nrounds, 0);
}

/* The sequential rule stops the rounds once it is sure; the median measures every one. */
static void the_rule_should_say_when_the_rounds_are_enough(void **state) {
  fixture *f = *state;
  chain_job(f->j, 1000, 500, 1100);
  f->j->measure.rounds = 40;
  run_logged(f, NULL);
  assert_int_equal(f->r->nrounds, 40);
  decide_defaults(&f->j->decide);
  snprintf(f->j->decide.rule, sizeof f->j->decide.rule, "sequential");
  run_logged(f, NULL);
  assert_true(f->r->nrounds < 40);
  assert_int_equal(f->r->nrounds, (int)*decide_param(&f->j->decide, "min_rounds"));
}

/* The record holds MSG_MAX_ROUNDS rounds: a job that asks for more stops there. */
static void the_rounds_should_stop_at_the_records_capacity(void **state) {
  fixture *f = *state;
  chain_job(f->j, 1000, 1030, 1100);
  f->j->measure.rounds = MSG_MAX_ROUNDS + 20;
  f->j->measure.samples = f->j->measure.max_samples = 1;
  run_logged(f, NULL);
  assert_int_equal(f->r->nrounds, MSG_MAX_ROUNDS);
}

/* A check whose error equals the tolerance passes, and is remembered as a pass. */
static void a_check_at_the_tolerance_should_pass_and_be_remembered(void **state) {
  fixture *f = *state;
  chain_job(f->j, 1000, 1030, 1100);
  exact_err = f->j->tolerance;
  run_logged(f, f->memo);
  assert_true(f->r->correct);
  assert_true(f->r->rel_err[ARM_NEW] == f->j->tolerance);
  run_logged(f, f->memo);
  exact_err = -1.0;
  assert_int_equal(checks[ARM_BEST] + checks[ARM_NEW] + checks[ARM_CONTROL], 0);
  assert_true(f->r->correct);
}

/* The template's source is part of what a check is remembered by. */
static void another_template_source_should_check_again(void **state) {
  fixture *f = *state;
  int got[ARM_COUNT];
  chain_job(f->j, 1000, 1030, 1100);
  run(f, f->memo, got);
  snprintf(f->j->sources[0], SPEC_PATH, "templates/./chain.cu");
  run(f, f->memo, got);
  for (int a = 0; a < ARM_COUNT; a++) assert_int_equal(got[a], 2);
}

/* The memo starts again only at three quarters full. */
static void a_memo_below_three_quarters_should_keep_what_it_has(void **state) {
  fixture *f = *state;
  int got[ARM_COUNT];
  f->memo->used = GATE_MEMO_SLOTS * 3 / 4 - 7; /* room for the job's six checks */
  chain_job(f->j, 1000, 1030, 1100);
  run(f, f->memo, got);
  assert_int_equal(f->memo->used, GATE_MEMO_SLOTS * 3 / 4 - 1);
  run(f, f->memo, got);
  assert_int_equal(got[ARM_BEST] + got[ARM_NEW] + got[ARM_CONTROL], 0);
}

/* A crowded memo probes forward from a key's slot and wraps past the last one: with only the
 * last slot free, the job's checks land in it and nowhere outside the table. */
static void a_crowded_memo_should_probe_forward_within_its_table(void **state) {
  fixture *f = *state;
  struct {
    unsigned long long guard[8];
    gate_memo m;
    unsigned long long after[8];
  } *box = calloc(1, sizeof *box);
  assert_non_null(box);
  for (int i = 0; i < GATE_MEMO_SLOTS - 1; i++) box->m.key[i] = 0xfeed0000ULL + (unsigned)i;
  int got[ARM_COUNT];
  chain_job(f->j, 1000, 1000, 1000); /* one kernel: one key per input set */
  f->j->measure.input_sets = 1;
  run(f, &box->m, got);
  assert_int_equal(got[ARM_BEST] + got[ARM_NEW] + got[ARM_CONTROL], 3);
  assert_true(box->m.key[GATE_MEMO_SLOTS - 1] != 0);
  for (int i = 0; i < 8; i++) assert_true(box->guard[i] == 0 && box->after[i] == 0);
  run(f, &box->m, got); /* found again where it went */
  assert_int_equal(got[ARM_BEST] + got[ARM_NEW] + got[ARM_CONTROL], 0);
  free(box);
}

/* No spread to go by (0 or NAN) keeps measure.samples, whatever min_gain is. */
static void an_unknown_spread_should_keep_the_samples(void **state) {
  (void)state;
  measure_opts m = {.rounds = 8, .samples = 20, .max_samples = 256};
  decide_opts d;
  decide_defaults(&d);
  snprintf(d.rule, sizeof d.rule, "median");
  d.min_gain = 0.0;
  int wanted = 0;
  assert_int_equal(protocol_samples(&m, &d, 0.0, &wanted), 20);
  assert_int_equal(wanted, 20);
  assert_int_equal(protocol_samples(&m, &d, NAN, &wanted), 20);
  assert_int_equal(protocol_samples(&m, &d, 0.01, &wanted), 256); /* no gain to resolve: the cap */
}

/* A clock that swings 20% between readings and numbers its reasons by the reading. */
static unsigned long long readings;
static void swinging_clock(void *self, double *mhz, unsigned long long *reasons) {
  (void)self;
  *reasons = ++readings;
  *mhz = readings % 2 ? 1980.0 : 1650.0;
}

/* Rounds the rule screens do not count toward measure.rounds, yet the record still stops at
 * its capacity; each round's clock reasons are the readings before and after it. */
static void screened_rounds_should_stop_at_the_records_capacity(void **state) {
  fixture *f = *state;
  chain_job(f->j, 1000, 1030, 1100);
  snprintf(f->j->decide.rule, sizeof f->j->decide.rule, "sequential");
  f->j->decide.max_screened = 10 * MSG_MAX_ROUNDS;
  f->j->measure.samples = f->j->measure.max_samples = 1;
  f->ops.clock = swinging_clock;
  readings = 0;
  run_logged(f, NULL);
  assert_int_equal(f->r->nrounds, MSG_MAX_ROUNDS);
  for (int i = 0; i < f->r->nrounds; i++) {
    const round_rec *rr = &f->r->rounds[i];
    assert_true(rr->screened);
    assert_true(rr->reasons[0] > 0);
    assert_true(rr->reasons[1] == rr->reasons[0] + ARM_COUNT + 1);
  }
}

/* More screened rounds than decide.max_screened end the rounds there: the job keeps what it
 * has, and the rule decides on it (or asks again). */
static void screened_rounds_should_stop_past_max_screened(void **state) {
  fixture *f = *state;
  chain_job(f->j, 1000, 1030, 1100);
  snprintf(f->j->decide.rule, sizeof f->j->decide.rule, "sequential");
  f->j->decide.max_screened = 3;
  f->j->measure.samples = f->j->measure.max_samples = 1;
  f->ops.clock = swinging_clock;
  readings = 0;
  run_logged(f, NULL);
  assert_int_equal(f->r->nrounds, 4); /* the fourth screened round is one too many */
  for (int i = 0; i < f->r->nrounds; i++) assert_true(f->r->rounds[i].screened);
}

/* Each burn-in sample reports a spread of its own, numbered; those of best and new are kept. */
static double burn_spreads[2 * 1000];
static int nburn, nspread;
static int numbering_sample(void *self, const placement *p, int set, int samples, double *us,
                            double *kernel_us, double *spread, tf_err *e) {
  int rc = backend_sim.sample(self, p, set, samples, us, kernel_us, spread, e);
  if (spread) {
    *spread = ++nspread;
    if (p->arm != ARM_CONTROL && nburn < 2 * 1000) burn_spreads[nburn++] = *spread;
  }
  return rc;
}

/* The longest burn-in (1000 rounds) keeps the spreads of every one of its rounds. */
static void the_longest_burn_in_should_keep_every_spread(void **state) {
  fixture *f = *state;
  chain_job(f->j, 1000, 1030, 1100);
  f->j->measure.burn_in = 1000;
  f->j->measure.samples = f->j->measure.max_samples = 1;
  f->ops.sample = numbering_sample;
  nburn = nspread = 0;
  tf_err e = {0};
  memset(f->r, 0, sizeof *f->r);
  assert_int_equal(protocol_run(&f->ops, f->self, f->j, f->r, NULL, &e), 0);
  assert_int_equal(nburn, 2 * 1000);
  assert_true(f->r->launch_spread == stats_median(burn_spreads, nburn));
}

int main(void) {
  /* These test the measurement machinery on made-up jobs: the simulated device compiles
   * nothing (its NVRTC compile is tested by tests/cli/sim_compile.sh). */
  setenv("TUNEFARM_SIM_COMPILE", "0", 1);
  const struct CMUnitTest tests[] = {
      cmocka_unit_test_setup_teardown(the_canary_should_alternate_best_and_its_copy, setup, teardown),
      cmocka_unit_test_setup_teardown(the_rule_should_say_when_the_rounds_are_enough, setup, teardown),
      cmocka_unit_test_setup_teardown(the_rounds_should_stop_at_the_records_capacity, setup, teardown),
      cmocka_unit_test_setup_teardown(the_longest_burn_in_should_keep_every_spread, setup, teardown),
      cmocka_unit_test_setup_teardown(screened_rounds_should_stop_at_the_records_capacity, setup,
                                      teardown),
      cmocka_unit_test_setup_teardown(a_check_at_the_tolerance_should_pass_and_be_remembered, setup, teardown),
      cmocka_unit_test_setup_teardown(another_template_source_should_check_again, setup, teardown),
      cmocka_unit_test_setup_teardown(a_memo_below_three_quarters_should_keep_what_it_has, setup, teardown),
      cmocka_unit_test_setup_teardown(a_crowded_memo_should_probe_forward_within_its_table, setup, teardown),
      cmocka_unit_test(an_unknown_spread_should_keep_the_samples),
      cmocka_unit_test_setup_teardown(a_kernel_should_be_checked_once_per_input_set_in_a_process,
                                      setup, teardown),
      cmocka_unit_test_setup_teardown(identical_arms_of_one_job_should_each_be_checked, setup,
                                      teardown),
      cmocka_unit_test_setup_teardown(without_a_memo_every_arm_should_be_checked, setup,
                                      teardown),
      cmocka_unit_test_setup_teardown(other_inputs_or_shape_should_check_again, setup, teardown),
      cmocka_unit_test_setup_teardown(a_failed_or_faulty_check_should_never_be_remembered, setup,
                                      teardown),
      cmocka_unit_test_setup_teardown(a_full_memo_should_start_again, setup, teardown),
      cmocka_unit_test_setup_teardown(the_arm_order_should_rotate_through_every_permutation,
                                      setup, teardown),
      cmocka_unit_test_setup_teardown(a_canary_that_fails_should_fail_the_job, setup, teardown),
      cmocka_unit_test_setup_teardown(screened_rounds_should_stop_past_max_screened, setup,
                                      teardown),
      cmocka_unit_test_setup_teardown(a_job_without_a_reference_should_be_refused_unprepared, setup,
                                      teardown),
      cmocka_unit_test_setup_teardown(a_backend_error_should_become_the_jobs_status, setup,
                                      teardown),
      cmocka_unit_test(samples_should_follow_the_launch_spread),
      cmocka_unit_test(a_wide_launch_spread_should_raise_the_samples),
      cmocka_unit_test_setup_teardown(a_dropped_job_should_end_at_its_next_round, setup,
                                      teardown),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
