/* Unit tests of coordinator/propose.c (the next configuration to try) and of
 * coordinator/space.c's space_enumerate (the space, what the constraints
 * accept and what a search can reach from the start).
 *
 * The proposer's specs are built by hand (it reads only the knobs); the space
 * is enumerated on a toy campaign written into a scratch project and on
 * campaigns/matmul-1024.json. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <dirent.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "coordinator/space.h"
#include "coordinator/propose.h"
#include "tests/unit/testutil.h"

/* ------------------------------------------------------------------ hand-built specs */

/* Knob k is named "K<k>" and takes nvalues[k] values 1, 2, 4, 8, ... s is static: its knob
 * table, allocated on the first call, is kept for the next. */
static void toy_spec(spec *s, int nknobs, const int *nvalues) {
  spec_knob *knobs = s->knobs ? s->knobs : calloc(SPEC_MAX_KNOBS, sizeof *knobs);
  assert_non_null(knobs);
  memset(knobs, 0, SPEC_MAX_KNOBS * sizeof *knobs);
  memset(s, 0, sizeof *s);
  s->knobs = knobs;
  snprintf(s->kernel, sizeof s->kernel, "toy");
  s->nknobs = nknobs;
  for (int k = 0; k < nknobs; k++) {
    snprintf(s->knobs[k].name, sizeof s->knobs[k].name, "K%d", k);
    s->knobs[k].nvalues = nvalues[k];
    for (int i = 0; i < nvalues[k]; i++) s->knobs[k].values[i] = 1LL << i;
  }
}

/* The configuration at value indices idx[] of s. */
static config at(const spec *s, const int *idx) {
  config c;
  memset(&c, 0, sizeof c);
  c.n = s->nknobs;
  for (int k = 0; k < s->nknobs; k++) c.v[k] = s->knobs[k].values[idx[k]];
  return c;
}

/* Knobs that differ between a and b; *which = the last one. */
static int changed(const config *a, const config *b, int *which) {
  int n = 0;
  for (int k = 0; k < a->n; k++)
    if (a->v[k] != b->v[k]) {
      n++;
      if (which) *which = k;
    }
  return n;
}

/* How many domain positions knob k moved between a and b. */
static int distance(const spec *s, const config *a, const config *b, int k) {
  int d = spec_value_index(s, k, a->v[k]) - spec_value_index(s, k, b->v[k]);
  return d < 0 ? -d : d;
}

/* ------------------------------------------------------------------ tried set */

static void tried_should_grow_and_ignore_duplicates(void **state) {
  (void)state;
  tried_set t = {0};
  config c = {3, {0, 0, 0}};
  assert_false(tried_has(&t, &c));
  for (int i = 0; i < 300; i++) {
    c.v[0] = i;
    c.v[2] = -i;
    assert_int_equal(tried_add(&t, &c), 0);
    assert_int_equal(t.n, i + 1);
    assert_true(t.cap >= t.n);
  }
  for (int i = 0; i < 300; i++) {
    c.v[0] = i;
    c.v[2] = -i;
    assert_true(tried_has(&t, &c));
    assert_int_equal(tried_add(&t, &c), 0); /* already there: not added again */
  }
  assert_int_equal(t.n, 300);
  c.v[0] = 5;
  c.v[2] = 5; /* differs from the stored one in one knob only */
  assert_false(tried_has(&t, &c));
  config shorter = {2, {0, 0}};
  assert_false(tried_has(&t, &shorter)); /* another knob count is another configuration */
  tried_release(&t);
  assert_int_equal(t.n, 0);
  assert_null(t.v);
  c.v[0] = 0;
  c.v[2] = 0;
  assert_false(tried_has(&t, &c));
}

/* ------------------------------------------------------------------ proposals */

/* Propose until exhausted, adding each proposal to t; returns how many, with their change counts. */
static int drain(const proposer *p, const config *best, tried_set *t, int prefer_two, config *out,
                 int *nch, int max) {
  int n = 0;
  config c;
  int k;
  while (propose_next(p, best, t, prefer_two, &c, &k)) {
    if (n == max) fail_msg("more than %d proposals", max);
    if (tried_has(t, &c)) fail_msg("proposal %d was tried already", n);
    if (config_equal(&c, best)) fail_msg("proposal %d is best itself", n);
    if (changed(&c, best, NULL) != k) fail_msg("proposal %d changes %d knobs, says %d", n, changed(&c, best, NULL), k);
    assert_int_equal(tried_add(t, &c), 0);
    if (out) out[n] = c;
    if (nch) nch[n] = k;
    n++;
  }
  return n;
}

static void propose_should_never_propose_a_tried_config(void **state) {
  (void)state;
  static spec s;
  static const int nv[3] = {3, 4, 2};
  toy_spec(&s, 3, nv);
  proposer p;
  proposer_init(&p, &s, 7);
  static const int mid[3] = {1, 1, 0};
  config best = at(&s, mid);
  tried_set t = {0};
  /* some configurations already tried on this device */
  static const int pre[][3] = {{2, 1, 0}, {1, 2, 0}, {0, 0, 1}, {2, 2, 1}};
  for (int i = 0; i < 4; i++) {
    config c = at(&s, pre[i]);
    assert_int_equal(tried_add(&t, &c), 0);
  }
  static config got[64];
  int n = drain(&p, &best, &t, 0, got, NULL, 64);
  for (int i = 0; i < n; i++)
    for (int j = 0; j < 4; j++) {
      config c = at(&s, pre[j]);
      assert_false(config_equal(&got[i], &c));
    }
  assert_int_equal(t.n, 4 + n);
  /* nothing is left: another call finds nothing either way */
  config c;
  int k;
  assert_int_equal(propose_next(&p, &best, &t, 0, &c, &k), 0);
  assert_int_equal(propose_next(&p, &best, &t, 1, &c, &k), 0);
  tried_release(&t);
}

/* Single moves come before two-knob moves; asked for two-knob moves with nothing pointing at
 * one (no near miss, no dims for repairs), the proposer still measures every single move
 * first: blind pairs come last either way. */
static void propose_should_try_single_moves_before_two_knob_moves(void **state) {
  (void)state;
  static spec s;
  static const int nv[3] = {3, 4, 2};
  toy_spec(&s, 3, nv);
  proposer p;
  proposer_init(&p, &s, 1);
  static const int mid[3] = {1, 1, 0};
  config best = at(&s, mid);
  for (int prefer_two = 0; prefer_two <= 1; prefer_two++) {
    tried_set t = {0};
    int nch[64];
    int n = drain(&p, &best, &t, prefer_two, NULL, nch, 64);
    int singles = (3 - 1) + (4 - 1) + (2 - 1); /* every other value of one knob */
    assert_true(n > singles);
    for (int i = 0; i < n; i++) assert_int_equal(nch[i], i < singles ? 1 : 2);
    tried_release(&t);
  }
}

