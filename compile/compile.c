/* compile: one NVRTC program, several instantiations, through the cubin cache
 * (compile/compile.h).
 *
 * The cache key covers everything that decides the machine code: the
 * concatenated source (whose #line directives carry the paths), each name
 * expression in order, the options, the NVRTC version and the architecture.
 * An entry is two files, "<key>.cubin" and "<key>.names" (the lowered names,
 * one per line, in the order of the request); a hit needs both, so a reader
 * racing a writer at worst compiles again.
 *
 * NVRTC calls go through NVRTC_CHECK, which fetches the program log before it
 * judges the result (the log is the only account of why a compile failed).
 * A program NVRTC refuses is a normal outcome for a tuning farm (a variant
 * that does not compile): it comes back as e->code = TF_COMPILE_REFUSED with the
 * full log in out->log, distinct from a broken toolchain (TF_EXIT_FAIL). Its log is
 * kept as "<key>.refused": NVRTC refuses the same program the same way every time.
 *
 * The lock of a program is "<key>.lock", held with flock(2) while one process compiles it.
 * The holder removes the file before letting go, and a process that locked a file no longer
 * at that name (removed by a holder in between) takes the new one, so two processes never
 * hold one program's lock. flock is per node: ranks of several nodes sharing one cache
 * folder over NFS may compile a program twice, which the atomic entries make harmless.
 *
 * Ownership: out is zeroed on entry and always left releasable
 * (compile_release), success or failure. */
#include "compile/compile.h"

/* nvrtc.h tests macros it never defines; CMake includes it as a system header, a plain
 * -I build does not, so quiet -Wundef for it alone. */
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wundef"
#include <nvrtc.h>
#pragma GCC diagnostic pop
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <ctype.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "common/cache.h"  /* defines: cache_dir, cache_key, cache_get, cache_put */
#include "common/jsonio.h" /* defines: jsonio_slurp */
#include "common/source.h" /* defines: source_gather, source_confined, source_headers */

#define COMPILE_NOPTS 4

