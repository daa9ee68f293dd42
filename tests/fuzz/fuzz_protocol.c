/* fuzz_protocol: one line of the measure child's protocol (worker/child.c's serve): parsed as
 * a message (common/jsonio.c), then read as a job (job_from_json, what the child runs) and
 * as a result (result_from_json, what the coordinator reads back from a worker), and a job
 * that reads is written out and read again, which must give the same job (a ledger record's
 * job is rerun this way). */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "common/jsonio.h"
#include "common/msg.h"
#include "tests/fuzz/fuzzutil.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  static job j, again;
  static result r;
  char *line = fuzz_text(data, size);
  tf_err e = {0};
  cJSON *msg = jsonio_parse(line, "message", &e);
  free(line);
  if (!msg) return 0;
  tf_err ej = {0}, er = {0};
  if (job_from_json(msg, &j, &ej) == 0) {
    cJSON *out = job_to_json(&j);
    if (!out || job_from_json(out, &again, &ej) != 0) abort(); /* a job we read, we write */
    cJSON *twice = job_to_json(&again);
    /* compared as text: cJSON_Compare finds inf unequal to inf (a tolerance of 1e405) */
    char *a = cJSON_PrintUnformatted(out), *b = cJSON_PrintUnformatted(twice);
    if (!a || !b || strcmp(a, b) != 0) abort();
    cJSON_free(a);
    cJSON_free(b);
    cJSON_Delete(out);
    cJSON_Delete(twice);
  }
  (void)result_from_json(msg, &r, &er);
  cJSON_Delete(msg);
  return 0;
}
