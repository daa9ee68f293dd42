#include "common/err.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

int tf_fail(tf_err *e, int code, const char *fmt, ...) {
  if (!e) return -1;
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(e->msg, sizeof e->msg, fmt, ap);
  va_end(ap);
  e->code = code;
  return -1;
}

int tf_wrap(tf_err *e, const char *fmt, ...) {
  if (!e) return -1;
  char prefix[512], old[sizeof e->msg];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(prefix, sizeof prefix, fmt, ap);
  va_end(ap);
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
