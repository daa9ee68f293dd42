/* Unit tests of common/campaign.c: loading every campaign of the tree, the
 * defaults, every kind of bad campaign, the content hash and the project root.
 *
 * Bad campaigns are a good toy campaign with exactly one edit, written into a
 * scratch project (campaigns/, templates/, kernels/) that TUNEFARM_ROOT names. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <dirent.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common/cache.h"
#include "common/campaign.h"
#include "common/jsonio.h"
#include "tests/unit/testutil.h"

/* ------------------------------------------------------------------ scratch project */

typedef struct fixture {
  char dir[256];
  char path[512]; /* dir/campaigns/toy.json */
} fixture;


/* A template with two knobs and two constraints (one of them on the problem). */
static const char toy_template[] =
    "{\"name\": \"toy\", \"source\": \"toy.cu\", \"kernel\": \"toy_kernel\", \"reference\": {\"kernel\": \"ref\", \"source\": \"toy.cu\", \"launch\": {\"grid\": [\"N\", 1, 1], \"block\": [1, 1, 1]}},\n"
    " \"problem\": {\"N\": [1, 1048576]},\n"
    " \"knobs\": {\"T\": {\"values\": [32, 64, 128]}, \"U\": {\"values\": [1, 2]}},\n"
    " \"constraints\": [\n"
    "   {\"name\": \"two_warps\", \"expr\": \"T >= 64\", \"reason\": \"at least two warps\"},\n"
    "   {\"name\": \"unroll_divides\", \"expr\": \"N % U == 0\", \"reason\": \"no remainder loop\"}],\n"
    " \"launch\": {\"grid\": [\"ceil_div(N, T*U)\", 1, 1], \"block\": [\"T\", 1, 1]},\n"
    " \"buffers\": [{\"name\": \"x\", \"count\": \"N\", \"role\": \"input\"},\n"
    "             {\"name\": \"y\", \"count\": \"N\", \"role\": \"output\"}],\n"
    " \"args\": [\"x\", \"y\", \"N\"]}\n";

/* A committed kernel of the template's interface, and one of another. */
static const char toy_kernel[] =
    "{\"name\": \"toyk\", \"source\": \"toyk.cu\", \"kernel\": \"toyk\",\n"
    " \"problem\": {\"N\": [1, 1048576]}, \"knobs\": {},\n"
    " \"launch\": {\"grid\": [\"ceil_div(N, 256)\", 1, 1], \"block\": [256, 1, 1]},\n"
    " \"buffers\": [{\"name\": \"x\", \"count\": \"N\", \"role\": \"input\"},\n"
    "             {\"name\": \"y\", \"count\": \"N\", \"role\": \"output\"}],\n"
    " \"args\": [\"x\", \"y\", \"N\"]}\n";

static const char other_kernel[] =
    "{\"name\": \"otherk\", \"source\": \"toyk.cu\", \"kernel\": \"toyk\",\n"
    " \"problem\": {\"M\": [1, 1024], \"N\": [1, 1048576], \"K\": [1, 1024]}, \"knobs\": {},\n"
    " \"launch\": {\"grid\": [1, 1, 1], \"block\": [256, 1, 1]},\n"
    " \"buffers\": [{\"name\": \"A\", \"count\": \"M*K\", \"role\": \"input\"},\n"
    "             {\"name\": \"B\", \"count\": \"K*N\", \"role\": \"input\"},\n"
    "             {\"name\": \"C\", \"count\": \"M*N\", \"role\": \"output\"}],\n"
    " \"args\": [\"A\", \"B\", \"C\"]}\n";

/* Every section given, every value off its default. */
static const char toy_campaign[] =
    "{\n"
    "  \"doc\": \"unit test campaign\",\n"
    "  \"template\": \"toy\",\n"
    "  \"problem\": {\"N\": 1000},\n"
    "  \"start\": {\"T\": 64, \"U\": 1},\n"
    "  \"control\": {\"T\": 128, \"U\": 2},\n"
    "  \"search\": {\"budget\": 5, \"max_stale\": 3, \"two_knob_after\": 2},\n"
    "  \"measure\": {\"burn_in\": 1, \"rounds\": 3, \"samples\": 5, \"input_sets\": 1, \"flush_l2\": false, "
    "\"deadline_s\": 10.5, \"seed\": 9},\n"
    "  \"decide\": {\"rule\": \"sequential\", \"min_gain\": 0.02, \"drift_tolerance\": 0.05, \"max_requeue\": 1}\n"
    "}\n";

/* Only the required keys. */
static const char bare_campaign[] =
    "{\"template\": \"toy\", \"problem\": {\"N\": 1000}, \"start\": {\"T\": 64, \"U\": 1},"
    " \"control\": \"toyk\"}\n";

static int setup(void **state) {
  fixture *f = calloc(1, sizeof *f);
  if (!f) return -1;
  snprintf(f->dir, sizeof f->dir, "/tmp/tf-test-campaign-XXXXXX");
  if (!mkdtemp(f->dir)) return -1;
  char p[512];
  static const char *const sub[] = {"campaigns", "templates", "kernels"};
  for (int i = 0; i < 3; i++) {
    snprintf(p, sizeof p, "%s/%s", f->dir, sub[i]);
    if (mkdir(p, 0700)) return -1;
  }
  snprintf(p, sizeof p, "%s/templates", f->dir);
  write_file(p, "toy.json", toy_template);
  write_file(p, "toy.cu", "template <int T, int U> __global__ void toy_kernel(const float *x, float *y, int n) {}\n");
  write_file(p, "toyk.json", toy_kernel); /* a template that names no reference */
  write_file(p, "toyk.cu", "__global__ void toyk(const float *x, float *y, int n) {}\n");
  snprintf(p, sizeof p, "%s/kernels", f->dir);
  write_file(p, "toyk.json", toy_kernel);
  write_file(p, "otherk.json", other_kernel);
  write_file(p, "toyk.cu", "__global__ void toyk(const float *x, float *y, int n) {}\n");
  snprintf(f->path, sizeof f->path, "%s/campaigns/toy.json", f->dir);
  setenv("TUNEFARM_ROOT", f->dir, 1);
  *state = f;
  return 0;
}

