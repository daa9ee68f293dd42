/* test_ledger: create, resume, replay, torn tails, refusals and --fresh (coordinator/ledger.h). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <dirent.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common/jsonio.h"
#include "coordinator/ledger.h"
#include "coordinator/record.h"
#include "coordinator/replay.h"
#include "tests/unit/testutil.h"

typedef struct fixture {
  char dir[256];   /* the ledgers folder, a fresh temporary one per test */
  campaign c;
  device_record d;
  char path[1024]; /* where the device's ledger must be */
  FILE *log;       /* notes from the ledger module */
} fixture;

static void sim_device(device_record *d, int ordinal, const char *uuid) {
  memset(d, 0, sizeof *d);
  snprintf(d->backend, sizeof d->backend, "sim");
  snprintf(d->name, sizeof d->name, "Simulated H200");
  snprintf(d->uuid, sizeof d->uuid, "%s", uuid);
  snprintf(d->pci_bus_id, sizeof d->pci_bus_id, "00000000:%02X:00.0", ordinal + 1);
  d->cc_major = 9;
  snprintf(d->arch, sizeof d->arch, "sm_90");
  d->sm_count = 132;
  d->mem_bytes = 150LL << 30;
  d->l2_bytes = 60LL << 20;
  d->max_sm_mhz = d->cur_sm_mhz = 1980;
  d->driver_version = 13000;
  d->runtime_version = 13000;
  d->nvrtc_major = 13;
  snprintf(d->host, sizeof d->host, "testhost");
  d->ordinal = ordinal;
}

static int setup(void **state) {
  fixture *f = calloc(1, sizeof *f);
  if (!f) return -1;
  const char *tmp = getenv("TMPDIR");
  snprintf(f->dir, sizeof f->dir, "%s/tf-ledger-XXXXXX", tmp && tmp[0] ? tmp : "/tmp");
  if (!mkdtemp(f->dir)) {
    free(f);
    return -1;
  }
  snprintf(f->c.name, sizeof f->c.name, "mm");
  snprintf(f->c.path, sizeof f->c.path, "campaigns/mm.json");
  snprintf(f->c.hash, sizeof f->c.hash, "0123456789abcdef0123456789abcdef");
  sim_device(&f->d, 0, "SIM-0123abcd-4567-89ab-cdef-000000000000");
  snprintf(f->path, sizeof f->path, "%s/mm/testhost-gpu0-0123abcd.jsonl", f->dir);
  f->log = tmpfile();
  *state = f;
  return f->log ? 0 : -1;
}

static int teardown(void **state) {
  fixture *f = *state;
  rm_rf(f->dir);
  fclose(f->log);
  free(f);
  return 0;
}

static ledger_opts opts(fixture *f, int fresh) {
  ledger_opts o = {f->dir, fresh, f->log};
  return o;
}

static char *slurp(const char *path) {
  tf_err e;
  tf_err_clear(&e);
  char *text = jsonio_slurp(path, "test", 1 << 24, NULL, &e);
  assert_non_null(text);
  return text;
}

static char *log_text(fixture *f) {
  fflush(f->log);
  long n = ftell(f->log);
  char *buf = calloc(1, (size_t)n + 1);
  rewind(f->log);
  assert_int_equal(fread(buf, 1, (size_t)n, f->log), (size_t)n);
  return buf;
}

/* Lines in the file; every one must end in '\n' and be a JSON object. */
static int complete_lines(const char *path) {
  char *text = slurp(path);
  size_t len = strlen(text);
  int n = 0;
  if (len) assert_int_equal(text[len - 1], '\n');
  for (char *p = text; *p;) {
    char *nl = strchr(p, '\n');
    assert_non_null(nl);
    *nl = '\0';
    cJSON *o = cJSON_Parse(p);
    assert_true(cJSON_IsObject(o));
    cJSON_Delete(o);
    n++;
    p = nl + 1;
  }
  free(text);
  return n;
}

static void append_bytes(const char *path, const char *bytes, size_t len) {
  FILE *fp = fopen(path, "ab");
  assert_non_null(fp);
  assert_int_equal(fwrite(bytes, 1, len, fp), len);
  fclose(fp);
}

static void append_text(const char *path, const char *text) {
  append_bytes(path, text, strlen(text));
}

static void append_gen(ledger *l, int gen) {
  tf_err e;
  tf_err_clear(&e);
  char text[256];
  snprintf(text, sizeof text, "{\"type\": \"generation\", \"generation\": %d, \"decision\": "
           "\"refused\", \"reason\": \"breaks constraint 'c'\\nsecond line\"}", gen);
  record *r = test_record(text);
  assert_int_equal(ledger_append(l, r, &e), 0);
  record_free(r);
}

/* A ledger with `n` generation records, closed again. */
static void make_ledger(fixture *f, int n) {
  ledger_opts o = opts(f, 0);
  ledger *l = NULL;
  tf_err e;
  tf_err_clear(&e);
  assert_int_equal(ledger_open(&l, &o, &f->c, &f->d, &e), 0);
  for (int g = 1; g <= n; g++) append_gen(l, g);
  ledger_close(l);
}

static int count_lines(void *ctx, long line, const record *rec, tf_err *e);

typedef struct collected {
  int n;
  int gens[16];
  int stop_after; /* 0: never stop */
} collected;

