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

/* The reader refuses content beyond types, naming the key. */
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
      {"\"copy_kernel_us\":null}]}", "\"copy_kernel_us\":null},3]}",
       "key 'canary.rounds': round 2 is malformed"},
      {"\"verdict\":\"biased\"", "\"verdict\":\"xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx\"",
       "key 'canary.verdict' is longer than 64 characters"},
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

/* ---- each key's presence, each value read back ---- */

/* The full generation with its job, as a tree. */
static cJSON *full_with_job(void) {
  cJSON *g = parse(full_generation);
  cJSON *jrec = test_record_json("{\"type\":\"generation\",\"generation\":1,\"status\":\"ok\"}");
  cJSON_AddItemToObject(g, "job", cJSON_DetachItemFromObject(jrec, "job"));
  cJSON_Delete(jrec);
  return g;
}

static int reads(const cJSON *o, tf_err *e) {
  record *r = record_new();
  int rc = record_from_json(o, r, e);
  record_free(r);
  return rc;
}

/* Without `key` (at `parent`, NULL: top level), o reads when the key is optional, and is
 * refused naming it when it is required. */
static void drop_and_read(const cJSON *o, const char *parent, const char *key, int required) {
  cJSON *c = cJSON_Duplicate(o, 1);
  cJSON *at = parent ? cJSON_GetObjectItemCaseSensitive(c, parent) : c;
  cJSON_DeleteItemFromObjectCaseSensitive(at, key);
  tf_err e = {0};
  int rc = reads(c, &e);
  if (required && rc == 0) fail_msg("read without required key '%s'", key);
  if (!required && rc != 0) fail_msg("refused without optional key '%s': %s", key, e.msg);
  if (required && !strstr(e.msg, key)) fail_msg("without '%s': '%s' does not name it", key, e.msg);
  cJSON_Delete(c);
}

static int in_list(const char *const *list, const char *key) {
  for (int i = 0; list[i]; i++)
    if (strcmp(list[i], key) == 0) return 1;
  return 0;
}

static void record_should_require_exactly_its_required_keys(void **state) {
  (void)state;
  static const char *const optional[] = {"simulated", "restart", "duel", "checked", "detail",
                                         "stats", "samples", "samples_wanted", "launch_spread",
                                         "times", "elapsed_s", "child", "run", "canary",
                                         "untrusted", "constraint", NULL};
  cJSON *g = full_with_job();
  const char *const *keys = record_keys(RECORD_GENERATION);
  for (int i = 0; keys[i]; i++) {
    if (strcmp(keys[i], "status") == 0 || strcmp(keys[i], "type") == 0) continue;
    drop_and_read(g, NULL, keys[i], !in_list(optional, keys[i]));
  }
  const char *const *ck = record_keys(RECORD_GENERATION); /* the canary's keys: all required */
  (void)ck;
  static const char *const canary[] = {"child", "verdict", "ratio", "kernel_ratio", "interval",
                                       "kernel_interval", "threshold", "reason", "rounds", NULL};
  for (int i = 0; canary[i]; i++) drop_and_read(g, "canary", canary[i], 1);
  static const char *const rel_err[] = {"best", "new", "control", NULL};
  for (int i = 0; rel_err[i]; i++) drop_and_read(g, "rel_err", rel_err[i], 1);
  cJSON_Delete(g);
  static const char *const others[] = {
      "{\"type\":\"restart\",\"restart\":1,\"generation\":9,\"champion\":{\"BM\":64},"
      "\"champion_us\":11.5,\"start\":{\"BM\":16},\"reason\":\"stalled\"}",
      "{\"type\":\"end\",\"reason\":\"budget\",\"generation\":9,\"best\":{\"BM\":64}}",
      "{\"type\":\"reopen\",\"generation\":9,\"reason\":\"budget 20\"}",
      "{\"type\":\"versions\",\"generation\":9,\"time\":\"t\",\"driver_version\":1,"
      "\"runtime_version\":0,\"nvrtc_version\":\"13.1\",\"reason\":\"r\"}",
      "{\"type\":\"generation\",\"generation\":2,\"device\":\"d\",\"backend\":\"sim\","
      "\"time\":\"t\",\"rule\":\"median\",\"best\":{\"BM\":64},\"new\":{\"BM\":8},"
      "\"change\":{\"BM\":[64,8]},\"decision\":\"refused\",\"reason\":\"r\",\"constraint\":\"c\"}",
  };
  for (size_t k = 0; k < sizeof others / sizeof others[0]; k++) {
    cJSON *o = parse(others[k]);
    tf_err e = {0};
    if (reads(o, &e)) fail_msg("%s: %s", others[k], e.msg);
    for (const cJSON *it = o->child; it; it = it->next)
      if (strcmp(it->string, "type") != 0) drop_and_read(o, NULL, it->string, 1);
    cJSON_Delete(o);
  }
}