static int teardown(void **state) {
  fixture *f = *state;
  unsetenv("TUNEFARM_ROOT");
  rm_rf(f->dir);
  free(f);
  return 0;
}

/* Write `json` as campaigns/toy.json and load it. */
static int load_text(fixture *f, const char *json, campaign *c, tf_err *e) {
  char p[512];
  snprintf(p, sizeof p, "%s/campaigns", f->dir);
  write_file(p, "toy.json", json);
  memset(e, 0, sizeof *e);
  return campaign_load(c, f->path, e);
}

/* ------------------------------------------------------------------ the tree's campaigns */

static void campaign_should_load_every_campaign_of_the_tree(void **state) {
  (void)state;
  unsetenv("TUNEFARM_ROOT"); /* the root is the campaigns folder's parent */
  char dir[1024], failures[8192] = "";
  snprintf(dir, sizeof dir, "%s/campaigns", source_dir());
  DIR *d = opendir(dir);
  if (!d) fail_msg("cannot open '%s'", dir);
  struct dirent *de;
  int n = 0, bad = 0;
  while ((de = readdir(d))) {
    size_t l = strlen(de->d_name);
    if (l < 6 || strcmp(de->d_name + l - 5, ".json") != 0) continue;
    static campaign c;
    char path[2048];
    tf_err e = {0};
    snprintf(path, sizeof path, "%s/%s", dir, de->d_name);
    n++;
    if (campaign_load(&c, path, &e)) {
      bad++;
      snprintf(failures + strlen(failures), sizeof failures - strlen(failures), "\n  %s", e.msg);
      continue;
    }
    /* what the loader promises about a loaded campaign */
    int broken = 0;
    assert_int_equal(c.start.n, c.tmpl.nknobs);
    assert_int_equal(spec_check(&c.tmpl, c.dims, &c.start, &broken, &e), 0);
    assert_int_equal(broken, -1);
    assert_int_equal(strncmp(c.name, de->d_name, l - 5), 0);
    assert_int_equal(c.name[l - 5], '\0');
    assert_true(strlen(c.hash) > 0);
    campaign_release(&c);
  }
  closedir(d);
  if (bad) fail_msg("%d of %d campaigns do not load:%s", bad, n, failures);
  assert_true(n >= 4);
}

static void campaign_should_load_matmul_1024_as_written(void **state) {
  (void)state;
  unsetenv("TUNEFARM_ROOT");
  static campaign c;
  char path[1024], root[PATH_MAX];
  tf_err e = {0};
  snprintf(path, sizeof path, "%s/campaigns/matmul-1024.json", source_dir());
  if (campaign_load(&c, path, &e)) fail_msg("%s", e.msg);
  assert_non_null(realpath(source_dir(), root));
  assert_string_equal(c.root, root);
  assert_string_equal(c.name, "matmul-1024");
  assert_string_equal(c.tmpl.name, "matmul");
  for (int d = 0; d < 3; d++) assert_int_equal(c.dims[d], 1024);
  static const long long start[13] = {64, 64, 64, 4, 8, 0, 1, 2, 0, 1, 0, 1, 0};
  assert_int_equal(c.start.n, 13);
  for (int k = 0; k < 13; k++) assert_int_equal(c.start.v[k], start[k]);
  assert_int_equal(c.control_is_kernel, 1);
  assert_string_equal(c.control_kernel.name, "matmul_regtile");
  assert_int_equal(c.search.enabled, 1);
  assert_int_equal(c.search.fixed, 0);
  assert_int_equal(c.search.budget, 200);
  assert_int_equal(c.search.max_stale, 20);
  assert_int_equal(c.search.restarts, 10);
  assert_int_equal(c.measure.samples, 10);
  assert_int_equal(c.measure.flush_l2, 1);
  assert_string_equal(c.decide.rule, "sequential");
  assert_int_equal(c.decide.max_requeue, 2);
  campaign_release(&c);
}

/* ------------------------------------------------------------------ defaults */

static void campaign_defaults_should_match_the_schema(void **state) {
  (void)state;
  static campaign c;
  memset(&c, 0, sizeof c);
  campaign_defaults(&c);
  assert_int_equal(c.search.enabled, 1);
  assert_int_equal(c.search.budget, 40);
  assert_int_equal(c.search.max_stale, 12);
  assert_int_equal(c.search.two_knob_after, 6);
  assert_int_equal(c.search.restarts, 0);
  assert_int_equal(c.search.fixed, 0);
  assert_int_equal(c.measure.burn_in, 4);
  assert_int_equal(c.measure.rounds, 8);
  assert_int_equal(c.measure.samples, 10);
  assert_int_equal(c.measure.input_sets, 2);
  assert_int_equal(c.measure.flush_l2, 1);
  assert_true(c.measure.deadline_s == 120.0);
  assert_int_equal(c.measure.seed, 1);
  assert_string_equal(c.decide.rule, "sequential");
  assert_true(c.decide.min_gain == 0.01);
  assert_true(c.decide.drift_tolerance == 0.03);
  assert_int_equal(c.decide.max_requeue, 2);
}

