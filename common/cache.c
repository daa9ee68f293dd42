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
 * two writers of the same key simply both win with identical content.
 *
 * A reader trusts nothing it finds at an entry's name: it opens without following a link or
 * waiting on a FIFO, takes only a regular file of a size an entry can have, and checks the
 * trailer's seal and, for a cubin, the ELF header (cache_check) before handing bytes out. What
 * fails is removed (a file or a link, never what a link points to) so that the caller's
 * compile writes it again; a folder or a FIFO is left for cache_put's rename to replace. */
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

/* Largest payload we read back; cubins are a few MB at most. */
#define CACHE_MAX_ENTRY (256L * 1024 * 1024)

/* The trailer (cache.h): magic, payload length (8 bytes, little-endian), seal (32 hex digits). */
#define TRAILER_MAGIC "tfcache1"
#define TRAILER_LEN (8 + 8 + 32)

/* ELF: what a CUDA cubin's header holds (elf.h names; EM_CUDA is 190). */
#define ELF_HEADER 64
#define ELF_PHENT 56
#define ELF_SHENT 64
#define ELF_EM_CUDA 190

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

static int is_dir(const char *path) {
  struct stat st;
  return stat(path, &st) == 0 && S_ISDIR(st.st_mode);
}

/* mkdir -p: create each missing component; another rank creating it first is fine, and so is
 * a component that exists where mkdir reports something else first (a read-only mount). */
static int make_dirs(char *path, tf_err *e) {
  for (char *p = path + 1;; p++) {
    if (*p != '/' && *p != '\0') continue;
    char saved = *p;
    *p = '\0';
    int rc = mkdir(path, 0777);
    int err = errno;
    if (rc != 0 && err != EEXIST && !is_dir(path)) {
      *p = saved;
      return tf_fail(e, TF_EXIT_FAIL,
                     "cache directory '%s': cannot create it: %s (set TUNEFARM_CACHE to a "
                     "writable directory)",
                     path, strerror(err));
    }
    *p = saved;
    if (saved == '\0') return 0;
  }
}

int cache_dir(char *out, size_t len, tf_err *e) {
  if (dir_from_env(out, len, e) < 0) return -1;
  size_t n = strlen(out);
  while (n > 1 && out[n - 1] == '/') out[--n] = '\0';
  if (make_dirs(out, e) < 0) return -1;
  if (!is_dir(out))
    return tf_fail(e, TF_EXIT_FAIL, "cache directory '%s': exists but is not a directory", out);
  /* Write access is cache_put's business: a read-only cache still serves its entries. */
  if (access(out, R_OK | X_OK) != 0)
    return tf_fail(e, TF_EXIT_FAIL,
                   "cache directory '%s': not readable: %s (set TUNEFARM_CACHE to a readable "
                   "directory)",
                   out, strerror(errno));
  return 0;
}

/* ---------------------------------------------------------------- sealed entries */

static uint64_t get_le(const unsigned char *p, int bytes) {
  uint64_t v = 0;
  for (int b = bytes - 1; b >= 0; b--) v = (v << 8) | p[b];
  return v;
}

/* The seal of a payload under its entry's name (cache.h). */
static void seal(const char *key, const char *suffix, const void *data, size_t len,
                 char out[CACHE_KEY_HEX]) {
  static const char domain[] = "tunefarm cache entry";
  const void *parts[] = {domain, key, suffix, data};
  const size_t lens[] = {sizeof domain - 1, strlen(key), strlen(suffix), len};
  cache_key(parts, lens, 4, out);
}

static void make_trailer(const char *key, const char *suffix, const void *data, size_t len,
                         unsigned char out[TRAILER_LEN]) {
  char hex[CACHE_KEY_HEX];
  seal(key, suffix, data, len, hex);
  memcpy(out, TRAILER_MAGIC, 8);
  for (int b = 0; b < 8; b++) out[8 + b] = (unsigned char)((uint64_t)len >> (8 * b));
  memcpy(out + 16, hex, 32);
}