static void propose_should_try_the_nearest_value_first(void **state) {
  (void)state;
  static spec s;
  static const int nv[1] = {5};
  toy_spec(&s, 1, nv); /* values 1, 2, 4, 8, 16 */
  proposer p;
  proposer_init(&p, &s, 3);
  static const int mid[1] = {2};
  config best = at(&s, mid); /* 4 */
  tried_set t = {0};
  config got[8];
  assert_int_equal(drain(&p, &best, &t, 0, got, NULL, 8), 4);
  /* one position up, one down, then two (domain positions, not numeric distance) */
  assert_int_equal(got[0].v[0], 8);
  assert_int_equal(got[1].v[0], 2);
  assert_int_equal(got[2].v[0], 16);
  assert_int_equal(got[3].v[0], 1);
  tried_release(&t);

  /* with several knobs every one-position move comes before any two-position move */
  static spec s3;
  static const int nv3[3] = {5, 5, 5};
  toy_spec(&s3, 3, nv3);
  proposer_init(&p, &s3, 3);
  static const int mid3[3] = {2, 2, 2};
  best = at(&s3, mid3);
  memset(&t, 0, sizeof t);
  static config g3[256];
  int nch[256];
  int n = drain(&p, &best, &t, 0, g3, nch, 256);
  int last = 0;
  for (int i = 0; i < n && nch[i] == 1; i++) {
    int k = -1;
    changed(&g3[i], &best, &k);
    int d = distance(&s3, &g3[i], &best, k);
    assert_true(d >= last);
    last = d;
  }
  assert_int_equal(last, 2);
  tried_release(&t);
}

/* campaigns/NAME of the source tree. */
static void load_tree_campaign(const char *name, campaign *c) {
  char path[1024];
  tf_err e = {0};
  unsetenv("TUNEFARM_ROOT");
  snprintf(path, sizeof path, "%s/campaigns/%s", source_dir(), name);
  if (campaign_load(c, path, &e)) fail_msg("%s", e.msg);
}

/* 1 if c passes every constraint of s at dims. */
static int passes(const spec *s, const long long *dims, const config *c) {
  int bad = -1;
  return spec_check(s, dims, c, &bad, NULL) == 0 && bad < 0;
}

/* A copy has storage of its own: what is added to it is not in the original, and it still
 * holds everything the original held, across the index's growth. */
/* A set over another holds both, stores only what was added to it, and leaves the one under it
 * as it was; a set over that one sees all three. */
static void tried_over_should_hold_both_and_change_neither(void **state) {
  (void)state;
  tried_set t = {0}, u, w;
  config c = {2, {0, 0}};
  for (int i = 0; i < 1000; i++) {
    c.v[0] = i % 37;
    c.v[1] = i / 37;
    assert_int_equal(tried_add(&t, &c), 0);
  }
  tried_over(&u, &t);
  c.v[0] = 5; /* already under: not added again */
  c.v[1] = 3;
  assert_int_equal(tried_add(&u, &c), 0);
  assert_int_equal(u.n, 0);
  config x = {2, {999, 1}}, y = {2, {999, 2}};
  assert_int_equal(tried_add(&u, &x), 0);
  assert_int_equal(u.n, 1);
  assert_true(tried_has(&u, &x));
  assert_false(tried_has(&t, &x));
  tried_over(&w, &u);
  assert_int_equal(tried_add(&w, &y), 0);
  assert_true(tried_has(&w, &x) && tried_has(&w, &y) && tried_has(&w, &c));
  assert_false(tried_has(&u, &y));
  assert_int_equal(t.n, 1000);
  for (int i = 0; i < 1000; i++) {
    c.v[0] = i % 37;
    c.v[1] = i / 37;
    assert_true(tried_has(&u, &c) && tried_has(&w, &c));
  }
  tried_release(&w);
  tried_release(&u);
  assert_true(tried_has(&t, &c) && !tried_has(&t, &x));
  tried_release(&t);
}

/* The memo answers as spec_check does, on configurations it has seen and on new ones, for
 * legal and refused configurations of a real template (a sample of matmul-1024's space,
 * every one asked twice). */
static void check_memo_should_answer_as_spec_check(void **state) {
  (void)state;
  static campaign c;
  load_tree_campaign("matmul-1024.json", &c);
  check_memo m = {0};
  long long size = 1;
  for (int k = 0; k < c.tmpl.nknobs; k++) size *= c.tmpl.knobs[k].nvalues;
  int legal = 0, refused = 0;
  for (int pass = 0; pass < 2; pass++)
    for (long long i = 0; i < 4000; i++) {
      config x;
      space_config_at(&c.tmpl, (i * 7919) % size, &x);
      int want = -2, got = -2;
      tf_err e = {0};
      if (spec_check(&c.tmpl, c.dims, &x, &want, &e) ||
          check_memo_check(&m, &c.tmpl, c.dims, &x, &got, &e))
        fail_msg("%s", e.msg);
      assert_int_equal(got, want);
      if (pass == 0) legal += want < 0, refused += want >= 0;
    }
  assert_true(legal > 0 && refused > 0);
  assert_true(m.n > 0 && m.n <= 4000);
  check_memo_release(&m);
  /* no memo: spec_check itself */
  int bad = -2;
  tf_err e = {0};
  assert_int_equal(check_memo_check(NULL, &c.tmpl, c.dims, &c.start, &bad, &e), 0);
  assert_int_equal(bad, -1);
  campaign_release(&c);
}

/* With the problem's dims, two-knob moves begin with repairs of refused one-knob moves; from
 * the 64x64 4x8 tile of matmul-4096, the 8x8 tile (TM 4->8, which alone leaves 64 threads,
 * with BN 64->128) is among them. Without dims nothing changes. */
static void propose_should_repair_refused_single_moves_first(void **state) {
  (void)state;
  static campaign c;
  load_tree_campaign("matmul-4096.json", &c);
  const spec *s = &c.tmpl;
  config best = c.start;
  best.v[spec_knob_index(s, "BK")] = 32;
  best.v[spec_knob_index(s, "VEC")] = 4;
  best.v[spec_knob_index(s, "PIPE")] = 2;
  assert_true(passes(s, c.dims, &best));
  config tile8 = best;
  tile8.v[spec_knob_index(s, "TM")] = 8;
  assert_false(passes(s, c.dims, &tile8)); /* min_threads: 64 threads */
  tile8.v[spec_knob_index(s, "BN")] = 128;
  assert_true(passes(s, c.dims, &tile8));

  proposer p;
  proposer_init(&p, s, 1);
  proposer_repairs(&p, c.dims);
  tried_set t = {0};
  tried_add(&t, &best);
  int found = 0, i;
  for (i = 0; i < 200 && !found; i++) {
    config cand;
    int k = 0;
    assert_int_equal(propose_next(&p, &best, &t, 1, &cand, &k), 1);
    assert_int_equal(k, 2);
    assert_true(passes(s, c.dims, &cand));
    int halves_refused = 0; /* a repair: one of its one-knob halves breaks a constraint */
    for (int kn = 0; kn < s->nknobs; kn++)
      if (cand.v[kn] != best.v[kn]) {
        config half = best;
        half.v[kn] = cand.v[kn];
        halves_refused += !passes(s, c.dims, &half);
      }
    assert_true(halves_refused >= 1);
    found = config_equal(&cand, &tile8);
    tried_add(&t, &cand);
  }
  assert_true(found);
  tried_release(&t);

  /* without dims, the first two-knob move is not filtered by the constraints */
  proposer_init(&p, s, 1);
  memset(&t, 0, sizeof t);
  tried_add(&t, &best);
  int any_refused = 0;
  for (i = 0; i < 20; i++) {
    config cand;
    int k = 0;
    assert_int_equal(propose_next(&p, &best, &t, 1, &cand, &k), 1);
    any_refused += !passes(s, c.dims, &cand);
    tried_add(&t, &cand);
  }
  assert_true(any_refused > 0);
  tried_release(&t);
  campaign_release(&c);
}