static void campaign_should_fill_the_defaults_of_absent_keys(void **state) {
  fixture *f = *state;
  static campaign c, d;
  tf_err e;
  memset(&d, 0, sizeof d);
  campaign_defaults(&d);
  if (load_text(f, bare_campaign, &c, &e)) fail_msg("%s", e.msg);
  assert_int_equal(c.search.enabled, 0); /* no search: start against control once */
  assert_int_equal(c.search.budget, 1);
  assert_memory_equal(&c.measure, &d.measure, sizeof c.measure);
  assert_string_equal(c.decide.rule, d.decide.rule);
  assert_true(c.decide.min_gain == d.decide.min_gain);
  assert_memory_equal(c.decide.param, d.decide.param, sizeof c.decide.param);
  assert_int_equal(c.control_is_kernel, 1);
  assert_string_equal(c.control_kernel.name, "toyk");
  assert_int_equal(c.ninject, 0);
  campaign_release(&c);

  char *t = subst(bare_campaign, "\"control\": \"toyk\"}", "\"control\": \"toyk\", \"search\": {}}");
  if (load_text(f, t, &c, &e)) fail_msg("%s", e.msg);
  free(t);
  assert_int_equal(c.search.enabled, 1);
  assert_int_equal(c.search.budget, d.search.budget);
  assert_int_equal(c.search.max_stale, d.search.max_stale);
  assert_int_equal(c.search.two_knob_after, d.search.two_knob_after);
  campaign_release(&c);
}

static void campaign_should_read_every_section(void **state) {
  fixture *f = *state;
  static campaign c;
  tf_err e;
  if (load_text(f, toy_campaign, &c, &e)) fail_msg("%s", e.msg);
  assert_string_equal(c.name, "toy");
  assert_string_equal(c.root, f->dir);
  assert_int_equal(c.dims[0], 1000);
  assert_int_equal(c.start.v[0], 64);
  assert_int_equal(c.start.v[1], 1);
  assert_int_equal(c.control_is_kernel, 0);
  assert_int_equal(c.control_cfg.n, 2);
  assert_int_equal(c.control_cfg.v[0], 128);
  assert_int_equal(c.control_cfg.v[1], 2);
  assert_int_equal(c.search.enabled, 1);
  assert_int_equal(c.search.budget, 5);
  assert_int_equal(c.search.max_stale, 3);
  assert_int_equal(c.search.two_knob_after, 2);
  assert_int_equal(c.measure.burn_in, 1);
  assert_int_equal(c.measure.rounds, 3);
  assert_int_equal(c.measure.samples, 5);
  assert_int_equal(c.measure.input_sets, 1);
  assert_int_equal(c.measure.flush_l2, 0);
  assert_true(c.measure.deadline_s == 10.5);
  assert_int_equal(c.measure.seed, 9);
  assert_string_equal(c.decide.rule, "sequential");
  assert_true(c.decide.min_gain == 0.02);
  assert_true(c.decide.drift_tolerance == 0.05);
  assert_int_equal(c.decide.max_requeue, 1);
  campaign_release(&c);
}

static void campaign_should_read_the_study_modes(void **state) {
  fixture *f = *state;
  static campaign c;
  tf_err e;
  char *t = subst(toy_campaign, "\"budget\": 5", "\"mode\": \"aa\", \"budget\": 5");
  if (load_text(f, t, &c, &e)) fail_msg("aa: %s", e.msg);
  free(t);
  assert_int_equal(c.search.fixed, 1);
  assert_true(config_equal(&c.search.pair, &c.start));
  campaign_release(&c);
  t = subst(toy_campaign, "\"budget\": 5", "\"mode\": \"pair\", \"pair\": {\"T\": 128, \"U\": 1}, \"budget\": 5");
  if (load_text(f, t, &c, &e)) fail_msg("pair: %s", e.msg);
  free(t);
  assert_int_equal(c.search.fixed, 1);
  assert_int_equal(c.search.pair.v[0], 128);
  assert_int_equal(c.search.pair.v[1], 1);
  campaign_release(&c);
  t = subst(toy_campaign, "\"budget\": 5", "\"mode\": \"neighbors\", \"budget\": 5");
  if (load_text(f, t, &c, &e)) fail_msg("neighbors: %s", e.msg);
  free(t);
  assert_int_equal(c.search.fixed, 0);
  campaign_release(&c);
}

static void campaign_should_match_injected_faults_by_their_knobs(void **state) {
  fixture *f = *state;
  static campaign c;
  tf_err e;
  char *t = subst(toy_campaign, "  \"doc\"",
                  "  \"inject\": [{\"when\": {\"U\": 2}, \"fault\": \"crash\"},"
                  " {\"when\": {\"T\": 128}, \"fault\": \"wrong\"}],\n  \"doc\"");
  if (load_text(f, t, &c, &e)) fail_msg("%s", e.msg);
  free(t);
  assert_int_equal(c.ninject, 2);
  config a = {2, {64, 2}}, b = {2, {128, 1}}, n = {2, {64, 1}}, both = {2, {128, 2}};
  assert_string_equal(campaign_fault_for(&c, &a), "crash");
  assert_string_equal(campaign_fault_for(&c, &b), "wrong");
  assert_string_equal(campaign_fault_for(&c, &both), "crash"); /* the first rule that matches */
  assert_null(campaign_fault_for(&c, &n));
  campaign_release(&c);
}

