/* test_strategies: the proposers of coordinator/propose.h's table, each driven through the
 * search machine (coordinator/search.h) without MPI, on a small space with an unreachable
 * point and refused ones:
 *
 *   A, B, C in {0, 1, 2, 3}, D in {0, 1}; accepted: A < 3, B < 3, C < 3, D = 0 and A + B <= 3
 *   (24 points, all reachable from the start), or the single point (3, 3, 3, 1), which differs
 *   from every other accepted one in all four knobs: accepted, never reachable by one- and
 *   two-knob moves. The other 103 points break the constraint.
 *
 * A toy device times a configuration by its knobs' distances from an optimum, and keeps new
 * when it is 1% faster than best. */
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
#include "coordinator/space.h"
#include "tests/unit/testutil.h"

static const char toy_template[] =
    "{\"name\": \"toy\", \"source\": \"toy.cu\", \"kernel\": \"toy\", \"reference\": {\"kernel\": \"ref\", \"source\": \"toy.cu\", \"launch\": {\"grid\": [\"N\", 1, 1], \"block\": [1, 1, 1]}},\n"
    " \"problem\": {\"N\": [1, 65536]},\n"
    " \"knobs\": {\"A\": {\"values\": [0, 1, 2, 3]}, \"B\": {\"values\": [0, 1, 2, 3]},\n"
    "            \"C\": {\"values\": [0, 1, 2, 3]}, \"D\": {\"values\": [0, 1]}},\n"
    " \"constraints\": [{\"name\": \"island\", \"expr\": \"(A < 3 && B < 3 && C < 3 && D == 0 &&"
    " A + B <= 3) || (A == 3 && B == 3 && C == 3 && D == 1)\", \"reason\": \"outside\"}],\n"
    " \"launch\": {\"grid\": [1, 1, 1], \"block\": [32, 1, 1]},\n"
    " \"buffers\": [{\"name\": \"x\", \"count\": \"N\", \"role\": \"input\"},\n"
    "             {\"name\": \"y\", \"count\": \"N\", \"role\": \"output\"}],\n"
    " \"args\": [\"x\", \"y\", \"N\"]}\n";

#define NREACH 24

typedef struct fixture {
  char dir[256];
  campaign c;
  space_view v;
} fixture;

/* The campaign with `search` as its search section. */
static void load(fixture *f, const char *sec) {
  char p[512], text[1024];
  tf_err e = {0};
  snprintf(text, sizeof text,
           "{\"template\": \"toy\", \"problem\": {\"N\": 1024}, \"start\": {\"A\": 0, \"B\": 0, "
           "\"C\": 2, \"D\": 0}, \"control\": {\"A\": 0, \"B\": 0, \"C\": 0, \"D\": 0}, "
           "\"search\": %s}\n", sec);
  snprintf(p, sizeof p, "%s/campaigns", f->dir);
  write_file(p, "toy.json", text);
  snprintf(p, sizeof p, "%s/campaigns/toy.json", f->dir);
  campaign_release(&f->c);
  space_release(&f->v);
  if (campaign_load(&f->c, p, &e)) fail_msg("%s", e.msg);
  if (space_enumerate(&f->c, &f->v, &e)) fail_msg("%s", e.msg);
}

static int setup(void **state) {
  fixture *f = calloc(1, sizeof *f);
  if (!f) return -1;
  snprintf(f->dir, sizeof f->dir, "/tmp/tf-test-strategies-XXXXXX");
  if (!mkdtemp(f->dir)) return -1;
  char p[512];
  snprintf(p, sizeof p, "%s/templates", f->dir);
  if (mkdir(p, 0700)) return -1;
  write_file(p, "toy.json", toy_template);
  write_file(p, "toy.cu", "template <int A, int B, int C, int D> __global__ void toy(const float "
                          "*x, float *y, int n) {}\n");
  snprintf(p, sizeof p, "%s/campaigns", f->dir);
  if (mkdir(p, 0700)) return -1;
  unsetenv("TUNEFARM_ROOT");
  *state = f;
  return 0;
}

