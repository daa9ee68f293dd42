/* fuzz_cache: any bytes at a cubin cache entry's name, read through cache_read (common/cache.h).
 * The property: the reader hands out a payload only where the entry file is exactly what
 * cache_put writes for that payload under that name; anything else (bytes cut, changed or made
 * up, a symbolic link, a FIFO, a folder) is a corrupt entry (2), removed unless a folder, and
 * never hangs. A breach aborts: a finding.
 *
 * The first byte picks what the rest is (bits 0-1) and the suffix (bit 2: ".names", else
 * ".cubin", whose payload must also be plausible machine code):
 *   0  the entry file's whole content;
 *   1  a payload cache_put stores, then one change to the file: the last three bytes give a
 *      position (two bytes) and a byte to XOR there, or with 0, a length to cut the file to;
 *   2  a file kind at the name: the next byte picks a symbolic link to a sealed entry of the
 *      same name elsewhere, a dangling link, a FIFO or a folder;
 *   3  the entry file's content given to cache_check alone (no I/O): accepted content must be
 *      what cache_put writes for the payload it found.
 * The seeds (tests/fuzz/corpus/cache) hold an entry cache_put wrote for a small plausible cubin,
 * its names, a simulated compile's stand-in, the same cut short, text, an empty file, an entry
 * without a trailer, one of each file kind and changes of each sort. */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common/cache.h"
#include "tests/fuzz/fuzzutil.h"

typedef struct where {
  char dir[512], other[600]; /* the cache folder; another one, for a link's target */
  char key[CACHE_KEY_HEX];
  const char *suffix;
  char path[700], target[700]; /* the entry; the same entry in other */
} where;

static void check(int ok, const char *what) {
  if (ok) return;
  fprintf(stderr, "fuzz_cache: %s\n", what);
  abort();
}

/* The file at path, whole (malloc'd); NULL when there is none. */
static unsigned char *slurp(const char *path, size_t *len) {
  FILE *f = fopen(path, "rb");
  if (!f) return NULL;
  unsigned char *buf = NULL;
  size_t cap = 0, n = 0;
  for (;;) {
    if (n == cap && !(buf = realloc(buf, cap = cap * 2 + 4096))) abort();
    size_t got = fread(buf + n, 1, cap - n, f);
    n += got;
    if (got == 0) break;
  }
  fclose(f);
  *len = n;
  return buf;
}

/* Nothing at the entry's names: each input starts from an empty folder. */
static void clear(const where *w) {
  if (unlink(w->path) != 0 && errno == EISDIR) rmdir(w->path);
  rmdir(w->path);
  unlink(w->target);
}

/* What cache_put writes for payload under w's name equals file[size]. */
static int written_as(const where *w, const void *payload, size_t len, const void *file,
                      size_t size) {
  tf_err e = {0};
  if (cache_put(w->dir, w->key, w->suffix, payload, len, &e) != 0) return 0;
  size_t n = 0;
  unsigned char *again = slurp(w->path, &n);
  int same = again && n == size && memcmp(again, file, size) == 0;
  free(again);
  return same;
}

/* Read the entry; on a hit, the file must be what cache_put writes for the payload handed out. */
static void read_raw(const where *w, const uint8_t *data, size_t size) {
  fuzz_write(w->dir, w->path + strlen(w->dir) + 1, data, size);
  void *out = NULL;
  size_t len = 0;
  char report[1024];
  int rc = cache_read(w->dir, w->key, w->suffix, &out, &len, report, sizeof report);
  check(rc == 0 || rc == 2, "a regular file at the name is neither a hit nor corrupt");
  if (rc == 2) {
    check(access(w->path, F_OK) != 0, "a corrupt file is not evicted");
    check(strstr(report, "is corrupt (") != NULL, "a corrupt entry without its report");
    return;
  }
  check(len + CACHE_TRAILER == size && memcmp(out, data, len) == 0,
        "the payload handed out is not the file's first bytes");
  check(written_as(w, out, len, data, size), "a hit on bytes cache_put does not write");
  free(out);
}

