/* Unit tests of common/cache.c: the hash, the directory resolution, atomic entries, sealed
 * entries and what a reader does with anything else at an entry's name. */
#define _GNU_SOURCE /* unshare, CLONE_NEWNS */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>

#include "common/cache.h"
#include "tests/unit/testutil.h"

/* ---------------------------------------------------------------- scratch directories */

static int setup_tmp(void **state) {
  char *dir = strdup("/tmp/tf-test-cache-XXXXXX");
  if (!dir || !mkdtemp(dir)) return -1;
  *state = dir;
  return 0;
}

static int teardown_tmp(void **state) {
  rm_rf(*state);
  free(*state);
  return 0;
}

static int is_dir(const char *path) {
  struct stat st;
  return stat(path, &st) == 0 && S_ISDIR(st.st_mode);
}

static int count_entries(const char *dir) {
  DIR *d = opendir(dir);
  assert_non_null(d);
  int n = 0;
  struct dirent *ent;
  while ((ent = readdir(d)))
    if (strcmp(ent->d_name, ".") && strcmp(ent->d_name, "..")) n++;
  closedir(d);
  return n;
}

/* A plausible cubin of len bytes (at least 128): a 64-bit little-endian ELF header for EM_CUDA
 * whose one section header follows it, then arbitrary bytes. */
static void tiny_cubin(unsigned char *b, size_t len) {
  assert_true(len >= 128);
  for (size_t i = 0; i < len; i++) b[i] = (unsigned char)(i * 7 + 3);
  memset(b, 0, 128);
  memcpy(b, "\177ELF\2\1\1\101", 8); /* class 64, LSB, version 1, OS ABI CUDA */
  b[16] = 2;                            /* e_type: executable */
  b[18] = 190;                          /* e_machine: EM_CUDA */
  b[20] = 1;                            /* e_version */
  b[40] = 64;                           /* e_shoff */
  b[52] = 64;                           /* e_ehsize */
  b[58] = 64;                           /* e_shentsize */
  b[60] = 1;                            /* e_shnum */
}

static void entry_name(char *buf, size_t len, const char *dir, const char *key, const char *sfx) {
  snprintf(buf, len, "%s/%s%s", dir, key, sfx);
}

static off_t file_size(const char *path) {
  struct stat st;
  assert_int_equal(lstat(path, &st), 0);
  return st.st_size;
}

static int exists(const char *path) {
  struct stat st;
  return lstat(path, &st) == 0;
}

/* cache_get with stderr captured into out (NUL-terminated). */
static int get_quoting_stderr(const char *dir, const char *key, const char *sfx, char *out,
                              size_t len) {
  char log[] = "/tmp/tf-test-cache-err-XXXXXX";
  int fd = mkstemp(log);
  assert_true(fd >= 0);
  fflush(stderr);
  int saved = dup(2);
  dup2(fd, 2);
  void *data = NULL;
  size_t n = 0;
  alarm(20); /* a reader that waits on a FIFO ends the test instead of hanging it */
  int rc = cache_get(dir, key, sfx, &data, &n);
  alarm(0);
  fflush(stderr);
  dup2(saved, 2);
  close(saved);
  ssize_t got = pread(fd, out, len - 1, 0);
  out[got > 0 ? got : 0] = '\0';
  close(fd);
  unlink(log);
  if (rc == 0) free(data);
  return rc;
}

/* The entry at key/sfx is a miss, reported as corrupt for `why` in one line on stderr, and gone
 * (evicted) or left. */
static void expect_corrupt(const char *dir, const char *key, const char *sfx, const char *why,
                           int evicted) {
  char err[8192], path[4096], want[4200];
  entry_name(path, sizeof path, dir, key, sfx);
  assert_int_equal(get_quoting_stderr(dir, key, sfx, err, sizeof err), 1);
  snprintf(want, sizeof want, "cache: entry '%s' is corrupt (", path);
  if (strncmp(err, want, strlen(want)) != 0) fail_msg("stderr: '%s'", err);
  assert_non_null(strstr(err, why));
  assert_non_null(strchr(err, '\n'));
  assert_string_equal(strchr(err, '\n'), "\n"); /* one line */
  if (evicted) {
    assert_non_null(strstr(err, "); evicted, compiling again\n"));
    assert_false(exists(path));
  } else {
    assert_non_null(strstr(err, "; not evicted ("));
    assert_true(exists(path));
  }
}