/* A table of n entries of entsize bytes at off lies within an image of len bytes. */
static int table_fits(uint64_t off, uint64_t n, uint64_t entsize, uint64_t want, size_t len) {
  if (n == 0) return 1;
  return entsize == want && off <= len && n <= (len - off) / entsize;
}

/* Plausible CUDA machine code (cache.h): 0, or -1 and why. */
static int cubin_plausible(const char *key, const unsigned char *p, size_t len, const char **why) {
  size_t sim = strlen(CACHE_SIM_CUBIN);
  if (len == sim + 33 && memcmp(p, CACHE_SIM_CUBIN, sim) == 0 &&
      memcmp(p + sim, key, 32) == 0 && p[len - 1] == '\n')
    return 0;
  *why = "not a CUDA ELF image";
  if (len < ELF_HEADER || memcmp(p, "\177ELF", 4) != 0) return -1;
  *why = "not a 64-bit little-endian ELF image";
  if (p[4] != 2 || p[5] != 1 || p[6] != 1 || get_le(p + 20, 4) != 1) return -1;
  *why = "an ELF image for another machine than CUDA";
  if (get_le(p + 18, 2) != ELF_EM_CUDA) return -1;
  *why = "an ELF header whose tables do not fit in the image";
  if (get_le(p + 52, 2) != ELF_HEADER || get_le(p + 60, 2) == 0 ||
      get_le(p + 62, 2) >= get_le(p + 60, 2) ||
      !table_fits(get_le(p + 32, 8), get_le(p + 56, 2), get_le(p + 54, 2), ELF_PHENT, len) ||
      !table_fits(get_le(p + 40, 8), get_le(p + 60, 2), get_le(p + 58, 2), ELF_SHENT, len))
    return -1;
  return 0;
}

static int check_fail(char *why, size_t whylen, const char *what) {
  if (why && whylen) snprintf(why, whylen, "%s", what);
  return -1;
}

int cache_check(const char *key, const char *suffix, const void *entry, size_t size,
                size_t *payload_len, char *why, size_t whylen) {
  const unsigned char *p = entry;
  if (size < TRAILER_LEN)
    return check_fail(why, whylen, size ? "shorter than its trailer: cut short"
                                         : "empty: cut short");
  const unsigned char *t = p + size - TRAILER_LEN;
  size_t n = size - TRAILER_LEN;
  if (memcmp(t, TRAILER_MAGIC, 8) != 0)
    return check_fail(why, whylen,
                      "no trailer: cut short, from an older tunefarm, or not written by the cache");
  if (get_le(t + 8, 8) != (uint64_t)n)
    return check_fail(why, whylen, "its trailer gives another length: cut or joined");
  char hex[CACHE_KEY_HEX];
  seal(key, suffix, p, n, hex);
  if (memcmp(t + 16, hex, 32) != 0)
    return check_fail(why, whylen, "its seal does not match its bytes and name");
  const char *bad = NULL;
  if (strcmp(suffix, ".cubin") == 0 && cubin_plausible(key, p, n, &bad) < 0)
    return check_fail(why, whylen, bad);
  *payload_len = n;
  return 0;
}

/* ---------------------------------------------------------------- reading */

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

/* Remove a corrupt entry without following it (unlink never does): anything but a folder, and
 * when a regular file was read, that very file (not one renamed into its place since). NULL,
 * or why not. */
static const char *evict(const char *path, const struct stat *opened) {
  struct stat st;
  if (lstat(path, &st) != 0) return errno == ENOENT ? NULL : strerror(errno);
  if (S_ISDIR(st.st_mode)) return "a folder is left alone";
  if (opened && (st.st_dev != opened->st_dev || st.st_ino != opened->st_ino))
    return "written again meanwhile";
  if (unlink(path) != 0 && errno != ENOENT) return strerror(errno);
  return NULL;
}

/* The corrupt entry's report (cache.h), its eviction done; returns 2. */
static int corrupt(const char *path, const struct stat *opened, const char *why, char *report,
                   size_t report_len) {
  const char *kept = evict(path, opened);
  char shown[4200];
  tf_escape(shown, sizeof shown, path);
  if (report && report_len)
    snprintf(report, report_len, "entry '%s' is corrupt (%s); %s%s%s", shown, why,
             kept ? "not evicted (" : "evicted", kept ? kept : "", kept ? ")" : "");
  return 2;
}