static int collect_gen(void *ctx, long line, const record *rec, tf_err *e) {
  collected *c = ctx;
  (void)line;
  (void)e;
  if (rec->kind != RECORD_GENERATION || c->n >= 16) return -1;
  c->gens[c->n++] = (int)rec->gen.generation;
  return c->stop_after && c->n >= c->stop_after ? 1 : 0;
}

static collected reopen_and_replay(fixture *f, int expect_rc, tf_err *e) {
  ledger_opts o = opts(f, 0);
  ledger *l = NULL;
  collected got = {0};
  tf_err_clear(e);
  int rc = ledger_open(&l, &o, &f->c, &f->d, e);
  assert_int_equal(rc, expect_rc);
  if (rc == 0) {
    assert_int_equal(ledger_replay(l, collect_gen, &got, e), 0);
    ledger_close(l);
  } else {
    assert_null(l);
  }
  return got;
}

static void ledger_file_name_should_join_host_ordinal_and_uuid8(void **state) {
  fixture *f = *state;
  char name[256];
  ledger_file_name(&f->d, name, sizeof name);
  assert_string_equal(name, "testhost-gpu0-0123abcd.jsonl");
  snprintf(f->d.host, sizeof f->d.host, "../evil host");
  f->d.ordinal = 3;
  ledger_file_name(&f->d, name, sizeof name);
  assert_null(strchr(name, '/'));
  assert_null(strchr(name, ' '));
  assert_non_null(strstr(name, "-gpu3-0123abcd.jsonl"));
}

static void ledger_should_start_with_the_device_header(void **state) {
  fixture *f = *state;
  make_ledger(f, 0);
  assert_int_equal(complete_lines(f->path), 1);
  char *text = slurp(f->path);
  cJSON *h = cJSON_Parse(text);
  assert_non_null(h);
  assert_string_equal(cJSON_GetObjectItem(h, "type")->valuestring, "device");
  assert_int_equal(cJSON_GetObjectItem(h, "schema_version")->valueint, RECORD_SCHEMA_VERSION);
  assert_string_equal(cJSON_GetObjectItem(h, "campaign")->valuestring, "mm");
  assert_string_equal(cJSON_GetObjectItem(h, "campaign_path")->valuestring, "campaigns/mm.json");
  assert_string_equal(cJSON_GetObjectItem(h, "campaign_hash")->valuestring, f->c.hash);
  assert_string_equal(cJSON_GetObjectItem(h, "backend")->valuestring, "sim");
  assert_string_equal(cJSON_GetObjectItem(h, "tunefarm")->valuestring, "0.1");
  const char *created = cJSON_GetObjectItem(h, "created")->valuestring;
  assert_int_equal(strlen(created), 20); /* 2025-01-31T12:00:00Z */
  assert_int_equal(created[19], 'Z');
  device_record d;
  tf_err e;
  tf_err_clear(&e);
  assert_int_equal(device_from_json(cJSON_GetObjectItem(h, "device"), &d, &e), 0);
  assert_string_equal(d.uuid, f->d.uuid);
  cJSON_Delete(h);
  free(text);
}

static void ledger_should_resume_and_replay_every_record_in_order(void **state) {
  fixture *f = *state;
  make_ledger(f, 3);
  tf_err e;
  collected got = reopen_and_replay(f, 0, &e);
  assert_int_equal(got.n, 3);
  assert_int_equal(got.gens[0], 1);
  assert_int_equal(got.gens[2], 3);
  assert_int_equal(complete_lines(f->path), 4); /* resuming added no second header */
}

static void ledger_replay_should_stop_early_or_fail_as_the_callback_says(void **state) {
  fixture *f = *state;
  make_ledger(f, 3);
  ledger_opts o = opts(f, 0);
  ledger *l = NULL;
  tf_err e;
  tf_err_clear(&e);
  assert_int_equal(ledger_open(&l, &o, &f->c, &f->d, &e), 0);
  collected got = {.stop_after = 2};
  assert_int_equal(ledger_replay(l, collect_gen, &got, &e), 0);
  assert_int_equal(got.n, 2);
  collected full = {.n = 16}; /* no room left: the callback fails on the first record */
  assert_int_equal(ledger_replay(l, collect_gen, &full, &e), -1);
  assert_non_null(strstr(e.msg, "line 2"));
  ledger_close(l);
}

static void ledger_replay_should_see_records_appended_since_open(void **state) {
  fixture *f = *state;
  ledger_opts o = opts(f, 0);
  ledger *l = NULL;
  tf_err e;
  tf_err_clear(&e);
  assert_int_equal(ledger_open(&l, &o, &f->c, &f->d, &e), 0);
  append_gen(l, 1);
  append_gen(l, 2);
  collected got = {0};
  assert_int_equal(ledger_replay(l, collect_gen, &got, &e), 0);
  assert_int_equal(got.n, 2);
  ledger_close(l);
}

static void ledger_append_should_add_exactly_one_line(void **state) {
  fixture *f = *state;
  make_ledger(f, 2);
  ledger_opts o = opts(f, 0);
  ledger *l = NULL;
  tf_err e;
  tf_err_clear(&e);
  assert_int_equal(ledger_open(&l, &o, &f->c, &f->d, &e), 0);
  assert_int_equal(complete_lines(ledger_path(l)), 3);
  append_gen(l, 3); /* its reason holds a newline: escaped, still one line */
  assert_int_equal(complete_lines(ledger_path(l)), 4);
  ledger_close(l);
}

