/* Unit tests of common/jsonio.c: what every JSON file and message of the project is held
 * to: no key twice in one object, no number cast to an integer that is not a whole number
 * in range. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "common/jsonio.h"
#include "tests/unit/testutil.h"

static void parse_should_refuse(const char *text, const char *key) {
  tf_err e = {0};
  cJSON *o = jsonio_parse(text, "campaign", &e);
  if (o) fail_msg("accepted %s", text);
  assert_int_equal(e.code, TF_EXIT_INPUT);
  char want[128];
  snprintf(want, sizeof want, "key '%s' appears more than once", key);
  if (!strstr(e.msg, want)) fail_msg("'%s' does not say \"%s\"", e.msg, want);
}

static void parse_should_refuse_a_key_given_twice_at_any_depth(void **state) {
  (void)state;
  parse_should_refuse("{\"budget\": 5, \"budget\": -3}", "budget");
  parse_should_refuse("{\"template\": \"a\", \"x\": 1, \"template\": \"../../etc\"}", "template");
  parse_should_refuse("{\"search\": {\"budget\": 5, \"max_stale\": 2, \"budget\": -3}}",
                      "search.budget");
  parse_should_refuse("{\"c\": [{\"n\": 1}, {\"n\": 1, \"e\": 2, \"n\": 3}]}", "c[1].n");
}

static void parse_should_accept_the_same_key_in_different_objects(void **state) {
  (void)state;
  tf_err e = {0};
  cJSON *o = jsonio_parse("{\"a\": {\"n\": 1}, \"b\": {\"n\": 2}, \"n\": [{\"n\": 3}, {\"n\": 4}]}",
                          "campaign", &e);
  if (!o) fail_msg("%s", e.msg);
  cJSON_Delete(o);
}

static void load_should_name_the_file_and_the_repeated_key(void **state) {
  (void)state;
  char dir[] = "/tmp/tf-test-jsonio-XXXXXX", path[128];
  assert_non_null(mkdtemp(dir));
  write_file(dir, "c.json", "{\"measure\": {\"rounds\": 8},\n \"measure\": {\"rounds\": 1}}\n");
  snprintf(path, sizeof path, "%s/c.json", dir);
  tf_err e = {0};
  assert_null(jsonio_load(path, "campaign", &e));
  char want[256];
  snprintf(want, sizeof want, "campaign '%s': key 'measure' appears more than once", path);
  assert_string_equal(e.msg, want);
  rm_rf(dir);
}

/* Text without a file is named by what it is alone, not by a made-up file name. */
static void parse_should_name_text_by_what_it_is(void **state) {
  (void)state;
  tf_err e = {0};
  assert_null(jsonio_parse("garbage", "the message on stdin", &e));
  assert_string_equal(e.msg, "the message on stdin: not valid JSON at line 1, column 1");
  assert_null(jsonio_parse("{\"a\": 1, \"a\": 2}", "MPI message", &e));
  assert_string_equal(e.msg, "MPI message: key 'a' appears more than once");
}

/* 1e300 as a long long is undefined behaviour, 2^63 is one past LLONG_MAX, 1.5 is not 1. */
static void int_should_refuse_what_is_not_a_whole_number_in_range(void **state) {
  (void)state;
  static const char *const bad[] = {"1e300", "-1e300", "9223372036854775808", "1.5", "1000.7",
                                    "-0.5"};
  for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
    char text[64];
    snprintf(text, sizeof text, "{\"n\": %s}", bad[i]);
    tf_err e = {0};
    cJSON *o = jsonio_parse(text, "campaign", &e);
    assert_non_null(o);
    long long v = 42;
    if (jsonio_int("c.json", "campaign", o, "x", "n", 1, LLONG_MIN, LLONG_MAX, &v, &e) != -1)
      fail_msg("%s was read as %lld", bad[i], v);
    assert_int_equal(v, 42);
    assert_non_null(strstr(e.msg, "key 'x.n' must be an integer"));
    cJSON_Delete(o);
  }
  tf_err e = {0};
  cJSON *o = jsonio_parse("{\"n\": -9223372036854775808, \"m\": 1e3}", "campaign", &e);
  long long v = 0;
  assert_int_equal(jsonio_int("c", "c", o, "", "n", 1, LLONG_MIN, LLONG_MAX, &v, &e), 0);
  assert_true(v == LLONG_MIN);
  assert_int_equal(jsonio_int("c", "c", o, "", "m", 1, 0, 1000, &v, &e), 0);
  assert_int_equal(v, 1000);
  cJSON_Delete(o);
}

