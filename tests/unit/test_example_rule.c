/* The worked example of docs/CONTRIBUTING.md ("Adding a decision rule"): the rule of
 * tests/unit/example_rule.c, registered as a file of common/rules/ would be, loads from a
 * campaign, parses its parameter, refuses a bad value naming the file and the key, travels
 * in a job, and decides. The registry is compiled here with the example as one more row. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#define TF_RULES_EXTRA(X) X(trimmed) X(wide)
#include "common/rules.c"
#include "tests/unit/example_rule.c"

#include "common/campaign.h"
#include "tests/unit/testutil.h"

/* A second extra row, with as many parameters as a rule may have (DECIDE_MAX_PARAMS). */
static const rule_param wide_params[] = {
    {"w1", 0, 0.1, 0, 1, "1"}, {"w2", 0, 0.2, 0, 1, "2"}, {"w3", 0, 0.3, 0, 1, "3"},
    {"w4", 0, 0.4, 0, 1, "4"}, {"w5", 0, 0.5, 0, 1, "5"}, {"w6", 0, 0.6, 0, 1, "6"},
    {"w7", 0, 0.7, 0, 1, "7"}, {"w8", 1, 8, 0, 9, "8"},
};
_Static_assert(sizeof wide_params / sizeof wide_params[0] == DECIDE_MAX_PARAMS, "wide is full");
static void wide_judge(const decide_opts *o, const result *r, decision *d) {
  (void)o, (void)r;
  d->kind = DECISION_REJECT;
}
const decide_rule rule_wide = {.name = "wide", .summary = "every parameter slot used",
                               RULE_PARAMS(wide_params), .judge = wide_judge, .fixed_rounds = 1};

/* A rule that fills every parameter slot is selected with each default in place, and a
 * campaign sets its last one by key. */
static void a_rule_with_every_slot_should_select_and_load(void **state) {
  (void)state;
  decide_opts o;
  decide_defaults(&o);
  assert_int_equal(decide_select(&o, "wide"), 0);
  for (int i = 0; i < DECIDE_MAX_PARAMS; i++) assert_true(o.param[i] == wide_params[i].def);
  cJSON *obj = cJSON_Parse("{\"w8\": 3}");
  tf_err e = {0};
  assert_int_equal(decide_params_load("x.json", "campaign", obj, &o, &e), 0);
  assert_true(*decide_param(&o, "w8") == 3);
  cJSON_Delete(obj);
}

/* campaigns/gain-chain-short.json with its "decide" object's rule replaced by `rule`, written
 * to a fresh folder; *c loaded from it (0) or *e the loader's error (-1). */
static int load_with(const char *rule, campaign *c, tf_err *e, char *path, size_t len) {
  char src[1024], dir[] = "/tmp/tf_example_rule_XXXXXX";
  snprintf(src, sizeof src, "%s/campaigns/gain-chain-short.json", source_dir());
  FILE *f = fopen(src, "r");
  assert_non_null(f);
  static char text[1 << 16];
  size_t n = fread(text, 1, sizeof text - 1, f);
  fclose(f);
  text[n] = '\0';
  char *t = subst(text, "\"rule\": \"median\"", rule);
  assert_non_null(mkdtemp(dir));
  write_file(dir, "trimmed.json", t);
  free(t);
  snprintf(path, len, "%s/trimmed.json", dir);
  setenv("TUNEFARM_ROOT", source_dir(), 1);
  memset(e, 0, sizeof *e);
  int rc = campaign_load(c, path, e);
  rm_rf(dir);
  return rc;
}

static void example_rule_should_load_and_parse_its_parameter(void **state) {
  (void)state;
  static campaign c;
  tf_err e;
  char path[256];
  if (load_with("\"rule\": \"trimmed\", \"trim\": 0.2", &c, &e, path, sizeof path))
    fail_msg("%s", e.msg);
  assert_string_equal(c.decide.rule, "trimmed");
  assert_true(*decide_param(&c.decide, "trim") == 0.2);
  assert_null(decide_param(&c.decide, "alpha")); /* another rule's parameter */
  assert_true(decide_fixed_rounds(&c.decide));
  char words[128];
  decide_describe(&c.decide, words, sizeof words);
  assert_string_equal(words, "trimmed (trim 0.2)");
  campaign_release(&c);
  if (load_with("\"rule\": \"trimmed\"", &c, &e, path, sizeof path)) fail_msg("%s", e.msg);
  assert_true(*decide_param(&c.decide, "trim") == 0.1); /* the default */
  campaign_release(&c);
}

