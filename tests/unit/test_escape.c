/* Unit tests of common/escape.c: each output language's rule on each class of hostile text
 * (control characters, comment ends and starts, </script>, quotes, newlines, pipes,
 * backticks, spreadsheet formulas, invalid UTF-8, a 1 MB text), and benign text unchanged. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "common/escape.h"

typedef void (*rule_fn)(FILE *f, const char *s);

/* What rule writes for s (caller frees). */
static char *run(rule_fn rule, const char *s) {
  char *out = NULL;
  size_t len = 0;
  FILE *f = open_memstream(&out, &len);
  assert_non_null(f);
  rule(f, s);
  assert_int_equal(fclose(f), 0);
  return out;
}

static void expect(rule_fn rule, const char *in, const char *want) {
  char *got = run(rule, in);
  assert_string_equal(got, want);
  free(got);
}

/* Whether s is valid UTF-8 with no raw control character but '\n' (none of the rules writes
 * one, the checks below say which). */
static int clean_utf8(const char *s) {
  const unsigned char *p = (const unsigned char *)s;
  while (*p) {
    int n = *p < 0x80 ? 1 : (*p & 0xE0) == 0xC0 ? 2 : (*p & 0xF0) == 0xE0 ? 3
            : (*p & 0xF8) == 0xF0 ? 4 : 0;
    if (n == 0 || (n == 1 && (*p < 0x20 || *p == 0x7F))) return 0;
    if (n == 2 && p[0] == 0xC2 && p[1] < 0xA0) return 0; /* C1 */
    if (n == 2 && p[0] < 0xC2) return 0;                   /* overlong */
    for (int i = 1; i < n; i++)
      if ((p[i] & 0xC0) != 0x80) return 0;
    p += n;
  }
  return 1;
}

/* Every class at once, and each rule's output for it is valid UTF-8 without raw controls
 * (JSON's as cJSON prints the text: cJSON escapes C0 itself, escape_json the rest). */
static const char hostile[] = "\x01\x1b[2J\x7f\xc2\x85\xc2\x9b */ </script><script>x</script> "
                              "<!-- ' \" \n\r\t | ` =HYPERLINK(\"x\") [a](javascript:b) &amp; "
                              "\xff\xfe\xc0\xaf\xed\xa0\x80\xf4\x90\x80\x80\xe2\x82";

static void every_rule_should_write_valid_utf8_without_raw_controls(void **state) {
  (void)state;
  const rule_fn rules[] = {escape_html, escape_markdown, escape_csv_cell};
  for (size_t i = 0; i < sizeof rules / sizeof rules[0]; i++) {
    char *out = run(rules[i], hostile);
    assert_true(clean_utf8(out));
    assert_null(strchr(out, '\n'));
    free(out);
  }
  cJSON *s = cJSON_CreateString(hostile);
  char *printed = cJSON_PrintUnformatted(s);
  assert_false(clean_utf8(printed)); /* cJSON copies the invalid bytes, C1 and DEL */
  char *out = run(escape_json, printed);
  assert_true(clean_utf8(out));
  cJSON *back = cJSON_Parse(out);
  assert_true(cJSON_IsString(back));
  assert_non_null(strstr(back->valuestring, "</script><script>x</script> <!-- ' \" \n\r\t | `"));
  cJSON_Delete(back);
  cJSON_Delete(s);
  free(printed);
  free(out);
}

static void invalid_utf8_should_become_one_replacement_a_byte(void **state) {
  (void)state;
  /* a stray continuation, an invalid lead, an overlong '/', a surrogate, past U+10FFFF, a
   * sequence cut by the end */
  const char *in = "a\x80" "b\xff" "c\xc0\xaf" "d\xed\xa0\x80" "e\xf4\x90\x80\x80" "f\xe2\x82";
  const char *want = "a\xEF\xBF\xBD" "b\xEF\xBF\xBD" "c\xEF\xBF\xBD\xEF\xBF\xBD"
                     "d\xEF\xBF\xBD\xEF\xBF\xBD\xEF\xBF\xBD"
                     "e\xEF\xBF\xBD\xEF\xBF\xBD\xEF\xBF\xBD\xEF\xBF\xBD"
                     "f\xEF\xBF\xBD\xEF\xBF\xBD";
  expect(escape_html, in, want);
  expect(escape_markdown, in, want);
  expect(escape_csv_cell, in, want);
  expect(escape_json, in, want);
  /* valid multi-byte text is copied: µ, —, →, an emoji */
  const char *ok = "\xc2\xb5s \xe2\x80\x94 \xe2\x86\x92 \xf0\x9f\x98\x80";
  expect(escape_html, ok, ok);
  expect(escape_markdown, ok, ok);
  expect(escape_csv_cell, ok, ok);
  expect(escape_json, ok, ok);
}

static void html_should_leave_no_tag_comment_or_quote_open(void **state) {
  (void)state;
  expect(escape_html, "</script><script>", "&lt;/script&gt;&lt;script&gt;");
  expect(escape_html, "<!-- x -->", "&lt;!-- x --&gt;");
  expect(escape_html, "a\"b'c&d", "a&quot;b&#39;c&amp;d");
  expect(escape_html, "*/ | ` =HYPERLINK(\"x\")", "*/ | ` =HYPERLINK(&quot;x&quot;)");
  expect(escape_html, "a\nb\tc\rd\x1b" "e\x7f" "f\xc2\x9bg", "a&#10;b&#9;c&#65533;d&#65533;e&#65533;f&#65533;g");
  expect(escape_html, "tf_matmul<64, 32>", "tf_matmul&lt;64, 32&gt;");
  expect(escape_html, NULL, "");
}