static int teardown(void **state) {
  fixture *f = *state;
  campaign_release(&f->c);
  space_release(&f->v);
  rm_rf(f->dir);
  free(f);
  return 0;
}

/* ---- the toy device ---- */

static double toy_us(const config *c) {
  long long a = c->v[0], b = c->v[1], k = c->v[2];
  return 10.0 + 1.0 * (double)llabs(a - 2) + 1.5 * (double)llabs(b - 1) + 0.7 * (double)k +
         0.4 * (double)(a * b);
}

static search_fact fact_of(const search_step *st) {
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
  double b = toy_us(&st->best), n = toy_us(&st->cand);
  f.status = RESULT_OK;
  f.correct = 1;
  f.decision = n < 0.99 * b ? DECISION_KEEP : n < b ? DECISION_AMBIGUOUS : DECISION_REJECT;
  f.ratio = n / b;
  f.best_us = b;
  f.new_us = n;
  f.child = 1;
  f.asked_canary = st->canary;
  f.asked_fresh = st->fresh;
  f.job_id = st->job_id;
  f.canary = st->canary ? TRUST_CANARY_OK : TRUST_NO_CANARY;
  return f;
}

static search *new_search(fixture *f) {
  search_config cfg;
  tf_err e = {0};
  if (search_config_of(&f->c, 0, &cfg, &e)) fail_msg("%s", e.msg);
  cfg.space = &f->v;
  search *s = calloc(1, sizeof *s);
  assert_non_null(s);
  if (search_init(s, &cfg, &e)) fail_msg("%s", e.msg);
  return s;
}

static void free_search(search *s) {
  search_release(s);
  free(s);
}

/* Drive s for up to max steps (or DONE), steps and facts into the arrays (may be NULL);
 * peek: ask search_peek before every step, as the farm does to compile ahead. */
static int drive(search *s, int max, search_step *steps, search_fact *facts, int peek) {
  tf_err e = {0};
  int n = 0;
  for (; n < max; n++) {
    search_step st;
    if (peek) {
      search_guess g[SEARCH_PEEK_PER * 4];
      if (search_peek(s, NULL, 4, g, &e) < 0) fail_msg("peek: %s", e.msg);
    }
    if (search_next(s, &st, &e)) fail_msg("next: %s", e.msg);
    if (st.kind == SEARCH_DONE) break;
    search_fact fa = fact_of(&st);
    if (search_apply(s, &fa, &e)) fail_msg("apply %lld: %s", fa.generation, e.msg);
    if (steps) steps[n] = st;
    if (facts) facts[n] = fa;
  }
  return n;
}

static int reachable(const space_view *v, const config *c) {
  for (int i = 0; i < v->nreachable; i++) {
    config r;
    space_at(v, i, &r);
    if (config_equal(&r, c)) return 1;
  }
  return 0;
}

static const char *const new_rows[] = {"random", "annealing", "model"};
#define NROWS (int)(sizeof new_rows / sizeof new_rows[0])

/* ---- what each strategy proposes ---- */

/* Every candidate a new strategy proposes is reachable, passes the constraint and was never
 * measured before (a duel measures a segment's best again, by design: not a proposal); none
 * is refused statically; with a budget past the space, random measures all of it. */