/* The knob the first single move changes. */
static int first_knob(const proposer *p, const config *best) {
  tried_set t = {0};
  config c;
  int k, which = -1;
  assert_int_equal(propose_next(p, best, &t, 0, &c, &k), 1);
  assert_int_equal(k, 1);
  changed(&c, best, &which);
  return which;
}

static void propose_should_order_knobs_by_payoff_after_feedback(void **state) {
  (void)state;
  static spec s;
  static const int nv[3] = {3, 3, 3};
  toy_spec(&s, 3, nv);
  proposer p;
  proposer_init(&p, &s, 11);
  static const int mid[3] = {1, 1, 1};
  config best = at(&s, mid);
  int a = first_knob(&p, &best); /* the seeded tie-break's first */
  int b = (a + 1) % 3;
  /* a keep on knob b puts it first */
  config cand = best;
  cand.v[b] = s.knobs[b].values[2];
  propose_feedback(&p, &best, &cand, 1, NAN);
  assert_true(p.payoff[b] == 1.0);
  assert_true(p.payoff[a] == 0.0);
  assert_int_equal(first_knob(&p, &best), b);
  /* rejections cost a little: eleven of them outweigh one keep, and b goes last */
  for (int i = 0; i < 11; i++) propose_feedback(&p, &best, &cand, 0, NAN);
  assert_true(p.payoff[b] < 0);
  int order[3], n = 0, calls = 0;
  tried_set t = {0};
  config c;
  int k;
  while (n < 3 && calls++ < 100 && propose_next(&p, &best, &t, 0, &c, &k)) {
    int which = -1;
    changed(&c, &best, &which);
    if (n == 0 || order[n - 1] != which) order[n++] = which;
    assert_int_equal(tried_add(&t, &c), 0);
  }
  assert_int_equal(n, 3);
  assert_int_equal(order[2], b);
  tried_release(&t);
  /* a two-knob keep credits both knobs */
  proposer q;
  proposer_init(&q, &s, 11);
  cand = best;
  cand.v[0] = s.knobs[0].values[0];
  cand.v[2] = s.knobs[2].values[0];
  propose_feedback(&q, &best, &cand, 1, NAN);
  assert_true(q.payoff[0] == 1.0 && q.payoff[2] == 1.0 && q.payoff[1] == 0.0);
}

static void propose_should_break_ties_by_the_seed(void **state) {
  (void)state;
  static spec s;
  static const int nv[4] = {3, 3, 3, 3};
  toy_spec(&s, 4, nv);
  static const int mid[4] = {1, 1, 1, 1};
  config best = at(&s, mid);
  proposer p, q;
  int seen[4] = {0};
  for (unsigned long long seed = 1; seed <= 32; seed++) {
    proposer_init(&p, &s, seed);
    proposer_init(&q, &s, seed);
    int k = first_knob(&p, &best);
    assert_int_equal(first_knob(&q, &best), k); /* the same seed, the same order */
    seen[k] = 1;
  }
  assert_true(seen[0] + seen[1] + seen[2] + seen[3] >= 2); /* devices do not all start alike */
}

static void propose_should_exhaust_a_two_knob_space(void **state) {
  (void)state;
  static spec s;
  static const int nv[2] = {3, 3};
  toy_spec(&s, 2, nv);
  proposer p;
  proposer_init(&p, &s, 5);
  static const int mid[2] = {1, 1};
  config best = at(&s, mid);
  tried_set t = {0};
  config got[16];
  int nch[16];
  /* from the centre every other point is one single or one diagonal move away */
  assert_int_equal(drain(&p, &best, &t, 0, got, nch, 16), 8);
  int singles = 0;
  for (int i = 0; i < 8; i++) singles += nch[i] == 1;
  assert_int_equal(singles, 4);
  for (int i = 0; i < 3; i++)
    for (int j = 0; j < 3; j++) {
      int idx[2] = {i, j};
      config c = at(&s, idx);
      if (!config_equal(&c, &best)) assert_true(tried_has(&t, &c));
    }
  config c;
  int k;
  assert_int_equal(propose_next(&p, &best, &t, 0, &c, &k), 0);
  tried_release(&t);

  /* a 2 x 2 space from a corner: two singles and the opposite corner */
  static const int nv2[2] = {2, 2};
  toy_spec(&s, 2, nv2);
  proposer_init(&p, &s, 5);
  static const int corner[2] = {0, 0};
  best = at(&s, corner);
  memset(&t, 0, sizeof t);
  assert_int_equal(drain(&p, &best, &t, 0, got, nch, 16), 3);
  assert_int_equal(nch[2], 2);
  assert_int_equal(got[2].v[0], 2);
  assert_int_equal(got[2].v[1], 2);
  tried_release(&t);

  /* a knob with a single value never moves */
  static const int nv1[2] = {1, 1};
  toy_spec(&s, 2, nv1);
  proposer_init(&p, &s, 5);
  best = at(&s, corner);
  memset(&t, 0, sizeof t);
  assert_int_equal(propose_next(&p, &best, &t, 1, &c, &k), 0);
}

/* ------------------------------------------------------------------ the space */

typedef struct fixture {
  char dir[256];
  char path[512];
} fixture;

/* A, B in {0, 1} and C in {0, 1, 2}: 12 points.
 *   ab_equal   A == B                          refuses A != B: 2 x 3 = 6
 *   c_by_a     A == 1 ? C == 2 : C < 2         refuses A=0,C=2 (2) and A=1,C<2 (4): 6
 *   n_even     N % 2 == 0                      refuses nothing at N = 1024
 * Both of the first two refuse (0,1,2), (1,0,0), (1,0,1): 3, so 12 - (6 + 6 - 3) = 3 accepted:
 * (0,0,0), (0,0,1) and (1,1,2). The last differs from both others in all three knobs, so
 * from the start (0,0,0) one- and two-knob moves reach 2 of them. */
