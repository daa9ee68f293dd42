/* fuzz_template: any bytes as templates/t.json beside a small t.cu, loaded as a campaign
 * loads a template or a committed kernel (spec_load: knobs, constraints, launch, buffers,
 * arguments, every expression parsed and bound), and on a spec that loads, its first
 * configuration checked and launched as the enumeration and a job would. Its seeds are the
 * tree's templates and kernels renamed "t" (scripts/fuzz-seeds.sh makes them at every run)
 * and the regression inputs of tests/fuzz/corpus/template. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/spec.h"
#include "tests/fuzz/fuzzutil.h"

int LLVMFuzzerInitialize(int *argc, char ***argv) {
  (void)argc;
  (void)argv;
  static const char cu[] = "// a kernel source that includes nothing\n";
  fuzz_write(fuzz_dir(), "templates/t.cu", (const uint8_t *)cu, strlen(cu));
  return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  static spec s;
  static char path[600];
  if (!path[0]) snprintf(path, sizeof path, "%s/templates/t.json", fuzz_dir());
  fuzz_write(fuzz_dir(), "templates/t.json", data, size);
  tf_err e = {0};
  if (spec_load(&s, path, &e) != 0) return 0;
  config c = {s.nknobs, {0}};
  long long dims[SPEC_MAX_DIMS];
  for (int k = 0; k < s.nknobs; k++) c.v[k] = s.knobs[k].values[0];
  for (int d = 0; d < s.ndims; d++) dims[d] = s.dims[d].lo;
  unsigned char broken[SPEC_MAX_CONSTRAINTS];
  launch_geom g;
  char name[512];
  (void)spec_check_all(&s, dims, &c, broken, &e);
  (void)spec_launch(&s, dims, &c, &g, &e);
  (void)spec_name_expr(&s, &c, name, sizeof name);
  spec_release(&s);
  return 0;
}
