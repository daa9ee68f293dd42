/* test_search: the search state machine (coordinator/search.h), driven without MPI.
 *
 * A toy template (knobs A, B, C of four values; A * B <= 16) and a toy device: a
 * configuration's time is a sum over its knobs of the distance from a known optimum, and a
 * generation keeps new when new is faster. A script can make a generation noisy, a fault, or
 * measured by a biased process. Each test drives the machine as the farm does (next, then
 * the facts of the record the step produced, applied) and looks at what it did. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "coordinator/search.h"
#include "tests/unit/testutil.h"

static const char toy_template[] =
    "{\"name\": \"toy\", \"source\": \"toy.cu\", \"kernel\": \"toy\", \"reference\": {\"kernel\": \"ref\", \"source\": \"toy.cu\", \"launch\": {\"grid\": [\"N\", 1, 1], \"block\": [1, 1, 1]}},\n"
    " \"problem\": {\"N\": [1, 65536]},\n"
    " \"knobs\": {\"A\": {\"values\": [1, 2, 4, 8]}, \"B\": {\"values\": [1, 2, 4, 8]},\n"
    "            \"C\": {\"values\": [0, 1, 2, 3]}},\n"
    " \"constraints\": [{\"name\": \"ab\", \"expr\": \"A * B <= 16\", \"reason\": \"too big\"}],\n"
    " \"launch\": {\"grid\": [1, 1, 1], \"block\": [32, 1, 1]},\n"
    " \"buffers\": [{\"name\": \"x\", \"count\": \"N\", \"role\": \"input\"},\n"
    "             {\"name\": \"y\", \"count\": \"N\", \"role\": \"output\"}],\n"
    " \"args\": [\"x\", \"y\", \"N\"]}\n";

typedef struct fixture {
  char dir[256];
  spec tmpl;
  long long dims[SPEC_MAX_DIMS];
  search_config cfg;
} fixture;

static int setup(void **state) {
  fixture *f = calloc(1, sizeof *f);
  if (!f) return -1;
  snprintf(f->dir, sizeof f->dir, "/tmp/tf-test-search-XXXXXX");
  if (!mkdtemp(f->dir)) return -1;
  write_file(f->dir, "toy.json", toy_template);
  write_file(f->dir, "toy.cu", "template <int A, int B, int C> __global__ void toy(const float *x, float *y, int n) {}\n");
  char p[512];
  snprintf(p, sizeof p, "%s/toy.json", f->dir);
  tf_err e = {0};
  if (spec_load(&f->tmpl, p, &e)) fail_msg("%s", e.msg);
  f->dims[0] = 1024;
  search_config *c = &f->cfg;
  c->tmpl = &f->tmpl;
  c->dims = f->dims;
  c->start = (config){3, {1, 1, 0}};
  c->search = (search_opts){.enabled = 1, .budget = 40, .max_stale = 12, .two_knob_after = 6,
                            .mode = "neighbors"};
  c->max_requeue = 2;
  c->canary = (canary_opts){.rounds = 16, .every = 50, .max_restarts = 3, .threshold = 0.0025};
  c->seed = 1;
  c->proposer = proposer_find(PROPOSER_DEFAULT, NULL);
  *state = f;
  return 0;
}

static int teardown(void **state) {
  fixture *f = *state;
  spec_release(&f->tmpl);
  rm_rf(f->dir);
  free(f);
  return 0;
}

/* ---- the toy device ---- */

static const int optimum[3] = {2, 1, 3}; /* value indices: A 4, B 2, C 3 */

static double toy_us(const spec *s, const config *c) {
  double t = 10.0;
  for (int k = 0; k < 3; k++) t += fabs((double)(spec_value_index(s, k, c->v[k]) - optimum[k]));
  return t;
}

/* What happens to the measured generation g. */
typedef enum { PLAIN, NOISY, FAULT, BIASED, UNVETTED } outcome;
typedef outcome (*script)(long long g, const search_step *st);

static outcome plain(long long g, const search_step *st) {
  (void)g;
  (void)st;
  return PLAIN;
}

/* The facts of the record the farm writes for step st. */
static search_fact fact_of(const spec *s, const search_step *st, outcome o) {
  search_fact f;
  memset(&f, 0, sizeof f);
  f.kind = st->kind;
  f.generation = st->generation;
  f.segment = st->segment;
  f.duel = st->duel;
  f.best = st->best;
  f.cand = st->cand;
  f.restart = st->restart;
  f.champion = st->champion;
  f.champion_us = st->champion_us;
  f.start = st->start;
  snprintf(f.reason, sizeof f.reason, "%s", st->reason);
  if (st->kind != SEARCH_MEASURE) return f;
  double b = toy_us(s, &st->best), n = toy_us(s, &st->cand);
  f.status = o == FAULT ? RESULT_FAULT : RESULT_OK;
  f.correct = o != FAULT;
  f.decision = o == FAULT ? DECISION_REJECT : o == NOISY ? DECISION_REFUSED
               : n < b ? DECISION_KEEP : DECISION_REJECT;
  f.ratio = o == FAULT ? NAN : n / b;
  f.best_us = o == FAULT ? NAN : b;
  f.new_us = o == FAULT ? NAN : n;
  f.child = 1;
  f.asked_canary = st->canary;
  f.asked_fresh = st->fresh;
  f.job_id = st->job_id;
  f.canary = o == BIASED ? TRUST_CANARY_BIASED : st->canary ? TRUST_CANARY_OK : TRUST_NO_CANARY;
  if (o == UNVETTED) f.child = 2; /* a process no canary cleared */
  return f;
}

/* Drive s like the farm: next, the record's facts (untrusted as the farm judges), apply; up
 * to max steps or DONE. The facts land in log (when not NULL). Returns the steps taken. */
static int drive(search *s, script sc, int max, search_fact *log, search_step *steps) {
  int n = 0;
  tf_err e = {0};
  for (; n < max; n++) {
    search_step st;
    if (search_next(s, &st, &e)) fail_msg("next: %s", e.msg);
    if (st.kind == SEARCH_DONE) break;
    search_fact f = fact_of(s->cfg.tmpl, &st, st.kind == SEARCH_MEASURE ? sc(st.generation, &st)
                                                                        : PLAIN);
    if (f.kind == SEARCH_MEASURE) f.untrusted = !search_trusts(s, &f);
    if (search_apply(s, &f, &e)) fail_msg("apply at generation %lld: %s", f.generation, e.msg);
    if (log) log[n] = f;
    if (steps) steps[n] = st;
  }
  return n;
}

static search *new_search(const search_config *cfg) {
  search *s = calloc(1, sizeof *s);
  tf_err e = {0};
  assert_non_null(s);
  if (search_init(s, cfg, &e)) fail_msg("%s", e.msg);
  return s;
}

static void free_search(search *s) {
  search_release(s);
  free(s);
}

static int knobs_changed(const config *a, const config *b) {
  int n = 0;
  for (int k = 0; k < a->n; k++) n += a->v[k] != b->v[k];
  return n;
}

/* ---- single moves, refusals, budget, max_stale ---- */

static void search_should_measure_single_moves_from_the_start(void **state) {
  fixture *f = *state;
  search *s = new_search(&f->cfg);
  search_step st;
  tf_err e = {0};
  assert_int_equal(search_next(s, &st, &e), 0);
  assert_int_equal(st.kind, SEARCH_MEASURE);
  assert_int_equal(st.generation, 1);
  assert_true(config_equal(&st.best, &f->cfg.start));
  assert_int_equal(knobs_changed(&st.best, &st.cand), 1);
  assert_int_equal(st.canary, 1); /* a run begins in fresh processes, each vetted first */
  assert_int_equal(st.duel, 0);
  search_step again;
  assert_int_equal(search_next(s, &again, &e), 0); /* next changes nothing */
  assert_true(config_equal(&again.cand, &st.cand));
  free_search(s);
}

