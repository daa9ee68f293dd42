/* Unit tests of common/expr.c: the integer expression language of specs and campaigns. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <stdio.h>
#include <string.h>
#include <limits.h>

#include <cmocka.h>

#include "common/expr.h"

/* Names bound in every test: a knob, a problem size, zero and the extremes. */
static int lookup(void *ctx, const char *name, long long *out) {
  (void)ctx;
  static const struct {
    const char *name;
    long long v;
  } vars[] = {{"BM", 64}, {"N", 1000}, {"zero", 0}, {"big", LLONG_MAX}, {"small", LLONG_MIN}};
  for (size_t i = 0; i < sizeof vars / sizeof vars[0]; i++) {
    if (strcmp(vars[i].name, name) == 0) {
      *out = vars[i].v;
      return 0;
    }
  }
  return -1;
}

/* Parse and evaluate; fails the test on any error. */
static long long value_of(const char *text) {
  char err[256];
  expr *e = expr_parse(text, err, sizeof err);
  if (!e) fail_msg("'%s' did not parse: %s", text, err);
  long long v = 0;
  if (expr_eval(e, lookup, NULL, &v, err, sizeof err) != 0)
    fail_msg("'%s' did not evaluate: %s", text, err);
  expr_free(e);
  return v;
}

/* The parse error of `text`, which must not parse. */
static const char *parse_error(const char *text) {
  static char err[256];
  expr *e = expr_parse(text, err, sizeof err);
  if (e) fail_msg("'%s' parsed but should not have", text ? text : "(null)");
  return err;
}

/* The evaluation error of `text`, which must parse but not evaluate. */
static const char *eval_error(const char *text) {
  static char err[256];
  expr *e = expr_parse(text, err, sizeof err);
  if (!e) fail_msg("'%s' did not parse: %s", text, err);
  long long v = 0;
  if (expr_eval(e, lookup, NULL, &v, err, sizeof err) == 0)
    fail_msg("'%s' evaluated to %lld but should have failed", text, v);
  expr_free(e);
  return err;
}

static void expr_should_follow_c_precedence(void **state) {
  (void)state;
  assert_int_equal(value_of("1 + 2 * 3"), 7);
  assert_int_equal(value_of("(1 + 2) * 3"), 9);
  assert_int_equal(value_of("-2 * 3"), -6);
  assert_int_equal(value_of("!0 + 1"), 2);
  assert_int_equal(value_of("1 + 2 < 4"), 1);
  assert_int_equal(value_of("2 < 1 == 0"), 1);
  assert_int_equal(value_of("1 == 1 && 0 == 1 || 2 > 1"), 1);
  assert_int_equal(value_of("BM * 2 % 3"), 2); /* (64*2)%3, not 64*(2%3) */
  assert_int_equal(value_of("1 || 0 && 0"), 1); /* && binds tighter than || */
}

static void expr_should_associate_left_and_ternary_right(void **state) {
  (void)state;
  assert_int_equal(value_of("10 - 3 - 2"), 5);
  assert_int_equal(value_of("100 / 10 / 5"), 2);
  assert_int_equal(value_of("100 % 7 % 3"), 2);
  assert_int_equal(value_of("2 - -3"), 5);
  assert_int_equal(value_of("- - 4"), 4);
  assert_int_equal(value_of("+4"), 4);
  assert_int_equal(value_of("0 ? 1 : 0 ? 2 : 3"), 3);
  assert_int_equal(value_of("1 ? 2 : 0 ? 3 : 4"), 2);
  assert_int_equal(value_of("1 ? 0 ? 5 : 6 : 7"), 6);
}

static void expr_should_evaluate_ternary_on_names(void **state) {
  (void)state;
  assert_int_equal(value_of("BM > 32 ? N : 0"), 1000);
  assert_int_equal(value_of("BM < 32 ? N : -1"), -1);
  assert_int_equal(value_of("(BM == 64 ? 2 : 3) * 10"), 20);
}