/* ------------------------------------------------------------------ every campaign error */

typedef struct bad_case {
  const char *what, *from, *to, *want;
} bad_case;

static const bad_case bad_cases[] = {
    {"missing key", "  \"problem\": {\"N\": 1000},\n", "", "key 'problem' is missing"},
    {"missing start", "  \"start\": {\"T\": 64, \"U\": 1},\n", "", "key 'start' is missing"},
    {"missing control", "  \"control\": {\"T\": 128, \"U\": 2},\n", "", "key 'control' is missing"},
    {"wrong type (string for integer)", "\"rounds\": 3", "\"rounds\": \"three\"",
     "key 'measure.rounds' must be an integer"},
    {"wrong type (integer for boolean)", "\"flush_l2\": false", "\"flush_l2\": 0",
     "key 'measure.flush_l2' must be true or false"},
    {"wrong type (array for object)", "\"search\": {\"budget\": 5, \"max_stale\": 3, \"two_knob_after\": 2}",
     "\"search\": [5]", "key 'search' must be an object"},
    {"wrong type (number for template)", "\"template\": \"toy\"", "\"template\": 7",
     "key 'template' must be a string"},
    {"wrong type (number for control)", "\"control\": {\"T\": 128, \"U\": 2}", "\"control\": 7",
     "key 'control' must name a committed kernel or give a configuration"},
    {"unknown key", "\"doc\"", "\"dco\"", "unknown key 'dco'"},
    {"unknown nested key", "\"max_stale\"", "\"max_stael\"", "unknown key 'search.max_stael'"},
    {"unknown knob", "\"start\": {\"T\": 64, \"U\": 1}", "\"start\": {\"T\": 64, \"U\": 1, \"XX\": 1}",
     "key 'start.XX': template 'toy' has no knob 'XX'"},
    {"knob missing from start", "\"start\": {\"T\": 64, \"U\": 1}", "\"start\": {\"T\": 64}",
     "key 'start.U' is missing"},
    {"value outside the domain", "\"start\": {\"T\": 64", "\"start\": {\"T\": 48",
     "key 'start.T': 48 is not in the knob's domain {32, 64, 128}"},
    {"control value outside the domain", "\"control\": {\"T\": 128", "\"control\": {\"T\": 256",
     "key 'control.T': 256 is not in the knob's domain"},
    {"start breaking a constraint", "\"start\": {\"T\": 64", "\"start\": {\"T\": 32",
     "key 'start' breaks constraint 'two_warps': at least two warps"},
    {"start breaking a constraint on the problem",
     "\"problem\": {\"N\": 1000},\n  \"start\": {\"T\": 64, \"U\": 1}",
     "\"problem\": {\"N\": 1001},\n  \"start\": {\"T\": 64, \"U\": 2}",
     "key 'start' breaks constraint 'unroll_divides': no remainder loop"},
    {"control breaking a constraint", "\"control\": {\"T\": 128", "\"control\": {\"T\": 32",
     "key 'control' breaks constraint 'two_warps'"},
    {"pair breaking a constraint", "\"budget\": 5",
     "\"mode\": \"pair\", \"pair\": {\"T\": 32, \"U\": 1}, \"budget\": 5",
     "key 'search.pair' breaks constraint 'two_warps'"},
    /* "knobs" narrows a domain, within the template's */
    {"narrowed knob that is not the template's", "\"problem\"", "\"knobs\": {\"X\": [1]}, \"problem\"",
     "key 'knobs.X': template 'toy' has no knob 'X'"},
    {"narrowed value outside the template's domain", "\"problem\"", "\"knobs\": {\"T\": [64, 96]}, \"problem\"",
     "key 'knobs.T': 96 is not in the template's domain {32, 64, 128}"},
    {"narrowed domain that is empty", "\"problem\"", "\"knobs\": {\"T\": []}, \"problem\"",
     "key 'knobs.T' must be a non-empty array"},
    {"narrowed value twice", "\"problem\"", "\"knobs\": {\"T\": [64, 64]}, \"problem\"",
     "key 'knobs.T' repeats 64"},
    {"start outside the narrowed domain", "\"problem\"", "\"knobs\": {\"T\": [128]}, \"problem\"",
     "key 'start.T': 64 is not in the knob's domain {128}"},
    {"problem outside its range", "\"N\": 1000", "\"N\": 0", "key 'problem.N' must be an integer in [1, 1048576]"},
    {"absurd problem", "\"N\": 1000", "\"N\": 1000000000000", "key 'problem.N' must be an integer in"},
    {"unknown problem dimension", "\"N\": 1000}", "\"N\": 1000, \"M\": 5}",
     "key 'problem.M': template 'toy' has no problem dimension 'M'"},
    {"unknown rule", "\"rule\": \"sequential\"", "\"rule\": \"coinflip\"", "key 'decide.rule': unknown rule 'coinflip'"},
    {"gain out of range", "\"min_gain\": 0.02", "\"min_gain\": 0.9", "key 'decide.min_gain' must be a number in"},
    {"negative budget", "\"budget\": 5", "\"budget\": -3", "key 'search.budget' must be an integer"},
    {"zero deadline", "\"deadline_s\": 10.5", "\"deadline_s\": 0", "key 'measure.deadline_s' must be a number in"},
    {"template name with '/'", "\"template\": \"toy\"", "\"template\": \"templates/toy\"", "must be a plain name"},
    {"template name leaving the root", "\"template\": \"toy\"", "\"template\": \"../../etc/passwd\"",
     "must be a plain name"},
    {"template name with '..'", "\"template\": \"toy\"", "\"template\": \"toy..x\"", "must be a plain name"},
    {"missing template", "\"template\": \"toy\"", "\"template\": \"nosuch\"", "cannot open"},
    {"missing control kernel", "\"control\": {\"T\": 128, \"U\": 2}", "\"control\": \"nosuchk\"", "cannot open"},
    {"control kernel named with '/'", "\"control\": {\"T\": 128, \"U\": 2}", "\"control\": \"../kernels/toyk\"",
     "key 'control'"},
    {"control kernel of another interface", "\"control\": {\"T\": 128, \"U\": 2}", "\"control\": \"otherk\"",
     "key 'control': kernel 'otherk' takes other dimensions, buffers or arguments than the template 'toy'"},
    {"template without a reference", "\"template\": \"toy\"", "\"template\": \"toyk\"",
     "key 'reference': nothing checks the kernel's outputs"},
    {"mode pair without pair", "\"budget\": 5", "\"mode\": \"pair\", \"budget\": 5",
     "key 'search.pair' is missing (mode \"pair\")"},
    {"pair without mode pair", "\"budget\": 5", "\"pair\": {\"T\": 128, \"U\": 1}, \"budget\": 5",
     "key 'search.pair' needs mode \"pair\""},
    {"unknown mode", "\"budget\": 5", "\"mode\": \"random\", \"budget\": 5", "key 'search.mode' must be"},
    {"restarts of a study", "\"budget\": 5", "\"mode\": \"aa\", \"restarts\": 2, \"budget\": 5",
     "key 'search.restarts' needs mode \"neighbors\""},
    {"negative restarts", "\"budget\": 5", "\"restarts\": -1, \"budget\": 5",
     "key 'search.restarts' must be an integer"},
    {"unknown fault", "  \"doc\"", "  \"inject\": [{\"when\": {\"U\": 2}, \"fault\": \"melt\"}],\n  \"doc\"",
     "key 'inject[0].fault' must be"},
    {"fault on an unknown knob", "  \"doc\"", "  \"inject\": [{\"when\": {\"V\": 2}, \"fault\": \"crash\"}],\n  \"doc\"",
     "key 'inject[0].when.V'"},
    /* A number is cast to an integer only when it is whole and in range */
    {"fault on a knob value of 1e300", "  \"doc\"",
     "  \"inject\": [{\"when\": {\"U\": 1e300}, \"fault\": \"crash\"}],\n  \"doc\"",
     "key 'inject[0].when.U': not a knob with a whole number"},
    {"fault on a fractional knob value", "  \"doc\"",
     "  \"inject\": [{\"when\": {\"U\": 1.5}, \"fault\": \"crash\"}],\n  \"doc\"",
     "key 'inject[0].when.U': not a knob with a whole number"},
    {"fractional budget", "\"budget\": 5", "\"budget\": 1000.7", "key 'search.budget' must be an integer"},
    {"budget of 1e300", "\"budget\": 5", "\"budget\": 1e300", "key 'search.budget' must be an integer"},
    /* A key given twice is refused, not read as its first copy */
    {"budget given twice", "\"budget\": 5", "\"budget\": 5, \"budget\": -3",
     "key 'search.budget' appears more than once"},
    {"template given twice", "\"template\": \"toy\"", "\"template\": \"toy\", \"template\": \"../../x\"",
     "key 'template' appears more than once"},
    /* free text is UTF-8 */
    {"doc not UTF-8", "unit test campaign", "unit test \xC0\xAF campaign", "key 'doc' is not valid UTF-8"},
};

