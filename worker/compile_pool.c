/* compile_pool: a worker's compiles ahead (worker/compile_pool.h).
 *
 * The worker's thread only hands lists over (compile_pool_want: a copy under the mutex and a
 * byte on the wake pipe); the pool's thread does the rest: it reads each new list's cache
 * keys (reading the sources: not on the worker's path between coordinator and child), stops
 * the compiles no longer wanted, starts what fits, and waits in poll(2) on the wake pipe and
 * its processes' stdout, whose end of file says that a compile ended. */
#define _GNU_SOURCE
#include "worker/compile_pool.h"

#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <poll.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "common/clock.h"
#include "common/jsonio.h"
#include "worker/cpus.h" /* defines: cpus_beside_mine */

extern char **environ;

#define POOL_MAX_RUN 256
#define COMPILE_MAX_REQUEST (1L << 20)

typedef struct running {
  pid_t pid;
  int fd;                   /* its stdout: end of file when it ends */
  int stopping;             /* killed: no longer wanted */
  int wanted;               /* the newest list (or the current job) still holds its kernel */
  char key[CACHE_KEY_HEX];
} running;

/* A kernel to compile: a program of one name expression (compile/program.h). */
typedef struct wanted {
  program_ref prog;
  char key[CACHE_KEY_HEX];
} wanted;

#define POOL_MAX_QUEUE (COMPILE_POOL_MAX_WANT * ARM_COUNT)

struct compile_pool {
  compile_pool_opts o;
  char exe[4096], arch[32];
  pthread_t thread;
  int wake[2];
  /* shared with the worker's thread, under mu */
  pthread_mutex_t mu;
  program_ref news[COMPILE_POOL_MAX_WANT], news_current;
  int nnews, has_news, news_has_current, stop;
  double grace_s;           /* how long a stop lets running compiles finish */
  compile_pool_stats stats;
  double first_want;        /* when the first list came (monotonic seconds); 0: none yet */
  /* the pool thread's own */
  wanted queue[POOL_MAX_QUEUE];
  int nqueue, qhead;
  char current_keys[ARM_COUNT][CACHE_KEY_HEX]; /* the current job's kernels */
  int ncurrent;
  running run[POOL_MAX_RUN];
  int nrun;
};

int compile_pool_jobs(int asked, const cpus_share *cpus) {
  if (asked >= 0) return asked;
  if (cpus->cpus <= 1) return 0;
  int per = cpus_per_worker(cpus);
  return per - 1 > 1 ? per - 1 : 1;
}

static void bump(compile_pool *p, long *field, long by) {
  pthread_mutex_lock(&p->mu);
  *field += by;
  pthread_mutex_unlock(&p->mu);
}

/* The cache key of kernel, a program of one name expression ("" when its sources cannot be
 * read: then there is nothing to compile ahead, and the measure child will say why); 1 when
 * the cache holds it. */
static int key_of(const compile_pool *p, const program_ref *kernel, char key[CACHE_KEY_HEX]) {
  program_req pr;
  tf_err e = {0};
  const program_target t = {.arch = p->arch, .sim = &p->o.simulate};
  program_request(kernel, &t, &pr);
  key[0] = '\0';
  int rc = pr.nkernels == 1 ? compile_cached(&pr.req[0], key, &e) : -1;
  if (rc < 0) key[0] = '\0';
  return rc == 1;
}

static int is_current(const compile_pool *p, const char *key) {
  for (int i = 0; i < p->ncurrent; i++)
    if (strcmp(p->current_keys[i], key) == 0) return 1;
  return 0;
}

static int running_index(const compile_pool *p, const char *key) {
  for (int i = 0; i < p->nrun; i++)
    if (strcmp(p->run[i].key, key) == 0) return i;
  return -1;
}

static int queued(const compile_pool *p, int upto, const char *key) {
  for (int i = 0; i < upto; i++)
    if (strcmp(p->queue[i].key, key) == 0) return 1;
  return 0;
}