static const char space_template[] =
    "{\"name\": \"space\", \"source\": \"space.cu\", \"kernel\": \"space_kernel\", \"reference\": {\"kernel\": \"ref\", \"source\": \"space.cu\", \"launch\": {\"grid\": [\"N\", 1, 1], \"block\": [1, 1, 1]}},\n"
    " \"problem\": {\"N\": [1, 65536]},\n"
    " \"knobs\": {\"A\": {\"values\": [0, 1]}, \"B\": {\"values\": [0, 1]}, \"C\": {\"values\": [0, 1, 2]}},\n"
    " \"constraints\": [\n"
    "   {\"name\": \"ab_equal\", \"expr\": \"A == B\", \"reason\": \"r0\"},\n"
    "   {\"name\": \"c_by_a\", \"expr\": \"A == 1 ? C == 2 : C < 2\", \"reason\": \"r1\"},\n"
    "   {\"name\": \"n_even\", \"expr\": \"N % 2 == 0\", \"reason\": \"r2\"}],\n"
    " \"launch\": {\"grid\": [\"ceil_div(N, 256)\", 1, 1], \"block\": [256, 1, 1]},\n"
    " \"buffers\": [{\"name\": \"x\", \"count\": \"N\", \"role\": \"input\"},\n"
    "             {\"name\": \"y\", \"count\": \"N\", \"role\": \"output\"}],\n"
    " \"args\": [\"x\", \"y\", \"N\"]}\n";

static const char space_campaign[] =
    "{\"template\": \"space\", \"problem\": {\"N\": 1024}, \"start\": {\"A\": 0, \"B\": 0, \"C\": 0},"
    " \"control\": {\"A\": 0, \"B\": 0, \"C\": 1}, \"search\": {}}\n";

static int setup(void **state) {
  fixture *f = calloc(1, sizeof *f);
  if (!f) return -1;
  snprintf(f->dir, sizeof f->dir, "/tmp/tf-test-space-XXXXXX");
  if (!mkdtemp(f->dir)) return -1;
  char p[512];
  snprintf(p, sizeof p, "%s/templates", f->dir);
  if (mkdir(p, 0700)) return -1;
  write_file(p, "space.json", space_template);
  write_file(p, "space.cu", "template <int A, int B, int C> __global__ void space_kernel(const float *x, float *y, int n) {}\n");
  snprintf(p, sizeof p, "%s/campaigns", f->dir);
  if (mkdir(p, 0700)) return -1;
  write_file(p, "space.json", space_campaign);
  snprintf(f->path, sizeof f->path, "%s/campaigns/space.json", f->dir);
  *state = f;
  return 0;
}

static int teardown(void **state) {
  fixture *f = *state;
  rm_rf(f->dir);
  free(f);
  return 0;
}

/* The i-th reachable configuration is c. */
static int reach_is(const space_view *v, int i, const config *c) {
  config r;
  space_at(v, i, &r);
  return config_equal(&r, c);
}

static void space_should_count_accepted_reachable_and_refusals(void **state) {
  fixture *f = *state;
  static campaign c;
  tf_err e = {0};
  unsetenv("TUNEFARM_ROOT");
  if (campaign_load(&c, f->path, &e)) fail_msg("%s", e.msg);
  space_view v;
  if (space_enumerate(&c, &v, &e)) fail_msg("%s", e.msg);
  assert_int_equal(v.size, 12);
  assert_int_equal(v.accepted, 3);
  assert_int_equal(v.refused_by[0], 6);
  assert_int_equal(v.refused_by[1], 6);
  assert_int_equal(v.refused_by[2], 0);
  assert_int_equal(v.nreachable, 2);
  assert_true(reach_is(&v, 0, &c.start)); /* start first */
  config other = {3, {0, 0, 1}};
  assert_true(reach_is(&v, 1, &other));
  space_release(&v);
  assert_null(v.reach);
  campaign_release(&c);

  /* an odd N: the third constraint refuses everything but the start must pass it,
   * so the campaign itself is refused */
  char p[512];
  snprintf(p, sizeof p, "%s/campaigns", f->dir);
  write_file(p, "space.json",
             "{\"template\": \"space\", \"problem\": {\"N\": 1023}, \"start\": {\"A\": 0, \"B\": 0, \"C\": 0},"
             " \"control\": {\"A\": 0, \"B\": 0, \"C\": 1}}\n");
  assert_int_equal(campaign_load(&c, f->path, &e), -1);
  assert_non_null(strstr(e.msg, "n_even"));
}

static void space_should_join_islands_through_two_knob_moves(void **state) {
  fixture *f = *state;
  /* Drop c_by_a's pairing: with A == B only, (0,0,c) and (1,1,c) are two knobs apart. */
  char p[512];
  snprintf(p, sizeof p, "%s/templates", f->dir);
  char t[sizeof space_template + 64];
  const char *at = strstr(space_template, "\"A == 1 ? C == 2 : C < 2\"");
  assert_non_null(at);
  snprintf(t, sizeof t, "%.*s\"C >= 0\"%s", (int)(at - space_template), space_template,
           at + strlen("\"A == 1 ? C == 2 : C < 2\""));
  write_file(p, "space.json", t);
  static campaign c;
  tf_err e = {0};
  unsetenv("TUNEFARM_ROOT");
  if (campaign_load(&c, f->path, &e)) fail_msg("%s", e.msg);
  space_view v;
  if (space_enumerate(&c, &v, &e)) fail_msg("%s", e.msg);
  assert_int_equal(v.size, 12);
  assert_int_equal(v.accepted, 6);
  assert_int_equal(v.refused_by[0], 6);
  assert_int_equal(v.refused_by[1], 0);
  assert_int_equal(v.nreachable, 6);
  space_release(&v);
  campaign_release(&c);
}

static int in_view(const space_view *v, const config *c) {
  for (int i = 0; i < v->nreachable; i++)
    if (reach_is(v, i, c)) return 1;
  return 0;
}

/* The plain walk the space's enumeration must agree with: breadth first, every one- and
 * two-knob move of every visited point, in this order. */
static long long naive_reach(const campaign *c, long long *out) {
  const spec *s = &c->tmpl;
  long long size = 1, tail = 0;
  for (int k = 0; k < s->nknobs; k++) size *= s->knobs[k].nvalues;
  unsigned char *ok = calloc((size_t)size, 1), *seen = calloc((size_t)size, 1);
  assert_true(ok && seen);
  config cfg;
  for (long long i = 0; i < size; i++) {
    long long r = i;
    cfg.n = s->nknobs;
    for (int k = s->nknobs - 1; k >= 0; k--) {
      cfg.v[k] = s->knobs[k].values[r % s->knobs[k].nvalues];
      r /= s->knobs[k].nvalues;
    }
    int bad;
    tf_err e = {0};
    assert_int_equal(spec_check(s, c->dims, &cfg, &bad, &e), 0);
    ok[i] = bad < 0;
  }
  long long start = 0;
  for (int k = 0; k < s->nknobs; k++)
    start = start * s->knobs[k].nvalues + spec_value_index(s, k, c->start.v[k]);
  seen[start] = 1;
  out[tail++] = start;
  for (long long head = 0; head < tail; head++) {
    long long d[SPEC_MAX_KNOBS], stride[SPEC_MAX_KNOBS], x = out[head];
    for (int k = s->nknobs - 1; k >= 0; k--) {
      stride[k] = k == s->nknobs - 1 ? 1 : stride[k + 1] * s->knobs[k + 1].nvalues;
      d[k] = x / stride[k] % s->knobs[k].nvalues;
    }
    for (int a = 0; a < s->nknobs; a++)
      for (int va = 0; va < s->knobs[a].nvalues; va++)
        for (int b = a; b < s->nknobs; b++)
          for (int vb = 0; vb < (b == a ? 1 : s->knobs[b].nvalues); vb++) {
            long long i = x + (va - d[a]) * stride[a];
            if (b != a) i += (vb - d[b]) * stride[b];
            if (ok[i] && !seen[i]) {
              seen[i] = 1;
              out[tail++] = i;
            }
          }
  }
  free(ok);
  free(seen);
  return tail;
}