/* A whole entry of a plausible cubin at key, its payload in payload[len]. */
static void put_cubin(const char *dir, const char *key, unsigned char *payload, size_t len) {
  tiny_cubin(payload, len);
  tf_err e = {0};
  assert_int_equal(cache_put(dir, key, ".cubin", payload, len, &e), 0);
}

static void write_bytes(const char *path, const void *data, size_t len) {
  FILE *f = fopen(path, "wb");
  assert_non_null(f);
  assert_int_equal(fwrite(data, 1, len, f), len);
  assert_int_equal(fclose(f), 0);
}

/* ---------------------------------------------------------------- hash */

static void cache_hash_should_match_fnv1a_128_vectors(void **state) {
  (void)state;
  char hex[CACHE_KEY_HEX];
  cache_hash_hex("", 0, hex);
  assert_string_equal(hex, "6c62272e07bb014262b821756295c58d"); /* the offset basis */
  cache_hash_hex("a", 1, hex);
  assert_string_equal(hex, "d228cb696f1a8caf78912b704e4a8964");
  cache_hash_hex("foobar", 6, hex);
  assert_string_equal(hex, "343e1662793c64bf6f0d3597ba446f18");
}

static void cache_key_should_be_stable(void **state) {
  (void)state;
  const void *parts[] = {"ab", "c"};
  const size_t lens[] = {2, 1};
  char k1[CACHE_KEY_HEX], k2[CACHE_KEY_HEX];
  cache_key(parts, lens, 2, k1);
  cache_key(parts, lens, 2, k2);
  assert_string_equal(k1, k2);
  /* Pinned: entries on disk outlive builds, so the key format must not drift. */
  assert_string_equal(k1, "b6ce7db35a06e7457857fa227a8bde4e");
}

static void cache_key_should_separate_parts_by_length(void **state) {
  (void)state;
  const void *ab_c[] = {"ab", "c"}, *a_bc[] = {"a", "bc"}, *abc[] = {"abc"}, *abc_[] = {"abc", ""};
  const size_t l21[] = {2, 1}, l12[] = {1, 2}, l3[] = {3}, l30[] = {3, 0};
  char k1[CACHE_KEY_HEX], k2[CACHE_KEY_HEX], k3[CACHE_KEY_HEX], k4[CACHE_KEY_HEX];
  cache_key(ab_c, l21, 2, k1);
  cache_key(a_bc, l12, 2, k2);
  cache_key(abc, l3, 1, k3);
  cache_key(abc_, l30, 2, k4);
  assert_string_not_equal(k1, k2);
  assert_string_not_equal(k1, k3);
  assert_string_not_equal(k3, k4);
  assert_string_equal(k2, "efdf187f3b77026ced2f13d8b5bb1a22");
  assert_int_equal(strlen(k1), 32);
}

/* ---------------------------------------------------------------- entries */

static void cache_should_miss_then_hit_with_the_same_bytes(void **state) {
  const char *dir = *state;
  char key[CACHE_KEY_HEX];
  cache_hash_hex("entry", 5, key);
  void *data = NULL;
  size_t len = 0;
  assert_int_equal(cache_get(dir, key, ".cubin", &data, &len), 1);

  unsigned char payload[3000];
  tiny_cubin(payload, sizeof payload);
  tf_err e = {0};
  assert_int_equal(cache_put(dir, key, ".cubin", payload, sizeof payload, &e), 0);
  assert_int_equal(cache_get(dir, key, ".cubin", &data, &len), 0);
  assert_int_equal(len, sizeof payload);
  assert_memory_equal(data, payload, sizeof payload);
  free(data);
  /* Another suffix is another entry. */
  assert_int_equal(cache_get(dir, key, ".names", &data, &len), 1);
}

static void cache_should_round_trip_an_empty_entry(void **state) {
  const char *dir = *state;
  char key[CACHE_KEY_HEX];
  cache_hash_hex("empty", 5, key);
  tf_err e = {0};
  assert_int_equal(cache_put(dir, key, ".names", "", 0, &e), 0);
  void *data = NULL;
  size_t len = 99;
  assert_int_equal(cache_get(dir, key, ".names", &data, &len), 0);
  assert_int_equal(len, 0);
  free(data);
}