static void example_rule_should_refuse_a_bad_value_naming_file_and_key(void **state) {
  (void)state;
  static campaign c;
  tf_err e;
  char path[256], want[512];
  assert_int_equal(load_with("\"rule\": \"trimmed\", \"trim\": 0.6", &c, &e, path, sizeof path), -1);
  assert_int_equal(e.code, TF_EXIT_INPUT);
  snprintf(want, sizeof want, "campaign '%s': key 'decide.trim' must be a number in", path);
  if (!strstr(e.msg, want)) fail_msg("message '%s' lacks '%s'", e.msg, want);
  assert_int_equal(load_with("\"rule\": \"trimmed\", \"trim\": \"half\"", &c, &e, path, sizeof path), -1);
  if (!strstr(e.msg, "key 'decide.trim'")) fail_msg("message '%s' names no key", e.msg);
  assert_int_equal(load_with("\"rule\": \"trimmd\"", &c, &e, path, sizeof path), -1);
  if (!strstr(e.msg, "unknown rule 'trimmd' (known: trimmed, wide, median, sequential)"))
    fail_msg("message '%s' lists the rules otherwise", e.msg);
}

static void example_rule_should_travel_in_a_job(void **state) {
  (void)state;
  decide_opts o, back;
  decide_defaults(&o);
  assert_int_equal(decide_select(&o, "trimmed"), 0);
  *decide_param(&o, "trim") = 0.25;
  cJSON *j = cJSON_CreateObject();
  cJSON_AddStringToObject(j, "rule", o.rule);
  decide_params_to_json(&o, j);
  decide_defaults(&back);
  assert_int_equal(decide_select(&back, "trimmed"), 0);
  decide_params_from_json(j, &back);
  cJSON_Delete(j);
  assert_true(*decide_param(&back, "trim") == 0.25);
}

/* Ten rounds at 0.97 of best but two at 1.30: trimming two at each end keeps, no trim
 * rejects (the plain mean is 1.036). */
static void example_rule_should_decide(void **state) {
  (void)state;
  static result r;
  memset(&r, 0, sizeof r);
  r.status = RESULT_OK;
  r.correct = 1;
  for (int i = 0; i < 10; i++) {
    round_rec *rr = &r.rounds[r.nrounds++];
    rr->us[ARM_BEST] = 100.0;
    rr->us[ARM_NEW] = i < 2 ? 130.0 : 97.0;
    rr->us[ARM_CONTROL] = 80.0;
  }
  decide_opts o;
  decide_defaults(&o);
  assert_int_equal(decide_select(&o, "trimmed"), 0);
  decision d;
  *decide_param(&o, "trim") = 0.2;
  assert_int_equal(decide(&o, &r, &d), 0);
  assert_int_equal(d.kind, DECISION_KEEP);
  if (!strstr(d.reason, "new is 3.0% faster than best by the mean of 6 rounds"))
    fail_msg("reason '%s'", d.reason);
  decision_release(&d);
  *decide_param(&o, "trim") = 0.0;
  assert_int_equal(decide(&o, &r, &d), 0);
  assert_int_equal(d.kind, DECISION_REJECT);
  decision_release(&d);
}

static char *slurp(const char *rel) {
  char path[1024];
  snprintf(path, sizeof path, "%s/%s", source_dir(), rel);
  FILE *f = fopen(path, "r");
  if (!f) fail_msg("cannot open '%s'", path);
  char *text = calloc(1, 1 << 18);
  assert_non_null(text);
  fread(text, 1, (1 << 18) - 1, f);
  fclose(f);
  return text;
}

/* The page shows the example as it is compiled here: every line, in a C block. */
static void contributing_should_show_the_example_as_compiled(void **state) {
  (void)state;
  char *page = slurp("docs/CONTRIBUTING.md"), *file = slurp("tests/unit/example_rule.c");
  char *block = malloc(strlen(file) + 16);
  assert_non_null(block);
  sprintf(block, "```c\n%s```", file);
  if (!strstr(page, block))
    fail_msg("docs/CONTRIBUTING.md does not show tests/unit/example_rule.c as it is");
  free(block);
  free(file);
  free(page);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(example_rule_should_load_and_parse_its_parameter),
      cmocka_unit_test(a_rule_with_every_slot_should_select_and_load),
      cmocka_unit_test(example_rule_should_refuse_a_bad_value_naming_file_and_key),
      cmocka_unit_test(example_rule_should_travel_in_a_job),
      cmocka_unit_test(example_rule_should_decide),
      cmocka_unit_test(contributing_should_show_the_example_as_compiled),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