/* Every value of the full generation lands where the header says. */
static void record_should_read_every_value_of_a_generation(void **state) {
  (void)state;
  cJSON *g = full_with_job();
  record *r = record_new();
  tf_err e = {0};
  if (record_from_json(g, r, &e)) fail_msg("%s", e.msg);
  const record_gen *x = &r->gen;
  assert_int_equal(r->kind, RECORD_GENERATION);
  assert_true(x->generation == 7);
  assert_string_equal(x->device, "SIM-1");
  assert_string_equal(x->backend, "sim");
  assert_int_equal(x->simulated, 1);
  assert_string_equal(x->rule, "sequential");
  assert_int_equal(x->restart, 2);
  assert_int_equal(x->duel, 1);
  assert_int_equal(x->best.n, 2);
  assert_string_equal(x->best.name[1], "BK");
  assert_true(x->best.v[0] == 64 && x->new_cfg.v[0] == 128 && x->new_cfg.v[1] == 32);
  assert_int_equal(x->decision, DECISION_REFUSED);
  assert_int_equal(x->measured, 1);
  assert_int_equal(x->res.nrounds, 1);
  assert_int_equal(x->res.rounds[0].screened, 1);
  assert_int_equal(x->nratios, 1);
  assert_true(x->kernel_median_ratio == 0.95 && isnan(x->control_drift));
  assert_true(x->min_gain == 0.01 && x->drift_tolerance == 0.03);
  assert_int_equal(x->res.correct, 1);
  assert_true(x->res.rel_err[ARM_BEST] == 0 && x->res.rel_err[ARM_NEW] == 1e-07);
  assert_true(isinf(x->res.rel_err[ARM_CONTROL]));
  assert_int_equal(x->res.checked, (1 << ARM_NEW) | (1 << ARM_CONTROL));
  assert_int_equal(x->res.status, RESULT_OK);
  assert_string_equal(x->res.detail, "fine");
  assert_int_equal(x->screened, 1);
  assert_int_equal(x->res.burn_in, 4);
  assert_true(x->res.compile_ms == 12.5 && x->res.wall_s == 0.25 && x->elapsed_s == 12.5);
  assert_int_equal(x->res.cache_hit, 1);
  assert_int_equal(x->res.child, 3);
  assert_string_equal(x->run, "2026-01-01T00:00:00Z");
  assert_int_equal(x->has_canary, 1);
  assert_int_equal(x->canary.child, 3);
  assert_int_equal(x->canary.biased, 1);
  assert_int_equal(x->canary.n, 1);
  assert_int_equal(x->res.ncanary, 1);
  assert_true(x->canary.ratio[0] == 1.02 && isnan(x->canary.ratio[1]));
  assert_true(x->canary.lo[0] == 1.01 && x->canary.hi[0] == 1.03);
  assert_true(isinf(x->canary.lo[1]) && x->canary.lo[1] < 0 && isinf(x->canary.hi[1]));
  assert_true(x->canary.threshold == 0.0025);
  assert_string_equal(x->canary.reason, "a bias");
  assert_int_equal(x->untrusted, 1);
  assert_non_null(x->stats);
  assert_non_null(x->job);
  record_free(r);
  cJSON_Delete(g);
}

/* Values at their edges: a string that fills its field, a 0 that some keys allow and others
 * do not, an empty "checked", an NVRTC version that is not MAJOR.MINOR. */