static void ledger_should_skip_and_cut_a_torn_last_line(void **state) {
  fixture *f = *state;
  make_ledger(f, 2);
  struct stat st;
  assert_int_equal(stat(f->path, &st), 0);
  const char *torn = "{\"type\":\"generation\",\"generation\":3,\"dec";
  append_text(f->path, torn);

  tf_err e;
  ledger_opts o = opts(f, 0);
  ledger *l = NULL;
  tf_err_clear(&e);
  assert_int_equal(ledger_open(&l, &o, &f->c, &f->d, &e), 0);
  char *log = log_text(f);
  char want[1200];
  snprintf(want, sizeof want, "ledger '%s': torn last line (%zu bytes) skipped", f->path,
           strlen(torn));
  assert_non_null(strstr(log, want));
  free(log);
  struct stat cut;
  assert_int_equal(stat(f->path, &cut), 0);
  assert_int_equal(cut.st_size, st.st_size); /* truncated before any append */

  append_gen(l, 3);
  ledger_close(l);
  assert_int_equal(complete_lines(f->path), 4);
  collected got = reopen_and_replay(f, 0, &e);
  assert_int_equal(got.n, 3);
  assert_int_equal(got.gens[2], 3);
}

/* A crash's zeros without a newline are a torn last line: skipped, and cut on resume. */
static void ledger_should_skip_an_unparseable_last_line_without_its_newline(void **state) {
  fixture *f = *state;
  make_ledger(f, 1);
  static const char zeros[] = "{\"type\":\"generation\",\"gen\0\0\0";
  append_bytes(f->path, zeros, sizeof zeros - 1);
  tf_err e;
  collected got = reopen_and_replay(f, 0, &e);
  assert_int_equal(got.n, 1);
  char *log = log_text(f);
  assert_non_null(strstr(log, "torn last line"));
  free(log);
  assert_int_equal(complete_lines(f->path), 2);
}

/* Every line is written with its newline in one write: a last line that has its newline and
 * does not read is no torn write but corruption, refused by scan and resume alike, naming the
 * line, and the file is left as it was. */
static void ledger_should_refuse_a_complete_last_line_that_does_not_read(void **state) {
  fixture *f = *state;
  static const struct {
    const char *bytes;
    size_t len;
  } tails[] = {{"{\"type\":\"generation\",\"gen\0\0\0\n", 30}, /* a crash's zeros, newline kept */
               {"{\"type\":\"generation\",\"generation\":2,\"decis\n", 0},
               {"\n", 0}};
  for (size_t i = 0; i < sizeof tails / sizeof tails[0]; i++) {
    rm_rf(f->path);
    make_ledger(f, 1);
    append_bytes(f->path, tails[i].bytes, tails[i].len ? tails[i].len : strlen(tails[i].bytes));
    char *before = slurp(f->path);
    struct stat st0, st1;
    assert_int_equal(stat(f->path, &st0), 0);
    tf_err e;
    tf_err_clear(&e);
    long lines = 0;
    assert_int_equal(ledger_scan(f->path, f->log, count_lines, &lines, &e), -1);
    assert_int_equal(e.code, TF_EXIT_INPUT);
    assert_non_null(strstr(e.msg, f->path));
    assert_non_null(strstr(e.msg, "line 3"));
    reopen_and_replay(f, -1, &e);
    assert_int_equal(e.code, TF_EXIT_INPUT);
    assert_non_null(strstr(e.msg, f->path));
    assert_non_null(strstr(e.msg, "line 3"));
    assert_int_equal(stat(f->path, &st1), 0);
    assert_int_equal(st1.st_size, st0.st_size); /* not cut */
    char *after = slurp(f->path);
    assert_string_equal(before, after);
    free(before);
    free(after);
  }
  char *log = log_text(f);
  assert_null(strstr(log, "torn"));
  free(log);
}

static void ledger_should_recreate_a_header_torn_at_creation(void **state) {
  fixture *f = *state;
  make_ledger(f, 0);
  assert_int_equal(truncate(f->path, 30), 0);
  tf_err e;
  collected got = reopen_and_replay(f, 0, &e);
  assert_int_equal(got.n, 0);
  assert_int_equal(complete_lines(f->path), 1);
}

static void ledger_should_refuse_a_corrupt_middle_line_naming_it(void **state) {
  fixture *f = *state;
  make_ledger(f, 1);
  append_text(f->path, "this is not json\n{\"type\":\"generation\",\"generation\":2}\n");
  char *before = slurp(f->path);
  tf_err e;
  reopen_and_replay(f, -1, &e);
  assert_int_equal(e.code, TF_EXIT_INPUT);
  assert_non_null(strstr(e.msg, f->path));
  assert_non_null(strstr(e.msg, "line 3"));
  char *after = slurp(f->path);
  assert_string_equal(before, after); /* a refused ledger is left as it was */
  free(before);
  free(after);
}

