/* fuzz_print: any bytes parsed as JSON by cJSON and printed by jsonio_print, which must give
 * cJSON_PrintUnformatted's text byte for byte (common/jsonio.h); and the first eight bytes as
 * a double, which numfmt_g must print as snprintf's "%.Pg" does at every precision
 * (common/numfmt.h). A difference aborts: a finding. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/jsonio.h"
#include "common/numfmt.h"
#include "tests/fuzz/fuzzutil.h"

static void same_number(double v) {
  char want[64], got[NUMFMT_MAX];
  for (int p = 1; p <= 17; p++) {
    snprintf(want, sizeof want, "%.*g", p, v);
    numfmt_g(got, v, p);
    if (strcmp(want, got) != 0) {
      fprintf(stderr, "%%.%dg of %a: printf '%s', numfmt_g '%s'\n", p, v, want, got);
      abort();
    }
  }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  if (size >= sizeof(double)) {
    double v;
    memcpy(&v, data, sizeof v);
    same_number(v);
  }
  cJSON *t = cJSON_ParseWithLength((const char *)data, size);
  if (!t) return 0;
  char *want = cJSON_PrintUnformatted(t), *got = jsonio_print(t);
  if ((want == NULL) != (got == NULL) || (want && strcmp(want, got) != 0)) {
    fprintf(stderr, "cJSON:\n%s\njsonio_print:\n%s\n", want ? want : "(null)",
            got ? got : "(null)");
    abort();
  }
  cJSON_free(want);
  free(got);
  cJSON_Delete(t);
  return 0;
}