/* The kernels of list, distinct, in order (a program's best and control repeat from one
 * program to the next); how many. */
static int kernels_of(const program_ref *list, int n, program_ref *out) {
  int nk = 0;
  for (int i = 0; i < n; i++) {
    program_ref k[ARM_COUNT];
    int m = program_kernels(&list[i], k);
    for (int j = 0; j < m && nk < POOL_MAX_QUEUE; j++) {
      int seen = 0;
      for (int q = nk - 1; q >= 0 && !seen; q--) seen = program_equal(&out[q], &k[j]);
      if (!seen) out[nk++] = k[j];
    }
  }
  return nk;
}

/* A new list: the queue becomes its programs' kernels that are neither cached nor running,
 * in order; compiles of kernels it no longer holds are stopped. */
static void plan(compile_pool *p, const program_ref *list, int n, const program_ref *current) {
  long skipped = 0, dropped = p->nqueue - p->qhead;
  program_ref *kern = malloc(sizeof(program_ref) * POOL_MAX_QUEUE);
  int nk = kern ? kernels_of(list, n, kern) : 0;
  program_ref cur[ARM_COUNT];
  int missing[ARM_COUNT], nmissing = 0;
  p->ncurrent = current ? program_kernels(current, cur) : 0;
  for (int i = 0; i < p->ncurrent; i++)
    if (!key_of(p, &cur[i], p->current_keys[i]) && p->current_keys[i][0]) missing[nmissing++] = i;
  for (int r = 0; r < p->nrun; r++) p->run[r].wanted = is_current(p, p->run[r].key);
  p->nqueue = p->qhead = 0;
  /* The child compiles the current job's kernels in order: the pool takes those after the first
   * the cache lacks, so that a job that needs several (a campaign's first) waits for its
   * slowest, not for their sum. */
  for (int m = 1; m < nmissing; m++) {
    const char *key = p->current_keys[missing[m]];
    if (running_index(p, key) >= 0) continue;
    p->queue[p->nqueue].prog = cur[missing[m]];
    memcpy(p->queue[p->nqueue].key, key, CACHE_KEY_HEX);
    p->nqueue++;
  }
  for (int i = 0; i < nk && p->nqueue < POOL_MAX_QUEUE; i++) {
    char key[CACHE_KEY_HEX];
    int cached = key_of(p, &kern[i], key);
    int r = key[0] ? running_index(p, key) : -1;
    if (r >= 0) p->run[r].wanted = 1; /* running, or just done: left alone */
    skipped += cached;
    if (cached || !key[0] || r >= 0 || is_current(p, key) || queued(p, p->nqueue, key)) continue;
    p->queue[p->nqueue].prog = kern[i];
    memcpy(p->queue[p->nqueue].key, key, CACHE_KEY_HEX);
    p->nqueue++;
  }
  free(kern);
  for (int r = 0; r < p->nrun; r++)
    if (!p->run[r].wanted && !p->run[r].stopping) {
      kill(p->run[r].pid, SIGKILL);
      p->run[r].stopping = 1;
    }
  pthread_mutex_lock(&p->mu);
  p->stats.skipped += skipped;
  p->stats.dropped += dropped;
  pthread_mutex_unlock(&p->mu);
}

