/* The registry of decision rules (common/rule.h): every row is well formed, and a job's
 * "decide" object keeps the keys, in the order, that ledgers were written with. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
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

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(every_rule_should_be_a_well_formed_row),
      cmocka_unit_test(job_decide_object_should_keep_its_keys_and_their_order),
      cmocka_unit_test(selecting_a_rule_should_reset_its_parameters),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
