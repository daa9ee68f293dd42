#include "tools/verify.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "common/decide.h"
#include "common/jsonio.h"
#include "common/msg.h"
#include "coordinator/ledger.h" /* defines: ledger_scan */

int verify_record(const record_gen *g, decision *d, char *why, size_t len) {
  tf_err e = {0};
  if (!g->measured) return -1; /* a static refusal: nothing measured */
  job *j = malloc(sizeof *j);
  if (!j) {
    snprintf(why, len, "out of memory");
    return -2;
  }
  int rc = record_job(g, j, &e);
  if (rc) snprintf(why, len, "%s", e.msg);
  if (rc == 0 && decide(&j->decide, &g->res, d)) {
    decision_release(d); /* decide fills d even when it refuses the rule */
    snprintf(why, len, "unknown rule '%s'", j->decide.rule);
    rc = -1;
  }
  /* The canary's verdict is recomputed from its own rounds; that a process had no canary yet
   * is a fact of the run, which the record states and the reason must match. */
  if (rc == 0) {
    canary_verdict cv;
    decide_canary(g->has_canary ? g->canary.threshold : 0.0, j->measure.input_sets, &g->res, &cv);
    if (g->untrusted || (g->has_canary && cv.biased)) decide_untrusted(d, &cv, g->res.child);
  }
  free(j);
  return rc ? -2 : 0;
}

/* What the files so far gave. */
typedef struct verify_tally {
  const char *path; /* the file being read */
  int checked, differ;
} verify_tally;

/* The recorded decision against the recomputed one. The record's text is printed escaped:
 * it comes from a file, and a newline in it would forge a line of this report. */
static void compare(verify_tally *t, long line, const record_gen *g, const decision *d) {
  t->checked++;
  if (g->decision == d->kind && !strcmp(g->reason, d->reason)) return;
  char rr[1024], why[1024];
  printf("%s:%ld: recorded '%s' (%s) but the rounds give '%s' (%s)\n", t->path, line,
         decision_names[g->decision], tf_escape(rr, sizeof rr, g->reason),
         decision_names[d->kind], tf_escape(why, sizeof why, d->reason));
  t->differ++;
}

/* ledger_scan's callback, past its checks of every line's shape and order: recompute each
 * measured generation. */
static int verify_line(void *ctx, long line, const record *rec, tf_err *e) {
  verify_tally *t = ctx;
  (void)e;
  if (rec->kind != RECORD_GENERATION) return 0;
  decision d;
  char why[1100] = "", esc[2048];
  int rc = verify_record(&rec->gen, &d, why, sizeof why);
  if (rc == -2) {
    printf("%s:%ld: cannot recompute: %s\n", t->path, line, tf_escape(esc, sizeof esc, why));
    t->differ++;
  } else if (rc == 0) {
    compare(t, line, &rec->gen, &d);
    decision_release(&d);
  }
  return 0;
}

/* 0 read through, 1 corrupt (said on stderr with the file and the line), 2 no file to read.
 * The ledger is read as every other reader reads it (ledger_scan): the device record first,
 * one JSON object per line, no NUL byte, no key twice, generations 1, 2, 3, ... in order,
 * nothing after the end; only a torn last line (no newline: what a kill leaves) is skipped. */
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
               "generations 1, 2, 3, ... in order, nothing after the end); a torn last line\n"
               "(one without its newline, what a kill leaves) is skipped, as resume skips it; a\n"
               "line with its newline that does not read is corruption, the last one too.\n"
               "Exit status: 0 all agree, 1 a difference or a corrupt ledger (named with its\n"
               "line), 2 a file that cannot be read.\n");
    return argc < 2 ? 2 : 0;
  }
  /* it takes no options: anything like one before "--" is a mistake, not a file */
  int dashes = 0;
  for (int i = 1; i < argc && !dashes; i++) {
    dashes = strcmp(argv[i], "--") == 0 ? i : 0;
    if (!dashes && argv[i][0] == '-' && argv[i][1]) {
      fprintf(stderr, "tunefarm verify: unknown option '%s' (see --help)\n", argv[i]);
      return 2;
    }
  }
  if (dashes && dashes == argc - 1) { /* "--" and no ledger after it */
    fprintf(stderr, "tunefarm verify: no ledger given (see --help)\n");
    return 2;
  }
  verify_tally t = {NULL, 0, 0};
  int corrupt = 0, missing = 0;
  for (int i = 1; i < argc; i++) {
    if (i == dashes) continue;
    int rc = verify_file(argv[i], &t);
    corrupt += rc == 1;
    missing += rc == 2;
  }
  printf("verify: %d decisions recomputed from their rounds, %d differ", t.checked, t.differ);
  if (corrupt) printf(", %d ledger%s corrupt", corrupt, corrupt > 1 ? "s" : "");
  printf("\n");
  return missing ? 2 : t.differ || corrupt ? 1 : 0;
}