static const char *kind_of(mode_t m) {
  return S_ISLNK(m) ? "a symbolic link" : S_ISDIR(m) ? "a folder" : S_ISFIFO(m) ? "a FIFO"
         : S_ISSOCK(m) ? "a socket" : S_ISCHR(m) || S_ISBLK(m) ? "a device"
                                     : "not a regular file";
}

/* An entry's descriptor, or -1 with *rc set (1 miss, 2 corrupt with report, -1 error). What is
 * not a regular file is never opened (lstat first: a device's open may act); the open itself
 * never follows a link (O_NOFOLLOW) nor waits for a FIFO's writer (O_NONBLOCK), in case the
 * name changed in between. */
static int open_entry(const char *path, int *rc, char *report, size_t report_len) {
  struct stat st;
  if (lstat(path, &st) != 0) return *rc = errno == ENOENT ? 1 : -1, -1;
  if (!S_ISREG(st.st_mode))
    return *rc = corrupt(path, NULL, kind_of(st.st_mode), report, report_len), -1;
  int fd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK | O_NOCTTY);
  if (fd < 0) return *rc = errno == ENOENT ? 1 : -1, -1;
  (void)fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) & ~O_NONBLOCK);
  return fd;
}

int cache_read(const char *dir, const char *key, const char *suffix, void **data, size_t *len,
               char *report, size_t report_len) {
  char path[4096], why[128];
  if (report && report_len) report[0] = '\0';
  if (entry_path(path, sizeof path, dir, key, suffix) < 0) return -1;
  int rc = 0, fd = open_entry(path, &rc, report, report_len);
  if (fd < 0) return rc;
  struct stat st;
  unsigned char *buf = NULL;
  size_t n = 0;
  if (fstat(fd, &st) != 0) {
    rc = -1;
  } else if (!S_ISREG(st.st_mode)) { /* replaced since the lstat: whatever it is, not ours */
    rc = -1;
  } else if (st.st_size > CACHE_MAX_ENTRY + TRAILER_LEN) {
    rc = corrupt(path, &st, "larger than any entry", report, report_len);
  } else if (!(buf = malloc((size_t)st.st_size + 1)) || read_all(fd, buf, (size_t)st.st_size) < 0) {
    rc = -1;
  } else if (cache_check(key, suffix, buf, (size_t)st.st_size, &n, why, sizeof why) < 0) {
    rc = corrupt(path, &st, why, report, report_len);
  }
  close(fd);
  if (rc != 0) {
    free(buf);
    return rc;
  }
  *data = buf;
  *len = n;
  return 0;
}

int cache_get(const char *dir, const char *key, const char *suffix, void **data, size_t *len) {
  char report[4600];
  int rc = cache_read(dir, key, suffix, data, len, report, sizeof report);
  if (rc == 2) fprintf(stderr, "cache: %s, compiling again\n", report);
  return rc == 2 ? 1 : rc;
}

/* ---------------------------------------------------------------- writing */

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
  const char *bad = NULL;
  if (len > CACHE_MAX_ENTRY ||
      (strcmp(suffix, ".cubin") == 0 && cubin_plausible(key, data, len, &bad) < 0))
    return tf_fail(e, TF_EXIT_FAIL, "cache entry '%s': not stored: %s", path,
                   bad ? bad : "larger than any entry");
  unsigned char trailer[TRAILER_LEN];
  make_trailer(key, suffix, data, len, trailer);
  int fd = mkstemp(tmp);
  if (fd < 0)
    return tf_fail(e, TF_EXIT_FAIL, "cache entry '%s': cannot create: %s", tmp, strerror(errno));
  (void)fcntl(fd, F_SETFD, FD_CLOEXEC);
  (void)fchmod(fd, 0644); /* readable to every user of a shared cache, as any cubin */
  const char *step = "write";
  if (write_all(fd, data, len) < 0 || write_all(fd, trailer, sizeof trailer) < 0) goto fail;
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