static void cache_should_accept_a_second_put_of_the_same_key(void **state) {
  const char *dir = *state;
  char key[CACHE_KEY_HEX];
  cache_hash_hex("twice", 5, key);
  tf_err e = {0};
  assert_int_equal(cache_put(dir, key, ".names", "first", 5, &e), 0);
  assert_int_equal(cache_put(dir, key, ".names", "second", 6, &e), 0);
  void *data = NULL;
  size_t len = 0;
  assert_int_equal(cache_get(dir, key, ".names", &data, &len), 0);
  assert_int_equal(len, 6);
  assert_memory_equal(data, "second", 6);
  free(data);
  /* Each put used its own temporary file and renamed it away: nothing else is left. */
  assert_int_equal(count_entries(dir), 1);
}

static void cache_should_refuse_keys_that_leave_the_directory(void **state) {
  const char *dir = *state;
  void *data = NULL;
  size_t len = 0;
  assert_int_equal(cache_get(dir, "../../../../../../../etc/passwd", "", &data, &len), -1);
  tf_err e = {0};
  assert_int_equal(cache_put(dir, "not-a-key", ".cubin", "x", 1, &e), -1);
  assert_non_null(strstr(e.msg, "not-a-key"));
  char key[CACHE_KEY_HEX];
  cache_hash_hex("k", 1, key);
  assert_int_equal(cache_put(dir, key, "/../x", "x", 1, &e), -1);
}

static void cache_put_should_name_the_entry_when_it_cannot_write(void **state) {
  char missing[4096];
  snprintf(missing, sizeof missing, "%s/no/such/dir", (const char *)*state);
  char key[CACHE_KEY_HEX];
  cache_hash_hex("k", 1, key);
  tf_err e = {0};
  assert_int_equal(cache_put(missing, key, ".cubin", "x", 1, &e), -1);
  assert_int_equal(e.code, TF_EXIT_FAIL);
  assert_non_null(strstr(e.msg, missing));
}

/* ---------------------------------------------------------------- what a reader trusts */

/* An entry sealed as cache.h documents it, by hand: any payload, under any name. */
static void seal_by_hand(const char *dir, const char *key, const char *sfx, const void *payload,
                         size_t len) {
  static const char domain[] = "tunefarm cache entry";
  const void *parts[] = {domain, key, sfx, payload};
  const size_t lens[] = {sizeof domain - 1, strlen(key), strlen(sfx), len};
  char hex[CACHE_KEY_HEX], path[4096];
  cache_key(parts, lens, 4, hex);
  unsigned char *file = malloc(len + 48);
  assert_non_null(file);
  memcpy(file, payload, len);
  memcpy(file + len, "tfcache1", 8);
  for (int b = 0; b < 8; b++) file[len + 8 + b] = (unsigned char)((uint64_t)len >> (8 * b));
  memcpy(file + len + 16, hex, 32);
  entry_name(path, sizeof path, dir, key, sfx);
  write_bytes(path, file, len + 48);
  free(file);
}

static void cache_should_hit_a_whole_entry_and_say_nothing(void **state) {
  const char *dir = *state;
  char key[CACHE_KEY_HEX], err[4096];
  cache_hash_hex("whole", 5, key);
  unsigned char payload[500];
  put_cubin(dir, key, payload, sizeof payload);
  assert_int_equal(get_quoting_stderr(dir, key, ".cubin", err, sizeof err), 0);
  assert_string_equal(err, "");
  void *data = NULL;
  size_t len = 0;
  assert_int_equal(cache_get(dir, key, ".cubin", &data, &len), 0);
  assert_int_equal(len, sizeof payload);
  assert_memory_equal(data, payload, sizeof payload);
  free(data);
}

static void cache_should_evict_a_truncated_entry(void **state) {
  const char *dir = *state;
  char key[CACHE_KEY_HEX], path[4096];
  cache_hash_hex("truncated", 9, key);
  entry_name(path, sizeof path, dir, key, ".cubin");
  unsigned char payload[3000];
  put_cubin(dir, key, payload, sizeof payload);
  assert_int_equal(truncate(path, file_size(path) - 1), 0); /* the trailer's last digit */
  expect_corrupt(dir, key, ".cubin", "cut short", 1);
  put_cubin(dir, key, payload, sizeof payload);
  assert_int_equal(truncate(path, 1000), 0); /* a cubin cut short, no trailer left */
  expect_corrupt(dir, key, ".cubin", "cut short", 1);
  put_cubin(dir, key, payload, sizeof payload);
  assert_int_equal(truncate(path, 20), 0); /* shorter than a trailer */
  expect_corrupt(dir, key, ".cubin", "shorter than its trailer", 1);
}

