/* err: how failures travel up the stack.
 *
 * A function that can fail takes a `tf_err *` last and returns -1 after
 * filling it (tf_fail), 0 on success. Its code is one tf_status, the same
 * everywhere. Only main() turns an error into an exit status: TF_EXIT_INPUT
 * (2) for bad input (a campaign, template, ledger or command line the user
 * must fix), TF_NO_DEVICE (3) where a command documents it (bench),
 * TF_EXIT_FAIL (1) for everything else.
 * Messages start lower-case, name the file and the key in quotes, and say
 * what to do where that is not obvious. A message is one line: tf_fail and
 * tf_wrap escape control characters (a newline in a user's key or value would
 * otherwise split it), so callers may pass user text straight in. The struct
 * owns no heap memory. */
#ifndef TF_ERR_H
#define TF_ERR_H

#include <stddef.h>

/* What went wrong. The first four are also exit statuses; the last two are handled where
 * they arise and never leave a process as its status. */
typedef enum tf_status {
  TF_EXIT_OK = 0,
  TF_EXIT_FAIL = 1,       /* anything else */
  TF_EXIT_INPUT = 2,      /* bad input: the message names the file and the key */
  TF_NO_DEVICE = 3,       /* no usable device for the backend asked for */
  TF_STICKY = 4,          /* the device is unusable for this process (a sticky CUDA error: an
                           * illegal address, a trap); it must not touch the device again */
  TF_COMPILE_REFUSED = 5  /* NVRTC refused the program (its log is in the compile result) */
} tf_status;

typedef struct tf_err {
  int code;        /* a tf_status; 0 until set */
  char msg[1024];
} tf_err;

/* Fill *e (if e is not NULL) and return -1. */
int tf_fail(tf_err *e, int code, const char *fmt, ...) __attribute__((format(printf, 3, 4)));

/* Prefix an existing message ("while loading x: ..."); returns -1. */
int tf_wrap(tf_err *e, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

void tf_err_clear(tf_err *e);

/* The exit status of a command that failed with *e: its code where that is an exit status
 * (1, 2, 3), else 1. */
int tf_exit_status(const tf_err *e);

/* Whether a failed mkdir or open of a path the user named is the user's to fix (no such
 * folder, a file in the way, no permission, a read-only or too long path, a loop of links):
 * then it is bad input, exit 2, rather than a failure of the machine. */
int user_path_errno(int err);

/* Copy src into dst (len bytes, always NUL-terminated) with every control character
 * written as a C escape ("\n", "\t", "\x1b"), so that text from a file echoed in a
 * message stays on one line and cannot move the terminal's cursor. Bytes of UTF-8 and
 * backslashes are copied as they are (so escaping twice changes nothing); truncated at
 * a character boundary. Returns dst. */
char *tf_escape(char *dst, size_t len, const char *src);

#endif