static void record_should_hold_values_at_their_edges(void **state) {
  (void)state;
  static const struct {
    const char *from, *to;
    int ok;
    const char *want;
  } cases[] = {
      {"\"rule\":\"sequential\",\"restart\"", "\"rule\":\"abcdefghijklmno\",\"restart\"", 1, NULL},
      {"\"rule\":\"sequential\",\"restart\"", "\"rule\":\"abcdefghijklmnop\",\"restart\"", 0,
       "key 'rule'"},
      {"\"checked\":[\"new\",\"control\"]", "\"checked\":[]", 1, NULL},
      {"\"ratios\":[0.9285714285714286]", "\"ratios\":[\"x\"]", 0, "key 'ratios'"},
      {"\"control\":null}", "\"control\":null,\"other\":1}", 0, "other"},
      {"\"new\":{\"BM\":128,\"BK\":32}", "\"new\":{\"BN\":128,\"BK\":32}", 0, "same knobs"},
      {"\"child\":3,\"verdict\"", "\"child\":-1,\"verdict\"", 0, "key 'canary.child'"},
  };
  cJSON *g = full_with_job();
  char *full = cJSON_PrintUnformatted(g);
  cJSON_Delete(g);
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
    char *text = subst(full, cases[i].from, cases[i].to);
    cJSON *o = parse(text);
    record *r = record_new();
    tf_err e = {0};
    int rc = record_from_json(o, r, &e);
    if (cases[i].ok && rc) fail_msg("case %zu refused: %s", i, e.msg);
    if (!cases[i].ok && (rc == 0 || !strstr(e.msg, cases[i].want)))
      fail_msg("case %zu: rc %d, '%s' lacks '%s'", i, rc, e.msg, cases[i].want);
    if (cases[i].ok) {
      cJSON *back = line_of(r);
      assert_true(cJSON_Compare(o, back, 1)); /* the value, written back as it was read */
      cJSON_Delete(back);
    }
    cJSON_Delete(o);
    record_free(r);
    free(text);
  }
  free(full);
  static const char *const nvrtc[] = {".1", "1.", "1234567.1", "1.1234567", "1.2x", "a.1", NULL};
  for (int i = 0; nvrtc[i]; i++) {
    char text[256];
    snprintf(text, sizeof text, "{\"type\":\"versions\",\"generation\":0,\"time\":\"t\","
             "\"driver_version\":0,\"runtime_version\":0,\"nvrtc_version\":\"%s\","
             "\"reason\":\"r\"}", nvrtc[i]);
    cJSON *o = parse(text);
    tf_err e = {0};
    if (reads(o, &e) == 0 || !strstr(e.msg, "nvrtc_version")) fail_msg("'%s' read", nvrtc[i]);
    cJSON_Delete(o);
  }
  round_trip("{\"type\":\"versions\",\"generation\":0,\"time\":\"t\",\"driver_version\":0,"
             "\"runtime_version\":0,\"nvrtc_version\":\"123456.654321\",\"reason\":\"r\"}");
  round_trip("{\"type\":\"reopen\",\"generation\":0,\"reason\":\"r\"}");
  round_trip("{\"type\":\"restart\",\"restart\":1,\"generation\":0,\"champion\":{},"
             "\"champion_us\":null,\"start\":{},\"reason\":\"r\"}");
  cJSON *d = parse("{\"type\":\"device\",\"schema_version\":0,\"device\":{\"backend\":\"cuda\","
                   "\"uuid\":\"GPU-1\",\"host\":\"h\",\"ordinal\":1},\"campaign\":\"c\","
                   "\"campaign_path\":\"x\",\"campaign_hash\":\"ab\",\"backend\":\"cuda\","
                   "\"created\":\"t\",\"tunefarm\":\"0.1\",\"root\":\"/\",\"mode\":\"m\"}");
  tf_err e = {0};
  assert_int_equal(reads(d, &e), -1);
  assert_non_null(strstr(e.msg, "schema_version"));
  cJSON_ReplaceItemInObject(d, "schema_version", cJSON_CreateNumber(2));
  record *r = record_new();
  if (record_from_json(d, r, &e)) fail_msg("%s", e.msg);
  assert_string_equal(r->device.root, "/");
  assert_string_equal(r->device.mode, "m");
  cJSON *back = record_to_json(r);
  assert_string_equal(cJSON_GetStringValue(cJSON_GetObjectItem(back, "root")), "/");
  assert_string_equal(cJSON_GetStringValue(cJSON_GetObjectItem(back, "mode")), "m");
  cJSON_Delete(back);
  record_free(r);
  cJSON_Delete(d);
}

