/* cache: content-addressed files under one directory (common/cache.h).
 *
 * Keys are FNV-1a 128 hashes: not cryptographic, but the inputs are our own
 * sources and options, not an adversary's, and 128 bits make an accidental
 * collision between cache entries out of the question. cache_key feeds each
 * part as an 8-byte little-endian length followed by its bytes, so part
 * boundaries are part of the hash. cache_hash_hex is plain FNV-1a over one
 * buffer, so it matches the published test vectors.
 *
 * An entry is "<dir>/<key><suffix>". cache_put writes
 * "<dir>/.<key><suffix>.<host>.<pid>.XXXXXX" (mkstemp: unique across ranks and nodes
 * sharing a directory, and across calls in one process), fsyncs it and
 * renames it over the entry, so a reader sees either nothing or a whole file;
 * two writers of the same key simply both win with identical content. */
#include "common/cache.h"

#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

__extension__ typedef unsigned __int128 u128;

/* 0x6c62272e07bb014262b821756295c58d and 2^88 + 0x13b, built from 64-bit halves. */
#define FNV128_BASIS (((u128)0x6c62272e07bb0142ULL << 64) | 0x62b821756295c58dULL)
#define FNV128_PRIME (((u128)1 << 88) | 0x13bU)

/* Largest entry we read back; cubins are a few MB at most. */
#define CACHE_MAX_ENTRY (256L * 1024 * 1024)

static u128 fnv1a(u128 h, const void *data, size_t len) {
  const unsigned char *p = data;
  for (size_t i = 0; i < len; i++) {
    h ^= p[i];
    h *= FNV128_PRIME;
  }
  return h;
}

static void to_hex(u128 h, char out[CACHE_KEY_HEX]) {
  static const char digits[] = "0123456789abcdef";
  for (int i = 31; i >= 0; i--) {
    out[i] = digits[(unsigned)(h & 0xf)];
    h >>= 4;
  }
  out[32] = '\0';
}

void cache_key(const void *const *parts, const size_t *lens, int n, char out[CACHE_KEY_HEX]) {
  u128 h = FNV128_BASIS;
  for (int i = 0; i < n; i++) {
    unsigned char prefix[8];
    uint64_t len = lens[i];
    for (int b = 0; b < 8; b++) prefix[b] = (unsigned char)(len >> (8 * b));
    h = fnv1a(h, prefix, sizeof prefix);
    h = fnv1a(h, parts[i], lens[i]);
  }
  to_hex(h, out);
}

void cache_hash_hex(const void *data, size_t len, char out[CACHE_KEY_HEX]) {
  to_hex(fnv1a(FNV128_BASIS, data, len), out);
}

/* ---------------------------------------------------------------- directory */

/* The configured directory, before creation; -1 when no variable gives one. */
static int dir_from_env(char *out, size_t len, tf_err *e) {
  const char *v = getenv("TUNEFARM_CACHE");
  int n;
  if (v && v[0]) {
    n = snprintf(out, len, "%s", v);
  } else if ((v = getenv("XDG_CACHE_HOME")) && v[0] == '/') { /* relative: ignored, as XDG says */
    n = snprintf(out, len, "%s/tunefarm", v);
  } else if ((v = getenv("HOME")) && v[0]) {
    n = snprintf(out, len, "%s/.cache/tunefarm", v);
  } else {
    return tf_fail(e, TF_EXIT_FAIL,
                   "no cache directory: set TUNEFARM_CACHE (or HOME) to a writable directory");
  }
  if (n < 0 || (size_t)n >= len)
    return tf_fail(e, TF_EXIT_FAIL, "cache directory '%s...': path too long", v);
  return 0;
}

/* mkdir -p: create each missing component; another rank creating it first is fine. */
static int make_dirs(char *path, tf_err *e) {
  for (char *p = path + 1;; p++) {
    if (*p != '/' && *p != '\0') continue;
    char saved = *p;
    *p = '\0';
    int rc = mkdir(path, 0777);
    int err = errno;
    *p = saved;
    if (rc != 0 && err != EEXIST)
      return tf_fail(e, TF_EXIT_FAIL,
                     "cache directory '%s': cannot create it: %s (set TUNEFARM_CACHE to a "
                     "writable directory)",
                     path, strerror(err));
    if (saved == '\0') return 0;
  }
}

int cache_dir(char *out, size_t len, tf_err *e) {
  if (dir_from_env(out, len, e) < 0) return -1;
  size_t n = strlen(out);
  while (n > 1 && out[n - 1] == '/') out[--n] = '\0';
  if (make_dirs(out, e) < 0) return -1;
  struct stat st;
  if (stat(out, &st) != 0 || !S_ISDIR(st.st_mode))
    return tf_fail(e, TF_EXIT_FAIL, "cache directory '%s': exists but is not a directory", out);
  if (access(out, W_OK | X_OK) != 0)
    return tf_fail(e, TF_EXIT_FAIL,
                   "cache directory '%s': not writable: %s (set TUNEFARM_CACHE to a writable "
                   "directory)",
                   out, strerror(errno));
  return 0;
}