static int start(compile_pool *p, const wanted *w) {
  int in[2], out[2];
  if (pipe2(in, O_CLOEXEC)) return -1;
  if (pipe2(out, O_CLOEXEC)) {
    close(in[0]);
    close(in[1]);
    return -1;
  }
  char sim[32];
  double sim_s = program_kernel_sim_seconds(w->prog.exprs[0], &p->o.simulate);
  snprintf(sim, sizeof sim, "%.17g", sim_s);
  char *argv[] = {p->exe, "compile", "--arch", p->arch, sim_s > 0 ? "--simulate" : NULL, sim,
                  NULL};
  posix_spawn_file_actions_t fa;
  posix_spawn_file_actions_init(&fa);
  posix_spawn_file_actions_adddup2(&fa, in[0], 0);
  posix_spawn_file_actions_adddup2(&fa, out[1], 1);
  /* In the idle class from its first instruction: loading the binary's libraries is work too,
   * and it would otherwise compete with the measure child at the child's own priority. */
  posix_spawnattr_t at;
  struct sched_param none = {.sched_priority = 0};
  sigset_t nothing; /* no signal blocked, whatever the spawning thread blocks */
  sigemptyset(&nothing);
  posix_spawnattr_init(&at);
  posix_spawnattr_setsigmask(&at, &nothing);
  posix_spawnattr_setflags(&at, POSIX_SPAWN_SETSCHEDULER | POSIX_SPAWN_SETSIGMASK);
  posix_spawnattr_setschedpolicy(&at, SCHED_IDLE);
  posix_spawnattr_setschedparam(&at, &none);
  pid_t pid = 0;
  int rc = posix_spawn(&pid, p->exe, &fa, &at, argv, environ);
  if (rc == EPERM || rc == EINVAL) /* no idle class here: the compile lowers itself to nice 10 */
    rc = posix_spawn(&pid, p->exe, &fa, NULL, argv, environ);
  posix_spawnattr_destroy(&at);
  posix_spawn_file_actions_destroy(&fa);
  close(in[0]);
  close(out[1]);
  if (rc == 0) {
    cJSON *req = program_to_json(&w->prog);
    cJSON_AddStringToObject(req, "root", w->prog.root);
    char *text = cJSON_PrintUnformatted(req);
    cJSON_Delete(req);
    /* a few kB, less than a pipe holds: written at once; a child gone first is its error */
    if (text && write(in[1], text, strlen(text)) < 0) {
    }
    cJSON_free(text);
  }
  close(in[1]);
  if (rc != 0) {
    close(out[0]);
    return -1;
  }
  running *r = &p->run[p->nrun++];
  *r = (running){.pid = pid, .fd = out[0]};
  memcpy(r->key, w->key, CACHE_KEY_HEX);
  bump(p, &p->stats.started, 1);
  return 0;
}

/* Start queued kernels while there is room; one the cache has gained meanwhile is skipped. */
static void fill(compile_pool *p) {
  while (p->nrun < p->o.jobs && p->nrun < POOL_MAX_RUN && p->qhead < p->nqueue) {
    wanted *w = &p->queue[p->qhead++];
    char key[CACHE_KEY_HEX];
    if (key_of(p, &w->prog, key)) {
      bump(p, &p->stats.skipped, 1);
      continue;
    }
    if (start(p, w)) break; /* no process now: the next list tries again */
  }
}

/* Reap a compile and count it, with the CPU time it took (wait4: NVRTC runs in that process),
 * so that a run can tell a pool short of cores from one that waited for lists. */
static void reap(compile_pool *p, int i) {
  running *r = &p->run[i];
  struct rusage ru = {0};
  close(r->fd);
  while (wait4(r->pid, NULL, 0, &ru) < 0 && errno == EINTR) {
  }
  double cpu = (double)ru.ru_utime.tv_sec + (double)ru.ru_utime.tv_usec * 1e-6 +
               (double)ru.ru_stime.tv_sec + (double)ru.ru_stime.tv_usec * 1e-6;
  pthread_mutex_lock(&p->mu);
  if (r->stopping) {
    p->stats.stopped++;
    p->stats.stopped_cpu_s += cpu;
  } else {
    p->stats.finished++;
    p->stats.finished_cpu_s += cpu;
  }
  pthread_mutex_unlock(&p->mu);
  p->run[i] = p->run[--p->nrun];
}