static void campaign_should_refuse_each_bad_campaign_naming_the_file_and_key(void **state) {
  fixture *f = *state;
  int failures = 0;
  for (size_t i = 0; i < sizeof bad_cases / sizeof bad_cases[0]; i++) {
    const bad_case *b = &bad_cases[i];
    static campaign c;
    tf_err e;
    char *text = subst(toy_campaign, b->from, b->to);
    int rc = load_text(f, text, &c, &e);
    free(text);
    if (rc == 0) {
      campaign_release(&c);
      print_error("%s: the campaign loaded\n", b->what);
      failures++;
      continue;
    }
    if (rc != -1 || e.code != TF_EXIT_INPUT || !strstr(e.msg, "toy.json") || !strstr(e.msg, b->want)) {
      print_error("%s: rc %d, code %d, want \"%s\" and the file in: %s\n", b->what, rc, e.code, b->want,
                  e.msg);
      failures++;
    }
  }
  assert_int_equal(failures, 0);
}

static void campaign_should_refuse_a_missing_or_malformed_file(void **state) {
  fixture *f = *state;
  static campaign c;
  tf_err e = {0};
  assert_int_equal(campaign_load(&c, f->path, &e), -1); /* not written yet */
  assert_int_equal(e.code, TF_EXIT_INPUT);
  assert_non_null(strstr(e.msg, "toy.json"));
  assert_int_equal(load_text(f, "", &c, &e), -1);
  assert_non_null(strstr(e.msg, "empty"));
  assert_int_equal(load_text(f, "{\"template\": \"toy\", \"problem\"", &c, &e), -1);
  assert_non_null(strstr(e.msg, "not valid JSON"));
  assert_int_equal(load_text(f, "[1, 2, 3]", &c, &e), -1);
  assert_non_null(strstr(e.msg, "top level must be a JSON object"));
}

