/* ledger: one append-only JSON-lines file per device and campaign (coordinator/ledger.h).
 *
 * Durability rests on three habits: a record reaches the file in one write(2)
 * of the whole line and is fsync'd before ledger_append returns; a partial
 * write is cut back off at once; and ledger_open truncates a torn last line
 * (a kill between write and fsync) before anything is appended after it, so
 * the file is always a sequence of complete lines. An exclusive flock on .NAME.jsonl.lock, a
 * file beside the ledger that is never moved, keeps a second run from writing the same
 * ledger, and a --fresh run from moving a live one aside: a lock on the ledger itself would
 * stay with the file moved aside and leave the new one at its path unguarded. */
#define _GNU_SOURCE /* syncfs */
#include "coordinator/ledger.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <time.h>
#include <unistd.h>

#include "common/jsonio.h" /* defines: jsonio_whole, jsonio_duplicate_key, jsonio_safe_name */

#define LEDGER_VERSION "0.1"
#define LEDGER_PATH_MAX 4096

/* The folder is held open and the file reached through it with O_NOFOLLOW: a ledger or a
 * campaign folder that is a symbolic link could point anywhere (a dangling link would make a
 * run write its generations outside the ledgers folder), so neither is ever followed. */
struct ledger {
  char path[LEDGER_PATH_MAX];
  char name[256]; /* the file, inside dirfd */
  int dirfd;      /* <ledgers dir>/<campaign> */
  int fd;
  int lockfd;     /* .NAME.jsonl.lock, flock'd for as long as the ledger is open */
  record *due;    /* a versions record that resume found due; the first full replay writes it */
  int ordinal;    /* the ordinal of its device record: the one its search was started with */
  FILE *log;
  int dirty;      /* lines written since the last sync */
};

/* The versions a run measures with that a resume compares: a change is recorded. */
typedef struct versions {
  int driver, runtime, nvrtc_major, nvrtc_minor;
} versions;

/* What a scan of a ledger file found. */
typedef struct scan_res {
  long lines;          /* complete lines, header included */
  off_t good;          /* bytes up to the end of the last complete line */
  long torn;           /* bytes of a torn last line (0: none) */
  device_record dev;   /* from the header */
  versions ver;        /* in force after the last line: the header's, or the last versions
                        * record's */
  long long generation; /* the last generation record's (0: none) */
} scan_res;

/* The order a ledger's records keep, as the live run writes them: generations numbered 1, 2,
 * 3, ... one after another, restarts 1, 2, ..., and nothing after the search's "end". */
typedef struct order {
  long long generation, restart; /* the last of each seen */
  long end_line;                 /* 0 until an end record */
} order;

static FILE *log_of(FILE *log) { return log ? log : stderr; }

/* ---------------------------------------------------------------- reading */

/* A line's JSON object, or NULL if it is not one. The text may hold a NUL
 * (a crash can leave zeros in a file), which would hide the rest from cJSON. */
static cJSON *parse_line(char *text, size_t len) {
  if (len == 0 || memchr(text, '\0', len)) return NULL;
  text[len] = '\0';
  /* cJSON wants the terminating NUL inside the length to accept "nothing after the value". */
  cJSON *o = cJSON_ParseWithLengthOpts(text, len + 1, NULL, 1);
  if (o && !cJSON_IsObject(o)) {
    cJSON_Delete(o);
    return NULL;
  }
  return o;
}

/* Line 1 must be a device record; any other line must not be one. */
static int check_type(const char *path, long line, const cJSON *rec, tf_err *e) {
  const cJSON *t = cJSON_GetObjectItemCaseSensitive(rec, "type");
  if (!cJSON_IsString(t) || !t->valuestring) {
    if (line == 1)
      return tf_fail(e, TF_EXIT_INPUT, "ledger '%s': header (line 1): key 'type' %s", path,
                     t ? "must be a string" : "is missing");
    return tf_fail(e, TF_EXIT_INPUT, "ledger '%s': line %ld: key 'type' %s", path, line,
                   t ? "must be a string" : "is missing");
  }
  int device = strcmp(t->valuestring, "device") == 0;
  if (line == 1 && !device)
    return tf_fail(e, TF_EXIT_INPUT,
                   "ledger '%s': header (line 1): key 'type' is \"%s\", not \"device\" "
                   "(is this a ledger?)",
                   path, t->valuestring);
  if (line > 1 && device)
    return tf_fail(e, TF_EXIT_INPUT, "ledger '%s': line %ld: a device record after line 1", path,
                   line);
  return 0;
}

/* The line through the codec, strictly: what it refuses, every reader refuses. */
static int decode(const char *path, long line, const cJSON *o, record *rec, tf_err *e) {
  if (record_from_json(o, rec, e) == 0) return 0;
  if (e) e->code = TF_EXIT_INPUT;
  if (line == 1) return tf_wrap(e, "ledger '%s': header (line 1)", path);
  return tf_wrap(e, "ledger '%s': line %ld", path, line);
}

/* key must be the number after *last: a generation (or restart) missing, repeated or swapped
 * would make every reader count, replay and report a different search. */
