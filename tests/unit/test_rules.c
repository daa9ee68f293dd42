/* The registry of decision rules (common/rule.h): every row is well formed, and a job's
 * "decide" object keeps the keys, in the order, that ledgers were written with. */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "common/msg.h"
#include "common/rule.h"

static void every_rule_should_be_a_well_formed_row(void **state) {
  (void)state;
  static const char *const shared[] = {"rule", "min_gain", "drift_tolerance", "max_requeue",
                                       "clock_skew", "throttle_mhz", "max_screened", NULL};
  assert_true(rule_count() >= 2);
  for (int i = 0; i < rule_count(); i++) {
    const decide_rule *r = rule_at(i);
    decide_opts o;
    assert_true(strlen(r->name) < sizeof o.rule);
    assert_ptr_equal(rule_find(r->name), r);
    assert_non_null(r->judge);
    assert_non_null(r->summary);
    assert_true(r->nparams <= DECIDE_MAX_PARAMS);
    decide_defaults(&o);
    assert_int_equal(decide_select(&o, r->name), 0);
    for (int k = 0; k < r->nparams; k++) {
      const rule_param *p = &r->params[k];
      if (!(p->lo <= p->def && p->def <= p->hi)) fail_msg("%s.%s: default out of bounds", r->name, p->key);
      assert_true(o.param[k] == p->def);
      for (int s = 0; shared[s]; s++)
        if (strcmp(shared[s], p->key) == 0) fail_msg("%s.%s: a shared key", r->name, p->key);
    }
  }
  assert_null(rule_find("coinflip"));
  assert_null(rule_find(NULL));
}

static void job_decide_object_should_keep_its_keys_and_their_order(void **state) {
  (void)state;
  decide_opts o;
  decide_defaults(&o);
  cJSON *j = decide_opts_to_json(&o);
  char *text = cJSON_PrintUnformatted(j);
  assert_string_equal(text, "{\"rule\":\"sequential\",\"min_gain\":0.01,\"drift_tolerance\":0.03,"
                            "\"max_requeue\":2,\"alpha\":0.01,\"beta\":0.05,\"min_rounds\":4,"
                            "\"clock_skew\":0.02,\"throttle_mhz\":0,\"max_screened\":4}");
  free(text);
  cJSON_Delete(j);
  assert_int_equal(decide_select(&o, "median"), 0);
  j = decide_opts_to_json(&o);
  text = cJSON_PrintUnformatted(j);
  assert_string_equal(text, "{\"rule\":\"median\",\"min_gain\":0.01,\"drift_tolerance\":0.03,"
                            "\"max_requeue\":2,\"clock_skew\":0.02,\"throttle_mhz\":0,"
                            "\"max_screened\":4}");
  free(text);
  cJSON_Delete(j);
}

static void selecting_a_rule_should_reset_its_parameters(void **state) {
  (void)state;
  decide_opts o;
  decide_defaults(&o);
  assert_int_equal(decide_select(&o, "median"), 0);
  assert_int_equal(decide_select(&o, "sequential"), 0);
  assert_true(*decide_param(&o, "alpha") == 0.01);
  assert_int_equal(decide_select(&o, "coinflip"), -1);
  assert_string_equal(o.rule, "sequential");
  char words[128];
  decide_describe(&o, words, sizeof words);
  assert_string_equal(words, "sequential (alpha 0.01, beta 0.05, min_rounds 4)");
  rule_names(words, sizeof words);
  assert_string_equal(words, "median, sequential");
}

/* The bounds of a rule's parameters hold at load: min_rounds is at least 1. */
static void a_parameter_below_its_bound_should_be_refused(void **state) {
  (void)state;
  decide_opts o;
  decide_defaults(&o);
  tf_err e = {0};
  cJSON *j = cJSON_Parse("{\"min_rounds\": 1}");
  assert_int_equal(decide_params_load("c.json", "campaign", j, &o, &e), 0);
  assert_true(*decide_param(&o, "min_rounds") == 1);
  cJSON_Delete(j);
  j = cJSON_Parse("{\"min_rounds\": 0}");
  assert_int_equal(decide_params_load("c.json", "campaign", j, &o, &e), -1);
  assert_non_null(strstr(e.msg, "min_rounds"));
  cJSON_Delete(j);
  static const char *const rates[] = {"alpha", "beta"};
  for (int k = 0; k < 2; k++) { /* the rates' floor, 1e-6, is a rate; below it none is */
    char text[64];
    snprintf(text, sizeof text, "{\"%s\": 1e-6}", rates[k]);
    j = cJSON_Parse(text);
    assert_int_equal(decide_params_load("c.json", "campaign", j, &o, &e), 0);
    assert_true(*decide_param(&o, rates[k]) == 1e-6);
    cJSON_Delete(j);
    snprintf(text, sizeof text, "{\"%s\": 9e-7}", rates[k]);
    j = cJSON_Parse(text);
    assert_int_equal(decide_params_load("c.json", "campaign", j, &o, &e), -1);
    cJSON_Delete(j);
  }
}

