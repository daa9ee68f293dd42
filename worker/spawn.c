#define _GNU_SOURCE /* pipe2 */
#include "worker/spawn.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "common/clock.h"
#include "common/jsonio.h"

extern char **environ;

static void close_fds(childproc *c) {
  if (c->to_fd >= 0) close(c->to_fd);
  if (c->from_fd >= 0) close(c->from_fd);
  c->to_fd = c->from_fd = -1;
  free(c->buf);
  c->buf = NULL;
  c->len = c->cap = 0;
}

int childproc_running(const childproc *c) { return c->pid > 0; }

int childproc_reap_if_exited(childproc *c) {
  if (c->pid <= 0) return 0;
  if (waitpid(c->pid, NULL, WNOHANG) != c->pid) return 0;
  c->pid = 0;
  close_fds(c);
  return 1;
}

int childproc_start(childproc *c, const childproc_opts *o, tf_err *e) {
  int in[2], out[2];
  memset(c, 0, sizeof *c);
  c->to_fd = c->from_fd = -1;
  signal(SIGPIPE, SIG_IGN);
  /* Close-on-exec from the start: the compile pool's thread spawns processes too, and one that
   * inherited an end of these pipes would keep the child from seeing its input close. */
  if (pipe2(in, O_CLOEXEC) || pipe2(out, O_CLOEXEC))
    return tf_fail(e, TF_EXIT_FAIL, "pipe for the measure child: %s", strerror(errno));
  char dev[16], inst[16];
  snprintf(dev, sizeof dev, "%d", o->device);
  snprintf(inst, sizeof inst, "%d", o->instance);
  char *argv[] = {(char *)o->exe, "measure", "--device", dev, "--instance", inst,
                  "--backend", (char *)o->backend, NULL}; /* without one: the child chooses */
  if (!o->backend) argv[6] = NULL;
  posix_spawn_file_actions_t fa;
  posix_spawn_file_actions_init(&fa);
  posix_spawn_file_actions_adddup2(&fa, in[0], 0);
  posix_spawn_file_actions_adddup2(&fa, out[1], 1);
  /* The child starts with no signal blocked, whatever the worker's threads block: its deadline
   * and its drop signal must reach it. */
  posix_spawnattr_t at;
  sigset_t none;
  sigemptyset(&none);
  posix_spawnattr_init(&at);
  posix_spawnattr_setsigmask(&at, &none);
  posix_spawnattr_setflags(&at, POSIX_SPAWN_SETSIGMASK);
  int rc = posix_spawn(&c->pid, o->exe, &fa, &at, argv, environ);
  posix_spawnattr_destroy(&at);
  posix_spawn_file_actions_destroy(&fa);
  close(in[0]);
  close(out[1]);
  c->to_fd = in[1];
  c->from_fd = out[0];
  if (rc != 0) {
    c->pid = 0;
    close_fds(c);
    return tf_fail(e, TF_EXIT_FAIL, "cannot start '%s measure': %s", o->exe, strerror(rc));
  }
  return 0;
}

/* Write all of buf: 0, or -1 with errno. */
static int write_all(int fd, const char *buf, size_t n) {
  while (n > 0) {
    ssize_t w = write(fd, buf, n);
    if (w < 0 && errno == EINTR) continue;
    if (w < 0) return -1;
    buf += w;
    n -= (size_t)w;
  }
  return 0;
}

int childproc_send_text(childproc *c, const char *text, tf_err *e) {
  /* the line and its newline in one write: the child wakes once */
  size_t n = strlen(text);
  char *line = malloc(n + 1);
  if (!line) return tf_fail(e, TF_EXIT_FAIL, "out of memory sending a job");
  memcpy(line, text, n);
  line[n] = '\n';
  int rc = write_all(c->to_fd, line, n + 1);
  free(line);
  return rc ? tf_fail(e, TF_EXIT_FAIL, "writing to the measure child: %s", strerror(errno)) : 0;
}

int childproc_send(childproc *c, const cJSON *obj, tf_err *e) {
  char *text = cJSON_PrintUnformatted(obj);
  if (!text) return tf_fail(e, TF_EXIT_FAIL, "out of memory serialising a job");
  int rc = childproc_send_text(c, text, e);
  cJSON_free(text);
  return rc;
}