static void space_should_walk_as_the_naive_walk(const campaign *c) {
  space_view v;
  tf_err e = {0};
  if (space_enumerate(c, &v, &e)) fail_msg("%s", e.msg);
  long long *want = malloc((size_t)v.size * sizeof *want);
  assert_non_null(want);
  long long n = naive_reach(c, want);
  assert_int_equal(v.nreachable, n);
  for (long long i = 0; i < n; i++)
    if (v.reach[i] != want[i]) fail_msg("reachable %lld: %lld, the naive walk %lld", i, v.reach[i], want[i]);
  free(want);
  space_release(&v);
}

/* Knobs of one value among the others, islands that only two-knob moves join, and points no
 * move reaches (10 accepted, 8 reachable from the first start): the walk that skips the lines and planes it looked at before finds the same
 * configurations in the same order as the naive one. */
static void space_should_find_what_the_naive_walk_finds_in_its_order(void **state) {
  fixture *f = *state;
  char p[512];
  snprintf(p, sizeof p, "%s/templates", f->dir);
  write_file(p, "space.json",
             "{\"name\": \"space\", \"source\": \"space.cu\", \"kernel\": \"space_kernel\", \"reference\": {\"kernel\": \"ref\", \"source\": \"space.cu\", \"launch\": {\"grid\": [\"N\", 1, 1], \"block\": [1, 1, 1]}},\n"
             " \"problem\": {\"N\": [1, 65536]},\n"
             " \"knobs\": {\"A\": {\"values\": [0, 1]}, \"B\": {\"values\": [7]}, \"C\": {\"values\": [0, 1, 2]},"
             "  \"D\": {\"values\": [0, 1, 2, 3]}, \"E\": {\"values\": [3]}, \"F\": {\"values\": [0, 1, 2, 3, 4]}},\n"
             " \"constraints\": [\n"
             "   {\"name\": \"k0\", \"expr\": \"(A + C + D + F) % 3 != 1\", \"reason\": \"r0\"},\n"
             "   {\"name\": \"k1\", \"expr\": \"F == D && C == D % 3 || A == 1 && F == 4\", \"reason\": \"r1\"},\n"
             "   {\"name\": \"k2\", \"expr\": \"A * 4 + D != 6\", \"reason\": \"r2\"}],\n"
             " \"launch\": {\"grid\": [\"ceil_div(N, 256)\", 1, 1], \"block\": [256, 1, 1]},\n"
             " \"buffers\": [{\"name\": \"x\", \"count\": \"N\", \"role\": \"input\"},\n"
             "             {\"name\": \"y\", \"count\": \"N\", \"role\": \"output\"}],\n"
             " \"args\": [\"x\", \"y\", \"N\"]}\n");
  snprintf(p, sizeof p, "%s/campaigns", f->dir);
  static const char *const starts[] = {"\"A\": 0, \"B\": 7, \"C\": 0, \"D\": 0, \"E\": 3, \"F\": 0",
                                       "\"A\": 1, \"B\": 7, \"C\": 0, \"D\": 0, \"E\": 3, \"F\": 4",
                                       "\"A\": 0, \"B\": 7, \"C\": 1, \"D\": 1, \"E\": 3, \"F\": 1"};
  for (size_t i = 0; i < sizeof starts / sizeof starts[0]; i++) {
    char camp[512];
    snprintf(camp, sizeof camp, "{\"template\": \"space\", \"problem\": {\"N\": 1024}, \"start\": {%s},"
             " \"control\": {%s}, \"search\": {}}\n", starts[i], starts[i]);
    write_file(p, "space.json", camp);
    static campaign c;
    tf_err e = {0};
    unsetenv("TUNEFARM_ROOT");
    if (campaign_load(&c, f->path, &e)) fail_msg("%s", e.msg);
    space_should_walk_as_the_naive_walk(&c);
    campaign_release(&c);
  }
  static campaign m;
  load_tree_campaign("layernorm-4096x768.json", &m);
  space_should_walk_as_the_naive_walk(&m);
  campaign_release(&m);
}

/* On matmul-1024: the counts and the table of first broken constraints agree with spec_check
 * point by point, a memo over the table answers as spec_check does (points outside the
 * space too), and a search that keeps every accepted proposal never leaves the reachable
 * set. */
static void space_should_agree_with_the_checks_and_the_proposer(void **state) {
  (void)state;
  static campaign c;
  tf_err e = {0};
  load_tree_campaign("matmul-1024.json", &c);
  const spec *s = &c.tmpl;
  space_view v;
  if (space_enumerate(&c, &v, &e)) fail_msg("%s", e.msg);
  long long size = 1, accepted = 0, refused[SPEC_MAX_CONSTRAINTS] = {0};
  for (int k = 0; k < s->nknobs; k++) size *= s->knobs[k].nvalues;
  assert_int_equal(v.size, size);
  for (long long i = 0; i < size; i++) {
    config cfg = {s->nknobs, {0}};
    long long r = i;
    for (int k = s->nknobs - 1; k >= 0; k--) {
      cfg.v[k] = s->knobs[k].values[r % s->knobs[k].nvalues];
      r /= s->knobs[k].nvalues;
    }
    unsigned char broken[SPEC_MAX_CONSTRAINTS];
    int bad;
    assert_int_equal(spec_check_all(s, c.dims, &cfg, broken, &e), 0);
    assert_int_equal(spec_check(s, c.dims, &cfg, &bad, &e), 0);
    int any = 0;
    for (int k = 0; k < s->nconstraints; k++) {
      refused[k] += broken[k];
      any |= broken[k];
    }
    assert_int_equal(any, bad >= 0);
    assert_int_equal(space_verdict(&v, &cfg), bad);
    accepted += !any;
  }
  check_memo m = {.space = &v};
  for (int i = 0; i < 2000; i++) { /* a knob off its domain now and then: the memo evaluates */
    config cfg;
    space_config_at(s, (long long)i * 7919 % size, &cfg);
    if (i % 5 == 0) cfg.v[i % s->nknobs] += 1;
    int want, got;
    assert_int_equal(spec_check(s, c.dims, &cfg, &want, &e), 0);
    assert_int_equal(check_memo_check(&m, s, c.dims, &cfg, &got, &e), 0);
    assert_int_equal(got, want);
    assert_int_equal(space_verdict(&v, &cfg) == -2, m.n > 0 && config_equal(&m.key[m.n - 1], &cfg));
  }
  assert_true(m.n > 0);
  check_memo_release(&m);
  config off = c.start; /* past the direct index, and below it */
  off.v[0] = SPACE_DIRECT + 5000;
  assert_int_equal(space_verdict(&v, &off), -2);
  off.v[0] = -1;
  assert_int_equal(space_verdict(&v, &off), -2);
  assert_int_equal(v.accepted, accepted);
  for (int k = 0; k < s->nconstraints; k++) assert_int_equal(v.refused_by[k], refused[k]);
  assert_true(v.nreachable > 1 && v.nreachable <= accepted);
  assert_true(reach_is(&v, 0, &c.start));
  for (int i = 0; i < v.nreachable; i++) {
    int bad;
    config ri;
    space_at(&v, i, &ri);
    assert_int_equal(spec_check(s, c.dims, &ri, &bad, &e), 0);
    assert_int_equal(bad, -1);
    for (int j = 0; j < i; j++) assert_false(reach_is(&v, j, &ri));
  }
  /* a greedy search that keeps every accepted proposal, single and two-knob moves alike */
  proposer p;
  proposer_init(&p, s, 1);
  tried_set t = {0};
  config best = c.start, cand;
  int k, steps = 0, stale = 0;
  assert_int_equal(tried_add(&t, &best), 0);
  while (steps < 4000 && propose_next(&p, &best, &t, stale >= 3, &cand, &k)) {
    int bad;
    assert_int_equal(tried_add(&t, &cand), 0);
    assert_int_equal(spec_check(s, c.dims, &cand, &bad, &e), 0);
    if (bad < 0) {
      if (!in_view(&v, &cand)) fail_msg("an accepted proposal at step %d is not reachable", steps);
      int keep = (steps % 3) == 0; /* keep some, so best wanders; the rest are near misses */
      propose_feedback(&p, &best, &cand, keep, keep ? 0.9 : 1.0 + 0.001 * (steps % 40));
      if (keep) best = cand;
      stale = keep ? 0 : stale + 1;
    }
    steps++;
  }
  assert_true(steps > 10);
  tried_release(&t);
  space_release(&v);
  campaign_release(&c);
}