static int next_number(const char *path, long line, const cJSON *rec, const char *key,
                       long long *last, tf_err *e) {
  const cJSON *g = cJSON_GetObjectItemCaseSensitive(rec, key);
  long long v;
  if (!cJSON_IsNumber(g) || jsonio_whole(g->valuedouble, 1, LLONG_MAX, &v))
    return tf_fail(e, TF_EXIT_INPUT, "ledger '%s': line %ld: key '%s' %s", path, line, key,
                   g ? "must be a positive integer" : "is missing");
  if (v != *last + 1)
    return tf_fail(e, TF_EXIT_INPUT,
                   "ledger '%s': line %ld: key '%s' is %lld where %lld is due (a %s %s)", path,
                   line, key, v, *last + 1, key, v <= *last ? "repeated or out of order"
                                                           : "missing or out of order");
  *last = v;
  return 0;
}

/* A versions record names the generation it follows; it changes nothing of the search, so it
 * may stand anywhere after line 1, between an end record and its reopen record too. */
static int versions_at(const char *path, long line, const cJSON *rec, const order *o,
                       tf_err *e) {
  const cJSON *g = cJSON_GetObjectItemCaseSensitive(rec, "generation");
  if (cJSON_IsNumber(g) && g->valuedouble != (double)o->generation)
    return tf_fail(e, TF_EXIT_INPUT,
                   "ledger '%s': line %ld: key 'generation' is %.17g, but the last generation "
                   "before it is %lld",
                   path, line, g->valuedouble, o->generation);
  return 0; /* a missing or malformed one: the codec names it */
}

static int check_order(const char *path, long line, const cJSON *rec, order *o, tf_err *e) {
  const char *type = cJSON_GetObjectItemCaseSensitive(rec, "type")->valuestring; /* check_type */
  int reopen = strcmp(type, "reopen") == 0;
  if (o->end_line && !reopen && strcmp(type, "versions") != 0)
    return tf_fail(e, TF_EXIT_INPUT,
                   "ledger '%s': line %ld: a \"%s\" record after the search's end (line %ld); "
                   "nothing but a reopen or versions record follows an end record",
                   path, line, type, o->end_line);
  if (reopen && !o->end_line)
    return tf_fail(e, TF_EXIT_INPUT, "ledger '%s': line %ld: a \"reopen\" record where the "
                   "line before is no end record", path, line);
  if (reopen) o->end_line = 0; /* the search goes on */
  if (strcmp(type, "generation") == 0)
    return next_number(path, line, rec, "generation", &o->generation, e);
  if (strcmp(type, "restart") == 0) return next_number(path, line, rec, "restart", &o->restart, e);
  if (strcmp(type, "end") == 0) o->end_line = line;
  if (strcmp(type, "versions") == 0) return versions_at(path, line, rec, o, e);
  return 0;
}

/* cJSON keeps both copies of a repeated key and every lookup sees the first. */
static int check_keys(const char *path, long line, const cJSON *rec, tf_err *e) {
  char key[256];
  int dup = jsonio_duplicate_key(rec, key, sizeof key);
  if (dup > 0)
    return tf_fail(e, TF_EXIT_INPUT, "ledger '%s': line %ld: key '%s' appears more than once",
                   path, line, key);
  return dup < 0 ? tf_fail(e, TF_EXIT_FAIL, "ledger '%s': out of memory", path) : 0;
}

/* text, len: the line without its newline, to say an empty one is empty. Every line is written
 * with its newline in one write(2), so a line that has its newline and does not read is
 * corruption wherever it stands, the last line too: never skipped, never cut. */
static int bad_line(const char *path, long line, const char *text, size_t len, tf_err *e) {
  size_t blank = 0;
  while (blank < len && (text[blank] == ' ' || text[blank] == '\t' || text[blank] == '\r')) blank++;
  const char *what = blank < len ? "is not a JSON object" : "is empty";
  if (line == 1)
    return tf_fail(e, TF_EXIT_INPUT,
                   "ledger '%s': line 1 %s: not a ledger (its first line must be the device "
                   "record)",
                   path, what);
  return tf_fail(e, TF_EXIT_INPUT,
                 "ledger '%s': line %ld %s; only a torn last line (one without its newline, "
                 "which a kill leaves) can be skipped, so the ledger is corrupt: repair that "
                 "line, or move the file aside",
                 path, line, what);
}

/* The versions a line says: the device record's, or a versions record's. */
static void versions_of(const record *rec, versions *v) {
  if (rec->kind == RECORD_DEVICE) {
    const device_record *d = &rec->device.dev;
    *v = (versions){d->driver_version, d->runtime_version, d->nvrtc_major, d->nvrtc_minor};
  } else if (rec->kind == RECORD_VERSIONS) {
    const record_versions *x = &rec->versions;
    *v = (versions){x->driver_version, x->runtime_version, x->nvrtc_major, x->nvrtc_minor};
  }
}

/* Read every complete line of f (named path), checking each line's type, keys and order, and
 * decoding it through the codec (coordinator/record.h), and hand the records to fn. A torn
 * last line, the only line without its newline, is counted in r->torn and not passed on; a
 * line with its newline that does not read is corruption (bad_line). Closes f. */
