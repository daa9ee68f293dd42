#include "tests/unit/testutil.h"

// clang-format off
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>
// clang-format on
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common/spec.h"

void rm_rf(const char *path) {
  struct stat st;
  if (lstat(path, &st) != 0) return;
  if (S_ISDIR(st.st_mode)) {
    DIR *d = opendir(path);
    struct dirent *de;
    while (d && (de = readdir(d))) {
      if (!strcmp(de->d_name, ".") || !strcmp(de->d_name, "..")) continue;
      char p[2048];
      snprintf(p, sizeof p, "%s/%s", path, de->d_name);
      rm_rf(p);
    }
    if (d) closedir(d);
    rmdir(path);
  } else {
    unlink(path);
  }
}

void write_file(const char *dir, const char *name, const char *text) {
  char p[1024];
  snprintf(p, sizeof p, "%s/%s", dir, name);
  FILE *f = fopen(p, "w");
  if (!f) fail_msg("cannot write '%s'", p);
  assert_true(fputs(text, f) >= 0);
  assert_int_equal(fclose(f), 0);
}

const char *source_dir(void) {
  const char *s = getenv("TF_SOURCE_DIR");
  return s && s[0] ? s : TF_SOURCE_DIR;
}

char *subst(const char *text, const char *from, const char *to) {
  const char *at = strstr(text, from);
  if (!at) fail_msg("edit '%s' does not apply", from);
  if (strstr(at + 1, from)) fail_msg("edit '%s' applies more than once", from);
  size_t n = strlen(text) - strlen(from) + strlen(to) + 1;
  char *out = malloc(n);
  assert_non_null(out);
  snprintf(out, n, "%.*s%s%s", (int)(at - text), text, to, at + strlen(from));
  return out;
}

void load_spec(const char *rel, spec *s) {
  char path[1024];
  tf_err e = {0};
  snprintf(path, sizeof path, "%s/%s", source_dir(), rel);
  if (spec_load(s, path, &e)) fail_msg("'%s' did not load: %s", path, e.msg);
}