static void ledger_should_refuse_a_changed_campaign_mentioning_fresh(void **state) {
  fixture *f = *state;
  make_ledger(f, 1);
  snprintf(f->c.hash, sizeof f->c.hash, "fedcba9876543210fedcba9876543210");
  tf_err e;
  reopen_and_replay(f, -1, &e);
  assert_int_equal(e.code, TF_EXIT_INPUT);
  assert_non_null(strstr(e.msg, f->path));
  assert_non_null(strstr(e.msg, "changed"));
  assert_non_null(strstr(e.msg, "--fresh"));
}

static void ledger_should_refuse_another_device(void **state) {
  fixture *f = *state;
  make_ledger(f, 1);
  /* Same host, ordinal and first 8 hex digits, so the same file name: another GPU all the same. */
  snprintf(f->d.uuid, sizeof f->d.uuid, "SIM-0123abcd-ffff-ffff-ffff-ffffffffffff");
  tf_err e;
  reopen_and_replay(f, -1, &e);
  assert_int_equal(e.code, TF_EXIT_INPUT);
  assert_non_null(strstr(e.msg, "SIM-0123abcd-4567-89ab-cdef-000000000000"));
  assert_non_null(strstr(e.msg, "SIM-0123abcd-ffff-ffff-ffff-ffffffffffff"));
  assert_non_null(strstr(e.msg, "--fresh"));
}

static void ledger_should_refuse_a_file_that_is_not_a_ledger(void **state) {
  fixture *f = *state;
  make_ledger(f, 0);
  tf_err e;
  FILE *fp = fopen(f->path, "wb");
  fputs("{\"type\":\"device\",\"device\":{},\"campaign\":\"mm\"}\n", fp);
  fclose(fp);
  reopen_and_replay(f, -1, &e);
  assert_int_equal(e.code, TF_EXIT_INPUT);
  assert_non_null(strstr(e.msg, f->path));
  assert_non_null(strstr(e.msg, "'campaign_path'"));

  fp = fopen(f->path, "wb");
  fputs("hello, world\n", fp);
  fclose(fp);
  reopen_and_replay(f, -1, &e);
  assert_int_equal(e.code, TF_EXIT_INPUT);
  assert_non_null(strstr(e.msg, "line 1"));

  fp = fopen(f->path, "wb");
  fputs("{\"type\":\"generation\"}\n", fp);
  fclose(fp);
  reopen_and_replay(f, -1, &e);
  assert_non_null(strstr(e.msg, "'type'"));
}

static void ledger_should_move_the_old_file_aside_with_fresh(void **state) {
  fixture *f = *state;
  make_ledger(f, 2);
  snprintf(f->c.hash, sizeof f->c.hash, "fedcba9876543210fedcba9876543210");
  ledger_opts o = opts(f, 1);
  ledger *l = NULL;
  tf_err e;
  tf_err_clear(&e);
  assert_int_equal(ledger_open(&l, &o, &f->c, &f->d, &e), 0);
  collected got = {0};
  assert_int_equal(ledger_replay(l, collect_gen, &got, &e), 0);
  assert_int_equal(got.n, 0);
  ledger_close(l);
  assert_int_equal(complete_lines(f->path), 1);

  /* The old one is beside it as NAME.jsonl.<yyyymmddThhmmssZ>.old, whole. */
  char folder[512], old[1024] = "";
  snprintf(folder, sizeof folder, "%s/mm", f->dir);
  DIR *d = opendir(folder);
  struct dirent *de;
  int olds = 0;
  while ((de = readdir(d))) {
    const char *n = de->d_name, *pre = "testhost-gpu0-0123abcd.jsonl.";
    size_t len = strlen(n);
    if (strncmp(n, pre, strlen(pre)) != 0) continue;
    olds++;
    assert_string_equal(n + len - 4, ".old");
    assert_int_equal(len, strlen(pre) + 16 + 4); /* 20250131T120000Z */
    assert_int_equal(n[strlen(pre) + 8], 'T');
    snprintf(old, sizeof old, "%s/%s", folder, n);
  }
  closedir(d);
  assert_int_equal(olds, 1);
  assert_int_equal(complete_lines(old), 3);
  char *log = log_text(f);
  assert_non_null(strstr(log, "moved aside"));
  free(log);
}

static void ledger_should_refuse_a_second_writer(void **state) {
  fixture *f = *state;
  ledger_opts o = opts(f, 0);
  ledger *a = NULL, *b = NULL;
  tf_err e;
  tf_err_clear(&e);
  assert_int_equal(ledger_open(&a, &o, &f->c, &f->d, &e), 0);
  assert_int_equal(ledger_open(&b, &o, &f->c, &f->d, &e), -1);
  assert_non_null(strstr(e.msg, "in use"));
  ledger_close(a);
  assert_int_equal(ledger_open(&b, &o, &f->c, &f->d, &e), 0);
  ledger_close(b);
}

/* The names in the campaign folder that begin with the ledger's file name and end in .old. */
static int old_copies(fixture *f) {
  char folder[512];
  snprintf(folder, sizeof folder, "%s/mm", f->dir);
  DIR *d = opendir(folder);
  assert_non_null(d);
  struct dirent *de;
  int n = 0;
  while ((de = readdir(d))) {
    size_t len = strlen(de->d_name);
    n += strncmp(de->d_name, "testhost-gpu0-0123abcd.jsonl.", 29) == 0 && len > 4 &&
         strcmp(de->d_name + len - 4, ".old") == 0;
  }
  closedir(d);
  return n;
}

