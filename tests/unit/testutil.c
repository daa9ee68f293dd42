#include "tests/unit/testutil.h"

// clang-format off
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>
// clang-format on
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common/spec.h"
#include "coordinator/record.h"

void rm_rf(const char *path) {
  struct stat st;
  if (lstat(path, &st) != 0) return;
  if (S_ISDIR(st.st_mode)) {
    DIR *d = opendir(path);
    struct dirent *de;
    while (d && (de = readdir(d))) {
      if (!strcmp(de->d_name, ".") || !strcmp(de->d_name, "..")) continue;
      char p[2048];
      snprintf(p, sizeof p, "%s/%s", path, de->d_name);
      rm_rf(p);
    }
    if (d) closedir(d);
    rmdir(path);
  } else {
    unlink(path);
  }
}

int fresh_cache_setup(void **state) {
  char *dir = strdup("/tmp/tf-test-cache-XXXXXX");
  if (!dir || !mkdtemp(dir)) return -1;
  setenv("TUNEFARM_CACHE", dir, 1);
  *state = dir;
  return 0;
}

int fresh_cache_teardown(void **state) {
  rm_rf(*state);
  free(*state);
  return 0;
}

int count_files(const char *dir, const char *suffix) {
  DIR *d = opendir(dir);
  assert_non_null(d);
  int n = 0;
  struct dirent *ent;
  size_t s = strlen(suffix);
  while ((ent = readdir(d))) {
    size_t l = strlen(ent->d_name);
    if (ent->d_name[0] != '.' && l >= s && !strcmp(ent->d_name + l - s, suffix)) n++;
  }
  closedir(d);
  return n;
}

void write_file(const char *dir, const char *name, const char *text) {
  char p[1024];
  snprintf(p, sizeof p, "%s/%s", dir, name);
  FILE *f = fopen(p, "w");
  if (!f) fail_msg("cannot write '%s'", p);
  assert_true(fputs(text, f) >= 0);
  assert_int_equal(fclose(f), 0);
}

const char *source_dir(void) {
  const char *s = getenv("TF_SOURCE_DIR");
  return s && s[0] ? s : TF_SOURCE_DIR;
}

char *subst(const char *text, const char *from, const char *to) {
  const char *at = strstr(text, from);
  if (!at) fail_msg("edit '%s' does not apply", from);
  if (strstr(at + 1, from)) fail_msg("edit '%s' applies more than once", from);
  size_t n = strlen(text) - strlen(from) + strlen(to) + 1;
  char *out = malloc(n);
  assert_non_null(out);
  snprintf(out, n, "%.*s%s%s", (int)(at - text), text, to, at + strlen(from));
  return out;
}

void load_spec(const char *rel, spec *s) {
  char path[1024];
  tf_err e = {0};
  snprintf(path, sizeof path, "%s/%s", source_dir(), rel);
  if (spec_load(s, path, &e)) fail_msg("'%s' did not load: %s", path, e.msg);
}

/* ---- ledger records for the readers' tests ---- */

/* The smallest job the job codec reads: one source, one buffer, three arms. */
static cJSON *minimal_job(void) {
  return cJSON_Parse(
      "{\"type\":\"job\",\"id\":1,\"generation\":1,\"campaign\":\"test\","
      "\"sources\":[\"templates/t.cu\"],\"dims\":{\"N\":1024},"
      "\"buffers\":[{\"name\":\"y\",\"output\":true}],\"args\":[{\"buffer\":0}],\"arms\":["
      "{\"role\":\"best\",\"name_expr\":\"k\",\"config\":[],\"grid\":[1,1,1],\"block\":[32,1,1],"
      "\"counts\":[1024],\"clear\":[0],\"iargs\":[0]},"
      "{\"role\":\"new\",\"name_expr\":\"k\",\"config\":[],\"grid\":[1,1,1],\"block\":[32,1,1],"
      "\"counts\":[1024],\"clear\":[0],\"iargs\":[0]},"
      "{\"role\":\"control\",\"name_expr\":\"k\",\"config\":[],\"grid\":[1,1,1],"
      "\"block\":[32,1,1],\"counts\":[1024],\"clear\":[0],\"iargs\":[0]}],"
      "\"measure\":{\"rounds\":8},\"decide\":{\"rule\":\"median\"}}");
}

static void fill(cJSON *o, const char *key, cJSON *v) {
  if (cJSON_GetObjectItemCaseSensitive(o, key))
    cJSON_Delete(v);
  else
    cJSON_AddItemToObject(o, key, v);
}

/* A round as the child writes it: every arm's time (best's where one is missing), the order. */
static void complete_round(cJSON *r) {
  const cJSON *b = cJSON_GetObjectItemCaseSensitive(r, "best_us");
  double best = cJSON_IsNumber(b) ? b->valuedouble : 10.0;
  fill(r, "order", cJSON_Parse("[\"best\",\"new\",\"control\"]"));
  fill(r, "best_us", cJSON_CreateNumber(best));
  fill(r, "new_us", cJSON_CreateNumber(best));
  fill(r, "control_us", cJSON_CreateNumber(best));
}

