/* test_record: the ledger line codec (coordinator/record.h): every kind round-trips, the
 * reader refuses content beyond types, and docs/reference/ledger.md lists exactly the codec's keys. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/jsonio.h"
#include "coordinator/record.h"
#include "tests/unit/testutil.h"

/* A measured generation with everything a record can carry: a restart, a duel, a screened
 * round, kernel times, stats, a process and its canary, an untrusted verdict. */
static const char *const full_generation =
    "{\"type\":\"generation\",\"generation\":7,\"device\":\"SIM-1\",\"backend\":\"sim\","
    "\"simulated\":true,\"time\":\"2026-01-01T00:00:00Z\",\"rule\":\"sequential\",\"restart\":2,"
    "\"duel\":true,\"best\":{\"BM\":64,\"BK\":32},\"new\":{\"BM\":128,\"BK\":32},"
    "\"change\":{\"BM\":[64,128]},\"rounds\":[{\"order\":[\"new\",\"control\",\"best\"],"
    "\"best_us\":10.5,\"new_us\":9.75,\"control_us\":12,\"best_kernel_us\":10,"
    "\"new_kernel_us\":9.5,\"control_kernel_us\":null,\"sm_mhz\":[1980,1980],"
    "\"arm_mhz\":[1980,1980,1980],\"clock_reasons\":[0,4],\"screened\":true}],"
    "\"ratios\":[0.9285714285714286],\"median_ratio\":0.92857142857142860315,"
    "\"kernel_median_ratio\":0.95,\"control_drift\":null,\"min_gain\":0.01,"
    "\"drift_tolerance\":0.03,\"correct\":true,\"rel_err\":{\"best\":0,\"new\":1e-07,"
    "\"control\":null},\"checked\":[\"new\",\"control\"],\"status\":\"ok\","
    "\"detail\":\"fine\",\"decision\":\"refused\","
    "\"reason\":\"not decided\",\"stats\":{\"rule\":\"sequential\",\"llr\":1.5},\"screened\":1,"
    "\"burn_in\":4,\"compile_ms\":12.5,\"cache_hit\":true,\"wall_s\":0.25,"
    "\"times\":{\"compile_s\":0.0125,\"compile_wait_s\":0.01,\"load_s\":0.02,\"check_s\":0.01,"
    "\"measure_s\":0.2},\"elapsed_s\":12.5,\"child\":3,"
    "\"run\":\"2026-01-01T00:00:00Z\",\"canary\":{\"child\":3,\"verdict\":\"biased\","
    "\"ratio\":1.02,\"kernel_ratio\":null,\"interval\":[1.01,1.03],\"kernel_interval\":[null,"
    "null],\"threshold\":0.0025,\"reason\":\"a bias\",\"rounds\":[{\"order\":[\"copy\",\"best\"],"
    "\"best_us\":10,\"copy_us\":10.2,\"best_kernel_us\":null,\"copy_kernel_us\":null}]},"
    "\"untrusted\":true}";

static cJSON *parse(const char *text) {
  cJSON *o = cJSON_Parse(text);
  if (!o) fail_msg("not JSON: %s", text);
  return o;
}

/* A record as a ledger line: written, printed, parsed back. */
static cJSON *line_of(const record *r) {
  cJSON *o = record_to_json(r);
  char *text = cJSON_PrintUnformatted(o);
  cJSON_Delete(o);
  o = parse(text);
  free(text);
  return o;
}

/* text -> record -> line -> record -> line: both lines equal, and equal to what was read. */
static void round_trip(const char *text) {
  cJSON *in = test_record_json(text);
  record *a = record_new(), *b = record_new();
  tf_err e = {0};
  if (record_from_json(in, a, &e)) fail_msg("%s", e.msg);
  cJSON *out = line_of(a);
  if (record_from_json(out, b, &e)) fail_msg("%s", e.msg);
  cJSON *again = line_of(b);
  assert_true(cJSON_Compare(out, again, 1));
  assert_true(cJSON_Compare(in, out, 1));
  cJSON_Delete(in);
  cJSON_Delete(out);
  cJSON_Delete(again);
  record_free(a);
  record_free(b);
}

