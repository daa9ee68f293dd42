/* spawn: the worker's handle on its measure child (`tunefarm measure`).
 *
 * The child is started with posix_spawn with its stdin and stdout on pipes;
 * its stderr is the worker's. Messages are one JSON object per line. Reading
 * waits at most a deadline: a child that overruns is killed (SIGKILL) and
 * reaped, a child that died is reaped, and either way the caller gets a
 * sentence saying why (signal, exit status or timeout). The worker ignores
 * SIGPIPE so a dead child is an error, not the worker's death.
 * Ownership: the struct owns the pid, two fds and a line buffer; childproc_stop
 * or childproc_kill releases them. */
#ifndef TF_SPAWN_H
#define TF_SPAWN_H

#include <cjson/cJSON.h>
#include <sys/types.h>

#include "common/err.h"

typedef struct childproc {
  pid_t pid;          /* 0: not running */
  int to_fd, from_fd;
  char *buf;          /* bytes read but not yet returned as a line */
  size_t len, cap;
} childproc;

typedef struct childproc_opts {
  const char *exe;       /* path of the tunefarm binary */
  const char *backend;   /* worker/backend.h's name; NULL: the child chooses (a GPU if any) */
  int device;            /* ordinal */
  int instance;          /* the worker's count of children started, this one included */
} childproc_opts;

int childproc_start(childproc *c, const childproc_opts *o, tf_err *e);
int childproc_send(childproc *c, const cJSON *obj, tf_err *e);
/* A message already written (one JSON object, no newline in it), as it is. */
int childproc_send_text(childproc *c, const char *text, tf_err *e);

enum { CHILD_LINE = 0, CHILD_TIMEOUT = 1, CHILD_GONE = 2 };
/* Wait up to deadline_s for one line: CHILD_LINE with *out parsed (caller deletes),
 * CHILD_TIMEOUT (child killed and reaped), CHILD_GONE (child reaped); `why` says what
 * happened in the last two cases. -1 on a malformed line or an I/O error. */
int childproc_recv(childproc *c, double deadline_s, cJSON **out, char *why, size_t whylen,
                   tf_err *e);
/* childproc_recv that also hands over the line's text with CHILD_LINE (*text, malloc'd, the
 * caller frees; NULL otherwise), for a worker that passes the answer on as it came. */
int childproc_recv_text(childproc *c, double deadline_s, cJSON **out, char **text, char *why,
                        size_t whylen, tf_err *e);

/* Close stdin (the child's cue to exit), wait up to grace_s, then kill. */
void childproc_stop(childproc *c, double grace_s);
void childproc_kill(childproc *c);
int childproc_running(const childproc *c);
/* 1 (and the handle released) if the child has already exited, else 0. */
int childproc_reap_if_exited(childproc *c);

#endif
