/* escape: one rule per output language for text that comes from a file (common/escape.h). */
#include "common/escape.h"

#include <string.h>

#define REPLACEMENT "\xEF\xBF\xBD" /* U+FFFD in UTF-8 */

/* ---------------------------------------------------------------- UTF-8 */

/* The code point that starts at s and its length in bytes (*len), or -1 with *len = 1 where s
 * starts no valid sequence: a stray continuation byte, a lead byte without its continuations,
 * an overlong form, a surrogate, or a value past U+10FFFF. s is NUL-terminated, so a sequence
 * cut by the end fails at its NUL. */
static long utf8_next(const unsigned char *s, size_t *len) {
  *len = 1;
  if (s[0] < 0x80) return s[0];
  int n = s[0] >= 0xF0 ? 4 : s[0] >= 0xE0 ? 3 : s[0] >= 0xC0 ? 2 : 0;
  if (n == 0 || s[0] > 0xF4) return -1;
  long cp = s[0] & (0x7F >> n);
  for (int i = 1; i < n; i++) {
    if ((s[i] & 0xC0) != 0x80) return -1;
    cp = (cp << 6) | (s[i] & 0x3F);
  }
  static const long least[5] = {0, 0, 0x80, 0x800, 0x10000};
  if (cp < least[n] || cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF)) return -1;
  *len = (size_t)n;
  return cp;
}

static int is_control(long cp) { return cp < 0x20 || (cp >= 0x7F && cp < 0xA0); }

static int is_digit(int c) { return c >= '0' && c <= '9'; }

static int is_alnum(int c) { return is_digit(c) || ((c | 0x20) >= 'a' && (c | 0x20) <= 'z'); }

/* A control character as a C escape: it shows what was there and holds no line break. */
static void put_visible_control(FILE *f, long cp) {
  static const char named[] = "\a\b\t\n\v\f\r";
  static const char letter[] = "abtnvfr";
  const char *hit = cp > 0 && cp < 0x20 ? strchr(named, (int)cp) : NULL;
  if (hit)
    fprintf(f, "\\%c", letter[hit - named]);
  else if (cp < 0x80)
    fprintf(f, "\\x%02lx", cp);
  else
    fprintf(f, "\\u%04lx", cp);
}

/* The walk every rule shares: each character of s in turn, with the bytes around it (for the
 * rules that look at a neighbour); put writes it, or returns 0 to have it copied as it is.
 * An invalid byte never reaches put: it is written as U+FFFD. */
typedef int (*put_fn)(FILE *f, long cp, int before, int after);

static void walk(FILE *f, const char *text, put_fn put) {
  const unsigned char *s = (const unsigned char *)(text ? text : "");
  int before = 0;
  while (*s) {
    size_t len;
    long cp = utf8_next(s, &len);
    if (cp < 0)
      fputs(REPLACEMENT, f);
    else if (!put(f, cp, before, s[len]))
      fwrite(s, 1, len, f);
    before = cp < 0 ? 0xFFFD : (int)(cp < 0x80 ? cp : 0x80);
    s += len;
  }
}

/* ---------------------------------------------------------------- HTML */

static int put_html(FILE *f, long cp, int before, int after) {
  (void)before, (void)after;
  const char *ref = cp == '&'    ? "&amp;"
                    : cp == '<'  ? "&lt;"
                    : cp == '>'  ? "&gt;"
                    : cp == '"'  ? "&quot;"
                    : cp == '\'' ? "&#39;"
                    : cp == '\n' ? "&#10;"
                    : cp == '\t' ? "&#9;"
                                 : is_control(cp) ? "&#65533;" : NULL;
  if (!ref) return 0;
  fputs(ref, f);
  return 1;
}

void escape_html(FILE *f, const char *s) { walk(f, s, put_html); }

/* ---------------------------------------------------------------- Markdown */

/* Whether a '<' followed by c, or a '>' preceded by c, is plain text: a comparison ("<= 2",
 * "> 1.0%") or a template argument ("<64, 32>"); a tag, a comment or an autolink needs a
 * letter, '/', '!' or '?' there. At either end of the text the writer's own character is
 * the neighbour, which the rule cannot see: there it escapes. */
static int plain_angle(int c) { return c == ' ' || c == '=' || is_digit(c); }

/* What a Markdown character is written as, or NULL to copy it as it is. */
static const char *markdown_of(long cp, int before, int after) {
  switch (cp) {
    case '|': return "\\|";
    case '`': return "\\`";
    case '*': return "\\*";
    case '\\': return "\\\\";
    case '~': return "\\~";
    case '_': return is_alnum(before) && is_alnum(after) ? NULL : "\\_";
    case ']': return !after || after == '(' || after == '[' || after == ':' ? "\\]" : NULL;
    case '<': return plain_angle(after) ? NULL : "&lt;";
    case '>': return plain_angle(before) ? NULL : "&gt;";
    case '&': return !after || is_alnum(after) || after == '#' ? "&amp;" : NULL;
    default: return NULL;
  }
}

static int put_markdown(FILE *f, long cp, int before, int after) {
  if (is_control(cp)) {
    put_visible_control(f, cp);
    return 1;
  }
  const char *out = markdown_of(cp, before, after);
  if (out) fputs(out, f);
  return out != NULL;
}

void escape_markdown(FILE *f, const char *s) { walk(f, s, put_markdown); }

/* ---------------------------------------------------------------- CSV */

static int put_csv(FILE *f, long cp, int before, int after) {
  (void)before, (void)after;
  if (is_control(cp))
    put_visible_control(f, cp);
  else if (cp == '"')
    fputs("\"\"", f);
  return is_control(cp) || cp == '"';
}

void escape_csv_cell(FILE *f, const char *s) {
  s = s ? s : "";
  int quote = strpbrk(s, ",\"") != NULL; /* a line break is written escaped, never raw */
  if (quote) fputc('"', f);
  if (s[0] && strchr("=+-@\t\r", s[0])) fputc('\'', f);
  walk(f, s, put_csv);
  if (quote) fputc('"', f);
}

/* ---------------------------------------------------------------- JSON */

static int put_json(FILE *f, long cp, int before, int after) {
  (void)before, (void)after;
  int hit = cp == 0x7F || (cp >= 0x80 && cp < 0xA0) || cp == 0x2028 || cp == 0x2029;
  if (hit) fprintf(f, "\\u%04lx", cp);
  return hit;
}

void escape_json(FILE *f, const char *json) { walk(f, json, put_json); }