static void cache_should_evict_a_text_file(void **state) {
  const char *dir = *state;
  char key[CACHE_KEY_HEX], path[4096];
  cache_hash_hex("text", 4, key);
  entry_name(path, sizeof path, dir, key, ".cubin");
  const char text[] = "this is a text file someone put where a cubin belongs, not a cubin\n";
  write_bytes(path, text, sizeof text - 1);
  expect_corrupt(dir, key, ".cubin", "no trailer", 1);
}

static void cache_should_evict_an_empty_file(void **state) {
  const char *dir = *state;
  char key[CACHE_KEY_HEX], path[4096];
  cache_hash_hex("empty file", 10, key);
  entry_name(path, sizeof path, dir, key, ".names");
  write_bytes(path, "", 0);
  expect_corrupt(dir, key, ".names", "empty", 1);
}

static void cache_should_evict_an_entry_without_a_seal(void **state) {
  /* As tunefarm wrote entries before they were sealed: a whole cubin, nothing after it. */
  const char *dir = *state;
  char key[CACHE_KEY_HEX], path[4096];
  cache_hash_hex("unsealed", 8, key);
  entry_name(path, sizeof path, dir, key, ".cubin");
  unsigned char cubin[400];
  tiny_cubin(cubin, sizeof cubin);
  write_bytes(path, cubin, sizeof cubin);
  expect_corrupt(dir, key, ".cubin", "no trailer", 1);
}

static void cache_should_evict_a_symbolic_link_not_what_it_points_to(void **state) {
  const char *dir = *state;
  char key[CACHE_KEY_HEX], path[4096], other[4096], target[4200];
  cache_hash_hex("link", 4, key);
  entry_name(path, sizeof path, dir, key, ".cubin");
  /* Even a link to a whole entry of the same key is refused: a link can point anywhere. */
  snprintf(other, sizeof other, "%s/elsewhere", dir);
  assert_int_equal(mkdir(other, 0700), 0);
  unsigned char payload[300];
  put_cubin(other, key, payload, sizeof payload);
  entry_name(target, sizeof target, other, key, ".cubin");
  assert_int_equal(symlink(target, path), 0);
  expect_corrupt(dir, key, ".cubin", "a symbolic link", 1);
  assert_true(exists(target));
  assert_int_equal(symlink("/etc/passwd", path), 0);
  expect_corrupt(dir, key, ".cubin", "a symbolic link", 1);
  assert_true(exists("/etc/passwd"));
  assert_int_equal(symlink("no/such/file", path), 0); /* dangling */
  expect_corrupt(dir, key, ".cubin", "a symbolic link", 1);
}

static void cache_should_evict_a_fifo_without_waiting(void **state) {
  const char *dir = *state;
  char key[CACHE_KEY_HEX], path[4096];
  cache_hash_hex("fifo", 4, key);
  entry_name(path, sizeof path, dir, key, ".cubin");
  assert_int_equal(mkfifo(path, 0644), 0);
  expect_corrupt(dir, key, ".cubin", "a FIFO", 1); /* get_quoting_stderr's alarm: no hang */
}

static void cache_should_leave_a_folder_and_miss(void **state) {
  const char *dir = *state;
  char key[CACHE_KEY_HEX], path[4096];
  cache_hash_hex("folder", 6, key);
  entry_name(path, sizeof path, dir, key, ".cubin");
  assert_int_equal(mkdir(path, 0700), 0);
  expect_corrupt(dir, key, ".cubin", "a folder", 0);
  unsigned char payload[200];
  tiny_cubin(payload, sizeof payload);
  tf_err e = {0};
  assert_int_equal(cache_put(dir, key, ".cubin", payload, sizeof payload, &e), -1);
  assert_non_null(strstr(e.msg, "rename failed"));
}

