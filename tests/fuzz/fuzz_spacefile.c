/* fuzz_spacefile: any bytes as a recorded space, read through spacefile_load
 * (common/spacefile.h). The replay backend and `study --strategies` read space files a user
 * hands them, so the reader must refuse what it cannot read (TF_EXIT_INPUT, a message that
 * names the file) and never crash, hang or leak. What it accepts must hold together: every
 * entry once, in the order spacefile_find searches, each found again by its configuration,
 * and a passing entry's rounds within bounds.
 *
 * The input is the file's content as is: gzip (the seeds hold a space `tunefarm sweep` wrote
 * on the simulated device) or plain text, which zlib reads through. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/spacefile.h"
#include "tests/fuzz/fuzzutil.h"

static void check(int ok, const char *what) {
  if (ok) return;
  fprintf(stderr, "fuzz_spacefile: %s\n", what);
  abort();
}

static void check_accepted(const space_file *sf) {
  check(sf->n >= 0 && (sf->n == 0 || sf->e), "entries without storage");
  for (int i = 0; i < sf->n; i++) {
    const space_entry *x = &sf->e[i];
    check(spacefile_find(sf, &x->cfg) == x, "an entry is not found by its configuration");
    check(x->check >= 0 && x->check < SPACE_CHECKS, "an entry's check is out of range");
    check(x->nrounds >= 0 && x->nrounds <= SPACEFILE_MAX_ROUNDS, "rounds out of bounds");
    check(x->nrounds == 0 || (x->us && x->ref_us && x->control_us), "rounds without times");
  }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  const char *dir = fuzz_dir();
  char path[600];
  snprintf(path, sizeof path, "%s/space.tfspace", dir);
  fuzz_write(dir, "space.tfspace", data, size);
  space_file sf;
  memset(&sf, 0, sizeof sf);
  tf_err e = {0};
  if (spacefile_load(&sf, path, &e) == 0) {
    check_accepted(&sf);
  } else {
    check(e.code == TF_EXIT_INPUT, "a bad file is not bad input");
    check(strstr(e.msg, "space.tfspace") != NULL, "the message does not name the file");
  }
  spacefile_release(&sf);
  return 0;
}