/* A template error reaches the campaign's caller with the template's file and key. */
static void campaign_should_pass_on_template_errors(void **state) {
  fixture *f = *state;
  static campaign c;
  tf_err e;
  char p[512];
  snprintf(p, sizeof p, "%s/templates", f->dir);
  char *t = subst(toy_template, "\"T >= 64\"", "\"T >= BX\"");
  write_file(p, "toy.json", t);
  free(t);
  assert_int_equal(load_text(f, toy_campaign, &c, &e), -1);
  assert_int_equal(e.code, TF_EXIT_INPUT);
  assert_non_null(strstr(e.msg, "templates/toy.json"));
  assert_non_null(strstr(e.msg, "key 'constraints[0].expr': column 6: unknown name 'BX'"));
  assert_non_null(strstr(e.msg, "key 'template'"));
}

/* ------------------------------------------------------------------ hash and root */

static void campaign_hash_should_follow_the_file_content(void **state) {
  fixture *f = *state;
  static campaign c;
  tf_err e;
  char h1[40], h2[40];
  if (load_text(f, toy_campaign, &c, &e)) fail_msg("%s", e.msg);
  snprintf(h1, sizeof h1, "%s", c.hash);
  campaign_release(&c);
  assert_true(strlen(h1) >= 16);
  for (const char *p = h1; *p; p++) assert_non_null(strchr("0123456789abcdef", *p));
  if (load_text(f, toy_campaign, &c, &e)) fail_msg("%s", e.msg);
  assert_string_equal(c.hash, h1); /* same bytes, same hash */
  campaign_release(&c);
  char *t = subst(toy_campaign, "unit test campaign", "unit test campaign, edited");
  if (load_text(f, t, &c, &e)) fail_msg("%s", e.msg);
  free(t);
  snprintf(h2, sizeof h2, "%s", c.hash);
  campaign_release(&c);
  assert_string_not_equal(h1, h2); /* a change of the doc alone changes it */
  t = subst(toy_campaign, "\"seed\": 9", "\"seed\": 10");
  if (load_text(f, t, &c, &e)) fail_msg("%s", e.msg);
  free(t);
  assert_string_not_equal(c.hash, h1); /* what it measures */
  campaign_release(&c);
  t = subst(toy_campaign, "\"seed\": 9", "\"seed\":  9");
  if (load_text(f, t, &c, &e)) fail_msg("%s", e.msg);
  free(t);
  assert_string_equal(c.hash, h1); /* whitespace is not the campaign */
  assert_string_not_equal(c.hash_v1, h1); /* but the identity before hashed the bytes */
  campaign_release(&c);
}

/* A ledger resumes when only how long the search goes on, or how its processes are vetted,
 * changed (docs/reference/campaign.md, "What resuming needs"). */
static void campaign_hash_should_leave_out_the_resumable_keys(void **state) {
  fixture *f = *state;
  static campaign c;
  tf_err e;
  char h1[40];
  if (load_text(f, toy_campaign, &c, &e)) fail_msg("%s", e.msg);
  snprintf(h1, sizeof h1, "%s", c.hash);
  campaign_release(&c);
  static const char *const edits[][2] = {
      {"\"budget\": 5", "\"budget\": 500"},
      {"\"max_stale\": 3", "\"max_stale\": 30"},
      {"\"budget\": 5", "\"budget\": 5, \"restarts\": 2, \"fresh_every\": 7"},
      {"\"search\": {", "\"canary\": {\"rounds\": 8, \"every\": 5}, \"search\": {"},
  };
  for (size_t i = 0; i < sizeof edits / sizeof edits[0]; i++) {
    char *t = subst(toy_campaign, edits[i][0], edits[i][1]);
    if (load_text(f, t, &c, &e)) fail_msg("%s: %s", edits[i][1], e.msg);
    free(t);
    if (strcmp(c.hash, h1) != 0) fail_msg("%s changed the identity", edits[i][1]);
    assert_string_not_equal(c.hash_v1, c.hash);
    campaign_release(&c);
  }
  char *t = subst(toy_campaign, "\"two_knob_after\": 2", "\"two_knob_after\": 3");
  if (load_text(f, t, &c, &e)) fail_msg("%s", e.msg);
  free(t);
  assert_string_not_equal(c.hash, h1); /* the proposals would differ */
  campaign_release(&c);
}

/* The hash of the campaign at f->path into h (40 bytes) and its hash_v1 into v1. */
static void hash_of(fixture *f, const char *json, char *h, char *v1) {
  static campaign c;
  tf_err e;
  if (load_text(f, json, &c, &e)) fail_msg("%s", e.msg);
  snprintf(h, 40, "%s", c.hash);
  snprintf(v1, 40, "%s", c.hash_v1);
  campaign_release(&c);
}

/* An included header is part of the kernel: editing one (the template's, through another
 * header, or the committed control's) is a new campaign under either identity; a file of the
 * folder that nothing includes is not. */