static void cache_should_evict_an_entry_whose_seal_does_not_match(void **state) {
  const char *dir = *state;
  char key[CACHE_KEY_HEX], other[CACHE_KEY_HEX], path[4096], moved[4096];
  cache_hash_hex("seal", 4, key);
  cache_hash_hex("other", 5, other);
  entry_name(path, sizeof path, dir, key, ".cubin");
  unsigned char payload[1000];
  /* a payload byte past the ELF header; the seal's last digit */
  const off_t flips[] = {500, sizeof payload + CACHE_TRAILER - 1};
  for (int i = 0; i < 2; i++) {
    put_cubin(dir, key, payload, sizeof payload);
    int fd = open(path, O_RDWR);
    assert_true(fd >= 0);
    unsigned char c = 0;
    assert_int_equal(pread(fd, &c, 1, flips[i]), 1);
    c ^= 1;
    assert_int_equal(pwrite(fd, &c, 1, flips[i]), 1);
    close(fd);
    expect_corrupt(dir, key, ".cubin", "seal does not match", 1);
  }
  /* A whole entry of another key (or suffix) under this name: sealed for its own name only. */
  put_cubin(dir, other, payload, sizeof payload);
  entry_name(moved, sizeof moved, dir, other, ".cubin");
  assert_int_equal(rename(moved, path), 0);
  expect_corrupt(dir, key, ".cubin", "seal does not match", 1);
  tf_err e = {0};
  assert_int_equal(cache_put(dir, key, ".names", "a\n", 2, &e), 0);
  entry_name(moved, sizeof moved, dir, key, ".names");
  entry_name(path, sizeof path, dir, key, ".refused");
  assert_int_equal(rename(moved, path), 0);
  expect_corrupt(dir, key, ".refused", "seal does not match", 1);
}

static void cache_should_evict_an_entry_larger_than_any(void **state) {
  const char *dir = *state;
  char key[CACHE_KEY_HEX], path[4096];
  cache_hash_hex("huge", 4, key);
  entry_name(path, sizeof path, dir, key, ".cubin");
  write_bytes(path, "x", 1);
  assert_int_equal(truncate(path, 300L * 1024 * 1024), 0); /* sparse: no blocks written */
  expect_corrupt(dir, key, ".cubin", "larger than any entry", 1);
}

static void cache_should_evict_a_sealed_cubin_that_is_no_cuda_elf_image(void **state) {
  const char *dir = *state;
  char key[CACHE_KEY_HEX];
  cache_hash_hex("not elf", 7, key);
  const char text[] = "sealed, but text";
  seal_by_hand(dir, key, ".cubin", text, sizeof text - 1);
  expect_corrupt(dir, key, ".cubin", "not a CUDA ELF image", 1);
  seal_by_hand(dir, key, ".names", text, sizeof text - 1); /* other suffixes hold any bytes */
  void *data = NULL;
  size_t len = 0;
  assert_int_equal(cache_get(dir, key, ".names", &data, &len), 0);
  free(data);

  unsigned char elf[256];
  tiny_cubin(elf, sizeof elf);
  elf[18] = 62; /* EM_X86_64 */
  seal_by_hand(dir, key, ".cubin", elf, sizeof elf);
  expect_corrupt(dir, key, ".cubin", "another machine", 1);
  tiny_cubin(elf, sizeof elf);
  elf[4] = 1; /* ELFCLASS32 */
  seal_by_hand(dir, key, ".cubin", elf, sizeof elf);
  expect_corrupt(dir, key, ".cubin", "64-bit", 1);
  tiny_cubin(elf, sizeof elf);
  elf[40] = 200; /* the section headers run past the end */
  seal_by_hand(dir, key, ".cubin", elf, sizeof elf);
  expect_corrupt(dir, key, ".cubin", "do not fit", 1);
  tiny_cubin(elf, sizeof elf);
  elf[60] = 0xff, elf[61] = 0xff; /* 65535 section headers */
  seal_by_hand(dir, key, ".cubin", elf, sizeof elf);
  expect_corrupt(dir, key, ".cubin", "do not fit", 1);
  tiny_cubin(elf, sizeof elf);
  seal_by_hand(dir, key, ".cubin", elf, 63); /* shorter than an ELF header */
  expect_corrupt(dir, key, ".cubin", "not a CUDA ELF image", 1);
}