/* Wait for a new list or the end of a compile (at most timeout_ms; -1: no limit). */
static void wait_events(compile_pool *p, int timeout_ms) {
  struct pollfd fds[POOL_MAX_RUN + 1];
  fds[0] = (struct pollfd){.fd = p->wake[0], .events = POLLIN};
  for (int i = 0; i < p->nrun; i++) fds[i + 1] = (struct pollfd){.fd = p->run[i].fd, .events = POLLIN};
  int n = p->nrun;
  if (poll(fds, (nfds_t)n + 1, timeout_ms) <= 0) return;
  char buf[4096];
  if (fds[0].revents) while (read(p->wake[0], buf, sizeof buf) > 0) {
    }
  for (int i = n - 1; i >= 0; i--) { /* from the end: reap moves the last one into i */
    if (!fds[i + 1].revents) continue;
    ssize_t got = read(p->run[i].fd, buf, sizeof buf); /* its one line: not needed here */
    if (got <= 0 && !(got < 0 && errno == EINTR)) reap(p, i);
  }
}

/* Plan the newest list, if one came; *stop: the pool is to stop. */
static void take_news(compile_pool *p, int *stop) {
  program_ref *list = malloc(sizeof(program_ref) * COMPILE_POOL_MAX_WANT);
  program_ref current = {0};
  int n = 0, has = 0, has_current = 0;
  pthread_mutex_lock(&p->mu);
  *stop = p->stop;
  if (p->has_news && list) {
    n = p->nnews;
    memcpy(list, p->news, sizeof(program_ref) * (size_t)n);
    current = p->news_current;
    has_current = p->news_has_current;
    has = 1;
    p->has_news = 0;
  }
  pthread_mutex_unlock(&p->mu);
  if (has && !*stop) plan(p, list, n, has_current ? &current : NULL);
  free(list);
}

static void finish(compile_pool *p, double grace_s) {
  double end = tf_monotonic_s() + grace_s;
  while (p->nrun > 0 && tf_monotonic_s() < end) wait_events(p, 50);
  for (int i = 0; i < p->nrun; i++) kill(p->run[i].pid, SIGKILL);
  while (p->nrun > 0) reap(p, p->nrun - 1);
}

static void *pool_main(void *arg) {
  compile_pool *p = arg;
  for (;;) {
    int stop = 0;
    take_news(p, &stop);
    if (stop) break;
    fill(p);
    wait_events(p, -1);
  }
  pthread_mutex_lock(&p->mu);
  double grace = p->grace_s;
  pthread_mutex_unlock(&p->mu);
  finish(p, grace);
  return NULL;
}

/* The pool's thread on cpus_beside_mine (its compiles inherit them); where the kernel refuses
 * that set (a cpuset without those cores), on the worker's. */
static int start_thread(compile_pool *p) {
  pthread_attr_t at;
  cpu_set_t cpus;
  cpus_beside_mine(&cpus);
  int rc = pthread_attr_init(&at);
  if (rc == 0) {
    if (pthread_attr_setaffinity_np(&at, sizeof cpus, &cpus) == 0)
      rc = pthread_create(&p->thread, &at, pool_main, p);
    else
      rc = EINVAL;
    pthread_attr_destroy(&at);
  }
  if (rc) rc = pthread_create(&p->thread, NULL, pool_main, p);
  return rc;
}

compile_pool *compile_pool_start(const compile_pool_opts *o, tf_err *e) {
  if (o->jobs < 1) {
    tf_fail(e, TF_EXIT_FAIL, "compile pool: %d compiles at once", o->jobs);
    return NULL;
  }
  compile_pool *p = calloc(1, sizeof *p);
  if (!p) {
    tf_fail(e, TF_EXIT_FAIL, "compile pool: out of memory");
    return NULL;
  }
  p->o = *o;
  snprintf(p->exe, sizeof p->exe, "%s", o->exe);
  snprintf(p->arch, sizeof p->arch, "%s", o->arch);
  p->o.exe = p->exe;
  p->o.arch = p->arch;
  signal(SIGPIPE, SIG_IGN); /* a compile process gone before reading its request */
  if (pipe2(p->wake, O_CLOEXEC | O_NONBLOCK)) {
    free(p);
    tf_fail(e, TF_EXIT_FAIL, "compile pool: pipe: %s", strerror(errno));
    return NULL;
  }
  pthread_mutex_init(&p->mu, NULL);
  int rc = start_thread(p);
  if (rc) {
    close(p->wake[0]);
    close(p->wake[1]);
    pthread_mutex_destroy(&p->mu);
    free(p);
    tf_fail(e, TF_EXIT_FAIL, "compile pool: cannot start its thread: %s", strerror(rc));
    return NULL;
  }
  return p;
}