static void record_should_round_trip_every_kind(void **state) {
  (void)state;
  round_trip("{\"type\":\"device\",\"schema_version\":2,\"device\":{\"backend\":\"sim\","
             "\"name\":\"n\",\"uuid\":\"SIM-1\",\"pci_bus_id\":\"sim:00\",\"compute_capability\":"
             "\"9.0\",\"arch\":\"sm_90\",\"sm_count\":132,\"memory_bytes\":1,\"l2_bytes\":2,"
             "\"max_sm_mhz\":1980,\"current_sm_mhz\":1980,\"driver_version\":0,"
             "\"runtime_version\":0,\"nvrtc_version\":\"0.0\",\"host\":\"h\",\"ordinal\":0},"
             "\"campaign\":\"c\",\"campaign_path\":\"campaigns/c.json\",\"campaign_hash\":\"ab\","
             "\"backend\":\"sim\",\"created\":\"2026-01-01T00:00:00Z\",\"tunefarm\":\"0.1\","
             "\"mode\":\"neighbors\"}");
  cJSON *g = parse(full_generation);
  cJSON *jrec = test_record_json("{\"type\":\"generation\",\"generation\":1,\"status\":\"ok\"}");
  cJSON_AddItemToObject(g, "job", cJSON_DetachItemFromObject(jrec, "job"));
  char *text = cJSON_PrintUnformatted(g);
  round_trip(text);
  free(text);
  cJSON_Delete(g);
  cJSON_Delete(jrec);
  round_trip("{\"type\":\"generation\",\"generation\":2,\"best\":{\"BM\":64},\"new\":{\"BM\":8},"
             "\"decision\":\"refused\",\"reason\":\"breaks constraint 'tile'\","
             "\"constraint\":\"tile\"}");
  round_trip("{\"type\":\"restart\",\"restart\":1,\"generation\":9,\"champion\":{\"BM\":64},"
             "\"champion_us\":11.5,\"start\":{\"BM\":16},\"reason\":\"stalled\"}");
  round_trip("{\"type\":\"end\",\"reason\":\"budget\",\"generation\":9,\"best\":{\"BM\":64}}");
  round_trip("{\"type\":\"versions\",\"generation\":9,\"time\":\"2026-01-01T00:00:00Z\","
             "\"driver_version\":13010,\"runtime_version\":13000,\"nvrtc_version\":\"13.1\","
             "\"reason\":\"driver 13000 -> 13010\"}");
}

/* Written before "schema_version" existed: version 1, no mode, and it reads. */
static void record_should_read_a_version_1_header(void **state) {
  (void)state;
  cJSON *o = parse("{\"type\":\"device\",\"device\":{\"backend\":\"cuda\",\"uuid\":\"GPU-1\","
                   "\"host\":\"h\",\"ordinal\":1},\"campaign\":\"c\",\"campaign_path\":\"x\","
                   "\"campaign_hash\":\"ab\",\"backend\":\"cuda\",\"created\":\"t\","
                   "\"tunefarm\":\"0.1\"}");
  record *r = record_new();
  tf_err e = {0};
  assert_int_equal(record_from_json(o, r, &e), 0);
  assert_int_equal(r->kind, RECORD_DEVICE);
  assert_int_equal(r->device.schema_version, 1);
  assert_string_equal(r->device.mode, "");
  assert_string_equal(r->device.dev.uuid, "GPU-1");
  cJSON_Delete(o);
  record_free(r);
}

/* The reader refuses content beyond types, naming the key (issue 20, item 5). */
static void record_should_refuse_what_the_writer_never_writes(void **state) {
  (void)state;
  static const struct {
    const char *from, *to, *want;
  } cases[] = {
      {"\"decision\":\"refused\"", "\"decision\":\"maybe\"", "key 'decision' must be one of"},
      {"\"burn_in\":4", "\"burn_in\":4.5", "key 'burn_in' must be an integer"},
      {"\"status\":\"ok\"", "\"status\":\"fine\"", "key 'status' must be one of"},
      {"\"change\":{\"BM\":[64,128]}", "\"change\":{\"BM\":[64,256]}", "key 'change'"},
      {"\"verdict\":\"biased\"", "\"verdict\":\"odd\"", "key 'canary.verdict'"},
      {"\"wall_s\":0.25", "\"wall_s\":0.25,\"colour\":1", "unknown key 'colour'"},
      {"\"time\":\"2026-01-01T00:00:00Z\",", "", "key 'time' is missing"},
      {"\"screened\":true}]", "\"screened\":true},3]", "round 2 is malformed"},
      {"\"duel\":true", "\"duel\":1", "key 'duel' must be true or false"},
      {"\"load_s\":0.02", "\"load_s\":0.02,\"lunch_s\":1", "key 'times'"},
      {"\"measure_s\":0.2", "\"measure_s\":-0.2", "key 'times'"},
  };
  cJSON *jrec = test_record_json("{\"type\":\"generation\",\"generation\":1,\"status\":\"ok\"}");
  char *jtext = cJSON_PrintUnformatted(cJSON_GetObjectItem(jrec, "job"));
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
    char *bad = subst(full_generation, cases[i].from, cases[i].to);
    char *with_job = malloc(strlen(bad) + strlen(jtext) + 16);
    sprintf(with_job, "%.*s,\"job\":%s}", (int)strlen(bad) - 1, bad, jtext);
    cJSON *o = parse(with_job);
    record *r = record_new();
    tf_err e = {0};
    if (record_from_json(o, r, &e) == 0) fail_msg("case %zu accepted", i);
    assert_int_equal(e.code, TF_EXIT_INPUT);
    if (!strstr(e.msg, cases[i].want)) fail_msg("case %zu: '%s' lacks '%s'", i, e.msg, cases[i].want);
    cJSON_Delete(o);
    record_free(r);
    free(with_job);
    free(bad);
  }
  /* a static refusal must say "refused" and name its constraint */
  cJSON *o = parse("{\"type\":\"generation\",\"generation\":1,\"device\":\"d\",\"backend\":\"sim\","
                   "\"time\":\"t\",\"rule\":\"median\",\"best\":{},\"new\":{},\"change\":{},"
                   "\"decision\":\"keep\",\"reason\":\"r\",\"constraint\":\"c\"}");
  record *r = record_new();
  tf_err e = {0};
  assert_int_equal(record_from_json(o, r, &e), -1);
  assert_non_null(strstr(e.msg, "must be \"refused\""));
  cJSON_Delete(o);
  /* "rounds": "x" */
  o = cJSON_Duplicate(jrec, 1);
  cJSON_ReplaceItemInObject(o, "rounds", cJSON_CreateString("x"));
  assert_int_equal(record_from_json(o, r, &e), -1);
  assert_non_null(strstr(e.msg, "key 'rounds' must be an array"));
  cJSON_Delete(o);
  record_free(r);
  free(jtext);
  cJSON_Delete(jrec);
}