static void cache_should_keep_a_simulated_stand_in_for_its_key_only(void **state) {
  const char *dir = *state;
  char key[CACHE_KEY_HEX], other[CACHE_KEY_HEX], text[128];
  cache_hash_hex("simulated", 9, key);
  cache_hash_hex("another program", 15, other);
  int n = snprintf(text, sizeof text, "%s%s\n", CACHE_SIM_CUBIN, key);
  tf_err e = {0};
  assert_int_equal(cache_put(dir, key, ".cubin", text, (size_t)n, &e), 0);
  void *data = NULL;
  size_t len = 0;
  assert_int_equal(cache_get(dir, key, ".cubin", &data, &len), 0);
  assert_int_equal(len, (size_t)n);
  assert_memory_equal(data, text, len);
  free(data);
  /* The stand-in of another program is no cubin of this one. */
  assert_int_equal(cache_put(dir, other, ".cubin", text, (size_t)n, &e), -1);
  seal_by_hand(dir, other, ".cubin", text, (size_t)n);
  expect_corrupt(dir, other, ".cubin", "not a CUDA ELF image", 1);
}

static void cache_put_should_refuse_a_cubin_that_is_no_cuda_elf_image(void **state) {
  const char *dir = *state;
  char key[CACHE_KEY_HEX];
  cache_hash_hex("put text", 8, key);
  tf_err e = {0};
  assert_int_equal(cache_put(dir, key, ".cubin", "not a cubin", 11, &e), -1);
  assert_non_null(strstr(e.msg, "not a CUDA ELF image"));
  assert_non_null(strstr(e.msg, key));
  assert_int_equal(count_entries(dir), 0); /* no temporary file left */
}

/* A read-only mount of dir in a mount namespace of this process (root), else dir made
 * read-only by its mode (other users); 0, or -1 where neither stops writes. */
static int make_read_only(const char *dir) {
  if (geteuid() == 0) {
    if (unshare(CLONE_NEWNS) != 0 || mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) != 0 ||
        mount(dir, dir, NULL, MS_BIND, NULL) != 0 ||
        mount(NULL, dir, NULL, MS_REMOUNT | MS_BIND | MS_RDONLY, NULL) != 0)
      return -1;
  } else if (chmod(dir, 0555) != 0) {
    return -1;
  }
  return access(dir, W_OK) == 0 ? -1 : 0;
}

/* The read-only checks, in a child (its mount namespace dies with it): how many failed. */
static int read_only_child(const char *dir, const char *key, const unsigned char *payload,
                           size_t plen, const char *bad) {
  if (make_read_only(dir) != 0) return 77;
  int failed = 0;
  char got[4096];
  tf_err e = {0};
  setenv("TUNEFARM_CACHE", dir, 1);
  failed += cache_dir(got, sizeof got, &e) != 0 || strcmp(got, dir) != 0;
  void *data = NULL;
  size_t len = 0;
  failed += cache_get(dir, key, ".cubin", &data, &len) != 0 || len != plen ||
            memcmp(data, payload, plen) != 0;
  free(data);
  char report[8192];
  failed += cache_read(dir, bad, ".cubin", &data, &len, report, sizeof report) != 2 ||
            !strstr(report, "not evicted (");
  failed += cache_put(dir, bad, ".cubin", payload, plen, &e) != -1 || !strstr(e.msg, bad);
  if (failed)
    fprintf(stderr, "read-only cache: %d checks failed; last error '%s'\n", failed, e.msg);
  return failed;
}

static void cache_should_serve_a_read_only_directory(void **state) {
  const char *dir = *state;
  char key[CACHE_KEY_HEX], bad[CACHE_KEY_HEX], path[4096];
  cache_hash_hex("read-only", 9, key);
  cache_hash_hex("read-only, text", 15, bad);
  unsigned char payload[700];
  put_cubin(dir, key, payload, sizeof payload);
  entry_name(path, sizeof path, dir, bad, ".cubin");
  write_bytes(path, "text", 4);
  fflush(stderr);
  pid_t pid = fork();
  assert_true(pid >= 0);
  if (pid == 0) _exit(read_only_child(dir, key, payload, sizeof payload, bad));
  int status = 0;
  assert_int_equal(waitpid(pid, &status, 0), pid);
  chmod(dir, 0700);
  assert_true(WIFEXITED(status));
  if (WEXITSTATUS(status) == 77) skip(); /* no mount namespace and root: nothing stops writes */
  assert_int_equal(WEXITSTATUS(status), 0);
  assert_true(exists(path)); /* the corrupt entry a read-only cache could not remove */
}