static void poke(compile_pool *p) {
  if (write(p->wake[1], "x", 1) < 0) { /* full: a wake-up is pending anyway */
  }
}

void compile_pool_want(compile_pool *p, const program_ref *current, const program_ref *next,
                       int n) {
  if (!p) return;
  if (n > COMPILE_POOL_MAX_WANT) n = COMPILE_POOL_MAX_WANT;
  pthread_mutex_lock(&p->mu);
  if (p->first_want == 0) p->first_want = tf_monotonic_s();
  memcpy(p->news, next, sizeof(program_ref) * (size_t)(n > 0 ? n : 0));
  p->nnews = n > 0 ? n : 0;
  p->news_has_current = current != NULL;
  if (current) p->news_current = *current;
  p->has_news = 1;
  pthread_mutex_unlock(&p->mu);
  poke(p);
}

void compile_pool_get_stats(compile_pool *p, compile_pool_stats *out) {
  memset(out, 0, sizeof *out);
  if (!p) return;
  pthread_mutex_lock(&p->mu);
  *out = p->stats;
  out->open_s = p->first_want > 0 ? tf_monotonic_s() - p->first_want : 0.0;
  out->jobs = p->o.jobs;
  pthread_mutex_unlock(&p->mu);
}

void compile_pool_stop(compile_pool *p, double grace_s) {
  if (!p) return;
  pthread_mutex_lock(&p->mu);
  p->stop = 1;
  p->grace_s = grace_s;
  pthread_mutex_unlock(&p->mu);
  poke(p);
  pthread_join(p->thread, NULL);
  close(p->wake[0]);
  close(p->wake[1]);
  pthread_mutex_destroy(&p->mu);
  free(p);
}

/* ---------------------------------------------------------------- `tunefarm compile` */

static void compile_usage(FILE *f) {
  fprintf(f,
          "usage: tunefarm compile [--arch sm_XY] [--simulate SECONDS] < PROGRAM.json\n"
          "\n"
          "Compile a program's kernels into the cubin cache, each alone, as the measure child\n"
          "does: what a worker's compile pool starts to compile the next jobs ahead of the GPU\n"
          "(not a command for people). PROGRAM is {\"root\": R, \"sources\": [...], \"exprs\":\n"
          "[1 to 3 name expressions]}. One line on stdout per kernel, in order, up to the first\n"
          "that fails: {\"key\", \"status\": compiled|cached|refused|error, \"ms\", \"message\"}.\n"
          "  --arch A        the architecture (default sm_90)\n"
          "  --simulate S    the simulated device's compile: S seconds per kernel, no NVRTC\n"
          "Exit status: 0 compiled, cached or refused; 1 any other failure; 2 bad usage.\n");
}

/* In the scheduler's idle class (SCHED_IDLE: it runs only on a core nobody else wants, and a
 * waking measure child or coordinator takes the core at once, where at nice 10 it can wait
 * behind a compile), and gone with the worker. Where the idle class is refused, nice 10. The
 * pool spawns it in that class already, on the pool's cores (cpus_beside_mine). */