static double now_ms(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

/* ---------------------------------------------------------------- NVRTC checks */

/* Replace out->log with the program's current log. */
static int fetch_log(nvrtcProgram prog, compile_result *out) {
  size_t size = 0;
  if (nvrtcGetProgramLogSize(prog, &size) != NVRTC_SUCCESS) return -1;
  char *log = malloc(size + 1);
  if (!log) return -1;
  if (nvrtcGetProgramLog(prog, log) != NVRTC_SUCCESS) {
    free(log);
    return -1;
  }
  log[size] = '\0';
  free(out->log);
  out->log = log;
  return 0;
}

/* The line of the log a person should read first: the first error, else the first line. */
static void first_error(const char *log, char *buf, size_t len) {
  const char *line = log ? strstr(log, "error") : NULL;
  if (line) {
    while (line > log && line[-1] != '\n') line--;
  } else {
    line = log ? log : "";
  }
  size_t n = strcspn(line, "\n");
  if (n == 0) {
    snprintf(buf, len, "(the log is empty)");
    return;
  }
  snprintf(buf, len, "%.*s%s", n > 300 ? 300 : (int)n, line, n > 300 ? "..." : "");
}

/* With `prog`, fetch the log first, whatever the result; then judge. */
static int nvrtc_check(nvrtcResult rc, const char *call, const char *file, int line,
                       nvrtcProgram prog, compile_result *out, tf_err *e) {
  if (prog && fetch_log(prog, out) < 0 && rc == NVRTC_SUCCESS)
    return tf_fail(e, TF_EXIT_FAIL, "%s:%d: cannot read the nvrtc program log", file, line);
  if (rc == NVRTC_SUCCESS) return 0;
  if (rc == NVRTC_ERROR_COMPILATION) {
    char summary[400];
    first_error(out->log, summary, sizeof summary);
    return tf_fail(e, TF_COMPILE_REFUSED, "nvrtc refused the program: %s", summary);
  }
  return tf_fail(e, TF_EXIT_FAIL, "%s:%d: %s: %s", file, line, call, nvrtcGetErrorString(rc));
}

#define NVRTC_CHECK(call, prog, out, e) \
  nvrtc_check((call), #call, __FILE__, __LINE__, (prog), (out), (e))

#ifndef TF_CUDA_INCLUDE
#define TF_CUDA_INCLUDE "/usr/local/cuda/include"
#endif

/* ---------------------------------------------------------------- source */

/* Append `len` bytes to a growing buffer; may reallocate *buf. */
static int append(char **buf, size_t *len, size_t *cap, const char *data, size_t n) {
  if (*len + n + 1 > *cap) {
    size_t want = (*len + n + 1) * 2;
    char *nb = realloc(*buf, want);
    if (!nb) return -1;
    *buf = nb;
    *cap = want;
  }
  memcpy(*buf + *len, data, n);
  *len += n;
  (*buf)[*len] = '\0';
  return 0;
}

/* `#line 1 "<path>"` with '"' and '\' escaped as C string literals require. */
static int append_line_directive(char **buf, size_t *len, size_t *cap, const char *path) {
  if (append(buf, len, cap, "#line 1 \"", 9) < 0) return -1;
  for (const char *c = path; *c; c++) {
    if ((*c == '"' || *c == '\\') && append(buf, len, cap, "\\", 1) < 0) return -1;
    if (append(buf, len, cap, c, 1) < 0) return -1;
  }
  return append(buf, len, cap, "\"\n", 2);
}

/* The program text: every file, each preceded by its #line and ended by a newline; what each
 * includes (confined to its folder, source_check) gathered into h. */
static char *read_sources(const compile_req *req, size_t *len, source_headers *h, tf_err *e) {
  char *buf = NULL;
  size_t cap = 0;
  *len = 0;
  if (req->text) {
    if (append(&buf, len, &cap, req->text, strlen(req->text)) < 0) {
      tf_fail(e, TF_EXIT_FAIL, "program '%s': out of memory", req->text_name);
      return NULL;
    }
    return buf;
  }
  for (int i = 0; i < req->nsources; i++) {
    size_t n = 0;
    char dir[PATH_MAX];
    if (source_confined(req->source_paths[i], dir, e)) goto fail;
    char *text = jsonio_slurp(req->source_paths[i], "kernel source", SOURCE_MAX_BYTES, &n, e);
    if (!text) goto fail;
    if (source_gather(req->source_paths[i], dir, text, n, h, e)) {
      free(text);
      goto fail;
    }
    int rc = append_line_directive(&buf, len, &cap, req->source_paths[i]);
    if (rc == 0) rc = append(&buf, len, &cap, text, n);
    if (rc == 0 && (n == 0 || text[n - 1] != '\n')) rc = append(&buf, len, &cap, "\n", 1);
    free(text);
    if (rc < 0) {
      tf_fail(e, TF_EXIT_FAIL, "kernel source '%s': out of memory", req->source_paths[i]);
      goto fail;
    }
  }
  return buf;
fail:
  free(buf);
  return NULL;
}

/* ---------------------------------------------------------------- cache */

typedef struct program {
  char *src;
  size_t srclen;
  source_headers h;
  char archopt[64];
  const char *opts[COMPILE_NOPTS + 1];
  int nopts; /* COMPILE_NOPTS, and one more (-I the toolkit's headers) when a source needs it */
  char key[CACHE_KEY_HEX];
  char dir[4096];
} program;

static void add_part(const void **parts, size_t *lens, int *n, const void *data, size_t len) {
  parts[*n] = data;
  lens[*n] = len;
  (*n)++;
}

static void program_key(const compile_req *req, program *p) {
  char joined[512] = "", version[32];
  for (int i = 0; i < p->nopts; i++) {
    if (i) strncat(joined, " ", sizeof joined - strlen(joined) - 1);
    strncat(joined, p->opts[i], sizeof joined - strlen(joined) - 1);
  }
  int major = 0, minor = 0;
  compile_nvrtc_version(&major, &minor);
  snprintf(version, sizeof version, "%d.%d", major, minor);

  const void *parts[COMPILE_MAX_EXPRS + 2 * SOURCE_MAX_HEADERS + 4];
  size_t lens[COMPILE_MAX_EXPRS + 2 * SOURCE_MAX_HEADERS + 4];
  int n = 0;
  add_part(parts, lens, &n, p->src, p->srclen);
  for (int i = 0; i < p->h.n; i++) { /* an edited header is another program */
    add_part(parts, lens, &n, p->h.names[i], strlen(p->h.names[i]) + 1);
    add_part(parts, lens, &n, p->h.texts[i], p->h.lens[i]);
  }
  for (int i = 0; i < req->nexprs; i++)
    add_part(parts, lens, &n, req->name_exprs[i], strlen(req->name_exprs[i]));
  add_part(parts, lens, &n, joined, strlen(joined));
  add_part(parts, lens, &n, version, strlen(version));
  add_part(parts, lens, &n, req->arch, strlen(req->arch));
  if (req->simulate_s > 0) add_part(parts, lens, &n, "simulated", 9); /* never a real cubin */
  cache_key(parts, lens, n, p->key);
}

/* Split the .names entry into out->lowered; -1 unless it holds exactly n usable names. */
static int parse_names(const char *text, size_t len, int n, compile_result *out) {
  size_t pos = 0;
  for (int i = 0; i < n; i++) {
    const char *nl = memchr(text + pos, '\n', len - pos);
    if (!nl) return -1;
    size_t w = (size_t)(nl - (text + pos));
    if (w == 0 || w >= sizeof out->lowered[i]) return -1;
    memcpy(out->lowered[i], text + pos, w);
    out->lowered[i][w] = '\0';
    pos += w + 1;
  }
  return pos == len ? 0 : -1;
}

/* A refusal cached: 1 with out->log and e filled as the compile that was refused filled them. */
static int refusal_lookup(const program *p, compile_result *out, tf_err *e) {
  void *log = NULL;
  size_t len = 0;
  if (cache_get(p->dir, p->key, ".refused", &log, &len) != 0) return 0;
  char *text = realloc(log, len + 1);
  if (!text) {
    free(log);
    return 0;
  }
  text[len] = '\0';
  out->log = text;
  out->cache_hit = 1;
  char summary[400];
  first_error(text, summary, sizeof summary);
  tf_fail(e, TF_COMPILE_REFUSED, "nvrtc refused the program: %s", summary);
  return 1;
}

/* 1 on a hit (out filled), 0 on a miss or an entry we cannot use. */
static int cache_lookup(const program *p, int nexprs, compile_result *out) {
  void *names = NULL, *cubin = NULL;
  size_t names_len = 0, cubin_len = 0;
  if (cache_get(p->dir, p->key, ".names", &names, &names_len) != 0) return 0;
  int ok = parse_names(names, names_len, nexprs, out) == 0 &&
           cache_get(p->dir, p->key, ".cubin", &cubin, &cubin_len) == 0 && cubin_len > 0;
  free(names);
  if (!ok) {
    free(cubin);
    return 0;
  }
  if (!(out->log = strdup(""))) {
    free(cubin);
    return 0;
  }
  out->cubin = cubin;
  out->cubin_size = cubin_len;
  out->cache_hit = 1;
  return 1;
}

/* Failure to store is not a failure to compile: the cubin is in hand, and a missing
 * entry only costs a later recompile. The error is dropped on purpose. */
static void cache_store(const program *p, int nexprs, const compile_result *out) {
  size_t len = 0;
  for (int i = 0; i < nexprs; i++) len += strlen(out->lowered[i]) + 1;
  char *names = malloc(len + 1);
  if (!names) return;
  size_t pos = 0;
  for (int i = 0; i < nexprs; i++) pos += (size_t)sprintf(names + pos, "%s\n", out->lowered[i]);
  tf_err ignored = {0};
  if (cache_put(p->dir, p->key, ".cubin", out->cubin, out->cubin_size, &ignored) == 0)
    cache_put(p->dir, p->key, ".names", names, len, &ignored);
  free(names);
}

static void refusal_store(const program *p, const compile_result *out) {
  tf_err ignored = {0};
  const char *log = out->log ? out->log : "";
  cache_put(p->dir, p->key, ".refused", log, strlen(log), &ignored);
}

/* ---------------------------------------------------------------- one compile at a time */

static void sleep_ms(double ms) {
  struct timespec ts = {(time_t)(ms / 1e3), (long)(((long long)(ms * 1e6)) % 1000000000LL)};
  while (nanosleep(&ts, &ts) != 0 && errno == EINTR) {
  }
}

/* The program's lock: its descriptor, or -1 when it cannot be had (a folder we cannot write a
 * lock in, or a holder past wait_s: the caller compiles without it). *waited_ms: how long
 * another process held it. */
static int lock_program(const program *p, double wait_s, double *waited_ms) {
  char path[4200];
  snprintf(path, sizeof path, "%s/%s.lock", p->dir, p->key);
  double t0 = now_ms();
  *waited_ms = 0;
  for (;;) {
    int fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0666);
    if (fd < 0) return -1;
    while (flock(fd, LOCK_EX | LOCK_NB) != 0) {
      if ((errno != EWOULDBLOCK && errno != EINTR) || now_ms() - t0 > wait_s * 1e3) {
        close(fd);
        *waited_ms = now_ms() - t0;
        return -1;
      }
      sleep_ms(2);
    }
    *waited_ms = now_ms() - t0;
    struct stat held, named;
    if (fstat(fd, &held) == 0 && stat(path, &named) == 0 && held.st_ino == named.st_ino &&
        held.st_dev == named.st_dev)
      return fd;
    close(fd); /* the holder before us removed this one: lock the file now at that name */
  }
}

static void unlock_program(const program *p, int fd) {
  if (fd < 0) return;
  char path[4200];
  snprintf(path, sizeof path, "%s/%s.lock", p->dir, p->key);
  unlink(path); /* before letting go: see the header comment */
  close(fd);
}

/* The simulated device's compile: simulate_s of sleep, a stand-in cubin naming the program,
 * the name expressions as their own lowered names. */
static int simulated_build(const compile_req *req, const program *p, compile_result *out,
                           tf_err *e) {
  sleep_ms(req->simulate_s * 1e3);
  char text[96];
  int n = snprintf(text, sizeof text, "%s%s\n", CACHE_SIM_CUBIN, p->key);
  if (!(out->cubin = malloc((size_t)n))) return tf_fail(e, TF_EXIT_FAIL, "out of memory");
  memcpy(out->cubin, text, (size_t)n);
  out->cubin_size = (size_t)n;
  for (int i = 0; i < req->nexprs; i++)
    snprintf(out->lowered[i], sizeof out->lowered[i], "%s", req->name_exprs[i]);
  return 0;
}

/* ---------------------------------------------------------------- compile */

static int fetch_outputs(nvrtcProgram prog, const compile_req *req, compile_result *out,
                         tf_err *e) {
  size_t size = 0;
  if (NVRTC_CHECK(nvrtcGetCUBINSize(prog, &size), NULL, out, e) < 0) return -1;
  if (size == 0) return tf_fail(e, TF_EXIT_FAIL, "nvrtc produced no cubin for '%s'", req->arch);
  if (!(out->cubin = malloc(size))) return tf_fail(e, TF_EXIT_FAIL, "out of memory for the cubin");
  out->cubin_size = size;
  if (NVRTC_CHECK(nvrtcGetCUBIN(prog, out->cubin), NULL, out, e) < 0) return -1;
  for (int i = 0; i < req->nexprs; i++) {
    const char *lowered = NULL;
    if (NVRTC_CHECK(nvrtcGetLoweredName(prog, req->name_exprs[i], &lowered), NULL, out, e) < 0)
      return tf_wrap(e, "name expression '%s'", req->name_exprs[i]);
    if (strlen(lowered) >= sizeof out->lowered[i])
      return tf_fail(e, TF_EXIT_FAIL, "name expression '%s': lowered name longer than %zu bytes",
                     req->name_exprs[i], sizeof out->lowered[i] - 1);
    strcpy(out->lowered[i], lowered);
  }
  return 0;
}

static int nvrtc_build(const compile_req *req, const program *p, compile_result *out, tf_err *e) {
  /* NVRTC only uses the name in its log's closing line ("1 error detected in ..."). */
  char name[1100];
  if (req->text)
    snprintf(name, sizeof name, "%.1000s", req->text_name ? req->text_name : "tunefarm");
  else if (req->nsources > 1)
    snprintf(name, sizeof name, "%.1000s and %d more", req->source_paths[0], req->nsources - 1);
  else
    snprintf(name, sizeof name, "%.1000s", req->source_paths[0]);
  nvrtcProgram prog = NULL;
  const char *names[SOURCE_MAX_HEADERS];
  for (int i = 0; i < p->h.n; i++) names[i] = p->h.names[i];
  if (NVRTC_CHECK(nvrtcCreateProgram(&prog, p->src, name, p->h.n, (const char *const *)p->h.texts,
                                     names),
                  NULL, out, e) < 0)
    return -1;
  int rc = 0;
  for (int i = 0; i < req->nexprs && rc == 0; i++) {
    rc = NVRTC_CHECK(nvrtcAddNameExpression(prog, req->name_exprs[i]), NULL, out, e);
    if (rc < 0) tf_wrap(e, "name expression '%s'", req->name_exprs[i]);
  }
  if (rc == 0)
    rc = NVRTC_CHECK(nvrtcCompileProgram(prog, p->nopts, p->opts), prog, out, e);
  if (rc == 0) rc = fetch_outputs(prog, req, out, e);
  nvrtcDestroyProgram(&prog);
  return rc;
}

static int check_request(const compile_req *req, tf_err *e) {
  if (req->text ? req->nsources != 0 : !req->source_paths || req->nsources < 1)
    return tf_fail(e, TF_EXIT_FAIL, "compile: source files or a text, one of the two");
  if (req->nexprs < 0 || req->nexprs > COMPILE_MAX_EXPRS || (req->nexprs && !req->name_exprs))
    return tf_fail(e, TF_EXIT_FAIL, "compile: %d name expressions (at most %d)", req->nexprs,
                   COMPILE_MAX_EXPRS);
  /* compute_XY yields PTX only; the measure child loads machine code for its exact device. */
  if (!req->arch || strncmp(req->arch, "sm_", 3) != 0 || strlen(req->arch) > 32)
    return tf_fail(e, TF_EXIT_FAIL, "compile: architecture '%s' is not a real one like 'sm_90'",
                   req->arch ? req->arch : "(null)");
  return 0;
}

static int program_init(const compile_req *req, program *p, tf_err *e) {
  if (req->cache_dir) {
    if ((size_t)snprintf(p->dir, sizeof p->dir, "%s", req->cache_dir) >= sizeof p->dir)
      return tf_fail(e, TF_EXIT_FAIL, "cache directory '%s': path too long", req->cache_dir);
  } else if (cache_dir(p->dir, sizeof p->dir, e) < 0) {
    return -1;
  }
  snprintf(p->archopt, sizeof p->archopt, "--gpu-architecture=%s", req->arch);
  p->opts[0] = p->archopt;
  p->opts[1] = "-std=c++17";
  p->opts[2] = "-lineinfo";
  p->opts[3] = "-DTF_NVRTC=1";
  p->nopts = COMPILE_NOPTS;
  if (!(p->src = read_sources(req, &p->srclen, &p->h, e))) return -1;
  if (p->h.toolkit) p->opts[p->nopts++] = "-I" TF_CUDA_INCLUDE;
  program_key(req, p);
  return 0;
}

/* The outcome the cache holds: 1 (out and, for a refusal, e filled; *rc what to return), or 0. */
static int lookup_any(const program *p, int nexprs, compile_result *out, int *rc, tf_err *e) {
  if (cache_lookup(p, nexprs, out)) return *rc = 0, 1;
  if (refusal_lookup(p, out, e)) return *rc = -1, 1;
  return 0;
}

/* Compile under the program's lock, unless the process that held it has compiled it. */
static int build_locked(const compile_req *req, const program *p, compile_result *out, tf_err *e) {
  int rc = 0;
  int fd = lock_program(p, req->wait_s > 0 ? req->wait_s : COMPILE_WAIT_S, &out->wait_ms);
  if (lookup_any(p, req->nexprs, out, &rc, e)) { /* compiled while we waited for the lock */
    unlock_program(p, fd);
    return rc;
  }
  rc = req->simulate_s > 0 ? simulated_build(req, p, out, e) : nvrtc_build(req, p, out, e);
  if (rc == 0) cache_store(p, req->nexprs, out);
  else if (e && e->code == TF_COMPILE_REFUSED) refusal_store(p, out);
  unlock_program(p, fd);
  return rc;
}

int compile_program(const compile_req *req, compile_result *out, tf_err *e) {
  double t0 = now_ms();
  memset(out, 0, sizeof *out);
  program p = {0};
  int rc = check_request(req, e);
  if (rc == 0) rc = program_init(req, &p, e);
  if (rc == 0 && !lookup_any(&p, req->nexprs, out, &rc, e)) rc = build_locked(req, &p, out, e);
  if (rc == 0 && !out->log) out->log = strdup("");
  if (rc < 0 && req->nsources > 0 && req->source_paths && req->arch)
    tf_wrap(e, "compiling '%s' for %s", req->source_paths[0], req->arch);
  free(p.src);
  source_headers_release(&p.h);
  out->ms = now_ms() - t0;
  return rc;
}

int compile_cached(const compile_req *req, char key[CACHE_KEY_HEX], tf_err *e) {
  program p = {0};
  int rc = check_request(req, e);
  if (rc == 0) rc = program_init(req, &p, e);
  if (rc == 0) {
    char path[4200];
    struct stat st;
    snprintf(path, sizeof path, "%s/%s.cubin", p.dir, p.key);
    rc = stat(path, &st) == 0;
    snprintf(path, sizeof path, "%s/%s.refused", p.dir, p.key);
    rc = rc || stat(path, &st) == 0;
    if (key) snprintf(key, CACHE_KEY_HEX, "%s", p.key);
  }
  free(p.src);
  source_headers_release(&p.h);
  return rc;
}

void compile_release(compile_result *r) {
  if (!r) return;
  free(r->cubin);
  free(r->log);
  memset(r, 0, sizeof *r);
}

void compile_nvrtc_version(int *major, int *minor) {
  if (nvrtcVersion(major, minor) != NVRTC_SUCCESS) *major = *minor = 0;
}

void compile_arch_specific(const char *arch, char *out, size_t len) {
  int nv_major, nv_minor;
  compile_nvrtc_version(&nv_major, &nv_minor);
  size_t n = strlen(arch);
  int plain = strncmp(arch, "sm_", 3) == 0 && n > 3 && isdigit((unsigned char)arch[n - 1]);
  int has = plain && atoi(arch + 3) >= 90 && nv_major >= 12;
  snprintf(out, len, "%s%s", arch, has ? "a" : "");
}

int compile_arch_supported(const char *arch) {
  if (strncmp(arch, "sm_", 3) != 0) return 0;
  int want = atoi(arch + 3), n = 0;
  if (want <= 0 || nvrtcGetNumSupportedArchs(&n) != NVRTC_SUCCESS || n <= 0 || n > 256) return 0;
  int archs[256];
  if (nvrtcGetSupportedArchs(archs) != NVRTC_SUCCESS) return 0;
  for (int i = 0; i < n; i++)
    if (archs[i] == want) return 1;
  return 0;
}
