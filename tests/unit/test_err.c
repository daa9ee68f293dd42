/* Unit tests of common/err.c: a message is one line whatever text a user's file puts into
 * it. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <errno.h>
#include <string.h>

#include "common/err.h"

static void fail_should_escape_control_characters_of_user_text(void **state) {
  (void)state;
  tf_err e = {0};
  assert_int_equal(tf_fail(&e, TF_EXIT_INPUT, "campaign 'x': unknown key '%s'", "bud\nget\t\x1b[2J"),
                   -1);
  assert_int_equal(e.code, TF_EXIT_INPUT);
  assert_string_equal(e.msg, "campaign 'x': unknown key 'bud\\nget\\t\\x1b[2J'");
  assert_null(strchr(e.msg, '\n'));
}

static void wrap_should_escape_its_prefix_and_keep_one_line(void **state) {
  (void)state;
  tf_err e = {0};
  tf_fail(&e, TF_EXIT_INPUT, "key 'a\rb' is missing");
  tf_wrap(&e, "template '%s'", "t\n.json");
  assert_string_equal(e.msg, "template 't\\n.json': key 'a\\rb' is missing");
}

static void escape_should_keep_utf8_and_backslashes_and_be_idempotent(void **state) {
  (void)state;
  char a[64], b[64];
  tf_escape(a, sizeof a, "µs \\n \x7f");
  assert_string_equal(a, "µs \\n \\x7f");
  tf_escape(b, sizeof b, a);
  assert_string_equal(a, b);
}

static void escape_should_truncate_whole_escapes(void **state) {
  (void)state;
  char a[6];
  tf_escape(a, sizeof a, "a\ncd\t");
  assert_string_equal(a, "a\\ncd"); /* "\t" would need 2 more bytes */
  tf_escape(a, sizeof a, "abc\x01");
  assert_string_equal(a, "abc"); /* "\x01" needs 4 */
}

/* One status for every tf_err: an exit status where it is one, else 1. */
static void exit_status_should_pass_exit_statuses_and_map_the_rest_to_1(void **state) {
  (void)state;
  tf_err e = {0};
  assert_int_equal(tf_exit_status(&e), TF_EXIT_FAIL); /* failed without saying how */
  static const int pass[] = {TF_EXIT_FAIL, TF_EXIT_INPUT, TF_NO_DEVICE};
  for (int i = 0; i < 3; i++) {
    tf_fail(&e, pass[i], "x");
    assert_int_equal(tf_exit_status(&e), pass[i]);
  }
  tf_fail(&e, TF_STICKY, "x");
  assert_int_equal(tf_exit_status(&e), TF_EXIT_FAIL);
  tf_fail(&e, TF_COMPILE_REFUSED, "x");
  assert_int_equal(tf_exit_status(&e), TF_EXIT_FAIL);
}

/* A path the user named and can fix is bad input; a machine's failure is not. */
static void user_path_errno_should_tell_the_users_paths_from_the_machines_failures(void **state) {
  (void)state;
  int users[] = {ENOENT, ENOTDIR, EACCES, EROFS, ENAMETOOLONG, ELOOP};
  for (size_t i = 0; i < sizeof users / sizeof *users; i++) assert_true(user_path_errno(users[i]));
  int machines[] = {ENOSPC, EIO, ENOMEM, EDQUOT, 0};
  for (size_t i = 0; i < sizeof machines / sizeof *machines; i++)
    assert_false(user_path_errno(machines[i]));
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(fail_should_escape_control_characters_of_user_text),
      cmocka_unit_test(wrap_should_escape_its_prefix_and_keep_one_line),
      cmocka_unit_test(escape_should_keep_utf8_and_backslashes_and_be_idempotent),
      cmocka_unit_test(user_path_errno_should_tell_the_users_paths_from_the_machines_failures),
      cmocka_unit_test(escape_should_truncate_whole_escapes),
      cmocka_unit_test(exit_status_should_pass_exit_statuses_and_map_the_rest_to_1),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