static void search_should_refuse_a_candidate_that_breaks_a_constraint_without_a_job(void **state) {
  fixture *f = *state;
  search *s = new_search(&f->cfg);
  search_step steps[200];
  int n = drive(s, plain, 200, NULL, steps), refusals = 0;
  for (int i = 0; i < n; i++) {
    if (steps[i].kind != SEARCH_REFUSE) continue;
    refusals++;
    assert_true(steps[i].cand.v[0] * steps[i].cand.v[1] > 16);
    assert_int_equal(steps[i].constraint, 0);
  }
  assert_true(refusals > 0);
  assert_int_equal(s->refused, refusals); /* never measured, never in the budget */
  free_search(s);
}

static void search_should_stop_at_its_budget(void **state) {
  fixture *f = *state;
  f->cfg.search.budget = 5;
  search *s = new_search(&f->cfg);
  search_step steps[100];
  int n = drive(s, plain, 100, NULL, steps);
  assert_int_equal(s->measured, 5);
  assert_int_equal(steps[n - 1].kind, SEARCH_END);
  assert_string_equal(steps[n - 1].reason, "budget of 5 generations spent");
  assert_true(s->done);
  free_search(s);
}

static void search_should_stop_after_max_stale_rejections_in_a_row(void **state) {
  fixture *f = *state;
  f->cfg.start = (config){3, {4, 2, 3}}; /* the optimum: nothing beats it */
  f->cfg.search.max_stale = 3;
  search *s = new_search(&f->cfg);
  search_step steps[100];
  int n = drive(s, plain, 100, NULL, steps);
  assert_int_equal(s->keeps, 0);
  assert_int_equal(s->measured, 3);
  assert_string_equal(steps[n - 1].reason, "3 generations in a row without a keep (max_stale)");
  free_search(s);
}

static void search_should_keep_faster_candidates_and_feed_the_proposer(void **state) {
  fixture *f = *state;
  search *s = new_search(&f->cfg);
  search_step steps[300];
  int n = drive(s, plain, 300, NULL, steps);
  assert_true(s->keeps > 0);
  assert_true(config_equal(&s->best, &(config){3, {4, 2, 3}})); /* the toy's optimum */
  for (int i = 1; i < n; i++) /* every record's best is the best the ones before led to */
    if (steps[i - 1].kind == SEARCH_MEASURE && steps[i].kind == SEARCH_MEASURE &&
        toy_us(&f->tmpl, &steps[i - 1].cand) < toy_us(&f->tmpl, &steps[i - 1].best))
      assert_true(config_equal(&steps[i].best, &steps[i - 1].cand));
  double paid = 0;
  for (int k = 0; k < 3; k++) paid += s->prop.payoff[k];
  assert_true(paid > 0); /* keeps pay the knobs they moved */
  free_search(s);
}

/* Near misses (rejected within 3%) make informed two-knob moves once single ones stall. */
static void search_should_propose_two_knob_moves_when_single_moves_stall(void **state) {
  fixture *f = *state;
  f->cfg.start = (config){3, {4, 2, 3}};
  f->cfg.search.two_knob_after = 2;
  f->cfg.search.max_stale = 20;
  search *s = new_search(&f->cfg);
  tf_err e = {0};
  int two = 0;
  for (int i = 0; i < 20 && !two; i++) {
    search_step st;
    assert_int_equal(search_next(s, &st, &e), 0);
    if (st.kind != SEARCH_MEASURE) break;
    two = knobs_changed(&st.best, &st.cand) == 2;
    assert_true(!two || s->stale >= 2);
    search_fact fa = fact_of(&f->tmpl, &st, PLAIN);
    fa.ratio = 1.01; /* a near miss */
    assert_int_equal(search_apply(s, &fa, &e), 0);
  }
  assert_true(two);
  free_search(s);
}

/* ---- noisy generations ---- */

static outcome noisy_at_1(long long g, const search_step *st) {
  (void)st;
  return g <= 3 ? NOISY : PLAIN;
}

static void search_should_measure_a_noisy_generation_again_up_to_max_requeue(void **state) {
  fixture *f = *state;
  search *s = new_search(&f->cfg);
  search_step steps[4];
  drive(s, noisy_at_1, 4, NULL, steps);
  for (int i = 1; i < 3; i++) assert_true(config_equal(&steps[i].cand, &steps[0].cand));
  assert_false(config_equal(&steps[3].cand, &steps[0].cand)); /* max_requeue 2: then counted */
  assert_int_equal(s->refused, 3);
  assert_int_equal(s->measured, 4); /* noisy measurements use the budget */
  free_search(s);
}

/* ---- restarts and duels ---- */

static void search_should_restart_from_a_random_legal_untried_configuration(void **state) {
  fixture *f = *state;
  f->cfg.start = (config){3, {4, 2, 3}};
  f->cfg.search.max_stale = 2;
  f->cfg.search.restarts = 2;
  search *s = new_search(&f->cfg);
  search_step steps[100];
  search_fact log[100];
  int n = drive(s, plain, 100, log, steps), restarts = 0;
  for (int i = 0; i < n; i++) {
    if (steps[i].kind != SEARCH_RESTART) continue;
    restarts++;
    assert_int_equal(steps[i].restart, restarts);
    assert_true(steps[i].start.v[0] * steps[i].start.v[1] <= 16);
    for (int j = 0; j < i; j++) /* never tried before it */
      assert_false(log[j].kind <= SEARCH_REFUSE && config_equal(&log[j].cand, &steps[i].start));
  }
  assert_int_equal(restarts, 2);
  /* the optimum stays the champion: no restarted search beats it */
  assert_true(config_equal(&s->best, &f->cfg.start));
  free_search(s);
}

/* A restarted search that kept something meets the champion: a keep makes it the champion. */
static void search_should_duel_a_restarted_search_that_kept_something(void **state) {
  fixture *f = *state;
  f->cfg.start = (config){3, {1, 1, 0}};
  f->cfg.search.max_stale = 1;
  f->cfg.search.restarts = 3;
  search *s = new_search(&f->cfg);
  search_step steps[300];
  int n = drive(s, plain, 300, NULL, steps), duels = 0;
  for (int i = 0; i < n; i++) {
    if (!steps[i].duel) continue;
    duels++;
    assert_true(steps[i].segment > 0);
    assert_true(toy_us(&f->tmpl, &steps[i].cand) != toy_us(&f->tmpl, &steps[i].best) ||
                !config_equal(&steps[i].cand, &steps[i].best));
    assert_true(steps[i + 1].kind == SEARCH_RESTART || steps[i + 1].kind == SEARCH_END);
    const config *winner = toy_us(&f->tmpl, &steps[i].cand) < toy_us(&f->tmpl, &steps[i].best)
                               ? &steps[i].cand : &steps[i].best;
    if (steps[i + 1].kind == SEARCH_RESTART) assert_true(config_equal(&steps[i + 1].champion, winner));
    else assert_true(config_equal(&steps[i + 1].best, winner));
  }
  assert_true(duels > 0);
  free_search(s);
}

/* The budget runs out inside a restarted search that kept something: its duel is measured
 * one past the budget, and measured again when noisy, still past it. */
static outcome noisy_duel(long long g, const search_step *st) {
  (void)g;
  static int n;
  if (!st->duel) return n = 0, PLAIN;
  return n++ < 1 ? NOISY : PLAIN;
}

static void search_should_measure_a_noisy_duel_again_past_the_budget(void **state) {
  fixture *f = *state;
  f->cfg.search.max_stale = 1;
  f->cfg.search.restarts = 5;
  f->cfg.search.budget = 6;
  search *s = new_search(&f->cfg);
  search_step steps[200];
  int n = drive(s, noisy_duel, 200, NULL, steps), duel_steps = 0, over = 0;
  for (int i = 0; i < n; i++) duel_steps += steps[i].duel;
  assert_true(duel_steps >= 2);
  assert_true(steps[n - 2].duel && steps[n - 3].duel); /* noisy, then decided */
  assert_true(config_equal(&steps[n - 2].cand, &steps[n - 3].cand));
  over = s->measured - f->cfg.search.budget;
  assert_true(over >= 1); /* past the budget */
  assert_string_equal(steps[n - 1].reason, "budget of 6 generations spent");
  free_search(s);
}