static void complete_generation(cJSON *o) {
  fill(o, "device", cJSON_CreateString("SIM-test"));
  fill(o, "backend", cJSON_CreateString("sim"));
  fill(o, "time", cJSON_CreateString("2026-01-01T00:00:00Z"));
  fill(o, "rule", cJSON_CreateString("median"));
  fill(o, "best", cJSON_CreateObject());
  fill(o, "new", cJSON_CreateObject());
  fill(o, "reason", cJSON_CreateString(""));
  if (!cJSON_GetObjectItemCaseSensitive(o, "change")) {
    cJSON *best = cJSON_GetObjectItemCaseSensitive(o, "best"), *k;
    cJSON *change = cJSON_AddObjectToObject(o, "change");
    cJSON_ArrayForEach(k, best) {
      const cJSON *to = cJSON_GetObjectItemCaseSensitive(
          cJSON_GetObjectItemCaseSensitive(o, "new"), k->string);
      if (!cJSON_IsNumber(to) || to->valuedouble == k->valuedouble) continue;
      cJSON *pair = cJSON_AddArrayToObject(change, k->string);
      cJSON_AddItemToArray(pair, cJSON_CreateNumber(k->valuedouble));
      cJSON_AddItemToArray(pair, cJSON_CreateNumber(to->valuedouble));
    }
  }
  int measured = cJSON_GetObjectItemCaseSensitive(o, "status") ||
                 cJSON_GetObjectItemCaseSensitive(o, "rounds");
  fill(o, "decision", cJSON_CreateString(measured ? "reject" : "refused"));
  if (!measured) {
    fill(o, "constraint", cJSON_CreateString("test"));
    return;
  }
  fill(o, "rounds", cJSON_CreateArray());
  cJSON *r;
  cJSON_ArrayForEach(r, cJSON_GetObjectItemCaseSensitive(o, "rounds")) complete_round(r);
  fill(o, "ratios", cJSON_CreateArray());
  fill(o, "median_ratio", cJSON_CreateNull());
  fill(o, "kernel_median_ratio", cJSON_CreateNull());
  fill(o, "control_drift", cJSON_CreateNull());
  fill(o, "min_gain", cJSON_CreateNumber(0.01));
  fill(o, "drift_tolerance", cJSON_CreateNumber(0.03));
  fill(o, "correct", cJSON_CreateTrue());
  fill(o, "rel_err", cJSON_Parse("{\"best\":0,\"new\":0,\"control\":0}"));
  fill(o, "status", cJSON_CreateString("ok"));
  fill(o, "screened", cJSON_CreateNumber(0));
  fill(o, "burn_in", cJSON_CreateNumber(0));
  fill(o, "compile_ms", cJSON_CreateNumber(0));
  fill(o, "cache_hit", cJSON_CreateFalse());
  fill(o, "wall_s", cJSON_CreateNumber(0));
  if (!cJSON_GetObjectItemCaseSensitive(o, "job")) { /* its id counts as the generations do */
    cJSON *jobj = minimal_job();
    const cJSON *g = cJSON_GetObjectItemCaseSensitive(o, "generation");
    if (cJSON_IsNumber(g)) cJSON_ReplaceItemInObject(jobj, "id", cJSON_CreateNumber(g->valuedouble));
    cJSON_AddItemToObject(o, "job", jobj);
  }
}

cJSON *test_record_json(const char *partial) {
  cJSON *o = cJSON_Parse(partial);
  if (!o) fail_msg("not JSON: %s", partial);
  const char *type = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(o, "type"));
  if (type && !strcmp(type, "generation")) complete_generation(o);
  if (type && !strcmp(type, "end")) {
    fill(o, "reason", cJSON_CreateString("ended"));
    fill(o, "generation", cJSON_CreateNumber(0));
    fill(o, "best", cJSON_CreateObject());
  }
  if (type && !strcmp(type, "restart")) {
    fill(o, "generation", cJSON_CreateNumber(0));
    fill(o, "champion", cJSON_CreateObject());
    fill(o, "start", cJSON_CreateObject());
    fill(o, "champion_us", cJSON_CreateNull());
    fill(o, "reason", cJSON_CreateString("restart"));
  }
  return o;
}

record *test_record(const char *partial) {
  cJSON *o = test_record_json(partial);
  record *r = record_new();
  tf_err e = {0};
  assert_non_null(r);
  if (record_from_json(o, r, &e)) fail_msg("%s: %s", e.msg, partial);
  cJSON_Delete(o);
  return r;
}

char *test_record_line(const char *partial) {
  cJSON *o = test_record_json(partial);
  char *s = cJSON_PrintUnformatted(o);
  cJSON_Delete(o);
  return s;
}

uint64_t test_xorshift64(uint64_t *state) {
  *state ^= *state << 13;
  *state ^= *state >> 7;
  *state ^= *state << 17;
  return *state;
}