static void expr_should_yield_zero_or_one_from_logic(void **state) {
  (void)state;
  assert_int_equal(value_of("3 && 4"), 1);
  assert_int_equal(value_of("0 || -7"), 1);
  assert_int_equal(value_of("!5"), 0);
  assert_int_equal(value_of("!!5"), 1);
  assert_int_equal(value_of("5 != 5"), 0);
  assert_int_equal(value_of("5 >= 5"), 1);
  assert_int_equal(value_of("5 <= 4"), 0);
}

static void expr_should_short_circuit_like_c(void **state) {
  (void)state;
  assert_int_equal(value_of("zero != 0 && N / zero > 2"), 0);
  assert_int_equal(value_of("zero == 0 || N / zero > 2"), 1);
  assert_int_equal(value_of("zero ? N / zero : 9"), 9);
}

static void expr_should_compute_functions(void **state) {
  (void)state;
  assert_int_equal(value_of("min(3, BM)"), 3);
  assert_int_equal(value_of("max(3, BM)"), 64);
  assert_int_equal(value_of("min(-1, -2)"), -2);
  assert_int_equal(value_of("ceil_div(N, BM)"), 16);
  assert_int_equal(value_of("ceil_div(6, 3)"), 2);
  assert_int_equal(value_of("ceil_div(7, 2)"), 4);
  assert_int_equal(value_of("ceil_div(-7, 2)"), -3);
  assert_int_equal(value_of("ceil_div(7, -2)"), -3);
  assert_int_equal(value_of("ceil_div(-7, -2)"), 4);
  assert_int_equal(value_of("ceil_div(0, 5)"), 0);
  assert_int_equal(value_of("max(min(BM, 32), ceil_div(N, 100)) + 1"), 33);
}

static void expr_should_name_unknown_names_with_column(void **state) {
  (void)state;
  assert_string_equal(eval_error("BM * 2 + XX"), "column 10: unknown name 'XX'");
  assert_string_equal(eval_error("  bm"), "column 3: unknown name 'bm'");
}

static void expr_should_check_names_in_every_branch(void **state) {
  (void)state;
  char err[128];
  expr *e = expr_parse("BM > 0 ? N : (BK + typo)", err, sizeof err);
  assert_non_null(e);
  assert_int_equal(expr_check_names(e, lookup, NULL, err, sizeof err), -1);
  assert_string_equal(err, "column 15: unknown name 'BK'");
  long long v = 0; /* evaluation takes the bound branch, so it succeeds */
  assert_int_equal(expr_eval(e, lookup, NULL, &v, err, sizeof err), 0);
  assert_int_equal(v, 1000);
  expr_free(e);

  e = expr_parse("min(BM, N) * zero", err, sizeof err);
  assert_non_null(e);
  assert_int_equal(expr_check_names(e, lookup, NULL, err, sizeof err), 0);
  expr_free(e);
}

static void expr_should_reject_unbalanced_parens(void **state) {
  (void)state;
  assert_string_equal(parse_error("(1 + 2"),
                      "column 7: expected ')' to close '(' at column 1, found end of text");
  assert_string_equal(parse_error("1 + 2)"), "column 6: unexpected ')' after the expression");
  assert_string_equal(parse_error("min(1, (2)"),
                      "column 11: expected ')' or ',' to close '(' at column 4, found end of text");
  assert_string_equal(parse_error("()"), "column 2: expected a number, a name or '(', found ')'");
}

static void expr_should_reject_trailing_garbage(void **state) {
  (void)state;
  assert_string_equal(parse_error("1 2"), "column 3: unexpected '2' after the expression");
  assert_string_equal(parse_error("BM BN"), "column 4: unexpected 'BN' after the expression");
  assert_string_equal(parse_error("BM $"), "column 4: unexpected character '$'");
  assert_string_equal(parse_error("BM & BN"),
                      "column 4: unexpected character '&' (did you mean '&&'?)");
  assert_string_equal(parse_error("BM = 2"),
                      "column 4: unexpected character '=' (did you mean '=='?)");
  assert_string_equal(parse_error("12ab"), "column 3: unexpected 'a' in a number");
}