/* A duel that faults measured nothing: the champion stands, with its time. */
static outcome faulted_duel(long long g, const search_step *st) {
  (void)g;
  return st->duel ? FAULT : PLAIN;
}

static void search_should_keep_the_champion_after_a_faulted_duel(void **state) {
  fixture *f = *state;
  f->cfg.search.max_stale = 1;
  f->cfg.search.restarts = 1;
  search *s = new_search(&f->cfg);
  search_step steps[300];
  int n = drive(s, faulted_duel, 300, NULL, steps), at = -1;
  for (int i = 0; i < n; i++)
    if (steps[i].duel) at = i;
  assert_true(at >= 0);
  assert_int_equal(s->faults, 1);
  assert_int_equal(steps[n - 1].kind, SEARCH_END);
  assert_true(config_equal(&steps[n - 1].best, &steps[at].best)); /* the champion */
  double us;
  long long gen;
  assert_true(config_equal(search_answer(s, &us, &gen), &steps[at].best));
  assert_true(us == toy_us(&f->tmpl, &steps[at].best));
  assert_true(gen < steps[at].generation); /* measured before the duel */
  free_search(s);
}

/* ---- fixed modes ---- */

static void search_should_measure_the_fixed_pair_every_generation(void **state) {
  fixture *f = *state;
  f->cfg.search.fixed = 1;
  f->cfg.search.budget = 7;
  f->cfg.search.pair = (config){3, {4, 2, 3}}; /* faster: every generation keeps */
  snprintf(f->cfg.search.mode, sizeof f->cfg.search.mode, "pair");
  search *s = new_search(&f->cfg);
  search_step steps[20];
  int n = drive(s, plain, 20, NULL, steps);
  assert_int_equal(n, 8);
  for (int i = 0; i < 7; i++) {
    assert_int_equal(steps[i].kind, SEARCH_MEASURE);
    assert_true(config_equal(&steps[i].best, &f->cfg.start)); /* best never moves */
    assert_true(config_equal(&steps[i].cand, &f->cfg.search.pair));
  }
  assert_int_equal(s->keeps, 7);
  assert_true(config_equal(&steps[7].best, &f->cfg.start));
  free_search(s);
}

/* ---- measure processes and the canary ---- */

static void search_should_ask_for_fresh_processes_and_canaries_on_schedule(void **state) {
  fixture *f = *state;
  f->cfg.search.fixed = 1;
  f->cfg.search.pair = f->cfg.start;
  f->cfg.search.budget = 10;
  f->cfg.search.fresh_every = 4;
  f->cfg.canary.every = 3;
  search *s = new_search(&f->cfg);
  search_step steps[20];
  drive(s, plain, 10, NULL, steps);
  /* fresh after every 4 measured; a canary with every fresh process and every 3 */
  static const int fresh[10] = {0, 0, 0, 0, 1, 0, 0, 0, 1, 0};
  static const int canary[10] = {1, 0, 0, 1, 1, 0, 0, 1, 1, 0};
  for (int i = 0; i < 10; i++) {
    assert_int_equal(steps[i].fresh, fresh[i]);
    assert_int_equal(steps[i].canary, canary[i]);
  }
  free_search(s);
}

static outcome unvetted_at_2(long long g, const search_step *st) {
  (void)st;
  return g == 2 ? UNVETTED : PLAIN;
}

/* A generation measured by a process no canary cleared is not decided: measured again, and
 * it counts toward nothing. */
static void search_should_measure_an_untrusted_result_again_without_counting_it(void **state) {
  fixture *f = *state;
  search *s = new_search(&f->cfg);
  search_step steps[4];
  search_fact log[4];
  drive(s, unvetted_at_2, 4, log, steps);
  assert_false(log[0].untrusted);
  assert_true(log[1].untrusted);
  assert_true(config_equal(&steps[2].cand, &steps[1].cand)); /* again */
  assert_int_equal(steps[2].canary, 1); /* after a canary */
  assert_int_equal(s->trust.untrusted, 1);
  assert_int_equal(s->measured, 3);
  free_search(s);
}

static outcome always_biased(long long g, const search_step *st) {
  (void)g;
  return st->canary ? BIASED : PLAIN;
}

static void search_should_end_after_max_restarts_biased_processes_in_a_row(void **state) {
  fixture *f = *state;
  f->cfg.canary.max_restarts = 2;
  search *s = new_search(&f->cfg);
  search_step steps[20];
  int n = drive(s, always_biased, 20, NULL, steps);
  assert_int_equal(n, 4); /* three biased processes, then the end */
  for (int i = 0; i < 3; i++) {
    assert_int_equal(steps[i].canary, 1);
    assert_int_equal(steps[i].fresh, i > 0); /* a biased process is replaced */
  }
  assert_int_equal(steps[3].kind, SEARCH_END);
  assert_non_null(strstr(steps[3].reason, "3 measure processes in a row biased beyond 0.25%"));
  assert_int_equal(s->measured, 0);
  assert_int_equal(s->trust.biased, 3);
  free_search(s);
}

static void search_should_trust_only_processes_a_canary_cleared(void **state) {
  fixture *f = *state;
  search *s = new_search(&f->cfg);
  search_fact fa = {.kind = SEARCH_MEASURE, .status = RESULT_OK, .correct = 1, .child = 1};
  assert_false(search_trusts(s, &fa)); /* no canary yet */
  fa.canary = TRUST_CANARY_OK;
  assert_true(search_trusts(s, &fa));
  fa.canary = TRUST_CANARY_BIASED;
  assert_false(search_trusts(s, &fa));
  fa.status = RESULT_FAULT; /* nothing to decide from a fault: it stands as it is */
  assert_true(search_trusts(s, &fa));
  s->trust.vetted_child = 1;
  fa = (search_fact){.kind = SEARCH_MEASURE, .status = RESULT_OK, .correct = 1, .child = 1};
  assert_true(search_trusts(s, &fa));
  fa.child = 2;
  assert_false(search_trusts(s, &fa));
  f->cfg.canary.rounds = 0;
  free_search(s);
  s = new_search(&f->cfg);
  assert_true(search_trusts(s, &fa)); /* no canary at all: every process is trusted */
  free_search(s);
}

/* ---- resume ---- */

/* The parts of two searches that must agree after the same records. */
static void assert_same_search(const search *a, const search *b) {
  assert_true(config_equal(&a->best, &b->best));
  assert_true(config_equal(&a->cand, &b->cand));
  assert_int_equal(a->generation, b->generation);
  assert_int_equal(a->measured, b->measured);
  assert_int_equal(a->stale, b->stale);
  assert_int_equal(a->requeues, b->requeues);
  assert_int_equal(a->again, b->again);
  assert_int_equal(a->trust.given_up, b->trust.given_up);
  assert_int_equal(a->done, b->done);
  assert_int_equal(a->keeps, b->keeps);
  assert_int_equal(a->rejects, b->rejects);
  assert_int_equal(a->refused, b->refused);
  assert_int_equal(a->ambiguous, b->ambiguous);
  assert_int_equal(a->faults, b->faults);
  assert_true(a->best_us == b->best_us || (isnan(a->best_us) && isnan(b->best_us)));
  assert_true(a->start_us == b->start_us);
  assert_int_equal(a->best_gen, b->best_gen);
  assert_int_equal(a->segment, b->segment);
  assert_int_equal(a->seg_keeps, b->seg_keeps);
  assert_int_equal(a->duel, b->duel);
  assert_int_equal(a->dueled, b->dueled);
  assert_true(config_equal(&a->champion, &b->champion));
  assert_true(a->champion_us == b->champion_us);
  assert_int_equal(a->champion_gen, b->champion_gen);
  assert_string_equal(a->seg_why, b->seg_why);
  assert_string_equal(a->end_reason, b->end_reason);
  assert_int_equal(a->trust.biased_in_row, b->trust.biased_in_row);
  assert_int_equal(a->trust.canaries, b->trust.canaries);
  assert_int_equal(a->trust.untrusted, b->trust.untrusted);
  assert_int_equal(a->tried.n, b->tried.n);
  for (int i = 0; i < a->tried.n; i++) assert_true(config_equal(&a->tried.v[i], &b->tried.v[i]));
  assert_memory_equal(a->prop.payoff, b->prop.payoff, sizeof a->prop.payoff);
  assert_memory_equal(a->prop.tiebreak, b->prop.tiebreak, sizeof a->prop.tiebreak);
  assert_int_equal(a->prop.nnear, b->prop.nnear);
  assert_memory_equal(a->prop.near, b->prop.near, sizeof a->prop.near);
}

