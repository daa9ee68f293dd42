#include "common/err.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

char *tf_escape(char *dst, size_t len, const char *src) {
  static const char named[] = "\a\b\t\n\v\f\r";
  static const char letter[] = "abtnvfr";
  size_t n = 0;
  if (len == 0) return dst;
  for (; *src; src++) {
    unsigned char c = (unsigned char)*src;
    char esc[5];
    const char *hit = c ? strchr(named, c) : NULL;
    if (c >= 0x20 && c != 0x7f)
      esc[0] = (char)c, esc[1] = '\0';
    else if (hit)
      snprintf(esc, sizeof esc, "\\%c", letter[hit - named]);
    else
      snprintf(esc, sizeof esc, "\\x%02x", c);
    size_t w = strlen(esc);
    if (n + w >= len) break;
    memcpy(dst + n, esc, w);
    n += w;
  }
  dst[n] = '\0';
  return dst;
}

int tf_fail(tf_err *e, int code, const char *fmt, ...) {
  if (!e) return -1;
  char raw[sizeof e->msg];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(raw, sizeof raw, fmt, ap);
  va_end(ap);
  tf_escape(e->msg, sizeof e->msg, raw);
  e->code = code;
  return -1;
}

int tf_wrap(tf_err *e, const char *fmt, ...) {
  if (!e) return -1;
  char raw[512], prefix[512], old[sizeof e->msg];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(raw, sizeof raw, fmt, ap);
  va_end(ap);
  tf_escape(prefix, sizeof prefix, raw);
  memcpy(old, e->msg, sizeof old);
  /* Keep the prefix and as much of the old message as fits. */
  size_t n = strlen(prefix);
  if (n > sizeof e->msg - 3) n = sizeof e->msg - 3;
  memcpy(e->msg, prefix, n);
  e->msg[n] = ':';
  e->msg[n + 1] = ' ';
  size_t rest = sizeof e->msg - n - 3;
  size_t m = strnlen(old, rest);
  memcpy(e->msg + n + 2, old, m);
  e->msg[n + 2 + m] = '\0';
  if (!e->code) e->code = 1;
  return -1;
}

void tf_err_clear(tf_err *e) {
  if (!e) return;
  e->code = 0;
  e->msg[0] = '\0';
}

int user_path_errno(int err) {
  return err == ENOENT || err == ENOTDIR || err == EACCES || err == EROFS ||
         err == ENAMETOOLONG || err == ELOOP;
}

int tf_exit_status(const tf_err *e) {
  if (!e || e->code < TF_EXIT_FAIL || e->code > TF_NO_DEVICE) return TF_EXIT_FAIL;
  return e->code;
}