static void campaign_hash_should_cover_included_files(void **state) {
  fixture *f = *state;
  char t[512], k[512], h1[40], v1[40], h[40], v[40];
  snprintf(t, sizeof t, "%s/templates", f->dir);
  snprintf(k, sizeof k, "%s/kernels", f->dir);
  write_file(t, "toy.cu", "#include \"toy_a.cuh\"\n"
                          "template <int T, int U> __global__ void toy_kernel(const float *x, float *y, int n) {}\n");
  write_file(t, "toy_a.cuh", "#include \"toy_b.cuh\"\n");
  write_file(t, "toy_b.cuh", "#define TOY_B 1\n");
  write_file(k, "toyk.cu", "#include \"toyk_a.cuh\"\n__global__ void toyk(const float *x, float *y, int n) {}\n");
  write_file(k, "toyk_a.cuh", "#define TOYK_A 1\n");
  char *json = subst(toy_campaign, "\"control\": {\"T\": 128, \"U\": 2}", "\"control\": \"toyk\"");
  hash_of(f, json, h1, v1);
  static const char *const edits[][4] = { /* folder, file, edited, as it was */
      {"templates", "toy_b.cuh", "#define TOY_B 2\n", "#define TOY_B 1\n"},
      {"templates", "toy_a.cuh", "#include \"toy_b.cuh\"\n// edited\n", "#include \"toy_b.cuh\"\n"},
      {"kernels", "toyk_a.cuh", "#define TOYK_A 2\n", "#define TOYK_A 1\n"},
  };
  for (size_t i = 0; i < sizeof edits / sizeof edits[0]; i++) {
    char dir[512];
    snprintf(dir, sizeof dir, "%s/%s", f->dir, edits[i][0]);
    write_file(dir, edits[i][1], edits[i][2]);
    hash_of(f, json, h, v);
    if (!strcmp(h, h1) || !strcmp(v, v1)) fail_msg("editing %s left the identity", edits[i][1]);
    write_file(dir, edits[i][1], edits[i][3]);
    hash_of(f, json, h, v);
    assert_string_equal(h, h1); /* the same bytes again, the same campaign */
    assert_string_equal(v, v1);
  }
  write_file(t, "unrelated.cuh", "#define UNRELATED 1\n");
  write_file(k, "unrelated.cuh", "#define UNRELATED 1\n");
  hash_of(f, json, h, v);
  assert_string_equal(h, h1);
  assert_string_equal(v, v1);
  free(json);
}

/* A reference kernel in a file of its own is part of the campaign too: editing that file or a
 * header it includes is a new campaign under either identity. */
static void campaign_hash_should_cover_the_reference_and_its_includes(void **state) {
  fixture *f = *state;
  char t[512], h1[40], v1[40], h[40], v[40];
  snprintf(t, sizeof t, "%s/templates", f->dir);
  char *tmpl = subst(toy_template, "\"kernel\": \"ref\", \"source\": \"toy.cu\"",
                     "\"kernel\": \"ref\", \"source\": \"toy_ref.cu\"");
  write_file(t, "toy.json", tmpl);
  write_file(t, "toy_ref.cu", "#include \"ref_a.cuh\"\n__global__ void ref(const float *x, float *y, int n) {}\n");
  write_file(t, "ref_a.cuh", "#define REF_A 1\n");
  hash_of(f, toy_campaign, h1, v1);
  static const char *const edits[][3] = { /* file, edited, as it was */
      {"ref_a.cuh", "#define REF_A 2\n", "#define REF_A 1\n"},
      {"toy_ref.cu", "#include \"ref_a.cuh\"\n__global__ void ref(const float *x, float *y, int n) { y[0] = x[0]; }\n",
       "#include \"ref_a.cuh\"\n__global__ void ref(const float *x, float *y, int n) {}\n"},
  };
  for (size_t i = 0; i < sizeof edits / sizeof edits[0]; i++) {
    write_file(t, edits[i][0], edits[i][1]);
    hash_of(f, toy_campaign, h, v);
    if (!strcmp(h, h1) || !strcmp(v, v1)) fail_msg("editing %s left the identity", edits[i][0]);
    write_file(t, edits[i][0], edits[i][2]);
    hash_of(f, toy_campaign, h, v);
    assert_string_equal(h, h1);
    assert_string_equal(v, v1);
  }
  write_file(t, "toy.json", toy_template);
  free(tmpl);
}

/* A campaign whose kernels include nothing keeps the identity it had before included files
 * counted: its ledgers resume after the upgrade. hash_v1 is the hash of exactly the campaign
 * file, the four files it names and its template's reference kernel, in this order. */
static void campaign_hash_should_stay_for_kernels_that_include_nothing(void **state) {
  fixture *f = *state;
  char h[40], v1[40], want[40], p[4][512];
  hash_of(f, bare_campaign, h, v1);
  snprintf(p[0], sizeof p[0], "%s/templates/toy.json", f->dir);
  snprintf(p[1], sizeof p[1], "%s/templates/toy.cu", f->dir);
  snprintf(p[2], sizeof p[2], "%s/kernels/toyk.json", f->dir);
  snprintf(p[3], sizeof p[3], "%s/kernels/toyk.cu", f->dir);
  /* the campaign, the four files, then the reference kernel's source after its tag (the toy's
   * reference is in toy.cu) */
  const void *parts[7] = {bare_campaign};
  size_t lens[7] = {strlen(bare_campaign)};
  char *bufs[4];
  for (int i = 0; i < 4; i++) {
    tf_err e = {0};
    if (!(bufs[i] = jsonio_slurp(p[i], "file", JSONIO_MAX_BYTES, &lens[i + 1], &e)))
      fail_msg("%s", e.msg);
    parts[i + 1] = bufs[i];
  }
  parts[5] = "reference kernel", lens[5] = 16;
  parts[6] = bufs[1], lens[6] = lens[2];
  cache_key(parts, lens, 7, want);
  for (int i = 0; i < 4; i++) free(bufs[i]);
  assert_string_equal(v1, want);
}