static void record_helpers_should_hold_their_edges(void **state) {
  (void)state;
  assert_null(record_keys(RECORD_KINDS));
  assert_null(record_keys((record_kind)-1));
  record_release(NULL);
  record_free(NULL);
  record_cfg a = {0}, b = {0};
  a.n = b.n = 2;
  snprintf(a.name[0], SPEC_NAME, "X"), snprintf(a.name[1], SPEC_NAME, "Y");
  snprintf(b.name[0], SPEC_NAME, "X"), snprintf(b.name[1], SPEC_NAME, "Y");
  a.v[2] = 5; /* past n: not part of it */
  assert_true(record_cfg_equal(&a, &b));
  b.v[0] = 1;
  assert_false(record_cfg_equal(&a, &b));
  b.v[0] = 0;
  snprintf(b.name[0], SPEC_NAME, "Z");
  assert_false(record_cfg_equal(&a, &b));
  snprintf(b.name[0], SPEC_NAME, "X");
  b.n = 1;
  assert_false(record_cfg_equal(&a, &b));
  spec *s = calloc(1, sizeof *s + 2 * sizeof(spec_knob)); /* its knobs after it: one free */
  assert_non_null(s);
  s->knobs = (spec_knob *)(void *)(s + 1);
  s->nknobs = 1;
  memset(s->knobs[0].name, 'k', SPEC_NAME - 1); /* the longest name a template has */
  config c = {1, {42}};
  record_cfg rc;
  record_cfg_of(s, &c, &rc);
  assert_int_equal(rc.n, 1);
  assert_int_equal((int)strlen(rc.name[0]), SPEC_NAME - 1);
  assert_true(rc.v[0] == 42);
  s->nknobs = 2; /* a configuration short of the template's knobs: 0 for the rest */
  memset(s->knobs[1].name, 'j', 1);
  config shorter = {1, {42, 7}};
  record_cfg_of(s, &shorter, &rc);
  assert_int_equal(rc.n, 2);
  assert_true(rc.v[0] == 42 && rc.v[1] == 0);
  free(s);
}

/* A kernel time under a microsecond is a time: the median takes it; an unknown one (< 0) and
 * a screened round are left out. */
static void record_rounds_median_should_take_short_kernel_times(void **state) {
  (void)state;
  record_gen *g = calloc(1, sizeof *g);
  assert_non_null(g);
  g->res.nrounds = 4;
  static const double k[4] = {0.5, 0.25, -1.0, 0.75};
  for (int i = 0; i < 4; i++) {
    g->res.rounds[i].kernel_us[ARM_NEW] = k[i];
    g->res.rounds[i].us[ARM_NEW] = 10.0 + i;
  }
  g->res.rounds[1].screened = 1;
  assert_true(record_rounds_median(g, ARM_NEW, 1) == 0.625);
  assert_true(record_rounds_median(g, ARM_NEW, 0) == 12.0);
  free(g);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(record_should_require_exactly_its_required_keys),
      cmocka_unit_test(record_rounds_median_should_take_short_kernel_times),
      cmocka_unit_test(record_should_read_every_value_of_a_generation),
      cmocka_unit_test(record_should_hold_values_at_their_edges),
      cmocka_unit_test(record_helpers_should_hold_their_edges),
      cmocka_unit_test(record_should_round_trip_every_kind),
      cmocka_unit_test(record_should_read_a_version_1_header),
      cmocka_unit_test(record_should_refuse_what_the_writer_never_writes),
      cmocka_unit_test(record_keys_should_be_the_keys_schema_md_lists),
      cmocka_unit_test(record_cfg_config_should_check_it_against_the_template),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