static void markdown_should_disarm_markup_and_keep_benign_text(void **state) {
  (void)state;
  expect(escape_markdown, "</script><script>x", "&lt;/script&gt;&lt;script&gt;x");
  expect(escape_markdown, "<!-- -->", "&lt;!-- --&gt;");
  expect(escape_markdown, "<img src=x onerror=y>", "&lt;img src=x onerror=y&gt;");
  expect(escape_markdown, "a|b`c`*/\\", "a\\|b\\`c\\`\\*/\\\\");
  expect(escape_markdown, "[a](javascript:b) [r][1] [d]: x", "[a\\](javascript:b) [r\\][1] [d\\]: x");
  expect(escape_markdown, "&amp; &#60; & x", "&amp;amp; &amp;#60; & x");
  expect(escape_markdown, "_em_ ~~s~~", "\\_em\\_ \\~\\~s\\~\\~");
  expect(escape_markdown, "'\" =HYPERLINK(\"x\")", "'\" =HYPERLINK(\"x\")");
  expect(escape_markdown, "a\nb\tc\rd\x1b[2Je\x7f" "f\xc2\x9bg", "a\\nb\\tc\\rd\\x1b[2Je\\x7ff\\u009bg");
  /* at either end the writer's own character is next: escaped */
  expect(escape_markdown, "<", "&lt;");
  expect(escape_markdown, ">", "&gt;");
  expect(escape_markdown, "&", "&amp;");
  expect(escape_markdown, "x]", "x\\]");
  /* benign ledger text reads as it did: comparisons, template arguments, knob and constraint
   * names, intervals */
  const char *benign[] = {
      "new is 9.7% slower than best (sequential test: LLR -49.08 <= -2.99 after 4 rounds)",
      "new is 2.5% faster than best (needed > 1.0%)",
      "tf_layernorm<0, 2, 256, 1, 0, 0, 0, 1>",
      "8 generations in a row without a keep (max_stale)",
      "constraint 'k_tiles': K % BK == 0 (every tile is full)",
      ("+0.41% [+0.30%, +0.52%] sm_90 BLOCK 64\xe2\x86\x92" "32"),
  };
  for (size_t i = 0; i < sizeof benign / sizeof benign[0]; i++) expect(escape_markdown, benign[i], benign[i]);
}

static void csv_should_quote_and_never_start_a_formula(void **state) {
  (void)state;
  expect(escape_csv_cell, "=HYPERLINK(\"x\")", "\"'=HYPERLINK(\"\"x\"\")\"");
  expect(escape_csv_cell, "=1+2", "'=1+2");
  expect(escape_csv_cell, "+1", "'+1");
  expect(escape_csv_cell, "-1", "'-1");
  expect(escape_csv_cell, "@SUM(A1)", "'@SUM(A1)");
  expect(escape_csv_cell, "\t=1", "'\\t=1");
  expect(escape_csv_cell, "\r=1", "'\\r=1");
  expect(escape_csv_cell, "a,b", "\"a,b\"");
  expect(escape_csv_cell, "say \"hi\"", "\"say \"\"hi\"\"\"");
  expect(escape_csv_cell, "a\nb", "a\\nb");
  expect(escape_csv_cell, "x=1 \x1b[2J\x7f\xc2\x85", "x=1 \\x1b[2J\\x7f\\u0085");
  expect(escape_csv_cell, "</script> <!-- */ | ` '", "</script> <!-- */ | ` '");
  expect(escape_csv_cell, "new is 9.7% slower", "new is 9.7% slower");
  expect(escape_csv_cell, "", "");
  expect(escape_csv_cell, NULL, "");
}

static void json_should_escape_what_cjson_leaves_raw(void **state) {
  (void)state;
  expect(escape_json, "{\"a\":\"x\x7fy\xc2\x85z\xe2\x80\xa8w\"}", "{\"a\":\"x\\u007fy\\u0085z\\u2028w\"}");
  expect(escape_json, "{\"a\":\"<\\/script> \\n \\u001b\"}", "{\"a\":\"<\\/script> \\n \\u001b\"}");
  expect(escape_json, "{\"a\":[1,-2.5,null]}", "{\"a\":[1,-2.5,null]}");
}

/* 1 MB of text goes through every rule whole: no buffer limit cuts it. */
static void a_megabyte_should_go_through_whole(void **state) {
  (void)state;
  size_t n = 1u << 20;
  char *big = malloc(n + 1);
  assert_non_null(big);
  for (size_t i = 0; i < n; i++) big[i] = "a<|\n"[i % 4];
  big[n] = '\0';
  char *html = run(escape_html, big), *md = run(escape_markdown, big),
       *csv = run(escape_csv_cell, big);
  assert_int_equal(strlen(html), n / 4 * (1 + 4 + 1 + 5));          /* a &lt; | &#10; */
  assert_int_equal(strlen(md), n / 4 * (1 + 4 + 2 + 2));             /* a &lt; \| \n */
  assert_int_equal(strlen(csv), n / 4 * (1 + 1 + 1 + 2));            /* a < | \n */
  free(html), free(md), free(csv);
  free(big);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(every_rule_should_write_valid_utf8_without_raw_controls),
      cmocka_unit_test(invalid_utf8_should_become_one_replacement_a_byte),
      cmocka_unit_test(html_should_leave_no_tag_comment_or_quote_open),
      cmocka_unit_test(markdown_should_disarm_markup_and_keep_benign_text),
      cmocka_unit_test(csv_should_quote_and_never_start_a_formula),
      cmocka_unit_test(json_should_escape_what_cjson_leaves_raw),
      cmocka_unit_test(a_megabyte_should_go_through_whole),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