/* A run that holds its ledger keeps it at its path: a --fresh run started meanwhile is refused
 * before it moves anything aside (else both runs measure the same device, each writing its
 * own file). */
static void ledger_should_refuse_fresh_while_another_run_holds_it(void **state) {
  fixture *f = *state;
  ledger_opts live = opts(f, 0), fresh = opts(f, 1);
  ledger *a = NULL, *b = NULL;
  tf_err e;
  tf_err_clear(&e);
  assert_int_equal(ledger_open(&a, &live, &f->c, &f->d, &e), 0);
  append_gen(a, 1);
  struct stat st0, st1;
  assert_int_equal(stat(f->path, &st0), 0);
  assert_int_equal(ledger_open(&b, &fresh, &f->c, &f->d, &e), -1);
  assert_null(b);
  assert_int_equal(e.code, TF_EXIT_INPUT);
  assert_non_null(strstr(e.msg, f->path));
  assert_non_null(strstr(e.msg, "in use"));
  assert_int_equal(stat(f->path, &st1), 0);
  assert_true(st1.st_ino == st0.st_ino && st1.st_size == st0.st_size); /* still the live one */
  assert_int_equal(old_copies(f), 0);
  append_gen(a, 2); /* the live run goes on writing where it was */
  ledger_close(a);
  assert_int_equal(complete_lines(f->path), 3);
  /* once it is closed, --fresh moves it aside, and holds the new one */
  assert_int_equal(ledger_open(&b, &fresh, &f->c, &f->d, &e), 0);
  assert_int_equal(old_copies(f), 1);
  assert_int_equal(ledger_open(&a, &live, &f->c, &f->d, &e), -1);
  assert_non_null(strstr(e.msg, "in use"));
  ledger_close(b);
}

/* What a versions record says, for the test below. */
typedef struct seen_versions {
  int gens, versions;
  record_versions last;
} seen_versions;

static int see_versions(void *ctx, long line, const record *rec, tf_err *e) {
  seen_versions *v = ctx;
  (void)line;
  (void)e;
  v->gens += rec->kind == RECORD_GENERATION;
  if (rec->kind == RECORD_VERSIONS) v->versions++, v->last = rec->versions;
  return 0;
}

/* A resume with another driver, runtime or NVRTC warns naming both values and records the
 * change once; the versions in force are then the recorded ones. */
static void ledger_should_record_changed_versions_on_resume(void **state) {
  fixture *f = *state;
  make_ledger(f, 2);
  f->d.driver_version = 13010;
  f->d.nvrtc_minor = 1;
  ledger_opts o = opts(f, 0);
  ledger *l = NULL;
  tf_err e;
  tf_err_clear(&e);
  assert_int_equal(ledger_open(&l, &o, &f->c, &f->d, &e), 0);
  seen_versions v = {0};
  assert_int_equal(ledger_replay(l, see_versions, &v, &e), 0);
  assert_int_equal(v.versions, 0); /* written after the replay read every record */
  ledger_close(l);
  memset(&v, 0, sizeof v);
  assert_int_equal(ledger_scan(f->path, f->log, see_versions, &v, &e), 0);
  assert_int_equal(v.gens, 2);
  assert_int_equal(v.versions, 1);
  assert_int_equal(v.last.generation, 2);
  assert_int_equal(v.last.driver_version, 13010);
  assert_int_equal(v.last.runtime_version, 13000);
  assert_int_equal(v.last.nvrtc_major, 13);
  assert_int_equal(v.last.nvrtc_minor, 1);
  assert_non_null(strstr(v.last.reason, "driver 13000 -> 13010"));
  assert_non_null(strstr(v.last.reason, "NVRTC 13.0 -> 13.1"));
  assert_null(strstr(v.last.reason, "runtime"));
  char *log = log_text(f);
  assert_non_null(strstr(log, "warning"));
  assert_non_null(strstr(log, f->path));
  assert_non_null(strstr(log, "driver 13000 -> 13010, NVRTC 13.0 -> 13.1"));
  free(log);
  assert_int_equal(complete_lines(f->path), 4);

  /* the same versions again: nothing new to say or record */
  rewind(f->log);
  assert_int_equal(ftruncate(fileno(f->log), 0), 0);
  assert_int_equal(ledger_open(&l, &o, &f->c, &f->d, &e), 0);
  assert_int_equal(ledger_replay(l, see_versions, &v, &e), 0);
  append_gen(l, 3);
  ledger_close(l);
  assert_int_equal(complete_lines(f->path), 5);
  log = log_text(f);
  assert_null(strstr(log, "warning"));
  free(log);
  /* and every reader reads it */
  memset(&v, 0, sizeof v);
  assert_int_equal(ledger_scan(f->path, f->log, see_versions, &v, &e), 0);
  assert_int_equal(v.gens, 3);
  assert_int_equal(v.versions, 1);
}

static int refuse_all(void *ctx, long line, const record *rec, tf_err *e) {
  (void)ctx;
  (void)rec;
  return tf_fail(e, TF_EXIT_INPUT, "line %ld refused", line);
}