/* Rejected moves within PROPOSE_NEAR_MISS are combined, closest pair first, before any other
 * two-knob move; a far miss is not; a pair and a single make a three-knob move. */
static void propose_should_combine_near_misses_first(void **state) {
  (void)state;
  static spec s;
  static const int nv[5] = {4, 4, 4, 4, 4};
  toy_spec(&s, 5, nv);
  proposer p;
  proposer_init(&p, &s, 5);
  static const int mid[5] = {1, 1, 1, 1, 1};
  config best = at(&s, mid);
  static const int a_i[5] = {1, 1, 1, 2, 1}, b_i[5] = {1, 1, 1, 1, 0}, far_i[5] = {3, 1, 1, 1, 1};
  static const int pair_i[5] = {1, 2, 0, 1, 1};
  config a = at(&s, a_i), b = at(&s, b_i), far = at(&s, far_i), pair = at(&s, pair_i);
  tried_set t = {0};
  assert_int_equal(tried_add(&t, &a), 0);
  assert_int_equal(tried_add(&t, &b), 0);
  assert_int_equal(tried_add(&t, &far), 0);
  assert_int_equal(tried_add(&t, &pair), 0);
  propose_feedback(&p, &best, &far, 0, PROPOSE_NEAR_MISS + 0.001);
  propose_feedback(&p, &best, &a, 0, 1.004);
  propose_feedback(&p, &best, &b, 0, 1.002);
  propose_feedback(&p, &best, &pair, 0, 1.02);
  assert_int_equal(p.nnear, 3); /* far is not a near miss */

  config c;
  int k;
  static const int ab_i[5] = {1, 1, 1, 2, 0};
  config ab = at(&s, ab_i);
  assert_int_equal(propose_next(&p, &best, &t, 1, &c, &k), 1);
  assert_true(config_equal(&c, &ab)); /* 1.004 * 1.002: the closest pair */
  assert_int_equal(k, 2);
  assert_int_equal(tried_add(&t, &c), 0);
  assert_int_equal(propose_next(&p, &best, &t, 1, &c, &k), 1);
  assert_int_equal(k, 3); /* the pair with b (1.02 * 1.002) */
  static const int pb_i[5] = {1, 2, 0, 1, 0};
  config pb = at(&s, pb_i);
  assert_true(config_equal(&c, &pb));
  assert_int_equal(tried_add(&t, &c), 0);
  assert_int_equal(propose_next(&p, &best, &t, 1, &c, &k), 1);
  assert_int_equal(k, 3); /* then the pair with a */
  assert_int_equal(tried_add(&t, &c), 0);
  assert_int_equal(propose_next(&p, &best, &t, 1, &c, &k), 1);
  assert_int_equal(k, 1); /* the near misses are used up: single moves, before blind pairs */

  propose_feedback(&p, &best, &ab, 1, 0.95); /* a keep: the near misses were against old best */
  assert_int_equal(p.nnear, 0);
  tried_release(&t);
}

/* At most PROPOSE_MAX_NEAR are kept, the closest; a measured ratio of NAN is never one. */
static void propose_should_keep_the_closest_near_misses(void **state) {
  (void)state;
  static spec s;
  static const int nv[3] = {8, 8, 8};
  toy_spec(&s, 3, nv);
  proposer p;
  proposer_init(&p, &s, 5);
  static const int zero[3] = {0, 0, 0};
  config best = at(&s, zero);
  double r[21];
  for (int i = 0; i < 21; i++) { /* 21 rejected single moves, ratios in a scrambled order */
    int idx[3] = {0, 0, 0};
    idx[i / 7] = 1 + i % 7;
    config c = at(&s, idx);
    r[i] = 1.0 + 0.001 * ((i * 8) % 21);
    propose_feedback(&p, &best, &c, 0, r[i]);
  }
  propose_feedback(&p, &best, &best, 0, NAN);
  assert_int_equal(p.nnear, PROPOSE_MAX_NEAR);
  for (int i = 1; i < p.nnear; i++) assert_true(p.near[i - 1].ratio <= p.near[i].ratio);
  int below = 0;
  for (int i = 0; i < 21; i++) below += r[i] <= p.near[PROPOSE_MAX_NEAR - 1].ratio;
  assert_int_equal(below, PROPOSE_MAX_NEAR); /* exactly the closest were kept */
}

/* The configuration of campaign c's template with the named knobs set (name, value pairs). */
static config with(const campaign *c, config base, int n, const char *const *names,
                   const long long *values) {
  for (int i = 0; i < n; i++) base.v[spec_knob_index(&c->tmpl, names[i])] = values[i];
  return base;
}

/* 1 if one of cand's one-knob halves (cand's value of one knob, best's of the rest) breaks a
 * constraint at dims. */
static int has_refused_half(const spec *s, const long long *dims, const config *best,
                            const config *cand) {
  for (int k = 0; k < s->nknobs; k++)
    if (cand->v[k] != best->v[k]) {
      config half = *best;
      half.v[k] = cand->v[k];
      if (!passes(s, dims, &half)) return 1;
    }
  return 0;
}

/* A layernorm-4096x768 search's dead end: *best (one warp per row, 1024
 * threads, VEC 2, no register cache), *whole (the cache of the whole row, CACHE 12 of float2,
 * at 512 threads), a proposer with the campaign's dims and a tried set holding best. */