static int scan_stream(FILE *f, const char *path, ledger_fn fn, void *ctx, scan_res *r,
                       tf_err *e) {
  memset(r, 0, sizeof *r);
  order ord = {0, 0, 0};
  record *rec = record_new();
  char *text = NULL;
  size_t cap = 0;
  ssize_t n;
  int rc = rec ? 0 : tf_fail(e, TF_EXIT_FAIL, "ledger '%s': out of memory", path);
  while (rc == 0 && (n = getline(&text, &cap, f)) > 0) {
    long line = r->lines + 1;
    int nl = text[n - 1] == '\n'; /* only the last line can lack it (getline) */
    if (!nl) {
      r->torn = (long)n;
      break;
    }
    cJSON *o = parse_line(text, (size_t)n - 1);
    if (!o) {
      rc = bad_line(path, line, text, (size_t)n - 1, e);
      break;
    }
    rc = check_keys(path, line, o, e);
    if (rc == 0) rc = check_type(path, line, o, e);
    if (rc == 0 && line > 1) rc = check_order(path, line, o, &ord, e);
    if (rc == 0) rc = decode(path, line, o, rec, e);
    cJSON_Delete(o);
    if (rc) break;
    if (line == 1) r->dev = rec->device.dev;
    versions_of(rec, &r->ver);
    if (rec->kind == RECORD_GENERATION) r->generation = rec->gen.generation;
    r->lines = line;
    r->good += (off_t)n;
    int frc = fn ? fn(ctx, line, rec, e) : 0;
    if (frc < 0 && e && !e->code)
      tf_fail(e, TF_EXIT_INPUT, "ledger '%s': line %ld: the record could not be read back", path,
              line);
    if (frc < 0) rc = -1;
    if (frc > 0) break;
  }
  if (rc == 0 && ferror(f))
    rc = tf_fail(e, TF_EXIT_FAIL, "ledger '%s': cannot read: %s", path, strerror(errno));
  record_free(rec);
  free(text);
  fclose(f);
  return rc;
}

static int scan_file(const char *path, ledger_fn fn, void *ctx, scan_res *r, tf_err *e) {
  FILE *f = fopen(path, "rb");
  if (!f) return tf_fail(e, TF_EXIT_INPUT, "ledger '%s': cannot open: %s", path, strerror(errno));
  return scan_stream(f, path, fn, ctx, r, e);
}

static void note_torn(FILE *log, const char *path, long bytes) {
  fprintf(log_of(log), "ledger '%s': torn last line (%ld bytes) skipped\n", path, bytes);
  fflush(log_of(log));
}

int ledger_scan(const char *path, FILE *log, ledger_fn fn, void *ctx, tf_err *e) {
  scan_res r;
  if (scan_file(path, fn, ctx, &r, e)) return -1;
  if (r.lines == 0)
    return tf_fail(e, TF_EXIT_INPUT, "ledger '%s': %s", path,
                   r.torn ? "no complete line, not even the header (torn while being created?)"
                          : "the file is empty: not a ledger");
  if (r.torn) note_torn(log, path, r.torn);
  return 0;
}

/* ---------------------------------------------------------------- files */

static int mkdir_p(const char *dir, tf_err *e) {
  char buf[LEDGER_PATH_MAX];
  if (snprintf(buf, sizeof buf, "%s", dir) >= (int)sizeof buf)
    return tf_fail(e, TF_EXIT_INPUT, "ledgers folder '%s': path too long", dir);
  for (char *p = buf + 1; ; p++) {
    if (*p != '/' && *p != '\0') continue;
    char c = *p;
    *p = '\0';
    if (mkdir(buf, 0755) != 0 && errno != EEXIST) /* a path the user can fix is bad input */
      return tf_fail(e, user_path_errno(errno) ? TF_EXIT_INPUT : TF_EXIT_FAIL,
                     "ledgers folder '%s': cannot create '%s': %s", dir, buf, strerror(errno));
    *p = c;
    if (c == '\0') break;
  }
  struct stat st;
  if (stat(dir, &st) != 0 || !S_ISDIR(st.st_mode))
    return tf_fail(e, TF_EXIT_INPUT, "ledgers folder '%s': not a folder", dir);
  return 0;
}

/* Make a rename or a new file durable: fsync the folder holding it. Best
 * effort: some file systems refuse to fsync a folder, and the data itself is
 * already fsync'd. */
static void sync_dir_of(const char *path) {
  char dir[LEDGER_PATH_MAX];
  snprintf(dir, sizeof dir, "%s", path);
  char *slash = strrchr(dir, '/');
  if (slash == dir)
    dir[1] = '\0';
  else if (slash)
    *slash = '\0';
  else
    snprintf(dir, sizeof dir, ".");
  int fd = open(dir, O_RDONLY | O_CLOEXEC);
  if (fd < 0) return;
  (void)fsync(fd);
  close(fd);
}

/* The time now in UTC: "2025-01-31T12:00:00Z", or compact for file names: "20250131T120000Z". */
static void utc_stamp(char *buf, size_t len, int compact) {
  time_t now = time(NULL);
  struct tm tm;
  gmtime_r(&now, &tm);
  if (compact)
    strftime(buf, len, "%Y%m%dT%H%M%SZ", &tm);
  else
    strftime(buf, len, "%Y-%m-%dT%H:%M:%SZ", &tm);
}