/* A resume that refuses a record leaves the ledger as it was: no versions record either. */
static void ledger_should_leave_a_refused_ledger_alone_when_versions_changed(void **state) {
  fixture *f = *state;
  make_ledger(f, 1);
  char *before = slurp(f->path);
  f->d.runtime_version = 13020;
  ledger_opts o = opts(f, 0);
  ledger *l = NULL;
  tf_err e;
  tf_err_clear(&e);
  assert_int_equal(ledger_open(&l, &o, &f->c, &f->d, &e), 0);
  assert_int_equal(ledger_replay(l, refuse_all, NULL, &e), -1);
  ledger_close(l);
  char *after = slurp(f->path);
  assert_string_equal(before, after);
  free(before);
  free(after);
}

/* ---------------------------------------------------------------- strict reading */

static int count_lines(void *ctx, long line, const record *rec, tf_err *e) {
  (void)rec;
  (void)e;
  *(long *)ctx = line;
  return 0;
}

/* ledger_scan on the fixture's ledger after appending `tail`: -1 and a message holding both
 * `want` and `line`, or 0 when want is NULL. */
static void scan_should(fixture *f, int n, const char *tail, const char *line, const char *want) {
  rm_rf(f->path);
  make_ledger(f, n);
  char *copy = strdup(tail);
  for (char *l = copy, *nl; l && *l; l = nl) { /* each line completed as the coordinator writes */
    nl = strchr(l, '\n');
    if (nl) *nl++ = '\0';
    char *full = test_record_line(l);
    append_text(f->path, full);
    append_text(f->path, "\n");
    free(full);
  }
  free(copy);
  tf_err e;
  tf_err_clear(&e);
  long lines = 0;
  int rc = ledger_scan(f->path, f->log, count_lines, &lines, &e);
  if (!want) {
    if (rc) fail_msg("refused %s: %s", tail, e.msg);
    return;
  }
  if (rc == 0) fail_msg("accepted %s", tail);
  assert_int_equal(e.code, TF_EXIT_INPUT);
  if (!strstr(e.msg, f->path) || !strstr(e.msg, line) || !strstr(e.msg, want))
    fail_msg("'%s' lacks the file, '%s' or '%s'", e.msg, line, want);
}

#define VERSIONS_AT(g)                                                                          \
  "{\"type\":\"versions\",\"generation\":" g ",\"time\":\"2026-01-01T00:00:00Z\","                 \
  "\"driver_version\":13010,\"runtime_version\":13000,\"nvrtc_version\":\"13.0\",\"reason\":\"r\"}\n"

/* Every reader (report, verify, bench, study) sees the records in the order the run wrote
 * them, or a message naming the line: a generation missing, repeated or swapped, or a record
 * after the end, would make each of them count a different search. */
static void ledger_scan_should_refuse_records_out_of_order(void **state) {
  fixture *f = *state;
  scan_should(f, 2, "{\"type\":\"generation\",\"generation\":3}\n{\"type\":\"end\"}\n", "", NULL);
  scan_should(f, 2, "{\"type\":\"generation\",\"generation\":4}\n", "line 4",
              "key 'generation' is 4 where 3 is due");
  scan_should(f, 2, "{\"type\":\"generation\",\"generation\":2}\n", "line 4",
              "key 'generation' is 2 where 3 is due");
  scan_should(f, 1, "{\"type\":\"generation\",\"generation\":3}\n{\"type\":\"generation\",\"generation\":2}\n",
              "line 3", "where 2 is due");
  scan_should(f, 0, "{\"type\":\"generation\",\"generation\":1e300}\n", "line 2",
              "key 'generation' must be a positive integer");
  scan_should(f, 0, "{\"type\":\"generation\",\"generation\":1.5}\n", "line 2", "positive integer");
  scan_should(f, 0, "{\"type\":\"generation\"}\n", "line 2", "key 'generation' is missing");
  scan_should(f, 2, "{\"type\":\"end\"}\n{\"type\":\"generation\",\"generation\":3}\n", "line 5",
              "after the search's end (line 4)");
  scan_should(f, 1, "{\"type\":\"restart\",\"restart\":1}\n{\"type\":\"restart\",\"restart\":1}\n",
              "line 4", "key 'restart' is 1 where 2 is due");
  /* a versions record names the generation it follows, and may follow an end record */
  scan_should(f, 2, "{\"type\":\"end\",\"generation\":2}\n" VERSIONS_AT("2"), "", NULL);
  scan_should(f, 2, VERSIONS_AT("5"), "line 4",
              "key 'generation' is 5, but the last generation before it is 2");
}

static void ledger_scan_should_refuse_a_repeated_key(void **state) {
  fixture *f = *state;
  scan_should(f, 1, "{\"type\":\"generation\",\"generation\":2,\"decision\":\"keep\",\"decision\":\"reject\"}\n",
              "line 3", "key 'decision' appears more than once");
}

/* A ledger file or campaign folder that is a symbolic link could point anywhere: a dangling
 * one would make a run write its generations outside the ledgers folder. */