static void strategies_should_propose_reachable_legal_untried_configurations(void **state) {
  fixture *f = *state;
  assert_int_equal(f->v.nreachable, 0); /* nothing loaded yet */
  for (int r = 0; r < NROWS; r++) {
    char sec[256];
    snprintf(sec, sizeof sec, "{\"proposer\": \"%s\", \"budget\": 100, \"max_stale\": 6, "
             "\"restarts\": 3}", new_rows[r]);
    load(f, sec);
    assert_int_equal(f->v.nreachable, NREACH);
    assert_int_equal(f->v.accepted, NREACH + 1);
    search *s = new_search(f);
    static search_step steps[400];
    int n = drive(s, 400, steps, NULL, 0), measured = 0;
    tried_set seen = {0};
    assert_int_equal(tried_add(&seen, &f->c.start), 0);
    for (int i = 0; i < n; i++) {
      assert_int_not_equal(steps[i].kind, SEARCH_REFUSE);
      if (steps[i].kind == SEARCH_RESTART) {
        assert_true(reachable(&f->v, &steps[i].start));
        assert_false(tried_has(&seen, &steps[i].start));
        assert_int_equal(tried_add(&seen, &steps[i].start), 0);
      }
      if (steps[i].kind != SEARCH_MEASURE || steps[i].duel) continue;
      assert_true(reachable(&f->v, &steps[i].cand));
      assert_int_equal(space_verdict(&f->v, &steps[i].cand), -1);
      assert_false(tried_has(&seen, &steps[i].cand));
      assert_int_equal(tried_add(&seen, &steps[i].cand), 0);
      measured++;
    }
    assert_true(s->done);
    assert_true(measured > 0);
    if (strcmp(new_rows[r], "random") == 0) assert_int_equal(seen.n, NREACH);
    tried_release(&seen);
    free_search(s);
  }
}

/* The coordinate row still proposes what it did: moves of best that it never tried, in the
 * space (a refused one is recorded as a static refusal), and it is the default. */
static void coordinate_should_stay_the_default_row(void **state) {
  fixture *f = *state;
  load(f, "{\"budget\": 30}");
  assert_string_equal(f->c.search.proposer, "coordinate");
  search *s = new_search(f);
  assert_string_equal(s->cfg.proposer->name, "coordinate");
  static search_step steps[200];
  int n = drive(s, 200, steps, NULL, 0), refused = 0;
  for (int i = 0; i < n; i++) refused += steps[i].kind == SEARCH_REFUSE;
  assert_true(refused > 0); /* coordinate proposes refused moves and records them */
  free_search(s);
}

/* ---- replay ---- */

static int same_step(const search_step *a, const search_step *b) {
  return a->kind == b->kind && a->generation == b->generation && a->segment == b->segment &&
         a->duel == b->duel && config_equal(&a->best, &b->best) &&
         config_equal(&a->cand, &b->cand) && config_equal(&a->start, &b->start);
}

/* A search fed the first `cut` facts of a run (what resume reads back from its ledger) goes on
 * exactly as the uninterrupted run did, for every strategy and several cuts; and walking
 * ahead (search_peek, on copies of the search) changes nothing. */
static void strategies_should_replay_identically(void **state) {
  fixture *f = *state;
  static const char *const rows[] = {"coordinate", "random", "annealing", "model"};
  static search_step full[300], rest[300], peeked[300];
  static search_fact facts[300];
  for (int r = 0; r < 4; r++) {
    char sec[256];
    snprintf(sec, sizeof sec, "{\"proposer\": \"%s\", \"budget\": 40, \"max_stale\": 8, "
             "\"restarts\": 2}", rows[r]);
    load(f, sec);
    search *s = new_search(f);
    int n = drive(s, 300, full, facts, 0);
    assert_true(n > 12);
    int cuts[4] = {1, n / 4, n / 2, n - 2}; /* records read back before the run resumes */
    search *p = new_search(f);
    assert_int_equal(drive(p, 300, peeked, NULL, 1), n);
    for (int i = 0; i < n; i++) assert_true(same_step(&full[i], &peeked[i]));
    free_search(p);
    for (int c = 0; c < 4; c++) {
      search *t = new_search(f);
      tf_err e = {0};
      for (int i = 0; i < cuts[c]; i++)
        if (search_apply(t, &facts[i], &e)) fail_msg("%s replay %d: %s", rows[r], i, e.msg);
      search_begin_run(t);
      int m = drive(t, 300, rest, NULL, 0);
      assert_int_equal(cuts[c] + m, n);
      for (int i = 0; i < m; i++)
        if (!same_step(&rest[i], &full[cuts[c] + i]))
          fail_msg("%s cut at %d: step %d differs", rows[r], cuts[c], cuts[c] + i);
      assert_true(config_equal(&t->best, &s->best));
      assert_int_equal(t->measured, s->measured);
      assert_int_equal(t->keeps, s->keeps);
      free_search(t);
    }
    free_search(s);
  }
}