/* Store payload, change the file once, read: a hit only where nothing changed. */
static void read_changed(const where *w, const uint8_t *data, size_t size) {
  if (size < 3) return;
  size_t plen = size - 3, pos = (size_t)data[plen] << 8 | data[plen + 1];
  uint8_t flip = data[plen + 2];
  tf_err e = {0};
  if (cache_put(w->dir, w->key, w->suffix, data, plen, &e) != 0) return; /* not plausible */
  size_t fsize = plen + CACHE_TRAILER;
  int changed;
  if (flip == 0) {
    pos %= fsize + 1;
    check(truncate(w->path, (off_t)pos) == 0, "cannot cut the entry");
    changed = pos != fsize;
  } else {
    pos %= fsize;
    FILE *f = fopen(w->path, "r+b");
    check(f && fseek(f, (long)pos, SEEK_SET) == 0, "cannot open the entry");
    int c = fgetc(f);
    check(c != EOF && fseek(f, (long)pos, SEEK_SET) == 0 && fputc(c ^ flip, f) != EOF &&
              fclose(f) == 0,
          "cannot change the entry");
    changed = 1;
  }
  void *out = NULL;
  size_t len = 0;
  int rc = cache_read(w->dir, w->key, w->suffix, &out, &len, NULL, 0);
  if (changed) {
    check(rc == 2, "a changed entry is not corrupt");
    return;
  }
  check(rc == 0 && len == plen && memcmp(out, data, plen) == 0, "a whole entry is not a hit");
  free(out);
}

/* A file kind at the name: never a hit, never a wait; gone afterwards unless a folder. */
static void read_kind(const where *w, const uint8_t *data, size_t size) {
  if (size < 1) return;
  int kind = data[0] % 4;
  tf_err e = {0};
  if (kind == 0 && cache_put(w->other, w->key, w->suffix, data + 1, size - 1, &e) != 0)
    fuzz_write(w->other, w->target + strlen(w->other) + 1, data + 1, size - 1);
  int made = kind == 0   ? symlink(w->target, w->path)
             : kind == 1 ? symlink("no/such/entry", w->path)
             : kind == 2 ? mkfifo(w->path, 0644)
                         : mkdir(w->path, 0755);
  check(made == 0, "cannot make the file kind");
  void *out = NULL;
  size_t len = 0;
  int rc = cache_read(w->dir, w->key, w->suffix, &out, &len, NULL, 0);
  check(rc == 2, "a link, a FIFO or a folder at the name is not corrupt");
  struct stat st;
  check((lstat(w->path, &st) == 0) == (kind == 3), "evicted a folder, or kept a link or a FIFO");
  check(kind != 0 || access(w->target, F_OK) == 0, "followed the link to evict");
}

/* cache_check alone: accepted bytes are what cache_put writes for the payload found. */
static void check_only(const where *w, const uint8_t *data, size_t size) {
  size_t len = 0;
  char why[128];
  if (cache_check(w->key, w->suffix, data, size, &len, why, sizeof why) != 0) {
    check(why[0] != '\0', "a refusal without a reason");
    return;
  }
  check(len + CACHE_TRAILER == size, "the payload is not the file less its trailer");
  check(written_as(w, data, len, data, size), "cache_check accepts bytes cache_put does not write");
}

static where the;

int LLVMFuzzerInitialize(int *argc, char ***argv) {
  (void)argc, (void)argv;
  snprintf(the.dir, sizeof the.dir, "%s", fuzz_dir());
  snprintf(the.other, sizeof the.other, "%s/other", the.dir);
  if (mkdir(the.other, 0700) != 0 && errno != EEXIST) abort();
  cache_hash_hex("fuzz_cache", 10, the.key);
  return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  if (size < 1) return 0;
  where *w = &the;
  w->suffix = data[0] & 4 ? ".names" : ".cubin";
  snprintf(w->path, sizeof w->path, "%s/%s%s", w->dir, w->key, w->suffix);
  snprintf(w->target, sizeof w->target, "%s/%s%s", w->other, w->key, w->suffix);
  clear(w);
  switch (data[0] & 3) {
  case 0: read_raw(w, data + 1, size - 1); break;
  case 1: read_changed(w, data + 1, size - 1); break;
  case 2: read_kind(w, data + 1, size - 1); break;
  default: check_only(w, data + 1, size - 1); break;
  }
  clear(w);
  return 0;
}