static void ledger_open_should_refuse_symbolic_links(void **state) {
  fixture *f = *state;
  char outside[512], folder[512], moved[512];
  snprintf(outside, sizeof outside, "%s/outside.jsonl", f->dir);
  snprintf(folder, sizeof folder, "%s/mm", f->dir);
  snprintf(moved, sizeof moved, "%s/elsewhere", f->dir);
  assert_int_equal(mkdir(folder, 0755), 0);
  assert_int_equal(symlink(outside, f->path), 0); /* dangling */
  ledger_opts o = opts(f, 0);
  ledger *l = NULL;
  tf_err e;
  tf_err_clear(&e);
  assert_int_equal(ledger_open(&l, &o, &f->c, &f->d, &e), -1);
  assert_int_equal(e.code, TF_EXIT_INPUT);
  assert_non_null(strstr(e.msg, "symbolic link"));
  assert_non_null(strstr(e.msg, f->path));
  struct stat st;
  assert_int_equal(lstat(outside, &st), -1); /* nothing written through it */

  /* the campaign folder a link to another folder */
  rm_rf(folder);
  assert_int_equal(mkdir(moved, 0755), 0);
  assert_int_equal(symlink(moved, folder), 0);
  tf_err_clear(&e);
  assert_int_equal(ledger_open(&l, &o, &f->c, &f->d, &e), -1);
  assert_int_equal(e.code, TF_EXIT_INPUT);
  assert_non_null(strstr(e.msg, "symbolic link"));
  char inside[1024];
  snprintf(inside, sizeof inside, "%s/testhost-gpu0-0123abcd.jsonl", moved);
  assert_int_equal(lstat(inside, &st), -1);
}

/* The final best as report and bench read it: the kept new, else the record's best. */
static void ledger_best_should_follow_keeps_and_the_latest_measured_median(void **state) {
  (void)state;
  static const char *const recs[] = {
      "{\"type\": \"generation\", \"generation\": 1, \"decision\": \"reject\", \"best\": {\"BM\": 64}, \"new\": {\"BM\": 32},"
      " \"rounds\": [{\"best_us\": 10}, {\"best_us\": 12}, {\"best_us\": 11}]}",
      "{\"type\": \"generation\", \"generation\": 2, \"decision\": \"keep\", \"best\": {\"BM\": 64}, \"new\": {\"BM\": 128},"
      " \"rounds\": [{\"best_us\": 11, \"new_us\": 9}, {\"best_us\": 11, \"new_us\": 8}]}",
      "{\"type\": \"generation\", \"generation\": 3, \"decision\": \"refused\", \"best\": {\"BM\": 128}, \"new\": {\"BM\": 7}}",
  };
  ledger_best b;
  record_cfg cfg;
  double us;
  long long gen;
  tf_err e = {0};
  ledger_best_init(&b, NULL, "l.jsonl");
  assert_int_equal(ledger_best_get(&b, &cfg, &us, &gen), 0);
  for (int i = 0; i < 3; i++) {
    record *r = test_record(recs[i]);
    if (ledger_best_add(&b, r, &e)) fail_msg("%s", e.msg);
    record_free(r);
    assert_int_equal(ledger_best_get(&b, &cfg, &us, &gen), 1);
    assert_int_equal(cfg.v[0], i == 0 ? 64 : 128);
    assert_true(us == (i == 0 ? 11.0 : 8.5));
    assert_int_equal(gen, i == 0 ? 1 : 2); /* a refusal measures nothing */
  }
  ledger_best_release(&b);
}

/* Resume, report and bench read a generation's time from its rounds; a round screened for
 * its clocks was run again, and the live run's median leaves it out, so they must too. */
static void record_rounds_median_should_leave_out_screened_rounds(void **state) {
  (void)state;
  record *r = test_record(
      "{\"type\": \"generation\", \"generation\": 1, \"decision\": \"reject\", \"rounds\": ["
      "{\"best_us\": 10, \"new_us\": 9}, {\"best_us\": 11, \"new_us\": 8},"
      " {\"best_us\": 50, \"new_us\": 60, \"screened\": true},"
      " {\"best_us\": 12, \"new_us\": 7}]}");
  assert_float_equal(record_rounds_median(&r->gen, ARM_BEST, 0), 11.0, 1e-12);
  assert_float_equal(record_rounds_median(&r->gen, ARM_NEW, 0), 8.0, 1e-12);
  assert_true(isnan(record_rounds_median(&r->gen, ARM_NEW, 1))); /* no kernel times */
  record_free(r);
}

/* With restarts the answer is the champion: a restarted segment's keeps do not move it, its
 * duel does (a keep: the segment's best; a reject: the champion again). */
