/* Unit tests of common/cache.c: the hash, the directory resolution and atomic entries. */
#include <dirent.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
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
  for (size_t i = 0; i < sizeof payload; i++) payload[i] = (unsigned char)(i * 7);
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
  assert_int_equal(cache_put(dir, key, ".cubin", "first", 5, &e), 0);
  assert_int_equal(cache_put(dir, key, ".cubin", "second", 6, &e), 0);
  void *data = NULL;
  size_t len = 0;
  assert_int_equal(cache_get(dir, key, ".cubin", &data, &len), 0);
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
      cmocka_unit_test_setup_teardown(cache_dir_should_prefer_tunefarm_cache_then_xdg_then_home,
                                      setup_tmp, teardown_tmp),
      cmocka_unit_test_setup_teardown(cache_dir_should_name_a_directory_it_cannot_create,
                                      setup_tmp, teardown_tmp),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