/* Everything at once: keeps, static refusals, noisy requeues, untrusted generations, a fault,
 * restarts and duels (one of them noisy). */
static outcome mixed(long long g, const search_step *st) {
  if (st->duel && g % 2) return NOISY;
  if (g % 11 == 3) return NOISY;
  if (g % 13 == 5) return UNVETTED;
  if (g % 17 == 7) return FAULT;
  return PLAIN;
}

/* Replaying the records a live run wrote gives the search that wrote them, at every point:
 * the same state, and the same next step. */
static void search_should_resume_as_the_live_run_left_off(void **state) {
  fixture *f = *state;
  f->cfg.search.max_stale = 2;
  f->cfg.search.restarts = 4;
  f->cfg.search.budget = 30;
  search *live = new_search(&f->cfg);
  search_fact log[400];
  search_step steps[400];
  int n = drive(live, mixed, 400, log, steps), duels = 0, restarts = 0;
  for (int i = 0; i < n; i++) {
    duels += steps[i].duel;
    restarts += steps[i].kind == SEARCH_RESTART;
  }
  assert_true(duels > 0 && restarts > 0 && live->done);
  for (int cut = 0; cut <= n; cut++) {
    search *back = new_search(&f->cfg);
    tf_err e = {0};
    for (int i = 0; i < cut; i++)
      if (search_apply(back, &log[i], &e)) fail_msg("replay of %d: %s", i, e.msg);
    search_begin_run(back); /* what resume does: its processes are new */
    if (cut == n) assert_same_search(live, back);
    search_step st;
    assert_int_equal(search_next(back, &st, &e), 0);
    if (cut < n) { /* the step the live run took there, its process schedule aside */
      assert_int_equal(st.kind, steps[cut].kind);
      assert_int_equal(st.generation, steps[cut].generation);
      assert_int_equal(st.duel, steps[cut].duel);
      assert_true(config_equal(&st.best, &steps[cut].best));
      assert_true(config_equal(&st.cand, &steps[cut].cand));
      assert_string_equal(st.reason, steps[cut].reason);
    }
    free_search(back);
  }
  free_search(live);
}

/* Resume mid-duel: a noisy duel cut after its first measurement is measured again, as the same
 * pair, not the champion against itself. */
static void search_should_resume_mid_duel(void **state) {
  fixture *f = *state;
  f->cfg.search.max_stale = 1;
  f->cfg.search.restarts = 3;
  search *live = new_search(&f->cfg);
  search_fact log[300];
  search_step steps[300];
  int n = drive(live, noisy_duel, 300, log, steps), first = -1;
  for (int i = 0; i < n && first < 0; i++)
    if (steps[i].duel) first = i;
  assert_true(first >= 0 && log[first].decision == DECISION_REFUSED);
  search *back = new_search(&f->cfg);
  tf_err e = {0};
  for (int i = 0; i <= first; i++) assert_int_equal(search_apply(back, &log[i], &e), 0);
  search_begin_run(back);
  search_step st;
  assert_int_equal(search_next(back, &st, &e), 0);
  assert_int_equal(st.duel, 1);
  assert_true(config_equal(&st.best, &steps[first].best));
  assert_true(config_equal(&st.cand, &steps[first].cand));
  free_search(back);
  free_search(live);
}

/* Resume refuses what the search could not have written. */
static void search_should_refuse_records_it_could_not_have_written(void **state) {
  fixture *f = *state;
  search *live = new_search(&f->cfg);
  search_fact log[8];
  drive(live, plain, 8, log, NULL);
  free_search(live);
  tf_err e = {0};
  /* a generation out of order */
  search *s = new_search(&f->cfg);
  search_fact x = log[1];
  assert_int_equal(search_apply(s, &x, &e), -1);
  assert_int_equal(e.code, TF_EXIT_INPUT);
  assert_non_null(strstr(e.msg, "key 'generation' must be 1"));
  free_search(s);
  /* a best that is not the best the records before it lead to */
  s = new_search(&f->cfg);
  x = log[0];
  x.best.v[2] = 2;
  assert_int_equal(search_apply(s, &x, &e), -1);
  assert_non_null(strstr(e.msg, "key 'best' is"));
  free_search(s);
  /* a kept new that breaks a constraint */
  s = new_search(&f->cfg);
  x = log[0];
  x.cand = (config){3, {8, 8, 0}};
  x.decision = DECISION_KEEP;
  assert_int_equal(search_apply(s, &x, &e), -1);
  assert_non_null(strstr(e.msg, "key 'new' breaks a constraint"));
  free_search(s);
  /* a duel that is not due */
  s = new_search(&f->cfg);
  x = log[0];
  x.duel = 1;
  assert_int_equal(search_apply(s, &x, &e), -1);
  assert_non_null(strstr(e.msg, "no duel is due"));
  free_search(s);
  /* anything after the end */
  s = new_search(&f->cfg);
  search_fact end = {.kind = SEARCH_END, .generation = 0, .best = f->cfg.start};
  assert_int_equal(search_apply(s, &end, &e), 0);
  assert_int_equal(search_apply(s, &log[0], &e), -1);
  assert_non_null(strstr(e.msg, "after the search's end"));
  free_search(s);
}

/* The toy template with a launch that cannot be computed where C is 2 (a division by zero in
 * launch.smem), loaded into f->tmpl in place of the fixture's. */
static void load_failing_launch(fixture *f) {
  char text[sizeof toy_template + 64], p[512];
  const char *at = strstr(toy_template, "\"block\": [32, 1, 1]");
  assert_non_null(at);
  snprintf(text, sizeof text, "%.*s\"block\": [32, 1, 1], \"smem\": \"(C - 2) / (C - 2) - 1\"%s",
           (int)(at - toy_template), toy_template, at + strlen("\"block\": [32, 1, 1]"));
  char dir[300];
  snprintf(dir, sizeof dir, "%s/smem", f->dir);
  assert_int_equal(mkdir(dir, 0700), 0);
  write_file(dir, "toy.json", text);
  write_file(dir, "toy.cu", "template <int A, int B, int C> __global__ void toy(const float *x, float *y, int n) {}\n");
  snprintf(p, sizeof p, "%s/toy.json", dir);
  tf_err e = {0};
  spec_release(&f->tmpl);
  if (spec_load(&f->tmpl, p, &e)) fail_msg("%s", e.msg);
}

/* A candidate whose launch cannot be computed is refused as a static violation is, naming the
 * key and the failure; no job is built for it, the search goes on to its end, restarts never
 * begin there, and resume replays the refusal. */