static void layernorm_stop(campaign *c, config *best, config *whole, proposer *p, tried_set *t) {
  static const char *const nb[2] = {"BLOCK", "VEC"}, *const nw[2] = {"BLOCK", "CACHE"};
  static const long long vb[2] = {1024, 2}, vw[2] = {512, 12};
  load_tree_campaign("layernorm-4096x768.json", c);
  *best = with(c, c->start, 2, nb, vb);
  *whole = with(c, *best, 2, nw, vw);
  assert_true(passes(&c->tmpl, c->dims, best));
  assert_true(passes(&c->tmpl, c->dims, whole));
  proposer_init(p, &c->tmpl, 1);
  proposer_repairs(p, c->dims);
  tried_add(t, best);
}

/* From layernorm_stop's best the cache of the whole row is seven values away and breaks the
 * register budget at 1024 threads; repairs reach it at any distance, with 512 threads, after
 * every single move was tried (before them, far repairs crowded them out); every move of
 * several knobs is a repair. */
static void propose_should_repair_far_single_moves(void **state) {
  (void)state;
  static campaign c;
  config best, whole;
  proposer p;
  tried_set t = {0};
  layernorm_stop(&c, &best, &whole, &p, &t);
  const spec *s = &c.tmpl;
  int found = 0, singles = 0;
  for (int i = 0; i < 300 && !found; i++) {
    config cand;
    int k = 0;
    assert_int_equal(propose_next(&p, &best, &t, 1, &cand, &k), 1);
    tried_add(&t, &cand);
    if (k == 1) {
      singles++;
      continue;
    }
    assert_int_equal(k, 2);
    assert_true(passes(s, c.dims, &cand));
    assert_true(has_refused_half(s, c.dims, &best, &cand));
    found = config_equal(&cand, &whole);
  }
  assert_true(singles > 0);
  config next;
  int k;
  for (int i = 0; i < 50 && propose_next(&p, &best, &t, 1, &next, &k); i++) {
    assert_int_not_equal(k, 1); /* no single move was left */
    tried_add(&t, &next);
  }
  assert_true(found);
  tried_release(&t);
  campaign_release(&c);
}

/* The repair scan as it was written before its lists, kept as the reference: the first
 * one-knob move (nearest first, knobs in `order`, + before -, at most max_dist values away)
 * that breaks a constraint, with the first step of another knob (1, -1, 2, -2) that makes an
 * untried legal configuration. */
static int step_of(const spec *s, config *c, int k, int steps) {
  int i = spec_value_index(s, k, c->v[k]) + steps;
  if (i < 0 || i >= s->knobs[k].nvalues) return 0;
  c->v[k] = s->knobs[k].values[i];
  return 1;
}

static int reference_repair(const campaign *c, const config *best, const tried_set *t,
                            const int *order, int max_dist, config *out) {
  static const int steps[4] = {1, -1, 2, -2};
  const spec *s = &c->tmpl;
  for (int dist = 1; dist <= max_dist; dist++)
    for (int i = 0; i < s->nknobs; i++)
      for (int sign = 1; sign >= -1; sign -= 2) {
        config one = *best;
        if (!step_of(s, &one, order[i], sign * dist) || passes(s, c->dims, &one)) continue;
        for (int j = 0; j < s->nknobs; j++)
          for (int sj = 0; j != i && sj < 4; sj++) {
            config x = one;
            if (step_of(s, &x, order[j], steps[sj]) && !tried_has(t, &x) &&
                passes(s, c->dims, &x)) {
              *out = x;
              return 1;
            }
          }
      }
  return 0;
}

/* With every single move from best tried and no near misses, a proposal is the repair scan's
 * (two values away, then any distance) while there is one. Through a memo whose lists go on
 * where the last scan from the same best and knob order stopped, it is the reference's: over
 * 40 bests asked in turn (more than the memo keeps lists for), each with a tried set of its
 * own, and knob orders that change between rounds. */
static void memo_should_not_change_repairs_in(const char *name) {
  static campaign c;
  tf_err e = {0};
  load_tree_campaign(name, &c);
  const spec *s = &c.tmpl;
  space_view v;
  if (space_enumerate(&c, &v, &e)) fail_msg("%s", e.msg);
  enum { NB = 40 };
  config best[NB];
  tried_set t[NB][2]; /* the second takes only some answers: a copy's walk that parts */
  for (int b = 0; b < NB; b++) {
    space_at(&v, (int)((long long)b * v.nreachable / NB), &best[b]);
    for (int w = 0; w < 2; w++) { /* both begin with best and its one-knob moves */
      memset(&t[b][w], 0, sizeof t[b][w]);
      assert_int_equal(tried_add(&t[b][w], &best[b]), 0);
      for (int k = 0; k < s->nknobs; k++)
        for (int x = 0; x < s->knobs[k].nvalues; x++) {
          config one = best[b];
          one.v[k] = s->knobs[k].values[x];
          assert_int_equal(tried_add(&t[b][w], &one), 0);
        }
    }
  }
  check_memo m = {0};
  proposer p;
  proposer_init(&p, s, 3);
  proposer_repairs(&p, c.dims);
  p.memo = &m;
  int repairs = 0;
  for (int round = 0; round < 12; round++) {
    int order[SPEC_MAX_KNOBS]; /* payoffs that put the knobs in this order */
    for (int k = 0; k < s->nknobs; k++) /* turned by the round, and reversed every other */
      order[k] = ((round % 2 ? s->nknobs - 1 - k : k) + round) % s->nknobs;
    for (int k = 0; k < s->nknobs; k++) p.payoff[order[k]] = s->nknobs - k;
    for (int b = 0; b < NB; b++)
      for (int ask = 0; ask < 6; ask++) {
        int w = ask % 2;
        config want, got;
        int k;
        if (!reference_repair(&c, &best[b], &t[b][w], order, 2, &want) &&
            !reference_repair(&c, &best[b], &t[b][w], order, SPEC_MAX_VALUES - 1, &want))
          continue; /* what follows is no repair */
        assert_int_equal(propose_next(&p, &best[b], &t[b][w], 0, &got, &k), 1);
        assert_true(config_equal(&got, &want));
        if (w == 0 || (round + ask) % 3 == 0) assert_int_equal(tried_add(&t[b][w], &got), 0);
        repairs++;
      }
  }
  print_message("%s: %d repairs\n", name, repairs);
  assert_true(repairs > 200);
  for (int b = 0; b < NB; b++) {
    tried_release(&t[b][0]);
    tried_release(&t[b][1]);
  }
  check_memo_release(&m);
  space_release(&v);
  campaign_release(&c);
}

static void memo_should_not_change_repairs(void **state) {
  (void)state;
  memo_should_not_change_repairs_in("matmul-1024.json");
  memo_should_not_change_repairs_in("layernorm-4096x768.json");
}

/* A near miss that makes a refused one-knob move legal is combined with it before any repair:
 * rows in turn (ROWS 2) need a register cache, and the whole-row cache was a near miss. */