/* A job's integer parameter that is not a whole number leaves the value as it is. */
static void a_job_should_not_set_an_integer_parameter_to_a_fraction(void **state) {
  (void)state;
  decide_opts o;
  decide_defaults(&o);
  cJSON *j = cJSON_Parse("{\"min_rounds\": 2.5}");
  decide_params_from_json(j, &o);
  assert_true(*decide_param(&o, "min_rounds") == 4);
  cJSON_Delete(j);
  j = cJSON_Parse("{\"min_rounds\": 6}");
  decide_params_from_json(j, &o);
  assert_true(*decide_param(&o, "min_rounds") == 6);
  cJSON_Delete(j);
  j = cJSON_Parse("{\"min_rounds\": 2147483647, \"alpha\": null}"); /* int range; null: inf */
  decide_params_from_json(j, &o);
  assert_true(*decide_param(&o, "min_rounds") == 2147483647.0);
  assert_true(isinf(*decide_param(&o, "alpha")));
  cJSON_Delete(j);
  j = cJSON_Parse("{\"min_rounds\": 2147483648}");
  decide_params_from_json(j, &o);
  assert_true(*decide_param(&o, "min_rounds") == 2147483647.0);
  cJSON_Delete(j);
  j = cJSON_Parse("{}"); /* absent keys keep their values */
  decide_params_from_json(j, &o);
  assert_true(*decide_param(&o, "beta") == 0.05);
  assert_true(*decide_param(&o, "min_rounds") == 2147483647.0);
  assert_int_equal(decide_select(&o, "median"), 0); /* a rule without parameters reads none */
  for (int k = 0; k < DECIDE_MAX_PARAMS; k++) assert_true(o.param[k] == 0.0);
  decide_params_from_json(j, &o);
  assert_null(decide_param(&o, "min_rounds"));
  cJSON_Delete(j);
}

/* A rule without parameters is described by its name alone; the median is the baseline. */
static void a_rule_without_parameters_should_be_described_by_its_name(void **state) {
  (void)state;
  decide_opts o;
  decide_defaults(&o);
  assert_int_equal(decide_select(&o, "median"), 0);
  char words[64];
  decide_describe(&o, words, sizeof words);
  assert_string_equal(words, "median");
  assert_true(rule_find("median")->baseline);
  assert_false(rule_find("sequential")->baseline);
}

/* The registry's lists stay inside the buffers they are given. */
static void the_registry_should_stay_inside_its_buffers(void **state) {
  (void)state;
  assert_null(rule_at(-1));
  assert_null(rule_at(rule_count()));
  char words[2] = {'x', 'y'};
  rule_names(words, 1);
  assert_int_equal(words[0], '\0');
  assert_int_equal(words[1], 'y');
  static const char sentinel[] = "sentinel";
  const char *keys[4] = {NULL, NULL, NULL, sentinel};
  int n = 0;
  decide_param_keys(keys, &n, 3);
  assert_int_equal(n, 2);
  assert_string_equal(keys[0], "alpha");
  assert_string_equal(keys[1], "beta");
  assert_null(keys[2]);
  assert_ptr_equal(keys[3], sentinel);
  decide_opts o;
  decide_defaults(&o);
  assert_int_equal(decide_select(&o, "median"), 0);
  char text[8];
  memset(text, 'z', sizeof text);
  decide_describe(&o, text, 6); /* no room for "median" and its '\0': nothing */
  assert_int_equal(text[0], '\0');
  assert_int_equal(text[6], 'z');
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(every_rule_should_be_a_well_formed_row),
      cmocka_unit_test(job_decide_object_should_keep_its_keys_and_their_order),
      cmocka_unit_test(selecting_a_rule_should_reset_its_parameters),
      cmocka_unit_test(the_registry_should_stay_inside_its_buffers),
      cmocka_unit_test(a_parameter_below_its_bound_should_be_refused),
      cmocka_unit_test(a_job_should_not_set_an_integer_parameter_to_a_fraction),
      cmocka_unit_test(a_rule_without_parameters_should_be_described_by_its_name),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