static void ledger_best_should_hold_the_champion_across_restarts(void **state) {
  (void)state;
  static const struct {
    const char *rec;
    long long bm, gen;
    double us;
  } steps[] = {
      {"{\"type\": \"generation\", \"generation\": 1, \"decision\": \"keep\", \"best\": {\"BM\": 64},"
       " \"new\": {\"BM\": 128}, \"rounds\": [{\"best_us\": 11, \"new_us\": 9}]}", 128, 1, 9},
      {"{\"type\": \"restart\", \"restart\": 1, \"generation\": 1, \"champion\": {\"BM\": 128},"
       " \"champion_us\": 9, \"start\": {\"BM\": 16}}", 128, 1, 9},
      {"{\"type\": \"generation\", \"generation\": 2, \"restart\": 1, \"decision\": \"keep\","
       " \"best\": {\"BM\": 16}, \"new\": {\"BM\": 32}, \"rounds\": [{\"best_us\": 30, \"new_us\": 20}]}",
       128, 1, 9},
      {"{\"type\": \"generation\", \"generation\": 3, \"restart\": 1, \"duel\": true, \"decision\":"
       " \"keep\", \"best\": {\"BM\": 128}, \"new\": {\"BM\": 32}, \"rounds\": [{\"best_us\": 9.5,"
       " \"new_us\": 8}]}", 32, 3, 8},
      {"{\"type\": \"restart\", \"restart\": 2, \"generation\": 3, \"champion\": {\"BM\": 32},"
       " \"champion_us\": 8, \"start\": {\"BM\": 256}}", 32, 3, 8},
      {"{\"type\": \"generation\", \"generation\": 4, \"restart\": 2, \"decision\": \"keep\","
       " \"best\": {\"BM\": 256}, \"new\": {\"BM\": 512}, \"rounds\": [{\"best_us\": 13, \"new_us\": 12}]}",
       32, 3, 8},
      {"{\"type\": \"generation\", \"generation\": 5, \"restart\": 2, \"duel\": true, \"decision\":"
       " \"reject\", \"best\": {\"BM\": 32}, \"new\": {\"BM\": 512}, \"rounds\": [{\"best_us\": 7.5,"
       " \"new_us\": 12}]}", 32, 5, 7.5},
  };
  ledger_best b;
  record_cfg cfg;
  double us;
  long long gen;
  tf_err e = {0};
  ledger_best_init(&b, NULL, "l.jsonl");
  for (size_t i = 0; i < sizeof steps / sizeof steps[0]; i++) {
    record *r = test_record(steps[i].rec);
    if (ledger_best_add(&b, r, &e)) fail_msg("step %zu: %s", i, e.msg);
    record_free(r);
    assert_int_equal(ledger_best_get(&b, &cfg, &us, &gen), 1);
    assert_int_equal(cfg.v[0], steps[i].bm);
    assert_int_equal(gen, steps[i].gen);
    assert_true(us == steps[i].us);
  }
  ledger_best_release(&b);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test_setup_teardown(ledger_file_name_should_join_host_ordinal_and_uuid8, setup,
                                      teardown),
      cmocka_unit_test_setup_teardown(ledger_should_start_with_the_device_header, setup,
                                      teardown),
      cmocka_unit_test_setup_teardown(ledger_should_resume_and_replay_every_record_in_order,
                                      setup, teardown),
      cmocka_unit_test_setup_teardown(
          ledger_replay_should_stop_early_or_fail_as_the_callback_says, setup, teardown),
      cmocka_unit_test_setup_teardown(ledger_replay_should_see_records_appended_since_open, setup,
                                      teardown),
      cmocka_unit_test_setup_teardown(ledger_append_should_add_exactly_one_line, setup, teardown),
      cmocka_unit_test_setup_teardown(ledger_should_skip_and_cut_a_torn_last_line, setup,
                                      teardown),
      cmocka_unit_test_setup_teardown(ledger_should_skip_an_unparseable_last_line_without_its_newline,
                                      setup, teardown),
      cmocka_unit_test_setup_teardown(ledger_should_refuse_a_complete_last_line_that_does_not_read,
                                      setup, teardown),
      cmocka_unit_test_setup_teardown(ledger_should_recreate_a_header_torn_at_creation, setup,
                                      teardown),
      cmocka_unit_test_setup_teardown(ledger_should_refuse_a_corrupt_middle_line_naming_it, setup,
                                      teardown),
      cmocka_unit_test_setup_teardown(ledger_should_refuse_a_changed_campaign_mentioning_fresh,
                                      setup, teardown),
      cmocka_unit_test_setup_teardown(ledger_should_refuse_another_device, setup, teardown),
      cmocka_unit_test_setup_teardown(ledger_should_refuse_a_file_that_is_not_a_ledger, setup,
                                      teardown),
      cmocka_unit_test_setup_teardown(ledger_should_move_the_old_file_aside_with_fresh, setup,
                                      teardown),
      cmocka_unit_test_setup_teardown(ledger_should_refuse_a_second_writer, setup, teardown),
      cmocka_unit_test_setup_teardown(ledger_should_refuse_fresh_while_another_run_holds_it, setup,
                                      teardown),
      cmocka_unit_test_setup_teardown(ledger_should_record_changed_versions_on_resume, setup,
                                      teardown),
      cmocka_unit_test_setup_teardown(
          ledger_should_leave_a_refused_ledger_alone_when_versions_changed, setup, teardown),
      cmocka_unit_test_setup_teardown(ledger_scan_should_refuse_records_out_of_order, setup,
                                      teardown),
      cmocka_unit_test_setup_teardown(ledger_scan_should_refuse_a_repeated_key, setup, teardown),
      cmocka_unit_test_setup_teardown(ledger_open_should_refuse_symbolic_links, setup, teardown),
      cmocka_unit_test(ledger_best_should_follow_keeps_and_the_latest_measured_median),
      cmocka_unit_test(ledger_best_should_hold_the_champion_across_restarts),
      cmocka_unit_test(record_rounds_median_should_leave_out_screened_rounds),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
