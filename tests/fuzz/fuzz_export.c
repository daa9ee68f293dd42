/* fuzz_export: any bytes as a ledger of a scratch project holding the tree's layernorm and
 * matmul campaigns (loaded once), exported as `tunefarm export --no-cubin` exports it
 * (export_ledger_among: the ledger read, its campaign's identity matched, its best rendered). For
 * every input export accepts, the files it wrote must keep the ledger's text inert:
 *  - NAME.h and NAME.cu hold printable ASCII and newlines only, and no "??" (no trigraph);
 *  - read as C (a small lexer: comments, string and character literals), every comment
 *    closes and every literal ends on its line;
 *  - NAME.h with its comments' text removed is the same for every accepted ledger of a
 *    campaign (the ledger reaches the header only inside comments), and so is the generated
 *    part of NAME.cu with literals' and comments' text removed and numbers as 0 (the ledger
 *    reaches it only as the best configuration's knob values).
 * The first accepted ledger of each campaign sets its reference.
 *
 * After a run, a sample of the corpus exported and compiled (the header with cc and c++,
 * trigraphs read; every tenth .cu with nvcc), from the build folder:
 *   EXPORT_SAMPLE=/tmp/corpus-export ctest -R cli_export_hostile --output-on-failure */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tools/export.h"
#include "tests/fuzz/fuzzutil.h"

static const char *const tree[] = {
    "campaigns/layernorm-4096x768.json", "campaigns/matmul-1024.json",
    "templates/matmul.json", "templates/matmul.cu", "templates/layernorm.json",
    "templates/layernorm.cu", "templates/ref_matmul.cu", "templates/ref_layernorm.cu",
    "kernels/matmul_regtile.json", "kernels/matmul_regtile.cu",
    "kernels/layernorm_twowarp.json", "kernels/layernorm_twowarp.cu"};

static campaign campaigns[2];

int LLVMFuzzerInitialize(int *argc, char ***argv) {
  (void)argc;
  (void)argv;
  for (size_t i = 0; i < sizeof tree / sizeof tree[0]; i++) fuzz_copy(fuzz_dir(), tree[i]);
  setenv("TUNEFARM_ROOT", fuzz_dir(), 1);
  for (int i = 0; i < 2; i++) {
    char path[700];
    tf_err e = {0};
    snprintf(path, sizeof path, "%s/%s", fuzz_dir(), tree[i]);
    if (campaign_load(&campaigns[i], path, &e)) abort();
  }
  return 0;
}

static char *slurp(const char *path, size_t *len) {
  FILE *f = fopen(path, "rb");
  if (!f) abort(); /* export said it wrote it */
  fseek(f, 0, SEEK_END);
  long n = ftell(f);
  fseek(f, 0, SEEK_SET);
  char *t = malloc((size_t)n + 1);
  if (!t || fread(t, 1, (size_t)n, f) != (size_t)n) abort();
  fclose(f);
  t[n] = '\0';
  *len = (size_t)n;
  return t;
}

/* Printable ASCII and newlines, no "??". */
static void check_bytes(const char *t, size_t n) {
  for (size_t i = 0; i < n; i++) {
    unsigned char c = (unsigned char)t[i];
    if (c != '\n' && (c < 0x20 || c > 0x7e)) abort();
    if (c == '?' && i + 1 < n && t[i + 1] == '?') abort();
  }
}

/* The text as C with the text of comments and literals left out (their delimiters kept), and
 * with numbers as 0 when `numbers`: the code's skeleton. Aborts on a comment that does not
 * close or a literal that does not end on its line. */
static char *skeleton(const char *t, size_t n, int numbers) {
  char *out = malloc(n + 1);
  if (!out) abort();
  size_t k = 0;
  for (size_t i = 0; i < n;) {
    if (t[i] == '/' && i + 1 < n && t[i + 1] == '*') {
      const char *end = strstr(t + i + 2, "*/");
      if (!end) abort();
      memcpy(out + k, "/**/", 4), k += 4;
      i = (size_t)(end - t) + 2;
    } else if (t[i] == '/' && i + 1 < n && t[i + 1] == '/') {
      while (i < n && t[i] != '\n') i++;
      memcpy(out + k, "//", 2), k += 2;
    } else if (t[i] == '"' || t[i] == '\'') {
      char q = t[i++];
      while (i < n && t[i] != q) {
        if (t[i] == '\n') abort();
        i += t[i] == '\\' && i + 1 < n && t[i + 1] != '\n' ? 2 : 1;
      }
      if (i >= n) abort();
      i++;
      out[k++] = q, out[k++] = q;
    } else if (numbers && t[i] >= '0' && t[i] <= '9') {
      while (i < n && t[i] >= '0' && t[i] <= '9') i++;
      out[k++] = '0';
    } else {
      out[k++] = t[i++];
    }
  }
  out[k] = '\0';
  return out;
}

typedef struct reference {
  char campaign[64];
  char *h, *cu;
} reference;

/* Equal to the campaign's reference, which the first call for a campaign sets. */
static void same_as_reference(const char *campaign, char *h, char *cu) {
  static reference refs[4];
  for (int i = 0; i < 4; i++) {
    if (!refs[i].h) {
      snprintf(refs[i].campaign, sizeof refs[i].campaign, "%s", campaign);
      refs[i].h = h, refs[i].cu = cu;
      return;
    }
    if (strcmp(refs[i].campaign, campaign) == 0) {
      if (strcmp(refs[i].h, h) != 0 || strcmp(refs[i].cu, cu) != 0) abort();
      free(h), free(cu);
      return;
    }
  }
  abort(); /* more campaigns than the scratch project holds */
}

/* The campaign export loaded: the ledger header's, read back from the header's comment. */
static void campaign_of(const char *h, char *out, size_t len) {
  const char *p = strstr(h, "Tuned by campaign '");
  if (!p) abort();
  p += strlen("Tuned by campaign '");
  size_t k = strcspn(p, "'");
  snprintf(out, len, "%.*s", (int)k, p);
}

static void check_export(const char *dir) {
  char path[700], campaign[64];
  size_t hn, cn;
  snprintf(path, sizeof path, "%s/tf_f.h", dir);
  char *h = slurp(path, &hn);
  snprintf(path, sizeof path, "%s/tf_f.cu", dir);
  char *cu = slurp(path, &cn);
  check_bytes(h, hn);
  check_bytes(cu, cn);
  const char *gen = strstr(cu, "\n// ---- the exported configuration ----\n");
  if (!gen) abort();
  campaign_of(h, campaign, sizeof campaign);
  same_as_reference(campaign, skeleton(h, hn, 0), skeleton(gen, cn - (size_t)(gen - cu), 1));
  free(h);
  free(cu);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  static char ledger[600], out[600];
  static FILE *devnull;
  if (!ledger[0]) {
    snprintf(ledger, sizeof ledger, "%s/l.jsonl", fuzz_dir());
    snprintf(out, sizeof out, "%s/out", fuzz_dir());
    devnull = fopen("/dev/null", "w");
    if (!devnull) abort();
  }
  fuzz_write(fuzz_dir(), "l.jsonl", data, size);
  export_opts o = {.dir = out, .name = "tf_f", .input = ledger, .no_cubin = 1,
                   .out = devnull, .notes = devnull};
  tf_err e = {0};
  const campaign *cs[2] = {&campaigns[0], &campaigns[1]};
  if (export_ledger_among(&o, cs, 2, &e) == 0) check_export(out);
  return 0;
}
