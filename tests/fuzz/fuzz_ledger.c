/* fuzz_ledger: any bytes as a ledger file, read the way every reader reads one (ledger_scan:
 * the device record first, one object per line, no repeated key, generations in order,
 * nothing after the end, a torn last line skipped, each line through the record codec), each
 * record handed to what report and bench do with it (ledger_best_add, record_rounds_median)
 * and to verify's recomputation of a measured decision (verify_record: its job, its rounds,
 * the rule). */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include "coordinator/ledger.h"
#include "coordinator/replay.h"
#include "tools/verify.h"
#include "tests/fuzz/fuzzutil.h"

static int on_record(void *ctx, long line, const record *rec, tf_err *e) {
  ledger_best *b = ctx;
  (void)e;
  (void)line;
  tf_err be = {0};
  (void)ledger_best_add(b, rec, &be); /* a search it could not have written: refused */
  if (rec->kind != RECORD_GENERATION) return 0;
  (void)record_rounds_median(&rec->gen, ARM_NEW, 0);
  decision d;
  char why[1100];
  if (verify_record(&rec->gen, &d, why, sizeof why) == 0) decision_release(&d);
  return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  static char path[600];
  if (!path[0]) snprintf(path, sizeof path, "%s/l.jsonl", fuzz_dir());
  fuzz_write(fuzz_dir(), "l.jsonl", data, size);
  static FILE *devnull;
  if (!devnull) devnull = fopen("/dev/null", "w"); /* notes of torn lines */
  ledger_best b;
  ledger_best_init(&b, NULL, path);
  tf_err e = {0};
  (void)ledger_scan(path, devnull, on_record, &b, &e);
  ledger_best_release(&b);
  return 0;
}