static void cache_read_should_report_without_printing(void **state) {
  const char *dir = *state;
  char key[CACHE_KEY_HEX], path[4096], report[8192];
  cache_hash_hex("report", 6, key);
  entry_name(path, sizeof path, dir, key, ".names");
  write_bytes(path, "no seal here, a line of text that is longer than a trailer\n", 59);
  fflush(stderr);
  int saved = dup(2), fd = open("/dev/null", O_WRONLY);
  dup2(fd, 2);
  void *data = NULL;
  size_t len = 0;
  int rc = cache_read(dir, key, ".names", &data, &len, report, sizeof report);
  dup2(saved, 2);
  close(saved);
  close(fd);
  assert_int_equal(rc, 2);
  char want[8192];
  snprintf(want, sizeof want,
           "entry '%s' is corrupt (no trailer: cut short, from an older tunefarm, or not "
           "written by the cache); evicted",
           path);
  assert_string_equal(report, want);
  assert_int_equal(cache_read(dir, key, ".names", &data, &len, report, sizeof report), 1);
  assert_string_equal(report, "");
}

static void cache_put_should_seal_what_cache_check_reads_back(void **state) {
  const char *dir = *state;
  char key[CACHE_KEY_HEX], path[4096], why[128];
  cache_hash_hex("layout", 6, key);
  entry_name(path, sizeof path, dir, key, ".names");
  tf_err e = {0};
  assert_int_equal(cache_put(dir, key, ".names", "abc\n", 4, &e), 0);
  assert_int_equal(file_size(path), 4 + CACHE_TRAILER);
  unsigned char file[4 + CACHE_TRAILER];
  FILE *f = fopen(path, "rb");
  assert_non_null(f);
  assert_int_equal(fread(file, 1, sizeof file, f), sizeof file);
  fclose(f);
  assert_memory_equal(file, "abc\ntfcache1\4\0\0\0\0\0\0\0", 20);
  size_t n = 0;
  assert_int_equal(cache_check(key, ".names", file, sizeof file, &n, why, sizeof why), 0);
  assert_int_equal(n, 4);
  assert_int_equal(cache_check(key, ".cubin", file, sizeof file, &n, why, sizeof why), -1);
  assert_string_equal(why, "its seal does not match its bytes and name");
  file[12] = 5; /* the length */
  assert_int_equal(cache_check(key, ".names", file, sizeof file, &n, why, sizeof why), -1);
  assert_non_null(strstr(why, "another length"));
}

/* ---------------------------------------------------------------- directory */

static void cache_dir_should_prefer_tunefarm_cache_then_xdg_then_home(void **state) {
  const char *tmp = *state;
  char want[4096], got[4096];
  tf_err e = {0};

  snprintf(want, sizeof want, "%s/explicit/a/b", tmp);
  setenv("TUNEFARM_CACHE", want, 1);
  char xdg[4096];
  snprintf(xdg, sizeof xdg, "%s/xdg", tmp);
  setenv("XDG_CACHE_HOME", xdg, 1);
  assert_int_equal(cache_dir(got, sizeof got, &e), 0);
  assert_string_equal(got, want);
  assert_true(is_dir(want)); /* created with its parents */

  unsetenv("TUNEFARM_CACHE");
  snprintf(want, sizeof want, "%s/xdg/tunefarm", tmp);
  assert_int_equal(cache_dir(got, sizeof got, &e), 0);
  assert_string_equal(got, want);
  assert_true(is_dir(want));

  char home[4096];
  snprintf(home, sizeof home, "%s/home", tmp);
  setenv("HOME", home, 1);
  setenv("XDG_CACHE_HOME", "relative/ignored", 1); /* XDG says relative paths are invalid */
  snprintf(want, sizeof want, "%s/home/.cache/tunefarm", tmp);
  assert_int_equal(cache_dir(got, sizeof got, &e), 0);
  assert_string_equal(got, want);
  assert_true(is_dir(want));

  unsetenv("XDG_CACHE_HOME");
  setenv("TUNEFARM_CACHE", "", 1); /* empty counts as unset */
  assert_int_equal(cache_dir(got, sizeof got, &e), 0);
  assert_string_equal(got, want);
}