static void campaign_root_should_default_to_the_campaign_folders_parent(void **state) {
  fixture *f = *state;
  static campaign c;
  tf_err e;
  char real[PATH_MAX];
  unsetenv("TUNEFARM_ROOT");
  if (load_text(f, toy_campaign, &c, &e)) fail_msg("%s", e.msg);
  assert_non_null(realpath(f->dir, real));
  assert_string_equal(c.root, real);
  campaign_release(&c);
  /* elsewhere, with no TUNEFARM_ROOT, the template is looked for beside the campaign's folder */
  char p[512];
  snprintf(p, sizeof p, "%s/elsewhere", f->dir);
  assert_int_equal(mkdir(p, 0700), 0);
  write_file(p, "toy.json", toy_campaign);
  snprintf(p, sizeof p, "%s/elsewhere/toy.json", f->dir);
  snprintf(f->path, sizeof f->path, "%s", p);
  memset(&e, 0, sizeof e);
  assert_int_equal(campaign_load(&c, p, &e), 0); /* root is still dir: elsewhere/.. */
  campaign_release(&c);
  setenv("TUNEFARM_ROOT", "/nonexistent-tunefarm-root", 1);
  assert_int_equal(campaign_load(&c, p, &e), -1);
  assert_non_null(strstr(e.msg, "/nonexistent-tunefarm-root/templates/toy.json"));
}

/* "knobs" narrows the template's domain for the campaign: its search and its enumeration see
 * only those values, in the template's order. */
static void campaign_should_narrow_a_knobs_domain(void **state) {
  fixture *f = *state;
  static campaign c;
  tf_err e;
  char *t = subst(toy_campaign, "\"problem\"", "\"knobs\": {\"T\": [128, 64]}, \"problem\"");
  int rc = load_text(f, t, &c, &e);
  free(t);
  if (rc) fail_msg("%s", e.msg);
  assert_int_equal(c.tmpl.knobs[0].nvalues, 2);
  assert_int_equal(c.tmpl.knobs[0].values[0], 64);
  assert_int_equal(c.tmpl.knobs[0].values[1], 128);
  assert_int_equal(c.tmpl.knobs[1].nvalues, 2); /* U untouched */
  campaign_release(&c);
}

/* Without TUNEFARM_ROOT, a campaign whose folder's parent has no templates/ says where it
 * looked and how to fix it. */
static void campaign_root_should_name_the_fix_when_no_template_is_found(void **state) {
  fixture *f = *state;
  static campaign c;
  tf_err e = {0};
  char p[512];
  unsetenv("TUNEFARM_ROOT");
  snprintf(p, sizeof p, "%s/campaigns/deeper", f->dir);
  assert_int_equal(mkdir(p, 0700), 0);
  write_file(p, "toy.json", toy_campaign);
  snprintf(p, sizeof p, "%s/campaigns/deeper/toy.json", f->dir);
  assert_int_equal(campaign_load(&c, p, &e), -1);
  assert_int_equal(e.code, TF_EXIT_INPUT);
  assert_non_null(strstr(e.msg, "key 'template': no templates/toy.json in"));
  assert_non_null(strstr(e.msg, "set TUNEFARM_ROOT"));
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(campaign_should_load_every_campaign_of_the_tree),
      cmocka_unit_test(campaign_should_load_matmul_1024_as_written),
      cmocka_unit_test(campaign_defaults_should_match_the_schema),
      cmocka_unit_test_setup_teardown(campaign_should_fill_the_defaults_of_absent_keys, setup, teardown),
      cmocka_unit_test_setup_teardown(campaign_should_read_every_section, setup, teardown),
      cmocka_unit_test_setup_teardown(campaign_should_read_the_study_modes, setup, teardown),
      cmocka_unit_test_setup_teardown(campaign_should_match_injected_faults_by_their_knobs, setup, teardown),
      cmocka_unit_test_setup_teardown(campaign_should_refuse_each_bad_campaign_naming_the_file_and_key, setup,
                                      teardown),
      cmocka_unit_test_setup_teardown(campaign_should_refuse_a_missing_or_malformed_file, setup, teardown),
      cmocka_unit_test_setup_teardown(campaign_should_pass_on_template_errors, setup, teardown),
      cmocka_unit_test_setup_teardown(campaign_hash_should_follow_the_file_content, setup, teardown),
      cmocka_unit_test_setup_teardown(campaign_hash_should_leave_out_the_resumable_keys, setup, teardown),
      cmocka_unit_test_setup_teardown(campaign_hash_should_cover_the_reference_and_its_includes, setup,
                                      teardown),
      cmocka_unit_test_setup_teardown(campaign_hash_should_cover_included_files, setup, teardown),
      cmocka_unit_test_setup_teardown(campaign_hash_should_stay_for_kernels_that_include_nothing, setup,
                                      teardown),
      cmocka_unit_test_setup_teardown(campaign_should_narrow_a_knobs_domain, setup, teardown),
      cmocka_unit_test_setup_teardown(campaign_root_should_name_the_fix_when_no_template_is_found, setup,
                                      teardown),
      cmocka_unit_test_setup_teardown(campaign_root_should_default_to_the_campaign_folders_parent, setup,
                                      teardown),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