static void prepend_should_put_the_members_first_and_keep_the_rest(void **state) {
  (void)state;
  char *t = jsonio_prepend_members("{\"type\":\"result\",\"id\":7}", "\"rank\":3");
  assert_string_equal(t, "{\"rank\":3,\"type\":\"result\",\"id\":7}");
  tf_err e = {0};
  cJSON *o = jsonio_parse(t, "message", &e);
  assert_non_null(o);
  assert_int_equal(cJSON_GetObjectItem(o, "rank")->valueint, 3);
  cJSON_Delete(o);
  free(t);
  t = jsonio_prepend_members("  { }", "\"a\":1,\"b\":2");
  assert_string_equal(t, "{\"a\":1,\"b\":2 }");
  free(t);
  t = jsonio_prepend_members("{\"x\":1}", "");
  assert_string_equal(t, "{\"x\":1}");
  free(t);
  assert_null(jsonio_prepend_members("[1,2]", "\"a\":1"));
  assert_null(jsonio_prepend_members("", "\"a\":1"));
}

static void prepend_of_a_key_already_there_should_be_refused_when_parsed(void **state) {
  (void)state;
  char *t = jsonio_prepend_members("{\"rank\":1}", "\"rank\":3");
  tf_err e = {0};
  assert_null(jsonio_parse(t, "message", &e));
  assert_non_null(strstr(e.msg, "rank"));
  free(t);
}

/* Every double, printed by jsonio_exact and parsed, is the same double; NaN and the
 * infinities, which JSON cannot say, are null. */
static void exact_should_read_back_as_the_same_double(void **state) {
  (void)state;
  static const double some[] = {0.0, 1.0, -2.5, 1980.0, 1.0299999999999998, 0.1, 1e-300,
                                4.9406564584124654e-324, 1.7976931348623157e308, 1.0 / 3.0};
  unsigned long long bits = 0x9e3779b97f4a7c15ULL;
  for (int k = 0; k < 20000; k++) {
    double v;
    if (k < (int)(sizeof some / sizeof some[0])) {
      v = some[k];
    } else {
      bits ^= bits << 13, bits ^= bits >> 7, bits ^= bits << 17; /* xorshift: any bit pattern */
      memcpy(&v, &bits, sizeof v);
      if (!isfinite(v)) continue;
    }
    cJSON *a = cJSON_CreateArray();
    cJSON_AddItemToArray(a, jsonio_exact(v));
    char *text = cJSON_PrintUnformatted(a);
    cJSON *back = cJSON_Parse(text);
    assert_non_null(back);
    const cJSON *x = cJSON_GetArrayItem(back, 0);
    assert_true(cJSON_IsNumber(x));
    if (memcmp(&x->valuedouble, &v, sizeof v) != 0 && !(v == 0 && x->valuedouble == 0))
      fail_msg("%s read back as %.17g, not %.17g", text, x->valuedouble, v);
    cJSON_Delete(back);
    cJSON_Delete(a);
    free(text);
  }
  cJSON *o = cJSON_CreateObject();
  jsonio_add_exact(o, "nan", NAN);
  jsonio_add_exact(o, "inf", -INFINITY);
  char *text = cJSON_PrintUnformatted(o);
  assert_string_equal(text, "{\"nan\":null,\"inf\":null}");
  free(text);
  cJSON_Delete(o);
}

/* The UTF-8 of RFC 3629 and nothing else: every boundary code point passes; each class of
 * malformed input fails, alone and after valid text. */