static void search_should_refuse_a_candidate_whose_launch_fails(void **state) {
  fixture *f = *state;
  load_failing_launch(f);
  f->cfg.search.restarts = 4;
  search *s = new_search(&f->cfg);
  search_fact log[300];
  search_step steps[300];
  int n = drive(s, plain, 300, log, steps), refused = 0, restarts = 0;
  assert_int_equal(steps[n - 1].kind, SEARCH_END);
  for (int i = 0; i < n; i++) {
    const search_step *st = &steps[i];
    if (st->kind == SEARCH_RESTART) {
      restarts++;
      assert_int_not_equal(st->start.v[2], 2);
    }
    if (st->kind == SEARCH_MEASURE) assert_int_not_equal(st->cand.v[2], 2);
    if (st->kind != SEARCH_REFUSE || st->constraint != SEARCH_NO_LAUNCH) continue;
    refused++;
    assert_int_equal(st->cand.v[2], 2);
    assert_true(st->cand.v[0] * st->cand.v[1] <= 16); /* it breaks no constraint */
    assert_string_equal(st->key, "launch.smem");
    assert_non_null(strstr(st->reason, "key 'launch.smem'"));
    assert_non_null(strstr(st->reason, "division by zero"));
    assert_null(strstr(st->reason, f->dir)); /* no path of this machine in a record */
  }
  assert_true(refused > 0);
  assert_true(restarts > 0);
  /* resume: the same facts read back lead to the same end */
  search *back = new_search(&f->cfg);
  tf_err e = {0};
  for (int i = 0; i < n; i++)
    if (search_apply(back, &log[i], &e)) fail_msg("replay of step %d: %s", i, e.msg);
  assert_int_equal(back->done, 1);
  assert_int_equal(back->refused, s->refused);
  assert_true(config_equal(&back->best, &s->best));
  free_search(back);
  /* a record that measured such a candidate, or began a restart there, is not the search's */
  int first = -1, restart = -1;
  for (int i = 0; i < n; i++) {
    if (first < 0 && steps[i].kind == SEARCH_REFUSE && steps[i].constraint == SEARCH_NO_LAUNCH)
      first = i;
    if (restart < 0 && steps[i].kind == SEARCH_RESTART) restart = i;
  }
  back = new_search(&f->cfg);
  for (int i = 0; i < first; i++) assert_int_equal(search_apply(back, &log[i], &e), 0);
  search_fact x = log[first];
  x.kind = SEARCH_MEASURE;
  x.status = RESULT_OK;
  x.correct = 1;
  x.decision = DECISION_REJECT;
  x.job_id = back->last_job + 1;
  assert_int_equal(search_apply(back, &x, &e), -1);
  assert_int_equal(e.code, TF_EXIT_INPUT);
  assert_non_null(strstr(e.msg, "key 'new': its launch cannot be computed"));
  free_search(back);
  back = new_search(&f->cfg);
  for (int i = 0; i < restart; i++) assert_int_equal(search_apply(back, &log[i], &e), 0);
  x = log[restart];
  x.start.v[2] = 2;
  assert_int_equal(search_apply(back, &x, &e), -1);
  assert_non_null(strstr(e.msg, "key 'start': its launch cannot be computed"));
  free_search(back);
  free_search(s);
}

/* A static refusal of a candidate that breaks no constraint and launches is not the search's. */
static void search_should_refuse_a_refusal_record_of_a_launchable_candidate(void **state) {
  fixture *f = *state;
  search *live = new_search(&f->cfg);
  search_fact log[4];
  drive(live, plain, 4, log, NULL);
  free_search(live);
  search *s = new_search(&f->cfg);
  tf_err e = {0};
  search_fact x = log[0];
  assert_int_equal(x.kind, SEARCH_MEASURE);
  x.kind = SEARCH_REFUSE;
  assert_int_equal(search_apply(s, &x, &e), -1);
  assert_non_null(strstr(e.msg, "key 'new' breaks no constraint and its launch computes"));
  free_search(s);
}

/* A campaign names its proposer (search.proposer); one there is none of is refused. */
/* ---- peek: what the search would measure next, without changing it ---- */

/* Apply pending decided d (ratio unknown, as search_peek assumes, or 1 with `near`: a near
 * miss), then follow the search with every candidate rejected but the keep_at-th (-1: none),
 * which is kept, and the near_at-th (-1: none), a near miss: the first n measured candidates
 * into out. */
static int near_path(search *s, const search_step *pending, decision_kind d, int near,
                     int keep_at, int near_at, int n, search_guess *out) {
  tf_err e = {0};
  int k = 0;
  search_step st = *pending;
  while (k < n) {
    search_fact f = fact_of(s->cfg.tmpl, &st, PLAIN);
    if (st.kind == SEARCH_MEASURE) {
      int mine = st.generation == pending->generation;
      f.decision = mine ? d : k == keep_at ? DECISION_KEEP : DECISION_REJECT;
      f.ratio = (mine && near) || (!mine && k == near_at) ? 1.0 : NAN;
      f.untrusted = !search_trusts(s, &f);
      if (!mine) out[k++] = (search_guess){st.best, st.cand};
    }
    if (search_apply(s, &f, &e)) fail_msg("apply: %s", e.msg);
    if (search_next(s, &st, &e)) fail_msg("next: %s", e.msg);
    if (st.kind == SEARCH_END || st.kind == SEARCH_DONE) break;
  }
  return k;
}

static int decided_path(search *s, const search_step *pending, decision_kind d, int keep_at,
                        int n, search_guess *out) {
  return near_path(s, pending, d, 0, keep_at, -1, n, out);
}

/* The search of the fixture after `steps` plain generations, with its next step. */
static search *after(const search_config *cfg, int steps, search_step *next) {
  tf_err e = {0};
  search *s = new_search(cfg);
  drive(s, plain, steps, NULL, NULL);
  if (search_next(s, next, &e)) fail_msg("%s", e.msg);
  return s;
}

static int same_guess(const search_guess *a, const search_guess *b) {
  return config_equal(&a->best, &b->best) && config_equal(&a->cand, &b->cand);
}

typedef struct weighed {
  search_guess g;
  double w;
  int seq;
} weighed;

static int heavier(const void *a, const void *b) {
  const weighed *x = a, *y = b;
  if (x->w != y->w) return x->w < y->w ? 1 : -1;
  return x->seq - y->seq;
}

