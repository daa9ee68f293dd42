/* fuzz_includes: any bytes as a kernel source, read for what it includes as compile_program
 * and spec_load read it before NVRTC sees it (source_check: directives behind
 * comments and joined lines, quoted names, headers of the folder and theirs in turn). */
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "common/source.h"
#include "tests/fuzz/fuzzutil.h"

int LLVMFuzzerInitialize(int *argc, char ***argv) {
  (void)argc;
  (void)argv;
  static const char h[] = "#include \"b.cuh\"\n__device__ int a;\n", b[] = "#include \"a.cuh\"\n";
  fuzz_write(fuzz_dir(), "k/a.cuh", (const uint8_t *)h, strlen(h));
  fuzz_write(fuzz_dir(), "k/b.cuh", (const uint8_t *)b, strlen(b));
  return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  static char path[600];
  if (!path[0]) snprintf(path, sizeof path, "%s/k/k.cu", fuzz_dir());
  fuzz_write(fuzz_dir(), "k/k.cu", data, size);
  tf_err e = {0};
  (void)source_check(path, &e);
  return 0;
}