/* ---- docs/reference/ledger.md against the codec ---- */

/* The key names in the first column of the table under `heading` ("### End record"), up to
 * the next heading: "| `key` | ...". */
static int schema_keys(const char *doc, const char *heading, char keys[][64], int max) {
  const char *p = strstr(doc, heading);
  if (!p) fail_msg("docs/reference/ledger.md has no '%s'", heading);
  p += strlen(heading);
  int n = 0;
  while (*p && strncmp(p, "\n#", 2) != 0) {
    const char *nl = strchr(p + 1, '\n');
    if (!nl) nl = p + strlen(p);
    if (strncmp(p, "\n| `", 4) == 0) {
      const char *k = p + 4, *end = strchr(k, '`');
      if (end && end < nl && n < max) snprintf(keys[n++], 64, "%.*s", (int)(end - k), k);
    }
    p = nl;
  }
  return n;
}

static int listed(char keys[][64], int n, const char *key) {
  for (int i = 0; i < n; i++)
    if (strcmp(keys[i], key) == 0) return 1;
  return 0;
}

static void record_keys_should_be_the_keys_schema_md_lists(void **state) {
  (void)state;
  static const char *const headings[RECORD_KINDS] = {"### Device record", "### Generation record",
                                                      "### Restart record", "### End record",
                                                      "### Reopen record",
                                                      "### Versions record"};
  char path[1024];
  snprintf(path, sizeof path, "%s/docs/reference/ledger.md", source_dir());
  tf_err e = {0};
  char *doc = jsonio_slurp(path, "doc", 1 << 22, NULL, &e);
  assert_non_null(doc);
  for (int k = 0; k < RECORD_KINDS; k++) {
    char keys[64][64];
    int n = schema_keys(doc, headings[k], keys, 64);
    const char *const *code = record_keys((record_kind)k);
    int ncode = 0;
    for (; code[ncode]; ncode++)
      if (!listed(keys, n, code[ncode]))
        fail_msg("%s: the codec writes '%s', docs/reference/ledger.md does not list it", headings[k],
                 code[ncode]);
    for (int i = 0; i < n; i++) {
      int known = 0;
      for (int c = 0; c < ncode; c++) known |= strcmp(code[c], keys[i]) == 0;
      if (!known)
        fail_msg("%s: docs/reference/ledger.md lists '%s', the codec knows no such key", headings[k],
                 keys[i]);
    }
  }
  free(doc);
}

/* A ledger's configuration as one of the template: defaults for omitted knobs, unknown ones
 * refused. */
static void record_cfg_config_should_check_it_against_the_template(void **state) {
  (void)state;
  spec *s = calloc(1, sizeof *s);
  load_spec("templates/matmul.json", s);
  config c = {0};
  record_cfg rc;
  for (int k = 0; k < s->nknobs; k++) c.v[k] = s->knobs[k].values[0];
  c.n = s->nknobs;
  record_cfg_of(s, &c, &rc);
  config back;
  tf_err e = {0};
  assert_int_equal(record_cfg_config(s, &rc, "l.jsonl", "best", &back, &e), 0);
  assert_true(config_equal(&c, &back));
  snprintf(rc.name[0], SPEC_NAME, "NOPE");
  assert_int_equal(record_cfg_config(s, &rc, "l.jsonl", "best", &back, &e), -1);
  assert_non_null(strstr(e.msg, "no knob 'NOPE'"));
  spec_release(s);
  free(s);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(record_should_round_trip_every_kind),
      cmocka_unit_test(record_should_read_a_version_1_header),
      cmocka_unit_test(record_should_refuse_what_the_writer_never_writes),
      cmocka_unit_test(record_keys_should_be_the_keys_schema_md_lists),
      cmocka_unit_test(record_cfg_config_should_check_it_against_the_template),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