static void search_peek_should_guess_both_paths_and_change_nothing(void **state) {
  fixture *f = *state;
  tf_err e = {0};
  search_step pending;
  search *s = after(&f->cfg, 7, &pending), *twin = new_search(&f->cfg);
  drive(twin, plain, 7, NULL, NULL);
  assert_int_equal(pending.kind, SEARCH_MEASURE);
  search_guess g[SEARCH_PEEK_PER * 4];
  int n = search_peek(s, &pending, 4, g, &e);
  assert_same_search(s, twin); /* nothing applied */
  search_step again;
  if (search_next(s, &again, &e)) fail_msg("%s", e.msg);
  assert_true(config_equal(&again.cand, &pending.cand));
  /* five kinds of guess, merged by how likely each is to be needed, with p the chance of a
   * keep and q that a reject is a near miss: the rejected path's i-th (1-p)^(i+1); the kept
   * path's p (1-p)^i; the near-miss path's (1-p) q (1-p)^i; the rejected path's i-th kept
   * instead, its j-th guess after that (1-p)^(i+1) p (1-p)^j, and the same i-th rejected as a
   * near miss, (1-p)^(i+1) (1-p) q (1-p)^j, j < SEARCH_PEEK_BRANCH; a guess found again keeps
   * its heavier place (a near miss changes nothing before the search prefers informed moves) */
  enum { B = SEARCH_PEEK_BRANCH, N = 4 * (2 * B + 3) };
  double p = search_keep_chance(s), q = (s->near_rejects + 1.0) / (s->rejects + 2.0);
  assert_true(p > 0.0 && p < 1.0 && q > 0.0 && q < 1.0);
  search_guess rej[4], kept[4], near[4], branch[4][B], nbranch[4][B];
  search_step st;
  search *r = after(&f->cfg, 7, &st);
  assert_int_equal(decided_path(r, &st, DECISION_REJECT, -1, 4, rej), 4);
  free_search(r);
  assert_int_equal(decided_path(twin, &pending, DECISION_KEEP, -1, 4, kept), 4);
  r = after(&f->cfg, 7, &st);
  assert_int_equal(near_path(r, &st, DECISION_REJECT, 1, -1, -1, 4, near), 4);
  free_search(r);
  for (int i = 0; i < 4; i++) {
    search_guess path[4 + B];
    search *b = after(&f->cfg, 7, &st);
    assert_int_equal(decided_path(b, &st, DECISION_REJECT, i, i + 1 + B, path), i + 1 + B);
    assert_true(same_guess(&path[i], &rej[i]));
    for (int j = 0; j < B; j++) {
      assert_true(config_equal(&path[i + 1 + j].best, &rej[i].cand)); /* rej[i] was kept */
      branch[i][j] = path[i + 1 + j];
    }
    free_search(b);
    b = after(&f->cfg, 7, &st);
    assert_int_equal(near_path(b, &st, DECISION_REJECT, 0, -1, i, i + 1 + B, path), i + 1 + B);
    assert_true(same_guess(&path[i], &rej[i]));
    for (int j = 0; j < B; j++) nbranch[i][j] = path[i + 1 + j];
    free_search(b);
  }
  /* the exact order: heavier first, ties in the order the walks find them (each rejected
   * guess, its kept branch, its near-miss branch; then the kept path; then the near-miss
   * path), the weights multiplied out as the walks do, so that ties are ties */
  weighed x[N];
  int m = 0;
  double wr = 1.0 - p, wk = p, wn = (1.0 - p) * q;
  for (int i = 0; i < 4; i++, wr *= 1.0 - p) {
    x[m] = (weighed){rej[i], wr, m};
    m++;
    double wb = wr * p;
    for (int j = 0; j < B; j++, wb *= 1.0 - p) {
      x[m] = (weighed){branch[i][j], wb, m};
      m++;
    }
    wb = wr * (1.0 - p) * q;
    for (int j = 0; j < B; j++, wb *= 1.0 - p) {
      x[m] = (weighed){nbranch[i][j], wb, m};
      m++;
    }
  }
  for (int i = 0; i < 4; i++, wk *= 1.0 - p) {
    x[m] = (weighed){kept[i], wk, m};
    m++;
  }
  for (int i = 0; i < 4; i++, wn *= 1.0 - p) {
    x[m] = (weighed){near[i], wn, m};
    m++;
  }
  assert_int_equal(m, N);
  qsort(x, N, sizeof *x, heavier);
  search_guess want[N];
  int nw = 0;
  for (int k = 0; k < N; k++) {
    int seen = same_guess(&x[k].g, &(search_guess){pending.best, pending.cand});
    for (int i = 0; i < nw && !seen; i++) seen = same_guess(&want[i], &x[k].g);
    if (!seen) want[nw++] = x[k].g;
  }
  assert_int_equal(n, nw);
  for (int k = 0; k < n; k++) assert_true(same_guess(&g[k], &want[k]));
  /* the near misses open guesses the plain walks lack */
  int opened = 0;
  for (int k = 0; k < n; k++) {
    int plain = 0;
    for (int i = 0; i < 4 && !plain; i++) {
      plain |= same_guess(&g[k], &rej[i]) || same_guess(&g[k], &kept[i]);
      for (int j = 0; j < B; j++) plain |= same_guess(&g[k], &branch[i][j]);
    }
    opened += !plain;
  }
  assert_true(opened > 0);
  /* and the guess that follows the job in flight should it be a near miss is in the list (the
   * pool keeps compiling it): at the first state where the rejected path's first four guesses
   * lack it */
  int shown = 0;
  for (int steps = 8; steps < 40 && !shown; steps++) {
    search_guess a[1], b4[4], list[SEARCH_PEEK_PER * 4];
    search *u = after(&f->cfg, steps, &st);
    if (st.kind != SEARCH_MEASURE) {
      free_search(u);
      continue;
    }
    int nl = search_peek(u, &st, 4, list, &e);
    search_step st2;
    search *v = after(&f->cfg, steps, &st2), *w2 = after(&f->cfg, steps, &st2);
    int nb4 = decided_path(w2, &st2, DECISION_REJECT, -1, 4, b4), plain = 0;
    if (near_path(v, &st2, DECISION_REJECT, 1, -1, -1, 1, a) == 1) {
      for (int i = 0; i < nb4; i++) plain |= same_guess(&a[0], &b4[i]);
      if (!plain) {
        for (int k = 0; k < nl; k++) shown |= same_guess(&list[k], &a[0]);
        assert_true(shown);
      }
    }
    free_search(u);
    free_search(v);
    free_search(w2);
  }
  assert_true(shown);
  free_search(s);
  free_search(twin);
}

static void search_peek_should_guess_nothing_after_the_end(void **state) {
  fixture *f = *state;
  tf_err e = {0};
  f->cfg.search.budget = 3;
  search *s = new_search(&f->cfg);
  drive(s, plain, 100, NULL, NULL);
  assert_true(s->done);
  search_guess g[8];
  assert_int_equal(search_peek(s, NULL, 4, g, &e), 0);
  free_search(s);
  search_step next;
  s = after(&f->cfg, 1, &next); /* a live search asked for no guess makes none */
  memset(g, 0xa5, sizeof g);
  search_guess untouched;
  memcpy(&untouched, &g[0], sizeof untouched);
  assert_int_equal(search_peek(s, &next, 0, g, &e), 0);
  assert_memory_equal(&g[0], &untouched, sizeof untouched);
  free_search(s);
}

static void search_should_take_the_proposer_the_campaign_names(void **state) {
  (void)state;
  campaign *c = calloc(1, sizeof *c);
  assert_non_null(c);
  campaign_defaults(c);
  snprintf(c->path, sizeof c->path, "campaigns/x.json");
  search_config cfg;
  tf_err e = {0};
  assert_int_equal(search_config_of(c, 0, &cfg, &e), 0);
  assert_string_equal(cfg.proposer->name, "coordinate");
  snprintf(c->search.proposer, sizeof c->search.proposer, "nosuch");
  assert_int_equal(search_config_of(c, 0, &cfg, &e), -1);
  assert_int_equal(e.code, TF_EXIT_INPUT);
  assert_non_null(strstr(e.msg, "key 'search.proposer': no proposer 'nosuch' (known: coordinate, "
                                "random, annealing, model)"));
  free(c);
}

/* ---- boundaries and messages ---- */

static const proposer_ops *real_proposer;
static int stale_seen[64], two_seen[64], nasked; /* stale and prefer_two at each proposal */

static int logging_next(const proposer *p, const config *best, const tried_set *tried,
                        int prefer_two, config *cand, int *nchanged) {
  if (nasked < 64) two_seen[nasked++] = prefer_two;
  return real_proposer->next(p, best, tried, prefer_two, cand, nchanged);
}

static outcome all_rejected(long long g, const search_step *st) {
  (void)g;
  (void)st;
  return NOISY; /* refused, never kept: max_requeue 0 turns each into a non-keep */
}

/* The proposer is asked for two-knob moves from the two_knob_after-th non-keep in a row on. */
static void two_knob_moves_should_begin_at_their_count(void **state) {
  fixture *f = *state;
  real_proposer = f->cfg.proposer;
  proposer_ops ops = *real_proposer;
  ops.next = logging_next;
  f->cfg.proposer = &ops;
  f->cfg.max_requeue = 0;
  f->cfg.canary.rounds = 0;
  f->cfg.search.two_knob_after = 3;
  search *s = new_search(&f->cfg);
  nasked = 0;
  tf_err e = {0};
  for (int g = 0; g < 6; g++) {
    search_step st;
    assert_int_equal(search_next(s, &st, &e), 0);
    stale_seen[g] = s->stale;
    search_fact fa = fact_of(&f->tmpl, &st, st.kind == SEARCH_MEASURE ? all_rejected(0, &st) : PLAIN);
    assert_int_equal(search_apply(s, &fa, &e), 0);
  }
  assert_true(nasked >= 6);
  for (int i = 0; i < 6; i++) assert_int_equal(two_seen[i], stale_seen[i] >= 3);
  assert_int_equal(two_seen[3], 1);
  assert_int_equal(two_seen[2], 0);
  free_search(s);
  f->cfg.proposer = real_proposer;
}

/* Read back without a template, a configuration is written as its values, exactly. */
static void a_read_back_search_should_name_a_wrong_best_by_its_values(void **state) {
  fixture *f = *state;
  search_config cfg = f->cfg;
  cfg.tmpl = NULL;
  search *s = new_search(&cfg);
  search_fact fa;
  memset(&fa, 0, sizeof fa);
  fa.kind = SEARCH_MEASURE;
  fa.generation = 1;
  fa.best = (config){3, {1, 2, 3}};
  fa.cand = (config){3, {4, 4, 4}};
  fa.job_id = 1;
  tf_err e = {0};
  assert_int_equal(search_apply(s, &fa, &e), -1);
  assert_int_equal(e.code, TF_EXIT_INPUT);
  assert_string_equal(e.msg, "key 'best' is 1 2 3, but the records before it lead to 1 1 0");
  /* a restart whose champion is not the search's best */
  memset(&fa, 0, sizeof fa);
  fa.kind = SEARCH_RESTART;
  fa.restart = 1;
  fa.champion = (config){3, {8, 1, 0}};
  fa.start = (config){3, {2, 2, 2}};
  assert_int_equal(search_apply(s, &fa, &e), -1);
  assert_string_equal(e.msg, "key 'champion' is 8 1 0, but the records before it lead to 1 1 0");
  free_search(s);
}