static void expr_should_reject_empty_and_incomplete_text(void **state) {
  (void)state;
  assert_string_equal(parse_error(""), "column 1: empty expression");
  assert_string_equal(parse_error(NULL), "column 1: empty expression");
  assert_string_equal(parse_error("1 +"),
                      "column 4: expected a number, a name or '(', found end of text");
  assert_string_equal(parse_error("1 ? 2"),
                      "column 6: expected ':' to match '?' at column 3, found end of text");
}

static void expr_should_reject_bad_function_arity(void **state) {
  (void)state;
  assert_string_equal(parse_error("1 + min(1)"),
                      "column 5: function 'min' takes 2 arguments, got 1");
  assert_string_equal(parse_error("ceil_div(1, 2, 3)"),
                      "column 1: function 'ceil_div' takes 2 arguments, got 3");
  assert_string_equal(parse_error("max()"),
                      "column 5: expected a number, a name or '(', found ')'");
}

static void expr_should_reject_unknown_function(void **state) {
  (void)state;
  assert_string_equal(parse_error("2 * floor(N)"),
                      "column 5: unknown function 'floor' (known: min, max, ceil_div)");
}

static void expr_should_report_division_by_zero(void **state) {
  (void)state;
  assert_string_equal(eval_error("N / (BM - 64)"), "column 3: division by zero");
  assert_string_equal(eval_error("N % zero"), "column 3: modulo by zero");
  assert_string_equal(eval_error("1 + ceil_div(N, zero)"),
                      "column 5: division by zero in 'ceil_div'");
}

static void expr_should_report_overflow(void **state) {
  (void)state;
  assert_string_equal(eval_error("big + 1"), "column 5: overflow in '+'");
  assert_string_equal(eval_error("small - 1"), "column 7: overflow in '-'");
  assert_string_equal(eval_error("3037000500 * 3037000500"), "column 12: overflow in '*'");
  assert_string_equal(eval_error("-small"), "column 1: overflow in '-'");
  assert_string_equal(eval_error("small / -1"), "column 7: overflow in '/'");
  assert_string_equal(eval_error("ceil_div(small, -1)"), "column 1: overflow in 'ceil_div'");
  assert_int_equal(value_of("small % -1"), 0);
  assert_int_equal(value_of("big"), LLONG_MAX);
  assert_int_equal(value_of("9223372036854775807"), LLONG_MAX);
  assert_string_equal(parse_error("9223372036854775808"),
                      "column 1: integer literal too large (the limit is 9223372036854775807)");
}

/* n opening parentheses, a 1, n closing ones. */
static char *nested(int n) {
  char *s = malloc((size_t)(2 * n + 2));
  assert_non_null(s);
  memset(s, '(', (size_t)n);
  s[n] = '1';
  memset(s + n + 1, ')', (size_t)n);
  s[2 * n + 1] = '\0';
  return s;
}

static void expr_should_refuse_deep_nesting(void **state) {
  (void)state;
  char *ok = nested(64), *deep = nested(65);
  assert_int_equal(value_of(ok), 1);
  assert_string_equal(parse_error(deep), "column 65: nested deeper than 64 levels");
  free(ok);
  free(deep);

  char minus[200];
  memset(minus, '-', 150);
  strcpy(minus + 150, "1");
  assert_string_equal(parse_error(minus), "column 65: nested deeper than 64 levels");
}

static void expr_should_refuse_text_over_4096_chars(void **state) {
  (void)state;
  /* 2048 ones joined by '+': 4095 characters, a left-leaning tree 2047 deep. */
  char text[4100];
  size_t n = 0;
  for (int i = 0; i < 2048; i++) {
    if (i) text[n++] = '+';
    text[n++] = '1';
  }
  text[n] = '\0';
  assert_int_equal(value_of(text), 2048);
  strcpy(text + n, " ");
  assert_int_equal(value_of(text), 2048); /* 4096 characters: the limit itself */
  strcpy(text + n, "+1");
  assert_string_equal(parse_error(text), "column 4097: expression longer than 4096 characters");
}

static void expr_should_truncate_errors_to_the_buffer(void **state) {
  (void)state;
  char err[8];
  memset(err, 'x', sizeof err);
  assert_null(expr_parse("(1", err, sizeof err));
  assert_string_equal(err, "column ");
  assert_null(expr_parse("(1", NULL, 0)); /* no buffer: still an error, no crash */
}

