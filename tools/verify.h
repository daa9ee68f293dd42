/* verify: `tunefarm verify LEDGER...` recomputes every measured decision of a
 * ledger from the record alone (its rounds, correctness, status and the
 * decide options of the job it carries) with the same code the coordinator
 * used, and reports any record whose decision or reason differs. This is the
 * audit promise made executable: every keep has a reason, every reject a
 * number, and both can be checked. Exit 0 all agree, 1 a mismatch, 2 bad input. */
#ifndef TF_VERIFY_H
#define TF_VERIFY_H

#include <cjson/cJSON.h>

#include "common/decide.h"
#include "coordinator/record.h"

int verify_main(int argc, char **argv);

/* Recompute one generation record: 0 and *d filled (decision_release), -1 if it has no
 * measurement, -2 when it cannot be recomputed (why says so: its job names no known rule). */
int verify_record(const record_gen *g, decision *d, char *why, size_t len);

#endif