/* A pending step the search could not have made leads nowhere: nothing to run ahead. */
static void run_ahead_should_follow_only_a_step_the_search_made(void **state) {
  fixture *f = *state;
  search *s = new_search(&f->cfg);
  search_step st, next;
  tf_err e = {0};
  assert_int_equal(search_next(s, &st, &e), 0);
  assert_int_equal(search_next_if_rejected(s, &st, &next), 1);
  assert_int_equal(next.kind, SEARCH_MEASURE);
  assert_int_equal(next.generation, st.generation + 1);
  st.generation += 5;
  assert_int_equal(search_next_if_rejected(s, &st, &next), 0);
  free_search(s);
}

/* An ended search that would end again does not go on. */
static void an_ended_search_should_not_go_on_unchanged(void **state) {
  fixture *f = *state;
  f->cfg.search.budget = 5;
  search *s = new_search(&f->cfg);
  drive(s, plain, 200, NULL, NULL);
  assert_true(s->done);
  search_step st;
  tf_err e = {0};
  assert_int_equal(search_would_go_on(s, &st, &e), 0);
  s->cfg.search.budget = 8;
  assert_int_equal(search_would_go_on(s, &st, &e), 1);
  assert_int_equal(st.kind, SEARCH_MEASURE);
  free_search(s);
}

/* Peeking with room for one guess gives one path's head; peeking twice into the same buffer
 * gives the same list. */
static void peek_should_fill_one_guess_and_repeat_itself(void **state) {
  fixture *f = *state;
  search *s = new_search(&f->cfg);
  search_step st;
  tf_err e = {0};
  assert_int_equal(search_next(s, &st, &e), 0);
  search_guess out[SEARCH_PEEK_PER * 4], first[SEARCH_PEEK_PER * 4];
  assert_true(search_peek(s, &st, 1, out, &e) >= 1);
  memset(out, 0, sizeof out);
  int n = search_peek(s, &st, 4, out, &e);
  assert_true(n > 2);
  memcpy(first, out, sizeof out);
  assert_int_equal(search_peek(s, &st, 4, out, &e), n);
  assert_memory_equal(first, out, sizeof first[0] * (size_t)n);
  assert_int_equal(search_peek(s, &st, 0, out, &e), 0);
  free_search(s);
}

/* A canary that clears its process ends the run of biased ones; without canaries, no job asks
 * for one, fresh processes or not. */
static void a_clean_canary_should_end_the_biased_run(void **state) {
  fixture *f = *state;
  search *s = new_search(&f->cfg);
  search_step st;
  tf_err e = {0};
  assert_int_equal(search_next(s, &st, &e), 0);
  search_fact fa = fact_of(&f->tmpl, &st, BIASED);
  fa.untrusted = !search_trusts(s, &fa);
  assert_int_equal(search_apply(s, &fa, &e), 0);
  assert_int_equal(s->trust.biased_in_row, 1);
  assert_int_equal(search_next(s, &st, &e), 0);
  assert_true(st.canary && st.fresh);
  fa = fact_of(&f->tmpl, &st, PLAIN);
  fa.child = 2;
  assert_int_equal(search_trusts(s, &fa), 1);
  assert_int_equal(search_apply(s, &fa, &e), 0);
  assert_int_equal(s->trust.biased_in_row, 0);
  assert_int_equal(s->trust.vetted_child, 2);
  free_search(s);

  f->cfg.canary.rounds = 0;
  f->cfg.search.fresh_every = 2;
  s = new_search(&f->cfg);
  search_step steps[12];
  int n = drive(s, plain, 12, NULL, steps);
  int fresh = 0;
  for (int i = 0; i < n; i++) {
    assert_int_equal(steps[i].canary, 0);
    fresh += steps[i].fresh;
  }
  assert_true(fresh >= 4);
  free_search(s);
}

/* Every strategy begins its first segment from scratch (proposer_ops.init, not .segment) and
 * runs the toy search to its end, keeping only faster configurations. */
static void every_strategy_should_begin_and_run_the_search(void **state) {
  fixture *f = *state;
  static const char *const names[] = {"coordinate", "random", "annealing", "model"};
  for (int k = 0; k < 4; k++) {
    f->cfg.proposer = proposer_find(names[k], NULL);
    assert_non_null(f->cfg.proposer);
    f->cfg.search.budget = 12;
    search *s = new_search(&f->cfg);
    search_step steps[64];
    int n = drive(s, plain, 64, NULL, steps);
    assert_true(s->done);
    assert_true(n > 1);
    assert_int_equal(steps[0].kind, SEARCH_MEASURE);
    assert_true(s->measured > 0);
    assert_true(toy_us(&f->tmpl, &s->best) <= toy_us(&f->tmpl, &f->cfg.start));
    free_search(s);
  }
}

/* Guesses go on past a restart: a rejected path that ends its segment guesses the restarted
 * search's first candidates, from the restart's own start. */
static void peek_should_guess_past_a_restart(void **state) {
  fixture *f = *state;
  f->cfg.search.max_stale = 1;
  f->cfg.search.restarts = 3;
  tf_err e = {0};
  search_step pending, st;
  search *s = after(&f->cfg, 0, &pending);
  search_guess g[SEARCH_PEEK_PER * 4];
  int n = search_peek(s, &pending, 4, g, &e);
  search *r = after(&f->cfg, 0, &st);
  search_guess rej[4];
  int k = decided_path(r, &st, DECISION_REJECT, -1, 4, rej);
  assert_true(k >= 2);
  assert_false(config_equal(&rej[0].best, &pending.best)); /* a restart lies on the path */
  for (int i = 0; i < k; i++) {
    int found = 0;
    for (int j = 0; j < n; j++) found |= same_guess(&g[j], &rej[i]);
    if (!found) fail_msg("the rejected path's guess %d is not among the %d guesses", i, n);
  }
  free_search(r);
  free_search(s);
}

/* A restarted search that kept nothing has nothing to duel; a plain run is never ambiguous. */
static void a_restarted_search_without_a_keep_should_not_duel(void **state) {
  fixture *f = *state;
  f->cfg.search.max_stale = 1;
  f->cfg.search.restarts = 2;
  search *s = new_search(&f->cfg);
  search_step steps[100];
  int n = drive(s, all_rejected, 100, NULL, steps), restarts = 0;
  for (int i = 0; i < n; i++) {
    restarts += steps[i].kind == SEARCH_RESTART;
    assert_int_equal(steps[i].duel, 0);
  }
  assert_int_equal(restarts, 2);
  assert_int_equal(s->ambiguous, 0);
  free_search(s);
}

/* A reopen record belongs after the end, at its last generation; so does a static refusal at
 * the one after the previous record. */
static void reopen_and_refusal_records_should_be_placed(void **state) {
  fixture *f = *state;
  f->cfg.search.budget = 5;
  search *s = new_search(&f->cfg);
  drive(s, plain, 100, NULL, NULL);
  assert_true(s->done);
  tf_err e = {0};
  search_fact r;
  memset(&r, 0, sizeof r);
  r.kind = SEARCH_REOPEN;
  r.generation = s->generation + 1;
  assert_int_equal(search_apply(s, &r, &e), -1);
  assert_non_null(strstr(e.msg, "key 'generation' must be"));
  r.generation = s->generation;
  assert_int_equal(search_apply(s, &r, &e), 0);
  assert_false(s->done);
  free_search(s);
  f->cfg.search.budget = 40;
  search *live = new_search(&f->cfg);
  search_fact log[200];
  search_step steps[200];
  int n = drive(live, plain, 200, log, steps), at = -1;
  for (int i = 0; i < n && at < 0; i++)
    if (steps[i].kind == SEARCH_REFUSE && i > 0) at = i;
  assert_true(at > 0);
  free_search(live);
  s = new_search(&f->cfg);
  for (int i = 0; i < at - 1; i++)
    if (search_apply(s, &log[i], &e)) fail_msg("%s", e.msg);
  assert_int_equal(search_apply(s, &log[at], &e), -1); /* one record left out */
  assert_non_null(strstr(e.msg, "key 'generation' must be"));
  free_search(s);
}