static void propose_should_repair_with_a_near_miss(void **state) {
  (void)state;
  static campaign c;
  config best, whole;
  proposer p;
  tried_set t = {0};
  layernorm_stop(&c, &best, &whole, &p, &t);
  const spec *s = &c.tmpl;
  static const char *const nr[1] = {"ROWS"};
  static const long long vr[1] = {2};
  config rows = with(&c, whole, 1, nr, vr), rows_alone = with(&c, best, 1, nr, vr);
  assert_false(passes(s, c.dims, &rows_alone));
  assert_true(passes(s, c.dims, &rows));
  tried_add(&t, &whole);
  config cand;
  int k;
  /* as a far miss it is not remembered: the first informed move is an ordinary repair */
  propose_feedback(&p, &best, &whole, 0, 1.2);
  assert_int_equal(p.nnear, 0);
  assert_int_equal(propose_next(&p, &best, &t, 1, &cand, &k), 1);
  assert_int_equal(k, 2);
  propose_feedback(&p, &best, &whole, 0, 1.01);
  assert_int_equal(propose_next(&p, &best, &t, 1, &cand, &k), 1);
  assert_true(config_equal(&cand, &rows));
  assert_int_equal(k, 3);
  tried_release(&t);
  campaign_release(&c);
}

/* A near miss that measured faster than best (ratio < PROPOSE_STEP_FROM) is a place to look
 * from: one step of one knob from it comes before repairs and blind pairs; a slower near miss,
 * or one faster only by noise, is not. */
static void propose_should_step_from_a_faster_near_miss(void **state) {
  (void)state;
  static spec s;
  static const int nv[4] = {4, 4, 4, 4};
  toy_spec(&s, 4, nv);
  proposer p;
  proposer_init(&p, &s, 9);
  static const int mid[4] = {1, 1, 1, 1}, near_i[4] = {1, 2, 1, 1}, slow_i[4] = {1, 1, 1, 2};
  config best = at(&s, mid), near = at(&s, near_i), slow = at(&s, slow_i);
  tried_set t = {0};
  assert_int_equal(tried_add(&t, &near), 0);
  assert_int_equal(tried_add(&t, &slow), 0);
  propose_feedback(&p, &best, &slow, 0, 1.01);
  static const int noise_i[4] = {2, 1, 1, 1};
  config noise = at(&s, noise_i); /* faster, but by less than a keep needs */
  assert_int_equal(tried_add(&t, &noise), 0);
  propose_feedback(&p, &best, &noise, 0, 0.993);
  config c;
  int k;
  assert_int_equal(propose_next(&p, &best, &t, 1, &c, &k), 1);
  assert_int_equal(k, 2); /* the pair of the two near misses */
  assert_int_equal(tried_add(&t, &c), 0);
  assert_int_equal(propose_next(&p, &best, &t, 1, &c, &k), 1);
  assert_int_equal(k, 1); /* nothing clearly faster to step from: single moves */

  propose_feedback(&p, &best, &near, 0, 0.983);
  /* the seven neighbours of near (both of K0, K2, K3; K1 up: K1 down is best), the pair with
   * the slow near miss (K3 up) among them, before anything else */
  for (int i = 0; i < 7; i++) {
    int which = -1;
    assert_int_equal(propose_next(&p, &best, &t, 1, &c, &k), 1);
    assert_int_equal(changed(&c, &near, &which), 1);
    assert_int_equal(distance(&s, &c, &near, which), 1);
    assert_int_equal(tried_add(&t, &c), 0);
  }
  assert_int_equal(propose_next(&p, &best, &t, 1, &c, &k), 1);
  assert_int_equal(k, 1); /* then the single moves from best */
  tried_release(&t);
}

/* Restart points: legal at the campaign's dims, never tried, the same for the same seed, and
 * spread over the space (at 4096x768 the draws cover every value of BLOCK, the knob whose
 * early keeps end the move-by-move searches); none once every legal configuration is tried. */
static void propose_should_restart_from_untried_legal_points(void **state) {
  (void)state;
  static campaign c;
  load_tree_campaign("layernorm-4096x768.json", &c);
  proposer p;
  proposer_init(&p, &c.tmpl, 1);
  proposer_repairs(&p, c.dims);
  tried_set t = {0};
  tried_add(&t, &c.start);
  int block = spec_knob_index(&c.tmpl, "BLOCK"), seen[SPEC_MAX_VALUES] = {0};
  assert_true(block >= 0);
  for (unsigned long long seed = 0; seed < 200; seed++) {
    config r, again;
    assert_int_equal(propose_restart(&p, &t, seed, &r), 1);
    assert_true(passes(&c.tmpl, c.dims, &r));
    assert_false(tried_has(&t, &r));
    assert_int_equal(propose_restart(&p, &t, seed, &again), 1);
    assert_true(config_equal(&r, &again));
    seen[spec_value_index(&c.tmpl, block, r.v[block])] = 1;
    assert_int_equal(tried_add(&t, &r), 0);
  }
  for (int i = 0; i < c.tmpl.knobs[block].nvalues; i++) assert_int_equal(seen[i], 1);
  tried_release(&t);

  /* a toy space of 2 x 3 configurations, all legal without dims: six restarts, then none */
  static spec s;
  static const int nv[2] = {2, 3};
  toy_spec(&s, 2, nv);
  proposer_init(&p, &s, 7);
  for (int i = 0; i < 6; i++) {
    config r;
    assert_int_equal(propose_restart(&p, &t, (unsigned long long)i, &r), 1);
    assert_int_equal(tried_add(&t, &r), 0);
  }
  config none;
  assert_int_equal(propose_restart(&p, &t, 99, &none), 0);
  tried_release(&t);
  campaign_release(&c);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(tried_should_grow_and_ignore_duplicates),
      cmocka_unit_test(tried_over_should_hold_both_and_change_neither),
      cmocka_unit_test(check_memo_should_answer_as_spec_check),
      cmocka_unit_test(memo_should_not_change_repairs),
      cmocka_unit_test(propose_should_never_propose_a_tried_config),
      cmocka_unit_test(propose_should_try_single_moves_before_two_knob_moves),
      cmocka_unit_test(propose_should_try_the_nearest_value_first),
      cmocka_unit_test(propose_should_order_knobs_by_payoff_after_feedback),
      cmocka_unit_test(propose_should_break_ties_by_the_seed),
      cmocka_unit_test(propose_should_exhaust_a_two_knob_space),
      cmocka_unit_test(propose_should_repair_refused_single_moves_first),
      cmocka_unit_test(propose_should_combine_near_misses_first),
      cmocka_unit_test(propose_should_keep_the_closest_near_misses),
      cmocka_unit_test(propose_should_repair_far_single_moves),
      cmocka_unit_test(propose_should_repair_with_a_near_miss),
      cmocka_unit_test(propose_should_step_from_a_faster_near_miss),
      cmocka_unit_test(propose_should_restart_from_untried_legal_points),
      cmocka_unit_test_setup_teardown(space_should_count_accepted_reachable_and_refusals, setup, teardown),
      cmocka_unit_test_setup_teardown(space_should_join_islands_through_two_knob_moves, setup, teardown),
      cmocka_unit_test_setup_teardown(space_should_find_what_the_naive_walk_finds_in_its_order, setup, teardown),
      cmocka_unit_test(space_should_agree_with_the_checks_and_the_proposer),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