/* ---- annealing's acceptance ---- */

typedef struct anneal_view { /* strategy_annealing.c's state, as it lays it out */
  int have_cur;
  config cur;
  double cur_lr;
  long long k;
} anneal_view;

/* Cold (t0 tiny), a rejected candidate that measured slower than the walk's point never
 * becomes it, and one that measured faster (ambiguous) always does; hot (t0 large), a 1%
 * slower one does. */
static void annealing_should_accept_by_the_recorded_ratio(void **state) {
  fixture *f = *state;
  load(f, "{\"proposer\": \"annealing\", \"params\": {\"t0\": 0.000001}}");
  const proposer_ops *ops = proposer_find("annealing", NULL);
  search_config cfg;
  tf_err e = {0};
  if (search_config_of(&f->c, 0, &cfg, &e)) fail_msg("%s", e.msg);
  assert_true(cfg.param[0] == 0.000001);
  assert_true(cfg.param[1] == 0.97); /* the default */
  proposer p;
  config best = f->c.start, a = best, b = best;
  a.v[0] = 1;
  b.v[1] = 1;
  ops->init(&p, &f->c.tmpl, f->c.dims, 42, cfg.param);
  const anneal_view *w = (const anneal_view *)(const void *)p.state.bytes;
  propose_obs worse = {0, 1.01, 10.0, 10.1}, faster = {0, 0.995, 10.0, 9.95};
  for (int i = 0; i < 20; i++) {
    ops->feedback(&p, &best, &a, &worse);
    assert_true(config_equal(&w->cur, &best));
  }
  ops->feedback(&p, &best, &b, &faster);
  assert_true(config_equal(&w->cur, &b));
  assert_true(fabs(w->cur_lr - log(0.995)) < 1e-12);
  cfg.param[0] = 10.0;
  ops->init(&p, &f->c.tmpl, f->c.dims, 42, cfg.param);
  ops->feedback(&p, &best, &a, &worse);
  assert_true(config_equal(&w->cur, &a));
  propose_obs keep = {1, NAN, 10.0, 9.0};
  ops->feedback(&p, &best, &b, &keep);
  assert_true(config_equal(&w->cur, &b));
  assert_true(w->cur_lr == 0.0);
}

/* ---- the model ---- */

/* Without exploration, after its warmup, the model proposes the candidate it predicts fastest:
 * on the toy device, whose times its features fit, the untried neighbour that is fastest. */
static void model_should_propose_the_predicted_fastest(void **state) {
  fixture *f = *state;
  load(f, "{\"proposer\": \"model\", \"params\": {\"explore\": 0, \"warmup\": 6, "
          "\"sample\": 0, \"ridge\": 0.000001}}");
  const proposer_ops *ops = proposer_find("model", NULL);
  search_config cfg;
  tf_err e = {0};
  if (search_config_of(&f->c, 0, &cfg, &e)) fail_msg("%s", e.msg);
  proposer p;
  ops->init(&p, &f->c.tmpl, f->c.dims, 7, cfg.param);
  check_memo memo = {.space = &f->v};
  p.memo = &memo;
  tried_set tried = {0};
  config best = {4, {0, 0, 0, 0}};
  assert_int_equal(tried_add(&tried, &best), 0);
  /* observe every reachable point with A + B <= 2 and C < 2 */
  for (int i = 0; i < f->v.nreachable; i++) {
    config c;
    space_at(&f->v, i, &c);
    if (c.v[0] + c.v[1] > 2 || c.v[2] >= 2 || config_equal(&c, &best)) continue;
    propose_obs o = {0, toy_us(&c) / toy_us(&best), toy_us(&best), toy_us(&c)};
    ops->feedback(&p, &best, &c, &o);
    assert_int_equal(tried_add(&tried, &c), 0);
  }
  config out, want = best;
  int nch = 0;
  double fastest = INFINITY;
  for (int i = 0; i < f->v.nreachable; i++) { /* best's untried one- and two-knob moves */
    config c;
    space_at(&f->v, i, &c);
    if (!tried_has(&tried, &c) && propose_changed(&f->c.tmpl, &best, &c) <= 2 &&
        toy_us(&c) < fastest)
      fastest = toy_us(&c), want = c;
  }
  assert_int_equal(ops->next(&p, &best, &tried, 0, &out, &nch), 1);
  assert_true(config_equal(&out, &want));
  tried_release(&tried);
  check_memo_release(&memo);
}