static propose_obs seen_obs[256];
static int nobs;
static void logging_feedback(proposer *p, const config *best, const config *cand,
                             const propose_obs *o) {
  if (nobs < 256) seen_obs[nobs++] = *o;
  real_proposer->feedback(p, best, cand, o);
}

/* The proposer hears a keep's times and a reject's ratio and times; nothing of a refusal. */
static void the_proposer_should_hear_what_each_decision_measured(void **state) {
  fixture *f = *state;
  real_proposer = f->cfg.proposer;
  proposer_ops ops = *real_proposer;
  ops.feedback = logging_feedback;
  f->cfg.proposer = &ops;
  f->cfg.max_requeue = 0;
  search *s = new_search(&f->cfg);
  nobs = 0;
  tf_err e = {0};
  int keeps = 0, rejects = 0, refusals = 0;
  for (int g = 0; g < 40; g++) {
    search_step st;
    assert_int_equal(search_next(s, &st, &e), 0);
    if (st.kind == SEARCH_DONE) break;
    outcome o = st.kind == SEARCH_MEASURE ? noisy_at_1(st.generation, &st) : PLAIN;
    search_fact fa = fact_of(&f->tmpl, &st, o);
    if (fa.kind == SEARCH_MEASURE) fa.untrusted = !search_trusts(s, &fa);
    int before = nobs;
    assert_int_equal(search_apply(s, &fa, &e), 0);
    if (nobs == before) continue;
    const propose_obs *ob = &seen_obs[nobs - 1];
    if (fa.decision == DECISION_REFUSED) {
      assert_true(isnan(ob->ratio) && isnan(ob->best_us) && isnan(ob->new_us));
      refusals++;
      continue;
    }
    assert_int_equal(ob->kept, fa.decision == DECISION_KEEP);
    assert_true(ob->best_us == fa.best_us && ob->new_us == fa.new_us);
    if (fa.decision == DECISION_REJECT) assert_true(ob->ratio == fa.ratio);
    keeps += fa.decision == DECISION_KEEP;
    rejects += fa.decision == DECISION_REJECT;
  }
  assert_true(keeps > 0 && rejects > 0 && refusals > 0);
  free_search(s);
  f->cfg.proposer = real_proposer;
}

/* A search that ended in its first restart answers with the champion; reopened, it goes on
 * from that restart's own best. */
static void a_search_reopened_in_its_first_restart_should_take_its_own_best_back(void **state) {
  fixture *f = *state;
  f->cfg.max_requeue = 0;
  f->cfg.search.max_stale = 1;
  f->cfg.search.restarts = 1;
  search *s = new_search(&f->cfg);
  drive(s, all_rejected, 100, NULL, NULL);
  assert_true(s->done);
  assert_int_equal(s->segment, 1);
  assert_true(config_equal(&s->best, &f->cfg.start)); /* the champion: nothing beat it */
  config own = s->ended_best;
  assert_false(config_equal(&own, &s->best));
  search_fact r;
  memset(&r, 0, sizeof r);
  r.kind = SEARCH_REOPEN;
  r.generation = s->generation;
  tf_err e = {0};
  assert_int_equal(search_apply(s, &r, &e), 0);
  assert_true(config_equal(&s->best, &own));
  free_search(s);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test_setup_teardown(two_knob_moves_should_begin_at_their_count, setup, teardown),
      cmocka_unit_test_setup_teardown(a_read_back_search_should_name_a_wrong_best_by_its_values, setup, teardown),
      cmocka_unit_test_setup_teardown(run_ahead_should_follow_only_a_step_the_search_made, setup, teardown),
      cmocka_unit_test_setup_teardown(an_ended_search_should_not_go_on_unchanged, setup, teardown),
      cmocka_unit_test_setup_teardown(peek_should_fill_one_guess_and_repeat_itself, setup, teardown),
      cmocka_unit_test_setup_teardown(
          a_search_reopened_in_its_first_restart_should_take_its_own_best_back, setup, teardown),
      cmocka_unit_test_setup_teardown(the_proposer_should_hear_what_each_decision_measured, setup,
                                      teardown),
      cmocka_unit_test_setup_teardown(a_restarted_search_without_a_keep_should_not_duel, setup, teardown),
      cmocka_unit_test_setup_teardown(reopen_and_refusal_records_should_be_placed, setup, teardown),
      cmocka_unit_test_setup_teardown(peek_should_guess_past_a_restart, setup, teardown),
      cmocka_unit_test_setup_teardown(every_strategy_should_begin_and_run_the_search, setup, teardown),
      cmocka_unit_test_setup_teardown(a_clean_canary_should_end_the_biased_run, setup, teardown),
      cmocka_unit_test_setup_teardown(search_should_measure_single_moves_from_the_start, setup, teardown),
      cmocka_unit_test_setup_teardown(search_should_refuse_a_candidate_that_breaks_a_constraint_without_a_job, setup, teardown),
      cmocka_unit_test_setup_teardown(search_should_stop_at_its_budget, setup, teardown),
      cmocka_unit_test_setup_teardown(search_should_stop_after_max_stale_rejections_in_a_row, setup, teardown),
      cmocka_unit_test_setup_teardown(search_should_keep_faster_candidates_and_feed_the_proposer, setup, teardown),
      cmocka_unit_test_setup_teardown(search_should_propose_two_knob_moves_when_single_moves_stall, setup, teardown),
      cmocka_unit_test_setup_teardown(search_should_measure_a_noisy_generation_again_up_to_max_requeue, setup, teardown),
      cmocka_unit_test_setup_teardown(search_should_restart_from_a_random_legal_untried_configuration, setup, teardown),
      cmocka_unit_test_setup_teardown(search_should_duel_a_restarted_search_that_kept_something, setup, teardown),
      cmocka_unit_test_setup_teardown(search_should_measure_a_noisy_duel_again_past_the_budget, setup, teardown),
      cmocka_unit_test_setup_teardown(search_should_keep_the_champion_after_a_faulted_duel, setup, teardown),
      cmocka_unit_test_setup_teardown(search_should_measure_the_fixed_pair_every_generation, setup, teardown),
      cmocka_unit_test_setup_teardown(search_should_ask_for_fresh_processes_and_canaries_on_schedule, setup, teardown),
      cmocka_unit_test_setup_teardown(search_should_measure_an_untrusted_result_again_without_counting_it, setup, teardown),
      cmocka_unit_test_setup_teardown(search_should_end_after_max_restarts_biased_processes_in_a_row, setup, teardown),
      cmocka_unit_test_setup_teardown(search_should_trust_only_processes_a_canary_cleared, setup, teardown),
      cmocka_unit_test_setup_teardown(search_should_resume_as_the_live_run_left_off, setup, teardown),
      cmocka_unit_test_setup_teardown(search_should_resume_mid_duel, setup, teardown),
      cmocka_unit_test_setup_teardown(search_should_refuse_records_it_could_not_have_written, setup, teardown),
      cmocka_unit_test_setup_teardown(search_should_refuse_a_candidate_whose_launch_fails, setup, teardown),
      cmocka_unit_test_setup_teardown(search_should_refuse_a_refusal_record_of_a_launchable_candidate, setup, teardown),
      cmocka_unit_test_setup_teardown(search_peek_should_guess_both_paths_and_change_nothing, setup, teardown),
      cmocka_unit_test_setup_teardown(search_peek_should_guess_nothing_after_the_end, setup, teardown),
      cmocka_unit_test(search_should_take_the_proposer_the_campaign_names),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