static void cache_dir_should_name_a_directory_it_cannot_create(void **state) {
  char file[4096], below[4200], got[4200];
  snprintf(file, sizeof file, "%s/plain-file", (const char *)*state);
  FILE *f = fopen(file, "w");
  assert_non_null(f);
  fclose(f);
  /* A regular file in the way stops even root, unlike permission bits. */
  snprintf(below, sizeof below, "%s/sub", file);
  setenv("TUNEFARM_CACHE", below, 1);
  tf_err e = {0};
  assert_int_equal(cache_dir(got, sizeof got, &e), -1);
  assert_int_equal(e.code, TF_EXIT_FAIL);
  assert_non_null(strstr(e.msg, "cannot create"));
  assert_non_null(strstr(e.msg, below));

  setenv("TUNEFARM_CACHE", file, 1);
  assert_int_equal(cache_dir(got, sizeof got, &e), -1);
  assert_non_null(strstr(e.msg, "not a directory"));
  unsetenv("TUNEFARM_CACHE");
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(cache_hash_should_match_fnv1a_128_vectors),
      cmocka_unit_test(cache_key_should_be_stable),
      cmocka_unit_test(cache_key_should_separate_parts_by_length),
      cmocka_unit_test_setup_teardown(cache_should_miss_then_hit_with_the_same_bytes, setup_tmp,
                                      teardown_tmp),
      cmocka_unit_test_setup_teardown(cache_should_round_trip_an_empty_entry, setup_tmp,
                                      teardown_tmp),
      cmocka_unit_test_setup_teardown(cache_should_accept_a_second_put_of_the_same_key, setup_tmp,
                                      teardown_tmp),
      cmocka_unit_test_setup_teardown(cache_should_refuse_keys_that_leave_the_directory,
                                      setup_tmp, teardown_tmp),
      cmocka_unit_test_setup_teardown(cache_put_should_name_the_entry_when_it_cannot_write,
                                      setup_tmp, teardown_tmp),
      cmocka_unit_test_setup_teardown(cache_should_hit_a_whole_entry_and_say_nothing,
                                      setup_tmp, teardown_tmp),
      cmocka_unit_test_setup_teardown(cache_should_evict_a_truncated_entry,
                                      setup_tmp, teardown_tmp),
      cmocka_unit_test_setup_teardown(cache_should_evict_a_text_file, setup_tmp, teardown_tmp),
      cmocka_unit_test_setup_teardown(cache_should_evict_an_empty_file, setup_tmp, teardown_tmp),
      cmocka_unit_test_setup_teardown(cache_should_evict_an_entry_without_a_seal,
                                      setup_tmp, teardown_tmp),
      cmocka_unit_test_setup_teardown(cache_should_evict_a_symbolic_link_not_what_it_points_to,
                                      setup_tmp, teardown_tmp),
      cmocka_unit_test_setup_teardown(cache_should_evict_a_fifo_without_waiting,
                                      setup_tmp, teardown_tmp),
      cmocka_unit_test_setup_teardown(cache_should_leave_a_folder_and_miss,
                                      setup_tmp, teardown_tmp),
      cmocka_unit_test_setup_teardown(cache_should_evict_an_entry_whose_seal_does_not_match,
                                      setup_tmp, teardown_tmp),
      cmocka_unit_test_setup_teardown(cache_should_evict_an_entry_larger_than_any,
                                      setup_tmp, teardown_tmp),
      cmocka_unit_test_setup_teardown(cache_should_evict_a_sealed_cubin_that_is_no_cuda_elf_image,
                                      setup_tmp, teardown_tmp),
      cmocka_unit_test_setup_teardown(cache_should_keep_a_simulated_stand_in_for_its_key_only,
                                      setup_tmp, teardown_tmp),
      cmocka_unit_test_setup_teardown(cache_put_should_refuse_a_cubin_that_is_no_cuda_elf_image,
                                      setup_tmp, teardown_tmp),
      cmocka_unit_test_setup_teardown(cache_should_serve_a_read_only_directory,
                                      setup_tmp, teardown_tmp),
      cmocka_unit_test_setup_teardown(cache_read_should_report_without_printing,
                                      setup_tmp, teardown_tmp),
      cmocka_unit_test_setup_teardown(cache_put_should_seal_what_cache_check_reads_back,
                                      setup_tmp, teardown_tmp),
      cmocka_unit_test_setup_teardown(cache_dir_should_prefer_tunefarm_cache_then_xdg_then_home,
                                      setup_tmp, teardown_tmp),
      cmocka_unit_test_setup_teardown(cache_dir_should_name_a_directory_it_cannot_create,
                                      setup_tmp, teardown_tmp),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