static void utf8_should_accept_exactly_the_well_formed_sequences(void **state) {
  (void)state;
  static const char *const good[] = {
      "", "plain ASCII\t\x7f", "\xC2\x80", "\xDF\xBF",             /* U+0080, U+07FF */
      "\xE0\xA0\x80", "\xED\x9F\xBF", "\xEE\x80\x80", "\xEF\xBF\xBF", /* U+0800, U+D7FF, U+E000, U+FFFF */
      "\xF0\x90\x80\x80", "\xF4\x8F\xBF\xBF",                       /* U+10000, U+10FFFF */
      "N \xE2\x89\xA5 U, r\xC3\xA9sum\xC3\xA9 \xF0\x9F\x98\x80",
  };
  static const struct {
    const char *what, *bytes;
  } bad[] = {
      {"a lone continuation byte", "\x80"},
      {"a continuation byte after a whole character", "\xC3\xA9\xBF"},
      {"overlong two bytes (C0)", "\xC0\xAF"},
      {"overlong two bytes (C1)", "\xC1\xBF"},
      {"overlong three bytes", "\xE0\x80\xAF"},
      {"overlong three bytes, the largest", "\xE0\x9F\xBF"},
      {"overlong four bytes", "\xF0\x80\x80\xAF"},
      {"overlong four bytes, the largest", "\xF0\x8F\xBF\xBF"},
      {"the first surrogate", "\xED\xA0\x80"},
      {"the last surrogate", "\xED\xBF\xBF"},
      {"U+110000", "\xF4\x90\x80\x80"},
      {"a lead byte past F4", "\xF5\x80\x80\x80"},
      {"FE", "\xFE"},
      {"FF", "\xFF"},
      {"two bytes cut short", "\xC3"},
      {"three bytes cut short", "\xE2\x82"},
      {"four bytes cut short", "\xF0\x9F\x98"},
      {"a continuation byte missing", "\xC3("},
      {"a third byte that is not a continuation", "\xE2\x82("},
  };
  for (size_t i = 0; i < sizeof good / sizeof good[0]; i++)
    if (!jsonio_utf8_valid(good[i], strlen(good[i]))) fail_msg("good case %zu refused", i);
  for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
    char after[64];
    snprintf(after, sizeof after, "ok \xC3\xA9%s", bad[i].bytes);
    if (jsonio_utf8_valid(bad[i].bytes, strlen(bad[i].bytes)))
      fail_msg("%s accepted", bad[i].what);
    if (jsonio_utf8_valid(after, strlen(after))) fail_msg("%s accepted after text", bad[i].what);
  }
  assert_true(jsonio_utf8_valid("a\0b", 3)); /* a length, not a C string */
  assert_false(jsonio_utf8_valid("\xE2\x82\xAC", 2));
}

static void one_line_should_allow_only_the_tab_of_the_controls(void **state) {
  (void)state;
  assert_true(jsonio_one_line("a\tb \xC2\xA0 \xE2\x89\xA5 \xF4\x8F\xBF\xBF"));
  static const char *const bad[] = {"a\nb", "a\rb", "\x1b[2J", "a\x7f", "\xC2\x80", ("\xC2\x9B" "2J")};
  for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++)
    if (jsonio_one_line(bad[i])) fail_msg("case %zu accepted", i);
}

/* A file's strings and keys are UTF-8, or the file is refused naming the key. */
static void load_should_name_the_key_that_is_not_utf8(void **state) {
  (void)state;
  static const struct {
    const char *text, *want;
  } cases[] = {
      {"{\"doc\": \"caf\xE9\"}", "key 'doc' is not valid UTF-8"},
      {"{\"c\": [{\"reason\": \"ok\"}, {\"reason\": \"\xED\xA0\x80\"}]}",
       "key 'c[1].reason' is not valid UTF-8"},
      {"{\"knobs\": {\"B\xFF\": 1}}", "a key of 'knobs' is not valid UTF-8"},
      {"{\"\xC0\xAF\": 1}", "a key of the top level is not valid UTF-8"},
  };
  char dir[] = "/tmp/tf-test-jsonio-XXXXXX", path[128];
  assert_non_null(mkdtemp(dir));
  snprintf(path, sizeof path, "%s/c.json", dir);
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
    write_file(dir, "c.json", cases[i].text);
    tf_err e = {0};
    cJSON *o = jsonio_load(path, "campaign", &e);
    if (o) fail_msg("case %zu loaded", i);
    char want[256];
    snprintf(want, sizeof want, "campaign '%s': %s", path, cases[i].want);
    assert_int_equal(e.code, TF_EXIT_INPUT);
    assert_string_equal(e.msg, want);
  }
  write_file(dir, "c.json", "{\"doc\": \"caf\xC3\xA9 \\u00e9 \xF0\x9F\x98\x80\"}");
  tf_err e = {0};
  cJSON *o = jsonio_load(path, "campaign", &e);
  if (!o) fail_msg("%s", e.msg);
  cJSON_Delete(o);
  rm_rf(dir);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(parse_should_refuse_a_key_given_twice_at_any_depth),
      cmocka_unit_test(parse_should_accept_the_same_key_in_different_objects),
      cmocka_unit_test(load_should_name_the_file_and_the_repeated_key),
      cmocka_unit_test(utf8_should_accept_exactly_the_well_formed_sequences),
      cmocka_unit_test(one_line_should_allow_only_the_tab_of_the_controls),
      cmocka_unit_test(load_should_name_the_key_that_is_not_utf8),
      cmocka_unit_test(parse_should_name_text_by_what_it_is),
      cmocka_unit_test(int_should_refuse_what_is_not_a_whole_number_in_range),
      cmocka_unit_test(prepend_should_put_the_members_first_and_keep_the_rest),
      cmocka_unit_test(exact_should_read_back_as_the_same_double),
      cmocka_unit_test(prepend_of_a_key_already_there_should_be_refused_when_parsed),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