/* --fresh: NAME.jsonl -> NAME.jsonl.<yyyymmddThhmmssZ>.old, never over an older one. */
static int move_aside(const char *path, FILE *log, tf_err *e) {
  char stamp[32], old[LEDGER_PATH_MAX + 64];
  utc_stamp(stamp, sizeof stamp, 1);
  struct stat st;
  for (int i = 1; i < 1000; i++) {
    if (i == 1)
      snprintf(old, sizeof old, "%s.%s.old", path, stamp);
    else
      snprintf(old, sizeof old, "%s.%s-%d.old", path, stamp, i);
    if (lstat(old, &st) != 0 && errno == ENOENT) {
      if (rename(path, old) != 0)
        return tf_fail(e, TF_EXIT_FAIL, "ledger '%s': cannot move it aside to '%s': %s", path,
                       old, strerror(errno));
      sync_dir_of(path);
      fprintf(log_of(log), "tunefarm: ledger '%s': moved aside to '%s' (--fresh)\n", path, old);
      fflush(log_of(log));
      return 0;
    }
  }
  return tf_fail(e, TF_EXIT_FAIL, "ledger '%s': too many old copies named '%s.%s*.old'", path,
                 path, stamp);
}

/* The host as a file name holds it, and the UUID's first 8 hex digits. */
static void name_parts(const device_record *d, char *host, size_t len, char u8[9]) {
  snprintf(host, len, "%s", d->host[0] ? d->host : "unknown-host");
  for (char *p = host; *p; p++) {
    int ok = (*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') || (*p >= '0' && *p <= '9') ||
             *p == '-' || *p == '_' || *p == '.';
    if (!ok) *p = '_';
  }
  if (host[0] == '.') host[0] = '_';
  device_uuid8(d, u8);
}

void ledger_file_name(const device_record *d, char *buf, size_t len) {
  char host[sizeof d->host], u8[9];
  name_parts(d, host, sizeof host, u8);
  snprintf(buf, len, "%s-gpu%d-%s.jsonl", host, d->ordinal, u8);
}

/* Does `name` have the form of d's ledger under some ordinal, "<host>-gpu<N>-<uuid8>.jsonl"? */
static int named_for(const device_record *d, const char *name) {
  char host[sizeof d->host], u8[9], tail[32];
  name_parts(d, host, sizeof host, u8);
  size_t h = strlen(host);
  if (strncmp(name, host, h) != 0 || strncmp(name + h, "-gpu", 4) != 0) return 0;
  const char *p = name + h + 4, *digits = p;
  while (*p >= '0' && *p <= '9') p++;
  snprintf(tail, sizeof tail, "-%s.jsonl", u8);
  return p > digits && strcmp(p, tail) == 0;
}

/* ---------------------------------------------------------------- writing */

static int write_all(int fd, const char *buf, size_t len) {
  while (len > 0) {
    ssize_t w = write(fd, buf, len);
    if (w < 0) {
      if (errno == EINTR) continue;
      return -1;
    }
    buf += w;
    len -= (size_t)w;
  }
  return 0;
}

int ledger_write(ledger *l, const record *rec, tf_err *e) {
  cJSON *o = record_to_json(rec);
  char *text = o ? cJSON_PrintUnformatted(o) : NULL;
  cJSON_Delete(o);
  if (!text)
    return tf_fail(e, TF_EXIT_FAIL, "ledger '%s': cannot serialise the record (out of memory)",
                   l->path);
  size_t n = strlen(text);
  char *line = malloc(n + 1);
  if (!line) {
    cJSON_free(text);
    return tf_fail(e, TF_EXIT_FAIL, "ledger '%s': out of memory", l->path);
  }
  memcpy(line, text, n);
  line[n] = '\n';
  cJSON_free(text);

  int rc = 0;
  struct stat st;
  if (fstat(l->fd, &st) != 0) {
    rc = tf_fail(e, TF_EXIT_FAIL, "ledger '%s': cannot stat: %s", l->path, strerror(errno));
  } else if (write_all(l->fd, line, n + 1) != 0) {
    int err = errno;
    /* Leave no partial line behind for the next append to follow. */
    if (ftruncate(l->fd, st.st_size) != 0) { /* the torn line will be cut on the next open */
    }
    rc = tf_fail(e, TF_EXIT_FAIL, "ledger '%s': cannot append: %s", l->path, strerror(err));
  } else {
    l->dirty++;
  }
  free(line);
  return rc;
}

static int sync_one(ledger *l, tf_err *e) {
  if (!l->dirty) return 0;
  if (fsync(l->fd) != 0)
    return tf_fail(e, TF_EXIT_FAIL, "ledger '%s': fsync failed: %s (the record may not be on disk)",
                   l->path, strerror(errno));
  l->dirty = 0;
  return 0;
}

int ledger_append(ledger *l, const record *rec, tf_err *e) {
  return ledger_write(l, rec, e) || sync_one(l, e) ? -1 : 0;
}

/* One syncfs(2) covers every dirty ledger on the file system of the first one; -1 when it
 * fails (then each is fsync'd). Pays off from about this many ledgers waiting. */
#define LEDGER_SYNCFS_MIN 8

static int sync_fs(ledger *const *ls, int n) {
  struct stat first, st;
  int k = -1;
  for (int i = 0; i < n && k < 0; i++)
    if (ls[i] && ls[i]->dirty) k = i;
  if (k < 0 || fstat(ls[k]->fd, &first) != 0 || syncfs(ls[k]->fd) != 0) return -1;
  for (int i = 0; i < n; i++)
    if (ls[i] && ls[i]->dirty && fstat(ls[i]->fd, &st) == 0 && st.st_dev == first.st_dev)
      ls[i]->dirty = 0;
  return 0;
}

int ledger_sync_all(ledger *const *ls, int n, tf_err *e) {
  int dirty = 0;
  for (int i = 0; i < n; i++) dirty += ls[i] && ls[i]->dirty;
  if (dirty >= LEDGER_SYNCFS_MIN) sync_fs(ls, n); /* a failure leaves them to fsync */
  for (int i = 0; i < n; i++)
    if (ls[i] && sync_one(ls[i], e)) return -1;
  return 0;
}

/* The project root as an absolute path, so that a reader anywhere (export) finds the campaign
 * the ledger names; "" when it cannot be resolved or does not fit. */
static void root_of(const campaign *c, char *out, size_t len) {
  char real[PATH_MAX];
  out[0] = '\0';
  if (c->root[0] && realpath(c->root, real) && strlen(real) < len) snprintf(out, len, "%s", real);
}

/* Line 1: the device, the campaign and the schema this code writes. */
static void header_of(const campaign *c, const device_record *d, record *h) {
  record_release(h);
  h->kind = RECORD_DEVICE;
  record_device *x = &h->device;
  x->schema_version = RECORD_SCHEMA_VERSION;
  x->dev = *d;
  snprintf(x->campaign, sizeof x->campaign, "%s", c->name);
  campaign_rel_path(c, c->path, x->campaign_path, sizeof x->campaign_path);
  root_of(c, x->root, sizeof x->root);
  snprintf(x->campaign_hash, sizeof x->campaign_hash, "%s", c->hash);
  snprintf(x->backend, sizeof x->backend, "%s", d->backend);
  utc_stamp(x->created, sizeof x->created, 0);
  snprintf(x->tunefarm, sizeof x->tunefarm, "%s", LEDGER_VERSION);
  snprintf(x->mode, sizeof x->mode, "%s", c->search.mode);
}

/* ---------------------------------------------------------------- open */

typedef struct resume_ctx {
  const campaign *c;
  const device_record *d;
  const char *path;
  const scan_res *r;
} resume_ctx;

/* Resuming is only sound on the same device and the same campaign file. */
static int check_resume(void *ctx, long line, const record *rec, tf_err *e) {
  const resume_ctx *x = ctx;
  if (line != 1) return 0;
  const char *was = x->r->dev.uuid;
  if (strcmp(was, x->d->uuid) != 0)
    return tf_fail(e, TF_EXIT_INPUT,
                   "ledger '%s' was written for device '%s' (%s), but this worker's device is "
                   "'%s' (%s, gpu%d on %s); results of two devices are never mixed: pass --fresh "
                   "to move the old ledger aside and start a new one, or use another --ledgers "
                   "folder",
                   x->path, was, x->r->dev.name, x->d->uuid, x->d->name, x->d->ordinal,
                   x->d->host);
  const char *hash = rec->device.campaign_hash;
  /* hash_v1: a ledger started before the resumable keys were left out of the identity */
  if (strcmp(hash, x->c->hash) != 0 && strcmp(hash, x->c->hash_v1) != 0) {
    const char *cpath = rec->device.campaign_path;
    return tf_fail(e, TF_EXIT_INPUT,
                   "ledger '%s': campaign '%s' (or its template or control kernel) changed "
                   "since this ledger was started (it was '%s' with hash %.16s, now hash %.16s; "
                   "only search.budget, search.max_stale, search.restarts, search.fresh_every "
                   "and canary may change); resuming would mix results of two different "
                   "campaigns: pass --fresh to move the old ledger aside and start a new one",
                   x->path, x->c->path, cpath, hash, x->c->hash);
  }
  return 0;
}

/* The lock is taken before anything is read, cut or moved aside, and held until
 * ledger_close: a run that holds it is the only one to touch the ledger's path. Its file
 * stays after the run (removing it would let a run lock a new file while another holds the
 * old one). A second run is refused as bad input, exit 2: nothing ran, nothing changed, and
 * what to do is the caller's (wait, or stop the other run). */
static int lock_ledger(ledger *l, tf_err *e) {
  char name[sizeof l->name + 8], path[LEDGER_PATH_MAX + 8];
  snprintf(name, sizeof name, ".%s.lock", l->name);
  snprintf(path, sizeof path, "%.*s%s", (int)(strlen(l->path) - strlen(l->name)), l->path, name);
  l->lockfd = openat(l->dirfd, name, O_RDWR | O_CREAT | O_NOFOLLOW | O_CLOEXEC, 0644);
  if (l->lockfd < 0 && errno == ELOOP)
    return tf_fail(e, TF_EXIT_INPUT,
                   "ledger '%s': its lock '%s' is a symbolic link; the farm never opens a file "
                   "of the ledgers folder through a link: remove it",
                   l->path, path);
  if (l->lockfd < 0)
    return tf_fail(e, TF_EXIT_FAIL, "ledger '%s': cannot open its lock '%s': %s", l->path, path,
                   strerror(errno));
  if (flock(l->lockfd, LOCK_EX | LOCK_NB) == 0) return 0;
  if (errno == EWOULDBLOCK)
    return tf_fail(e, TF_EXIT_INPUT,
                   "ledger '%s' is in use: another tunefarm run holds its lock '%s'; two runs "
                   "must not measure one device or write one ledger, and --fresh moves nothing "
                   "aside while one does: wait for that run to end, or stop it",
                   l->path, path);
  return 0; /* no locks on this file system: carry on unguarded */
}

/* The ledger read from its start through the folder, never through a link. */
static FILE *reopen(const ledger *l, tf_err *e) {
  int fd = openat(l->dirfd, l->name, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
  FILE *f = fd >= 0 ? fdopen(fd, "rb") : NULL;
  if (!f) {
    tf_fail(e, TF_EXIT_FAIL, "ledger '%s': cannot open: %s", l->path, strerror(errno));
    if (fd >= 0) close(fd);
  }
  return f;
}

/* "driver 13000 -> 13010, NVRTC 13.0 -> 13.1": what differs between was and now; "" when
 * nothing does. */
static void versions_diff(const versions *was, const versions *now, char *buf, size_t len) {
  size_t n = 0;
  buf[0] = '\0';
  if (was->driver != now->driver)
    n += (size_t)snprintf(buf + n, len - n, "driver %d -> %d", was->driver, now->driver);
  if (n < len && was->runtime != now->runtime)
    n += (size_t)snprintf(buf + n, len - n, "%sCUDA runtime %d -> %d", n ? ", " : "",
                          was->runtime, now->runtime);
  if (n < len && (was->nvrtc_major != now->nvrtc_major || was->nvrtc_minor != now->nvrtc_minor))
    snprintf(buf + n, len - n, "%sNVRTC %d.%d -> %d.%d", n ? ", " : "", was->nvrtc_major,
             was->nvrtc_minor, now->nvrtc_major, now->nvrtc_minor);
}

/* A resume with another driver, runtime or NVRTC than the ledger's last run goes on (the
 * device and the campaign are the same), but its times may move with them: the change is
 * said on the log and recorded (ledger_replay), so that every reader sees where the versions
 * changed. */
static int versions_due(ledger *l, const scan_res *r, const device_record *d, tf_err *e) {
  versions now = {d->driver_version, d->runtime_version, d->nvrtc_major, d->nvrtc_minor};
  char diff[256];
  versions_diff(&r->ver, &now, diff, sizeof diff);
  if (!diff[0]) return 0;
  record *rec = l->due = record_new();
  if (!rec) return tf_fail(e, TF_EXIT_FAIL, "ledger '%s': out of memory", l->path);
  rec->kind = RECORD_VERSIONS;
  record_versions *v = &rec->versions;
  v->generation = r->generation;
  utc_stamp(v->time, sizeof v->time, 0);
  v->driver_version = now.driver;
  v->runtime_version = now.runtime;
  v->nvrtc_major = now.nvrtc_major;
  v->nvrtc_minor = now.nvrtc_minor;
  snprintf(v->reason, sizeof v->reason, "%s since the ledger's last run, after generation %lld",
           diff, r->generation);
  return 0;
}

/* The versions record due, written once the resume has read every record back: a ledger the
 * replay refuses is left as it was. */
static int write_due(ledger *l, tf_err *e) {
  if (!l->due) return 0;
  fprintf(log_of(l->log),
          "tunefarm: warning: ledger '%s': %s; the generations before and after were measured "
          "with different versions (recorded in the ledger)\n",
          l->path, l->due->versions.reason);
  fflush(log_of(l->log));
  int rc = ledger_append(l, l->due, e);
  record_free(l->due);
  l->due = NULL;
  return rc;
}

/* An existing ledger: check it, cut a torn tail, note changed versions. Sets *empty when
 * nothing complete remains. */
static int resume(ledger *l, const campaign *c, const device_record *d, int *empty, tf_err *e) {
  scan_res r;
  resume_ctx x = {c, d, l->path, &r};
  FILE *f = reopen(l, e);
  if (!f || scan_stream(f, l->path, check_resume, &x, &r, e)) return -1;
  if (r.torn) {
    note_torn(l->log, l->path, r.torn);
    if (ftruncate(l->fd, r.good) != 0 || fsync(l->fd) != 0)
      return tf_fail(e, TF_EXIT_FAIL, "ledger '%s': cannot cut off the torn last line: %s",
                     l->path, strerror(errno));
  }
  *empty = r.lines == 0;
  if (!*empty) l->ordinal = r.dev.ordinal;
  return *empty ? 0 : versions_due(l, &r, d, e);
}

/* ---------------------------------------------------------------- the device's ledger */

/* Its ledgers under names other than this launch's: the ordinal in a ledger's name is the one
 * the launch gave the worker (gpuN under mpirun, gpu0 under srun --gpus-per-task=1), while the
 * device record says which GPU the ledger is for. Up to LEDGER_OTHERS_MAX names are kept. */
#define LEDGER_OTHERS_MAX 8
typedef struct others {
  int n;
  char name[LEDGER_OTHERS_MAX][256];
} others;

/* The path of the file `name` in l's folder. */
static void path_in(const ledger *l, const char *name, char *buf, size_t len) {
  snprintf(buf, len, "%.*s%s", (int)(strlen(l->path) - strlen(l->name)), l->path, name);
}

static int stop_after_header(void *ctx, long line, const record *rec, tf_err *e) {
  (void)ctx, (void)rec, (void)e;
  return line == 1 ? 1 : 0;
}

/* 1 when the file `name` of the folder is a ledger of d (its device record has d's UUID and
 * host), 0 when not (or a link, never followed, or not a regular file, or without a complete
 * first line), -1 when its first line does not read (e names the file). */
static int holds_device(const ledger *l, const char *name, const device_record *d, tf_err *e) {
  char path[LEDGER_PATH_MAX + 256];
  path_in(l, name, path, sizeof path);
  int fd = openat(l->dirfd, name, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
  struct stat st;
  if (fd < 0) return 0;
  FILE *f = fstat(fd, &st) == 0 && S_ISREG(st.st_mode) ? fdopen(fd, "rb") : NULL;
  if (!f) {
    close(fd);
    return 0;
  }
  scan_res r;
  if (scan_stream(f, path, stop_after_header, NULL, &r, e)) return -1;
  return r.lines >= 1 && strcmp(r.dev.uuid, d->uuid) == 0 && strcmp(r.dev.host, d->host) == 0;
}

/* The files of the folder named as d's ledger under another ordinal than l->name's, that are
 * d's ledgers indeed. */
static int find_others(const ledger *l, const device_record *d, others *out, tf_err *e) {
  out->n = 0;
  /* a descriptor of its own: a dup would share dirfd's reading position with every listing */
  int fd = openat(l->dirfd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  DIR *dir = fd >= 0 ? fdopendir(fd) : NULL;
  if (!dir) {
    if (fd >= 0) close(fd);
    return tf_fail(e, TF_EXIT_FAIL, "ledger '%s': cannot list its folder: %s", l->path,
                   strerror(errno));
  }
  int rc = 0;
  struct dirent *ent;
  while (rc == 0 && (ent = readdir(dir)) != NULL) {
    if (strcmp(ent->d_name, l->name) == 0 || !named_for(d, ent->d_name)) continue;
    rc = holds_device(l, ent->d_name, d, e);
    if (rc == 1 && out->n < LEDGER_OTHERS_MAX)
      snprintf(out->name[out->n++], sizeof out->name[0], "%s", ent->d_name);
    rc = rc < 0 ? -1 : 0;
  }
  closedir(dir);
  return rc;
}

/* l->name becomes `name`, a file of the same folder. */
static void rename_to(ledger *l, const char *name) {
  char path[sizeof l->path];
  path_in(l, name, path, sizeof path);
  snprintf(l->name, sizeof l->name, "%s", name);
  snprintf(l->path, sizeof l->path, "%s", path);
}

/* A device has one ledger, whatever its name: a ledger of the same GPU (UUID and host) under
 * another launch's name is the one to resume, and two of them are a conflict the user
 * settles. --fresh moves every one of them aside (fresh_others). */
static int pick_ledger(ledger *l, const device_record *d, int fresh, tf_err *e) {
  others x;
  if (find_others(l, d, &x, e)) return -1;
  if (x.n == 0 || fresh) return 0;
  char a[LEDGER_PATH_MAX + 256], b[LEDGER_PATH_MAX + 256];
  struct stat st;
  int here = fstatat(l->dirfd, l->name, &st, AT_SYMLINK_NOFOLLOW) == 0;
  if (here || x.n > 1) {
    path_in(l, here ? l->name : x.name[0], a, sizeof a);
    path_in(l, here ? x.name[0] : x.name[1], b, sizeof b);
    return tf_fail(e, TF_EXIT_INPUT,
                   "ledgers '%s' and '%s' are both for device '%s' on '%s'; a GPU has one "
                   "ledger whatever a launch named it (the gpu<N> of a name is the ordinal the "
                   "launch gave the worker): move the one not to resume out of the folder, or "
                   "pass --fresh to move both aside and start again",
                   a, b, d->uuid, d->host);
  }
  snprintf(a, sizeof a, "%s", l->path);
  rename_to(l, x.name[0]);
  fprintf(log_of(l->log), "tunefarm: ledger '%s' is this GPU's (%s): resuming it, under the "
          "name an earlier launch gave it, rather than starting '%s'\n", l->path, d->uuid, a);
  fflush(log_of(l->log));
  return 0;
}

/* --fresh: this device's ledgers under other names move aside too, each under its lock, so
 * that the new ledger is its only one. */
static int fresh_others(ledger *l, const device_record *d, tf_err *e) {
  others x;
  if (find_others(l, d, &x, e)) return -1;
  for (int i = 0; i < x.n; i++) {
    ledger *o = calloc(1, sizeof *o);
    if (!o) return tf_fail(e, TF_EXIT_FAIL, "ledger: out of memory");
    o->fd = o->lockfd = -1;
    o->dirfd = l->dirfd; /* borrowed: not closed below */
    o->log = l->log;
    snprintf(o->name, sizeof o->name, "%s", x.name[i]);
    path_in(l, x.name[i], o->path, sizeof o->path);
    int rc = lock_ledger(o, e) || move_aside(o->path, o->log, e) ? -1 : 0;
    if (o->lockfd >= 0) close(o->lockfd);
    free(o);
    if (rc) return -1;
  }
  return 0;
}

static int ledger_open_path(ledger *l, const ledger_opts *o, const campaign *c,
                            const device_record *d, tf_err *e) {
  const char *dir = o && o->dir && o->dir[0] ? o->dir : "ledgers";
  char folder[LEDGER_PATH_MAX], name[256];
  if (!jsonio_safe_name(c->name))
    return tf_fail(e, TF_EXIT_INPUT, "campaign '%s': name '%s' cannot name a ledger folder",
                   c->path, c->name);
  if (snprintf(folder, sizeof folder, "%s/%s", dir, c->name) >= (int)sizeof folder)
    return tf_fail(e, TF_EXIT_INPUT, "ledgers folder '%s': path too long", dir);
  ledger_file_name(d, name, sizeof name);
  snprintf(l->name, sizeof l->name, "%s", name);
  if (snprintf(l->path, sizeof l->path, "%s/%s", folder, name) >= (int)sizeof l->path)
    return tf_fail(e, TF_EXIT_INPUT, "ledgers folder '%s': path too long", dir);
  /* The ledgers folder itself is the user's to place (a link to a larger disk is fine); what
   * the farm creates inside it is never a link. */
  if (mkdir_p(dir, e)) return -1;
  if (mkdir(folder, 0755) != 0 && errno != EEXIST)
    return tf_fail(e, TF_EXIT_FAIL, "ledgers folder '%s': cannot create '%s': %s", dir, folder,
                   strerror(errno));
  l->dirfd = open(folder, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
  struct stat st; /* a link fails O_NOFOLLOW with ENOTDIR when O_DIRECTORY is given too */
  if (l->dirfd < 0 && lstat(folder, &st) == 0 && S_ISLNK(st.st_mode))
    return tf_fail(e, TF_EXIT_INPUT,
                   "ledgers folder '%s' is a symbolic link; the farm writes only inside the "
                   "ledgers folder and never through a link: remove it",
                   folder);
  if (l->dirfd < 0)
    return tf_fail(e, TF_EXIT_INPUT, "ledgers folder '%s': cannot open: %s", folder,
                   strerror(errno));
  return 0;
}

static int open_file(ledger *l, tf_err *e) {
  l->fd = openat(l->dirfd, l->name, O_RDWR | O_CREAT | O_APPEND | O_CLOEXEC | O_NOFOLLOW, 0644);
  if (l->fd < 0 && errno == ELOOP)
    return tf_fail(e, TF_EXIT_INPUT,
                   "ledger '%s' is a symbolic link; a ledger is never written through a link "
                   "(it could point outside the ledgers folder): remove it",
                   l->path);
  if (l->fd < 0)
    return tf_fail(e, TF_EXIT_FAIL, "ledger '%s': cannot open: %s", l->path, strerror(errno));
  struct stat st;
  if (fstat(l->fd, &st) != 0)
    return tf_fail(e, TF_EXIT_FAIL, "ledger '%s': cannot stat: %s", l->path, strerror(errno));
  if (!S_ISREG(st.st_mode))
    return tf_fail(e, TF_EXIT_INPUT, "ledger '%s' is not a regular file", l->path);
  return 0;
}

int ledger_open(ledger **out, const ledger_opts *o, const campaign *c, const device_record *d,
                tf_err *e) {
  *out = NULL;
  ledger *l = calloc(1, sizeof *l);
  if (!l) return tf_fail(e, TF_EXIT_FAIL, "ledger: out of memory");
  l->fd = l->dirfd = l->lockfd = -1;
  l->log = o ? o->log : NULL;
  int fresh = o && o->fresh;
  l->ordinal = d->ordinal;
  if (ledger_open_path(l, o, c, d, e) || pick_ledger(l, d, fresh, e) || lock_ledger(l, e))
    goto fail;

  struct stat st;
  if (fresh && lstat(l->path, &st) == 0 && move_aside(l->path, l->log, e)) goto fail;
  if (fresh && fresh_others(l, d, e)) goto fail;

  if (open_file(l, e)) goto fail;
  if (fstat(l->fd, &st) != 0) {
    tf_fail(e, TF_EXIT_FAIL, "ledger '%s': cannot stat: %s", l->path, strerror(errno));
    goto fail;
  }
  int empty = 1;
  if (st.st_size > 0 && resume(l, c, d, &empty, e)) goto fail;
  if (empty) {
    record *h = record_new();
    if (!h) {
      tf_fail(e, TF_EXIT_FAIL, "ledger '%s': out of memory", l->path);
      goto fail;
    }
    header_of(c, d, h);
    int rc = ledger_append(l, h, e);
    record_free(h);
    if (rc) goto fail;
    sync_dir_of(l->path);
  }
  *out = l;
  return 0;
fail:
  ledger_close(l);
  return -1;
}

/* ---------------------------------------------------------------- replay */

typedef struct replay_ctx {
  ledger_fn fn;
  void *ctx;
  int stopped; /* fn stopped the replay early */
} replay_ctx;

static int replay_line(void *ctx, long line, const record *rec, tf_err *e) {
  replay_ctx *x = ctx;
  int rc = line == 1 ? 0 : x->fn(x->ctx, line, rec, e);
  x->stopped = rc > 0;
  return rc;
}

int ledger_replay(ledger *l, ledger_fn fn, void *ctx, tf_err *e) {
  replay_ctx x = {fn, ctx, 0};
  scan_res r;
  FILE *f = reopen(l, e);
  if (!f || scan_stream(f, l->path, replay_line, &x, &r, e)) return -1;
  if (r.torn) note_torn(l->log, l->path, r.torn);
  return x.stopped ? 0 : write_due(l, e);
}

const char *ledger_path(const ledger *l) { return l->path; }

int ledger_ordinal(const ledger *l) { return l->ordinal; }

void ledger_close(ledger *l) {
  if (!l) return;
  if (l->dirty) (void)fsync(l->fd); /* a run that stops on an error keeps what it wrote */
  if (l->fd >= 0) close(l->fd);
  if (l->lockfd >= 0) close(l->lockfd); /* releases the flock, after the last write */
  if (l->dirfd >= 0) close(l->dirfd);
  record_free(l->due);
  free(l);
}