/* ---------------------------------------------------------------- entries */

/* Keys are 32 lower-case hex digits and suffixes hold no '/', so an entry never leaves dir. */
static int entry_path(char *buf, size_t len, const char *dir, const char *key, const char *suffix) {
  if (!dir || !key || strlen(key) != 32 || strspn(key, "0123456789abcdef") != 32) return -1;
  if (!suffix || strchr(suffix, '/')) return -1;
  int n = snprintf(buf, len, "%s/%s%s", dir, key, suffix);
  return n < 0 || (size_t)n >= len ? -1 : 0;
}

static int read_all(int fd, void *buf, size_t len) {
  size_t done = 0;
  while (done < len) {
    ssize_t got = read(fd, (char *)buf + done, len - done);
    if (got < 0 && errno == EINTR) continue;
    if (got <= 0) return -1; /* a short file means it changed under us: not a hit */
    done += (size_t)got;
  }
  return 0;
}

int cache_get(const char *dir, const char *key, const char *suffix, void **data, size_t *len) {
  char path[4096];
  if (entry_path(path, sizeof path, dir, key, suffix) < 0) return -1;
  int fd = open(path, O_RDONLY | O_CLOEXEC);
  if (fd < 0) return errno == ENOENT ? 1 : -1;
  struct stat st;
  void *buf = NULL;
  if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode) || st.st_size > CACHE_MAX_ENTRY) goto fail;
  size_t n = (size_t)st.st_size;
  buf = malloc(n ? n : 1); /* an empty entry is still a hit; malloc(0) may return NULL */
  if (!buf || read_all(fd, buf, n) < 0) goto fail;
  close(fd);
  *data = buf;
  *len = n;
  return 0;
fail:
  free(buf);
  close(fd);
  return -1;
}

static int write_all(int fd, const void *data, size_t len) {
  size_t done = 0;
  while (done < len) {
    ssize_t put = write(fd, (const char *)data + done, len - done);
    if (put < 0 && errno == EINTR) continue;
    if (put < 0) return -1;
    done += (size_t)put;
  }
  return 0;
}

/* The template of "<dir>/.<key><suffix>.<host>.<pid>.XXXXXX": mkstemp makes the name distinct
 * for every writer and every call (threads, processes, hosts sharing the folder). */
static int temp_path(char *buf, size_t len, const char *dir, const char *key, const char *suffix) {
  char host[64] = "host";
  if (gethostname(host, sizeof host) != 0) strcpy(host, "host");
  host[sizeof host - 1] = '\0';
  for (char *c = host; *c; c++)
    if (*c == '/') *c = '_';
  int w = snprintf(buf, len, "%s/.%s%s.%s.%ld.XXXXXX", dir, key, suffix, host, (long)getpid());
  return w < 0 || (size_t)w >= len ? -1 : 0;
}

int cache_put(const char *dir, const char *key, const char *suffix, const void *data, size_t len,
              tf_err *e) {
  char path[4096], tmp[4096];
  if (entry_path(path, sizeof path, dir, key, suffix) < 0 ||
      temp_path(tmp, sizeof tmp, dir, key, suffix) < 0)
    return tf_fail(e, TF_EXIT_FAIL, "cache entry '%s%s' in '%s': bad key or path too long",
                   key ? key : "(null)", suffix ? suffix : "", dir ? dir : "(null)");
  int fd = mkstemp(tmp);
  if (fd < 0)
    return tf_fail(e, TF_EXIT_FAIL, "cache entry '%s': cannot create: %s", tmp, strerror(errno));
  (void)fcntl(fd, F_SETFD, FD_CLOEXEC);
  (void)fchmod(fd, 0644); /* readable to every user of a shared cache, as any cubin */
  const char *step = "write";
  if (write_all(fd, data, len) < 0) goto fail;
  step = "fsync";
  if (fsync(fd) != 0) goto fail;
  step = "close";
  int rc = close(fd);
  fd = -1;
  if (rc != 0) goto fail;
  step = "rename";
  if (rename(tmp, path) != 0) goto fail;
  /* The directory is not fsync'd: losing a fresh entry in a crash costs one recompile. */
  return 0;
fail:;
  int err = errno;
  if (fd >= 0) close(fd);
  unlink(tmp);
  return tf_fail(e, TF_EXIT_FAIL, "cache entry '%s': %s failed: %s", path, step, strerror(err));
}
