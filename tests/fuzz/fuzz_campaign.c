/* fuzz_campaign: any bytes as campaigns/f.json of a scratch project holding the tree's
 * templates and committed kernels, loaded as `check` and `run` load it (campaign_load: the
 * campaign, its template and control kernel, every configuration it names checked against
 * the constraints and launched). */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include "common/campaign.h"
#include "tests/fuzz/fuzzutil.h"

static const char *const tree[] = {
    "templates/matmul.json", "templates/matmul.cu", "templates/layernorm.json",
    "templates/layernorm.cu", "templates/chain.json", "templates/chain.cu",
    "templates/faulty.json", "templates/faulty.cu", "templates/ref_matmul.cu",
    "templates/ref_layernorm.cu", "templates/ref_scale2.cu", "kernels/matmul_regtile.json",
    "kernels/matmul_regtile.cu", "kernels/matmul_pipelined.json", "kernels/matmul_pipelined.cu",
    "kernels/layernorm_row.json", "kernels/layernorm_row.cu", "kernels/layernorm_twowarp.json",
    "kernels/layernorm_twowarp.cu"};

int LLVMFuzzerInitialize(int *argc, char ***argv) {
  (void)argc;
  (void)argv;
  for (size_t i = 0; i < sizeof tree / sizeof tree[0]; i++) fuzz_copy(fuzz_dir(), tree[i]);
  setenv("TUNEFARM_ROOT", fuzz_dir(), 1);
  return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  static campaign c;
  static char path[600];
  if (!path[0]) snprintf(path, sizeof path, "%s/campaigns/f.json", fuzz_dir());
  fuzz_write(fuzz_dir(), "campaigns/f.json", data, size);
  tf_err e = {0};
  if (campaign_load(&c, path, &e) == 0) campaign_release(&c);
  return 0;
}