static void become_background(void) {
  prctl(PR_SET_PDEATHSIG, SIGKILL);
  struct sched_param none = {.sched_priority = 0};
  if (sched_setscheduler(0, SCHED_IDLE, &none) && setpriority(PRIO_PROCESS, 0, 10)) {
    /* best effort: a compile at the worker's priority still compiles */
  }
}

static int compile_args(int argc, char **argv, const char **arch, double *sim) {
  static const struct option longs[] = {{"arch", required_argument, 0, 'a'},
                                         {"simulate", required_argument, 0, 's'},
                                         {"help", no_argument, 0, 'h'},
                                         {0, 0, 0, 0}};
  int c;
  optind = 1;
  while ((c = getopt_long(argc, argv, "a:s:h", longs, NULL)) != -1) {
    char *end = NULL;
    switch (c) {
      case 'a': *arch = optarg; break;
      case 's':
        *sim = strtod(optarg, &end);
        if (end == optarg || *end || !(*sim >= 0) || *sim > 3600) {
          fprintf(stderr, "tunefarm compile: --simulate wants seconds, not '%s'\n", optarg);
          return 2;
        }
        break;
      case 'h': compile_usage(stdout); return 1;
      default: compile_usage(stderr); return 2;
    }
  }
  if (optind < argc) {
    compile_usage(stderr);
    return 2;
  }
  return 0;
}

static void say(const char *key, const char *status, double ms, const char *message) {
  cJSON *o = cJSON_CreateObject();
  cJSON_AddStringToObject(o, "key", key);
  cJSON_AddStringToObject(o, "status", status);
  cJSON_AddNumberToObject(o, "ms", ms);
  if (message) cJSON_AddStringToObject(o, "message", message);
  jsonio_write_line(stdout, o);
  cJSON_Delete(o);
}

/* The program on stdin, or NULL with e. */
static cJSON *read_program(program_ref *prog, tf_err *e) {
  char *text = malloc(COMPILE_MAX_REQUEST + 1);
  size_t n = 0;
  ssize_t got;
  if (!text) return tf_fail(e, TF_EXIT_FAIL, "out of memory"), NULL;
  while (n < COMPILE_MAX_REQUEST &&
         ((got = read(0, text + n, COMPILE_MAX_REQUEST - n)) > 0 || (got < 0 && errno == EINTR)))
    if (got > 0) n += (size_t)got;
  text[n] = '\0';
  cJSON *o = jsonio_parse(text, "program", e);
  free(text);
  const cJSON *root = o ? cJSON_GetObjectItemCaseSensitive(o, "root") : NULL;
  if (o && program_from_json(o, cJSON_IsString(root) ? root->valuestring : "", prog, e)) {
    cJSON_Delete(o);
    return NULL;
  }
  return o;
}

int compile_main(int argc, char **argv) {
  const char *arch = "sm_90";
  double sim = 0.0;
  int rc = compile_args(argc, argv, &arch, &sim);
  if (rc) return rc == 1 ? 0 : 2;
  become_background();
  tf_err e = {0};
  program_ref prog;
  cJSON *o = read_program(&prog, &e);
  if (!o) {
    say("", "error", 0, e.msg);
    return 1;
  }
  cJSON_Delete(o);
  const sim_compile flat = {sim, 0.0, 0.0, 0};
  const program_target t = {.arch = arch, .sim = &flat};
  program_req pr;
  program_request(&prog, &t, &pr);
  for (int k = 0; k < pr.nkernels && rc == 0; k++) {
    compile_result cr;
    char key[CACHE_KEY_HEX] = "";
    compile_cached(&pr.req[k], key, NULL);
    rc = compile_program(&pr.req[k], &cr, &e);
    const char *status = rc == 0 ? (cr.cache_hit ? "cached" : "compiled")
                         : e.code == TF_COMPILE_REFUSED ? "refused" : "error";
    say(key, status, cr.ms, rc ? e.msg : NULL);
    compile_release(&cr);
  }
  return rc == 0 || e.code == TF_COMPILE_REFUSED ? 0 : 1;
}
