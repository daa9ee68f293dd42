#include "coordinator/verify.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "common/decide.h"
#include "common/jsonio.h"
#include "common/msg.h"
#include "coordinator/ledger.h" /* defines: ledger_scan */

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

/* The canary's rounds and the process that measured them, when the record has them. */
static int record_canary(const cJSON *rec, result *r, char *why, size_t len) {
  const cJSON *it, *canary = cJSON_GetObjectItem(rec, "canary");
  const cJSON *child = cJSON_GetObjectItem(rec, "child");
  r->child = cJSON_IsNumber(child) && child->valuedouble >= 0 && child->valuedouble < 1e9
                 ? (int)child->valuedouble : 0;
  cJSON_ArrayForEach(it, cJSON_GetObjectItem(canary, "rounds")) {
    if (r->ncanary == MSG_MAX_CANARY || canary_round_from_json(it, &r->canary[r->ncanary])) {
      snprintf(why, len, "canary round %d is malformed", r->ncanary);
      return -1;
    }
    r->ncanary++;
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
  if (record_result(rec, &r, why, len) || record_canary(rec, &r, why, len)) return -2;
  if (decide(&j.decide, &r, d)) {
    decision_release(d); /* decide fills d even when it refuses the rule */
    snprintf(why, len, "unknown rule '%s'", j.decide.rule);
    return -2;
  }
  /* The canary's verdict is recomputed from its own rounds; that a process had no canary yet
   * is a fact of the run, which the record states and the reason must match. */
  const cJSON *canary = cJSON_GetObjectItem(rec, "canary");
  canary_verdict cv;
  const cJSON *thr = cJSON_GetObjectItem(canary, "threshold");
  decide_canary(cJSON_IsNumber(thr) ? thr->valuedouble : 0.0, j.measure.input_sets, &r, &cv);
  if (cJSON_IsTrue(cJSON_GetObjectItem(rec, "untrusted")) || (canary && cv.biased))
    decide_untrusted(d, &cv, r.child);
  return 0;
}

/* What the files so far gave. */
typedef struct verify_tally {
  const char *path; /* the file being read */
  int checked, differ;
} verify_tally;

/* The recorded decision against the recomputed one. The record's text is printed escaped:
 * it comes from a file, and a newline in it would forge a line of this report. */
static void compare(verify_tally *t, long line, const cJSON *rec, const decision *d) {
  const char *dec = cJSON_GetStringValue(cJSON_GetObjectItem(rec, "decision"));
  const char *reason = cJSON_GetStringValue(cJSON_GetObjectItem(rec, "reason"));
  t->checked++;
  if (dec && reason && !strcmp(dec, decision_names[d->kind]) && !strcmp(reason, d->reason)) return;
  char rd[64], rr[1024], why[1024];
  printf("%s:%ld: recorded '%s' (%s) but the rounds give '%s' (%s)\n", t->path, line,
         tf_escape(rd, sizeof rd, dec ? dec : "?"), tf_escape(rr, sizeof rr, reason ? reason : "?"),
         decision_names[d->kind], tf_escape(why, sizeof why, d->reason));
  t->differ++;
}

/* ledger_scan's callback, past its checks of every line's shape and order: recompute each
 * measured generation. */
static int verify_line(void *ctx, long line, const cJSON *rec, tf_err *e) {
  verify_tally *t = ctx;
  (void)e;
  const char *type = cJSON_GetStringValue(cJSON_GetObjectItem(rec, "type"));
  if (line == 1 || strcmp(type, "generation") != 0) return 0;
  decision d;
  char why[512] = "", esc[1024];
  int rc = verify_record(rec, &d, why, sizeof why);
  if (rc == -2) {
    printf("%s:%ld: cannot recompute: %s\n", t->path, line, tf_escape(esc, sizeof esc, why));
    t->differ++;
  } else if (rc == 0) {
    compare(t, line, rec, &d);
    decision_release(&d);
  }
  return 0;
}

/* 0 read through, 1 corrupt (said on stderr with the file and the line), 2 no file to read.
 * The ledger is read as every other reader reads it (ledger_scan): the device record first,
 * one JSON object per line, no NUL byte, no key twice, generations 1, 2, 3, ... in order,
 * nothing after the end; only a torn last line, which a kill leaves, is skipped. */
static int verify_file(const char *path, verify_tally *t) {
  struct stat st;
  int found = stat(path, &st) == 0;
  if (!found || S_ISDIR(st.st_mode)) {
    fprintf(stderr, "tunefarm verify: ledger '%s': %s\n", path,
            found ? "a folder, not a ledger file" : strerror(errno));
    return 2;
  }
  tf_err e = {0};
  t->path = path;
  if (ledger_scan(path, stderr, verify_line, t, &e) == 0) return 0;
  fprintf(stderr, "tunefarm verify: %s\n", e.msg);
  return 1;
}

int verify_main(int argc, char **argv) {
  if (argc < 2 || !strcmp(argv[1], "-h") || !strcmp(argv[1], "--help")) {
    FILE *f = argc < 2 ? stderr : stdout;
    fprintf(f, "usage: tunefarm verify LEDGER.jsonl...\n\n"
               "Recompute every measured decision from the rounds in its own record, with the\n"
               "rule and thresholds of the job it carries, and print any that differ. Every\n"
               "ledger is first checked as strictly as `run` reads it (the device record first,\n"
               "generations 1, 2, 3, ... in order, nothing after the end); a torn last line is\n"
               "skipped, as resume does.\n"
               "Exit status: 0 all agree, 1 a difference or a corrupt ledger (named with its\n"
               "line), 2 a file that cannot be read.\n");
    return argc < 2 ? 2 : 0;
  }
  verify_tally t = {NULL, 0, 0};
  int corrupt = 0, missing = 0;
  for (int i = 1; i < argc; i++) {
    int rc = verify_file(argv[i], &t);
    corrupt += rc == 1;
    missing += rc == 2;
  }
  printf("verify: %d decisions recomputed from their rounds, %d differ", t.checked, t.differ);
  if (corrupt) printf(", %d ledger%s corrupt", corrupt, corrupt > 1 ? "s" : "");
  printf("\n");
  return missing ? 2 : t.differ || corrupt ? 1 : 0;
}