/* Describe how a reaped child ended. */
static void describe_status(int status, char *why, size_t len) {
  if (WIFSIGNALED(status))
    snprintf(why, len, "the measure child was killed by signal %d (%s)", WTERMSIG(status),
             strsignal(WTERMSIG(status)));
  else if (WIFEXITED(status))
    snprintf(why, len, "the measure child exited with status %d", WEXITSTATUS(status));
  else
    snprintf(why, len, "the measure child ended (status 0x%x)", status);
}

void childproc_kill(childproc *c) {
  if (c->pid > 0) {
    kill(c->pid, SIGKILL);
    while (waitpid(c->pid, NULL, 0) < 0 && errno == EINTR) {
    }
  }
  c->pid = 0;
  close_fds(c);
}

static void reap(childproc *c, char *why, size_t len) {
  int status = 0;
  pid_t p;
  /* The pipe closed, so the child is exiting; give it a moment, then insist. */
  double t0 = tf_monotonic_s();
  while ((p = waitpid(c->pid, &status, WNOHANG)) == 0 && tf_monotonic_s() - t0 < 5.0) usleep(10000);
  if (p == c->pid) {
    describe_status(status, why, len);
    c->pid = 0;
    close_fds(c);
  } else {
    snprintf(why, len, "the measure child closed its output but did not exit; killed");
    childproc_kill(c);
  }
}

/* A complete line in the buffer? Move it out. */
static char *take_line(childproc *c) {
  char *nl = c->len ? memchr(c->buf, '\n', c->len) : NULL;
  if (!nl) return NULL;
  size_t n = (size_t)(nl - c->buf);
  char *line = malloc(n + 1);
  if (!line) return NULL;
  memcpy(line, c->buf, n);
  line[n] = '\0';
  memmove(c->buf, nl + 1, c->len - n - 1);
  c->len -= n + 1;
  return line;
}

/* Read what is there into the buffer: 1 bytes read, 0 end of file, -1 error. */
static int fill(childproc *c) {
  if (c->cap - c->len < 65536) {
    size_t cap = c->cap ? c->cap * 2 : 131072;
    char *nb = realloc(c->buf, cap);
    if (!nb) return -1;
    c->buf = nb;
    c->cap = cap;
  }
  ssize_t r = read(c->from_fd, c->buf + c->len, c->cap - c->len);
  if (r < 0) return errno == EINTR ? 1 : -1;
  c->len += (size_t)r;
  return r > 0;
}

int childproc_recv(childproc *c, double deadline_s, cJSON **out, char *why, size_t whylen,
                   tf_err *e) {
  return childproc_recv_text(c, deadline_s, out, NULL, why, whylen, e);
}

int childproc_recv_text(childproc *c, double deadline_s, cJSON **out, char **text, char *why,
                        size_t whylen, tf_err *e) {
  double end = tf_monotonic_s() + deadline_s;
  *out = NULL;
  if (text) *text = NULL;
  for (;;) {
    char *line = take_line(c);
    if (line) {
      *out = jsonio_parse(line, "measure child's reply", e);
      if (*out && text)
        *text = line;
      else
        free(line);
      return *out ? CHILD_LINE : -1;
    }
    double left = end - tf_monotonic_s();
    if (left <= 0) {
      snprintf(why, whylen, "timeout: no answer from the measure child within %.1f s; killed",
               deadline_s);
      childproc_kill(c);
      return CHILD_TIMEOUT;
    }
    struct pollfd p = {.fd = c->from_fd, .events = POLLIN};
    int ms = left > 1.0 ? 1000 : (int)(left * 1000) + 1;
    int rc = poll(&p, 1, ms);
    if (rc < 0 && errno != EINTR) return tf_fail(e, TF_EXIT_FAIL, "poll: %s", strerror(errno));
    if (rc <= 0) continue;
    rc = fill(c);
    if (rc < 0) return tf_fail(e, TF_EXIT_FAIL, "reading the measure child: %s", strerror(errno));
    if (rc == 0) {
      reap(c, why, whylen);
      return CHILD_GONE;
    }
  }
}

void childproc_stop(childproc *c, double grace_s) {
  if (c->pid <= 0) return;
  close(c->to_fd);
  c->to_fd = -1;
  double t0 = tf_monotonic_s();
  while (tf_monotonic_s() - t0 < grace_s) {
    if (waitpid(c->pid, NULL, WNOHANG) == c->pid) {
      c->pid = 0;
      close_fds(c);
      return;
    }
    usleep(10000);
  }
  childproc_kill(c);
}
