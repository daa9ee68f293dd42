#include "tests/fuzz/fuzzutil.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#ifndef TF_SOURCE_DIR
#define TF_SOURCE_DIR "."
#endif

const char *fuzz_dir(void) {
  static char dir[512];
  if (dir[0]) return dir;
  const char *tmp = getenv("TMPDIR");
  snprintf(dir, sizeof dir, "%s/tf-fuzz-XXXXXX", tmp && tmp[0] ? tmp : "/tmp");
  if (!mkdtemp(dir)) abort();
  return dir;
}

/* mkdir -p of path's folders. */
static void make_parents(char *path) {
  for (char *p = path + 1; *p; p++) {
    if (*p != '/') continue;
    *p = '\0';
    if (mkdir(path, 0700) != 0 && errno != EEXIST) abort();
    *p = '/';
  }
}

void fuzz_write(const char *dir, const char *name, const uint8_t *data, size_t size) {
  char path[1024];
  snprintf(path, sizeof path, "%s/%s", dir, name);
  make_parents(path);
  FILE *f = fopen(path, "wb");
  if (!f || (size && fwrite(data, 1, size, f) != size) || fclose(f) != 0) abort();
}

void fuzz_copy(const char *dir, const char *rel) {
  char src[1024];
  snprintf(src, sizeof src, "%s/%s", TF_SOURCE_DIR, rel);
  FILE *f = fopen(src, "rb");
  if (!f) abort();
  static uint8_t buf[1 << 20];
  size_t n = fread(buf, 1, sizeof buf, f);
  fclose(f);
  fuzz_write(dir, rel, buf, n);
}

char *fuzz_text(const uint8_t *data, size_t size) {
  char *t = malloc(size + 1);
  if (!t) abort();
  if (size) memcpy(t, data, size);
  t[size] = '\0';
  return t;
}
