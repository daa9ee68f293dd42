#include "coordinator/verify.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/jsonio.h"
#include "common/msg.h"

/* The result as the coordinator saw it, rebuilt from the ledger record. */
static int record_result(const cJSON *rec, result *r, char *why, size_t len) {
  static const char *const status[] = {"ok", "fault", "compile_error", "error"};
  memset(r, 0, sizeof *r);
  const char *st = cJSON_GetStringValue(cJSON_GetObjectItem(rec, "status"));
  r->status = RESULT_ERROR;
  for (int i = 0; st && i < 4; i++)
    if (strcmp(st, status[i]) == 0) r->status = (result_status)i;
  const char *detail = cJSON_GetStringValue(cJSON_GetObjectItem(rec, "detail"));
  snprintf(r->detail, sizeof r->detail, "%s", detail ? detail : "");
  r->correct = cJSON_IsTrue(cJSON_GetObjectItem(rec, "correct"));
  const cJSON *err = cJSON_GetObjectItem(rec, "rel_err");
  for (int a = 0; a < ARM_COUNT; a++) {
    const cJSON *x = cJSON_GetObjectItem(err, arm_names[a]);
    r->rel_err[a] = cJSON_IsNumber(x) ? x->valuedouble : 1.0 / 0.0;
  }
  const cJSON *it;
  cJSON_ArrayForEach(it, cJSON_GetObjectItem(rec, "rounds")) {
    if (r->nrounds == MSG_MAX_ROUNDS || round_from_json(it, &r->rounds[r->nrounds])) {
      snprintf(why, len, "round %d is malformed", r->nrounds);
      return -1;
    }
    r->nrounds++;
  }
  return 0;
}

int verify_record(const cJSON *rec, decision *d, char *why, size_t len) {
  static result r;
  static job j;
  tf_err e = {0};
  if (!cJSON_GetObjectItem(rec, "status")) return -1; /* a static refusal: nothing measured */
  if (job_from_json(cJSON_GetObjectItem(rec, "job"), &j, &e)) {
    snprintf(why, len, "its job: %s", e.msg);
    return -2;
  }
  if (record_result(rec, &r, why, len)) return -2;
  if (decide(&j.decide, &r, d)) {
    snprintf(why, len, "unknown rule '%s'", j.decide.rule);
    return -2;
  }
  return 0;
}

/* One ledger line: recompute it if it is a measured generation. A line that is not a
 * record is a torn end (skipped, as resume does) when it is the last, else bad input. */
static int verify_line(const char *path, int lineno, const char *line, int last, int *checked,
                       int *bad) {
  if (!line[0]) return 0;
  cJSON *rec = cJSON_Parse(line);
  const char *type = cJSON_GetStringValue(cJSON_GetObjectItem(rec, "type"));
  if (!rec || !type) {
    cJSON_Delete(rec);
    if (last) {
      fprintf(stderr, "tunefarm verify: ledger '%s': torn last line %d skipped\n", path, lineno);
      return 0;
    }
    fprintf(stderr, "tunefarm verify: ledger '%s': line %d is not a ledger record\n", path, lineno);
    return 2;
  }
  decision d;
  char why[512] = "";
  int rc = strcmp(type, "generation") == 0 ? verify_record(rec, &d, why, sizeof why) : -1;
  if (rc == -2) {
    printf("%s:%d: cannot recompute: %s\n", path, lineno, why);
    (*bad)++;
  } else if (rc == 0) {
    const char *dec = cJSON_GetStringValue(cJSON_GetObjectItem(rec, "decision"));
    const char *reason = cJSON_GetStringValue(cJSON_GetObjectItem(rec, "reason"));
    (*checked)++;
    if (!dec || !reason || strcmp(dec, decision_names[d.kind]) || strcmp(reason, d.reason)) {
      printf("%s:%d: recorded '%s' (%s) but the rounds give '%s' (%s)\n", path, lineno,
             dec ? dec : "?", reason ? reason : "?", decision_names[d.kind], d.reason);
      (*bad)++;
    }
    decision_release(&d);
  }
  cJSON_Delete(rec);
  return 0;
}

static int verify_file(const char *path, int *checked, int *bad) {
  size_t len;
  tf_err e = {0};
  char *text = jsonio_slurp(path, "ledger", 1L << 30, &len, &e);
  if (!text) {
    fprintf(stderr, "tunefarm verify: %s\n", e.msg);
    return 2;
  }
  int lineno = 0, rc = 0;
  for (char *line = text; rc == 0 && *line; ) {
    char *nl = strchr(line, '\n');
    int last = nl == NULL;
    if (nl) *nl = '\0';
    lineno++;
    rc = verify_line(path, lineno, line, last, checked, bad);
    line = nl ? nl + 1 : line + strlen(line);
  }
  free(text);
  return rc;
}

int verify_main(int argc, char **argv) {
  if (argc < 2 || !strcmp(argv[1], "-h") || !strcmp(argv[1], "--help")) {
    FILE *f = argc < 2 ? stderr : stdout;
    fprintf(f, "usage: tunefarm verify LEDGER.jsonl...\n\n"
               "Recompute every measured decision from the rounds in its own record, with the\n"
               "rule and thresholds of the job it carries, and print any that differ.\n"
               "Exit status: 0 all agree, 1 a difference, 2 bad input.\n");
    return argc < 2 ? 2 : 0;
  }
  int checked = 0, bad = 0;
  for (int i = 1; i < argc; i++)
    if (verify_file(argv[i], &checked, &bad)) return 2;
  printf("verify: %d decisions recomputed from their rounds, %d differ\n", checked, bad);
  return bad ? 1 : 0;
}