/* Names for expr_to_c: BM is a knob (a constant), M a problem size (a variable). */
static int c_names(void *ctx, const char *name, char *buf, size_t len) {
  (void)ctx;
  if (!strcmp(name, "BM")) return snprintf(buf, len, "64LL"), 0;
  if (!strcmp(name, "M")) return snprintf(buf, len, "M"), 0;
  return -1;
}

/* Slots by the name's first letter: A..E are 0..4, anything else unknown. */
static int letter_slot(void *ctx, const char *name) {
  (void)ctx;
  return name[0] >= 'A' && name[0] <= 'E' && name[1] == 0 ? name[0] - 'A' : -1;
}

/* What a value depends on: every name in every branch and argument, and nothing else. */
static void expr_should_tell_the_slots_it_reads(void **state) {
  (void)state;
  char err[128];
  expr *e = expr_parse("A * (B > 2 ? min(D, 3) : 1) + ceil_div(7, 2)", err, sizeof err);
  assert_non_null(e);
  assert_int_equal(expr_bind_slots(e, letter_slot, NULL, err, sizeof err), 0);
  unsigned char used[5] = {0};
  assert_int_equal(expr_slots(e, used, 5), 0);
  static const unsigned char want[5] = {1, 1, 0, 1, 0};
  assert_memory_equal(used, want, 5);
  memset(used, 0, sizeof used);
  assert_int_equal(expr_slots(e, used, 3), -1); /* D's slot is past the 3 asked about */
  expr_free(e);
  e = expr_parse("A + B", err, sizeof err); /* not bound: its names could be anything */
  assert_int_equal(expr_slots(e, used, 5), -1);
  expr_free(e);
}

static void expr_should_print_as_c_with_checked_division(void **state) {
  (void)state;
  char err[128], out[256];
  expr *e = expr_parse("M % BM == 0 && ceil_div(M, BM) <= max(2, -M / 3) ? 1 : !BM", err,
                       sizeof err);
  assert_non_null(e);
  assert_int_equal(expr_to_c(e, c_names, NULL, out, sizeof out), 0);
  assert_string_equal(out, "(((tf_mod(ev, M, 64LL) == 0LL) && (tf_ceil_div(ev, M, 64LL) <= "
                           "tf_max(2LL, tf_div(ev, (-M), 3LL)))) ? 1LL : (!64LL))");
  assert_int_equal(expr_to_c(e, c_names, NULL, out, 16), -1); /* too small: refused, not cut */
  expr_free(e);
  e = expr_parse("BN + 1", err, sizeof err);
  assert_int_equal(expr_to_c(e, c_names, NULL, out, sizeof out), -1); /* an unknown name */
  expr_free(e);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(expr_should_follow_c_precedence),
      cmocka_unit_test(expr_should_associate_left_and_ternary_right),
      cmocka_unit_test(expr_should_evaluate_ternary_on_names),
      cmocka_unit_test(expr_should_yield_zero_or_one_from_logic),
      cmocka_unit_test(expr_should_short_circuit_like_c),
      cmocka_unit_test(expr_should_compute_functions),
      cmocka_unit_test(expr_should_name_unknown_names_with_column),
      cmocka_unit_test(expr_should_check_names_in_every_branch),
      cmocka_unit_test(expr_should_reject_unbalanced_parens),
      cmocka_unit_test(expr_should_reject_trailing_garbage),
      cmocka_unit_test(expr_should_reject_empty_and_incomplete_text),
      cmocka_unit_test(expr_should_reject_bad_function_arity),
      cmocka_unit_test(expr_should_reject_unknown_function),
      cmocka_unit_test(expr_should_report_division_by_zero),
      cmocka_unit_test(expr_should_report_overflow),
      cmocka_unit_test(expr_should_refuse_deep_nesting),
      cmocka_unit_test(expr_should_refuse_text_over_4096_chars),
      cmocka_unit_test(expr_should_truncate_errors_to_the_buffer),
      cmocka_unit_test(expr_should_print_as_c_with_checked_division),
      cmocka_unit_test(expr_should_tell_the_slots_it_reads),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