/* ---- the campaign's parameters ---- */

static void expect_refused(fixture *f, const char *sec, const char *msg) {
  search_config cfg;
  tf_err e = {0};
  load(f, sec);
  assert_int_equal(search_config_of(&f->c, 0, &cfg, &e), -1);
  assert_int_equal(e.code, TF_EXIT_INPUT);
  if (!strstr(e.msg, msg)) fail_msg("got: %s", e.msg);
  assert_non_null(strstr(e.msg, "toy.json'"));
}

static void strategies_should_refuse_bad_names_and_parameters(void **state) {
  fixture *f = *state;
  expect_refused(f, "{\"proposer\": \"anealing\"}", "key 'search.proposer': no proposer "
                 "'anealing' (known: coordinate, random, annealing, model)");
  expect_refused(f, "{\"proposer\": \"annealing\", \"params\": {\"t00\": 1}}",
                 "key 'search.params.t00': proposer 'annealing' has no parameter 't00' (its "
                 "parameters: t0, cooling)");
  expect_refused(f, "{\"proposer\": \"annealing\", \"params\": {\"cooling\": 2}}",
                 "key 'search.params.cooling' must be a number from 0.5 to 1");
  expect_refused(f, "{\"params\": {\"t0\": 1}}",
                 "proposer 'coordinate' has no parameter 't0' (it takes none)");
  expect_refused(f, "{\"proposer\": \"model\", \"params\": {\"explore\": -0.5}}",
                 "key 'search.params.explore' must be a number from 0 to 1");
  /* not a number: the campaign itself is refused */
  char p[512], text[512];
  tf_err e = {0};
  snprintf(text, sizeof text, "{\"template\": \"toy\", \"problem\": {\"N\": 1024}, \"start\": "
           "{\"A\": 0, \"B\": 0, \"C\": 2, \"D\": 0}, \"control\": {\"A\": 0, \"B\": 0, \"C\": 0, "
           "\"D\": 0}, \"search\": {\"params\": {\"t0\": \"hot\"}}}\n");
  snprintf(p, sizeof p, "%s/campaigns", f->dir);
  write_file(p, "bad.json", text);
  snprintf(p, sizeof p, "%s/campaigns/bad.json", f->dir);
  campaign *c = calloc(1, sizeof *c);
  assert_non_null(c);
  assert_int_equal(campaign_load(c, p, &e), -1);
  assert_int_equal(e.code, TF_EXIT_INPUT);
  if (!strstr(e.msg, "bad.json'") || !strstr(e.msg, "search.params.t0"))
    fail_msg("got: %s", e.msg);
  campaign_release(c);
  free(c);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test_setup_teardown(
          strategies_should_propose_reachable_legal_untried_configurations, setup, teardown),
      cmocka_unit_test_setup_teardown(coordinate_should_stay_the_default_row, setup, teardown),
      cmocka_unit_test_setup_teardown(strategies_should_replay_identically, setup, teardown),
      cmocka_unit_test_setup_teardown(annealing_should_accept_by_the_recorded_ratio, setup,
                                      teardown),
      cmocka_unit_test_setup_teardown(model_should_propose_the_predicted_fastest, setup,
                                      teardown),
      cmocka_unit_test_setup_teardown(strategies_should_refuse_bad_names_and_parameters, setup,
                                      teardown),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
