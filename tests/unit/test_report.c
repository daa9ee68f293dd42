/* test_report: `tunefarm report` on small ledgers written through the ledger module. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <dirent.h>
#include <fcntl.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cjson/cJSON.h>

#include "common/jsonio.h"
#include "coordinator/ledger.h"
#include "tools/report.h"
#include "tools/report_model.h"
#include "tools/throughput.h"
#include "tests/unit/testutil.h"

typedef struct fixture {
  char dir[256];  /* the ledgers folder */
  char ledger_a[1024], ledger_b[1024];
  char *out, *err; /* what the last report wrote */
} fixture;

/* Device A (gpu0): keeps, rejections with one reason pattern, a static refusal, an end record. */
static const char *const records_a[] = {
    "{\"type\":\"generation\",\"generation\":1,\"device\":\"SIM-aaaa1111\",\"rule\":\"median\","
    "\"best\":{\"BM\":64,\"BK\":64},\"new\":{\"BM\":64,\"BK\":32},\"change\":{\"BK\":[64,32]},"
    "\"rounds\":[{\"order\":[\"control\",\"best\",\"new\"],\"best_us\":81.2,\"new_us\":79.9,"
    "\"control_us\":80.1},{\"best_us\":80.0,\"new_us\":78.0,\"control_us\":80.2},"
    "{\"best_us\":82.0,\"new_us\":79.0,\"control_us\":80.0}],\"ratios\":[0.984,0.975,0.963],"
    "\"median_ratio\":0.975,\"decision\":\"keep\","
    "\"reason\":\"new is 2.5% faster than best (needed > 1.0%)\"}",
    "{\"type\":\"generation\",\"generation\":2,\"best\":{\"BM\":64,\"BK\":32},"
    "\"new\":{\"BM\":128,\"BK\":32},\"change\":{\"BM\":[64,128]},"
    "\"rounds\":[{\"best_us\":79.0,\"new_us\":81.0}],\"median_ratio\":1.025,"
    "\"decision\":\"reject\",\"reason\":\"new is 2.5% slower than best (needed > 1.0%)\"}",
    "{\"type\":\"generation\",\"generation\":3,\"best\":{\"BM\":64,\"BK\":32},"
    "\"new\":{\"BM\":32,\"BK\":32},\"change\":{\"BM\":[64,32]},"
    "\"rounds\":[{\"best_us\":79.5,\"new_us\":79.6}],\"median_ratio\":1.001,"
    "\"decision\":\"reject\",\"reason\":\"new is 0.1% slower than best (needed > 1.0%)\"}",
    "{\"type\":\"generation\",\"generation\":4,\"best\":{\"BM\":64,\"BK\":32},"
    "\"new\":{\"BM\":64,\"BK\":16},\"change\":{\"BK\":[32,16]},\"decision\":\"refused\","
    "\"reason\":\"constraint 'k_tiles': K % BK == 0 (every tile is full)\"}",
    "{\"type\":\"generation\",\"generation\":5,\"best\":{\"BM\":64,\"BK\":32},"
    "\"new\":{\"BM\":64,\"BK\":128},\"change\":{\"BK\":[32,128]},"
    "\"rounds\":[{\"best_us\":78.0,\"new_us\":70.0},{\"best_us\":80.0,\"new_us\":72.0}],"
    "\"median_ratio\":0.9,\"decision\":\"keep\",\"reason\":\"new is 10% faster\"}",
    ("{\"type\":\"end\",\"reason\":\"generation budget (5) reached\",\"generation\":5,"
     "\"best\":{\"BM\":64,\"BK\":128}}"),
};

/* Device B (gpu1): a rejection, a keep, an ambiguous one; no end record. */
static const char *const records_b[] = {
    "{\"type\":\"generation\",\"generation\":1,\"best\":{\"BM\":64},\"new\":{\"BM\":32},"
    "\"change\":{\"BM\":[64,32]},\"rounds\":[{\"best_us\":50.0,\"new_us\":55.0}],"
    "\"median_ratio\":1.1,\"decision\":\"reject\",\"reason\":\"new is 10% slower\"}",
    "{\"type\":\"generation\",\"generation\":2,\"best\":{\"BM\":64},\"new\":{\"BM\":128},"
    "\"change\":{\"BM\":[64,128]},\"rounds\":[{\"best_us\":50.0,\"new_us\":40.0}],"
    "\"median_ratio\":0.8,\"decision\":\"keep\",\"reason\":\"new is 20% faster\"}",
    "{\"type\":\"generation\",\"generation\":3,\"best\":{\"BM\":128},\"new\":{\"BM\":256},"
    "\"change\":{\"BM\":[128,256]},\"rounds\":[{\"best_us\":40.0,\"new_us\":39.0}],"
    "\"median_ratio\":0.975,\"decision\":\"ambiguous\","
    "\"reason\":\"event span says 2.5% faster, kernel time says 0.3% slower\"}",
};

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

static void write_ledger(const char *dir, const campaign *c, int ordinal, const char *uuid,
                         const char *const *records, size_t n, char *path, size_t len) {
  device_record d;
  sim_device(&d, ordinal, uuid);
  ledger_opts o = {dir, 0, NULL};
  ledger *l = NULL;
  tf_err e;
  tf_err_clear(&e);
  assert_int_equal(ledger_open(&l, &o, c, &d, &e), 0);
  for (size_t i = 0; i < n; i++) {
    record *r = test_record(records[i]);
    assert_int_equal(ledger_append(l, r, &e), 0);
    record_free(r);
  }
  snprintf(path, len, "%s", ledger_path(l));
  ledger_close(l);
}

/* Each line of tail, completed as the coordinator writes a record, at the end of path. */
static void put_lines(FILE *fp, const char *tail) {
  char *copy = strdup(tail);
  for (char *l = copy, *nl; l && *l; l = nl) {
    nl = strchr(l, '\n');
    if (nl) *nl++ = '\0';
    char *full = test_record_line(l);
    fprintf(fp, "%s\n", full);
    free(full);
  }
  free(copy);
}

static int setup(void **state) {
  fixture *f = calloc(1, sizeof *f);
  campaign *c = calloc(1, sizeof *c);
  const char *tmp = getenv("TMPDIR");
  if (f) snprintf(f->dir, sizeof f->dir, "%s/tf-report-XXXXXX", tmp && tmp[0] ? tmp : "/tmp");
  if (!f || !c || !mkdtemp(f->dir)) {
    free(f);
    free(c);
    return -1;
  }
  snprintf(c->name, sizeof c->name, "mm");
  snprintf(c->path, sizeof c->path, "campaigns/mm.json");
  snprintf(c->hash, sizeof c->hash, "0123456789abcdef");
  write_ledger(f->dir, c, 0, "SIM-aaaa1111-0000-0000-0000-000000000000", records_a,
               sizeof records_a / sizeof *records_a, f->ledger_a, sizeof f->ledger_a);
  write_ledger(f->dir, c, 1, "SIM-bbbb2222-0000-0000-0000-000000000000", records_b,
               sizeof records_b / sizeof *records_b, f->ledger_b, sizeof f->ledger_b);
  free(c);
  *state = f;
  return 0;
}

static int teardown(void **state) {
  fixture *f = *state;
  rm_rf(f->dir);
  free(f->out);
  free(f->err);
  free(f);
  return 0;
}

static char *read_all(const char *path) {
  tf_err e;
  tf_err_clear(&e);
  char *text = jsonio_slurp(path, "test", 1 << 24, NULL, &e);
  assert_non_null(text);
  return text;
}

/* Swap fd `which` for a file; returns the saved fd. */
static int redirect(int which, const char *path) {
  int saved = dup(which);
  int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0600);
  assert_true(saved >= 0 && fd >= 0);
  assert_int_equal(dup2(fd, which), which);
  close(fd);
  return saved;
}

static void restore(int which, int saved) {
  assert_int_equal(dup2(saved, which), which);
  close(saved);
}

/* Run report_main with the given arguments; its stdout and stderr land in f->out and f->err. */
static int report(fixture *f, int argc, const char **args) {
  char *argv[16] = {"report"};
  for (int i = 0; i < argc && i < 14; i++) argv[i + 1] = (char *)args[i];
  char out[512], err[512];
  snprintf(out, sizeof out, "%s/stdout.txt", f->dir);
  snprintf(err, sizeof err, "%s/stderr.txt", f->dir);
  fflush(stdout);
  fflush(stderr);
  int so = redirect(STDOUT_FILENO, out), se = redirect(STDERR_FILENO, err);
  int rc = report_main(argc + 1, argv);
  fflush(stdout);
  fflush(stderr);
  restore(STDOUT_FILENO, so);
  restore(STDERR_FILENO, se);
  free(f->out);
  free(f->err);
  f->out = read_all(out);
  f->err = read_all(err);
  unlink(out);
  unlink(err);
  return rc;
}

/* Device C (gpu2): the same refusal twice, its numbers the constraint's own. */
static const char *const records_c[] = {
    "{\"type\":\"generation\",\"generation\":1,\"best\":{\"BM\":64},\"new\":{\"BM\":32},"
    "\"change\":{\"BM\":[64,32]},\"decision\":\"refused\",\"reason\":\"constraint 'blocks': "
    "at most 3,608 blocks of 256 threads\"}",
    "{\"type\":\"generation\",\"generation\":2,\"best\":{\"BM\":64},\"new\":{\"BM\":16},"
    "\"change\":{\"BM\":[64,16]},\"decision\":\"refused\",\"reason\":\"constraint 'blocks': "
    "at most 3,608 blocks of 256 threads\"}",
};

/* A kind whose numbers never varied (a constraint's fixed text) gets no list of them: the
 * reason shows them all, and "3,608" would read as two. */
static void report_should_leave_out_numbers_that_never_varied(void **state) {
  fixture *f = *state;
  campaign *c = calloc(1, sizeof *c);
  assert_non_null(c);
  snprintf(c->name, sizeof c->name, "mm");
  snprintf(c->path, sizeof c->path, "campaigns/mm.json");
  snprintf(c->hash, sizeof c->hash, "0123456789abcdef");
  char path[1024];
  write_ledger(f->dir, c, 2, "SIM-cccc3333-0000-0000-0000-000000000000", records_c,
               sizeof records_c / sizeof *records_c, path, sizeof path);
  free(c);
  const char *args[] = {path};
  assert_int_equal(report(f, 1, args), 0);
  assert_non_null(strstr(f->out, "- refused: 2 — commonest: 2× \"constraint 'blocks': at most "
                                 "3,608 blocks of 256 threads\"\n"));
  assert_null(strstr(f->out, "its numbers over them"));
}

static void report_should_show_both_devices_side_by_side(void **state) {
  fixture *f = *state;
  const char *args[] = {f->dir};
  if (report(f, 1, args) != 0) fail_msg("%s", f->err);
  const char *a = strstr(f->out, "## testhost gpu0 Simulated H200 "
                                 "(SIM-aaaa1111-0000-0000-0000-000000000000) — campaign mm, "
                                 "backend sim");
  const char *b = strstr(f->out, "## testhost gpu1 Simulated H200 "
                                 "(SIM-bbbb2222-0000-0000-0000-000000000000) — campaign mm, "
                                 "backend sim");
  assert_non_null(a);
  assert_non_null(b);
  assert_true(a < b); /* sorted by path */
  const char *side = strstr(f->out, "## Side by side");
  assert_non_null(side);
  assert_true(b < side);
  /* one row per device: start 81.2 -> final 71.0; start 50.0 -> final 40.0 (latest best) */
  assert_non_null(strstr(side, "| testhost gpu0 Simulated H200 (aaaa1111) | mm | 5 | 2 | 71.00 | "
                               "81.20 | 79.00 | 1.144× | 1.113× | BM=64, BK=128 |"));
  assert_non_null(strstr(side, "| testhost gpu1 Simulated H200 (bbbb2222) | mm | 3 | 1 | 40.00 | "
                               "50.00 | 40.00 | 1.250× | 1.000× | BM=128 |"));
  assert_non_null(strstr(side, "winner (fastest on its own GPU)"));
  assert_string_equal(f->err, "");
}

static void report_should_list_the_kept_generations(void **state) {
  fixture *f = *state;
  const char *args[] = {f->ledger_a};
  assert_int_equal(report(f, 1, args), 0);
  assert_non_null(strstr(f->out, "| gen | search | change | before µs | after µs | control µs | "
                                 "ratio | decision |"));
  /* medians over the rounds: best 81.2, 80.0, 82.0 -> 81.20; new 79.9, 78.0, 79.0 -> 79.00;
   * control 80.1, 80.2, 80.0 -> 80.10 */
  assert_non_null(strstr(f->out, "| 1 | search 1 | BK 64→32 | 81.20 | 79.00 | 80.10 | 0.975 | keep |"));
  /* the keep that made the final best is the winner */
  assert_non_null(strstr(f->out, "| 5 | search 1 | BK 32→128 | 79.00 | 71.00 | 79.00 | 0.900 | keep, "
                                 "**winner** |"));
  assert_null(strstr(f->out, "\n| 2 | search"));
  assert_null(strstr(f->out, "Side by side")); /* one ledger: nothing to set beside it */
}

static void report_should_count_the_other_decisions_by_reason(void **state) {
  fixture *f = *state;
  const char *args[] = {f->ledger_a, f->ledger_b};
  assert_int_equal(report(f, 2, args), 0);
  /* A whole reason stands for its kind, never cut and never with N for its
   * numbers; the numbers' range over the kind follows */
  assert_non_null(strstr(f->out, "- rejected: 2 — commonest: 2× \"new is 2.5% slower than best "
                                 "(needed > 1.0%)\" (the first of 2; its numbers over them: "
                                 "0.1 to 2.5, 1)"));
  assert_non_null(strstr(f->out, "- refused: 1 — commonest: 1× \"constraint 'k_tiles': K % BK "
                                 "== 0 (every tile is full)\"\n"));
  assert_non_null(strstr(f->out, "- ambiguous: 0\n"));
  assert_non_null(strstr(f->out, "- ambiguous: 1 — commonest: 1× \"event span says 2.5% faster, "
                                 "kernel time says 0.3% slower\""));
  assert_non_null(strstr(f->out, "- final best: BM=64, BK=128 — 71.00 µs (measured in generation "
                                 "5; kept in generation 5) — **the winner**, fastest on its own GPU\n"));
  assert_non_null(strstr(f->out, "- final best: BM=128 — 40.00 µs (measured in generation 3; kept "
                                 "in generation 2) — **the winner**, fastest on its own GPU\n"));
  assert_non_null(strstr(f->out, "- speed-up: 1.144× over the start (81.20 µs), 1.113× over "
                                 "the control"));
  assert_non_null(strstr(f->out, "- control: k: 79.00 µs beside the final best (same rounds); "
                                 "over the campaign 79.00–80.10 µs, median 79.25"));
  assert_non_null(strstr(f->out, "- ended: generation budget (5) reached\n"));
  assert_non_null(strstr(f->out, "- ended: running or interrupted"));
  assert_non_null(strstr(f->out, "- generations: 5, rounds recorded: 7"));
  assert_non_null(strstr(f->out, "- generations: 3, rounds recorded: 3"));
}

static void report_should_list_two_ledgers_of_one_device_apart(void **state) {
  fixture *f = *state;
  char copy[1100];
  snprintf(copy, sizeof copy, "%s.copy.jsonl", f->ledger_a);
  char *text = read_all(f->ledger_a);
  FILE *fp = fopen(copy, "wb");
  fputs(text, fp);
  fclose(fp);
  free(text);
  const char *args[] = {f->ledger_a, copy};
  assert_int_equal(report(f, 2, args), 0);
  const char *first = strstr(f->out, "## testhost gpu0");
  assert_non_null(first);
  assert_non_null(strstr(first + 1, "## testhost gpu0"));
  const char *side = strstr(f->out, "## Side by side");
  assert_non_null(side);
  const char *row = strstr(side, "| testhost gpu0");
  assert_non_null(row);
  assert_non_null(strstr(row + 1, "| testhost gpu0"));
}

static void report_should_skip_a_torn_last_line_with_a_note(void **state) {
  fixture *f = *state;
  FILE *fp = fopen(f->ledger_b, "ab");
  fputs("{\"type\":\"generation\",\"generation\":4,\"deci", fp);
  fclose(fp);
  const char *args[] = {f->ledger_b};
  assert_int_equal(report(f, 1, args), 0);
  assert_non_null(strstr(f->err, "torn last line"));
  assert_non_null(strstr(f->err, f->ledger_b));
  assert_non_null(strstr(f->out, "- generations: 3, rounds recorded: 3"));
}

static void report_should_refuse_a_missing_file(void **state) {
  fixture *f = *state;
  char missing[512];
  snprintf(missing, sizeof missing, "%s/no-such-ledger.jsonl", f->dir);
  const char *args[] = {f->ledger_a, missing};
  assert_int_equal(report(f, 2, args), 2);
  assert_non_null(strstr(f->err, missing));
  assert_string_equal(f->out, ""); /* no half report */
}

static void report_should_refuse_a_corrupt_line_naming_it(void **state) {
  fixture *f = *state;
  FILE *fp = fopen(f->ledger_b, "ab");
  fputs("{not json\n{\"type\":\"end\",\"reason\":\"x\"}\n", fp);
  fclose(fp);
  const char *args[] = {f->dir};
  assert_int_equal(report(f, 1, args), 2);
  assert_non_null(strstr(f->err, f->ledger_b));
  assert_non_null(strstr(f->err, "line 5"));
  assert_string_equal(f->out, "");
}

static void report_should_refuse_a_file_that_is_not_a_ledger(void **state) {
  fixture *f = *state;
  char other[512];
  snprintf(other, sizeof other, "%s/campaign.json", f->dir);
  FILE *fp = fopen(other, "wb");
  fputs("{\"template\":\"matmul\"}\n", fp);
  fclose(fp);
  const char *args[] = {other};
  assert_int_equal(report(f, 1, args), 2);
  assert_non_null(strstr(f->err, other));
  assert_non_null(strstr(f->err, "line 1"));

  fp = fopen(f->ledger_b, "ab");
  fputs("{\"type\":\"generation\",\"generation\":4}\n{\"type\":\"end\"}\n", fp);
  fclose(fp);
  const char *args2[] = {f->ledger_b};
  assert_int_equal(report(f, 1, args2), 2);
  assert_non_null(strstr(f->err, "line 5"));
  assert_non_null(strstr(f->err, "is missing"));
}

/* The generations a report counts are the ones the run wrote, in order; a ledger
 * whose generations are missing, repeated, swapped or not whole numbers, or that goes on
 * after its end, is refused naming the line, never summed up. */
static void report_should_refuse_generations_out_of_order(void **state) {
  fixture *f = *state;
  static const struct {
    const char *tail, *line, *want;
  } cases[] = {
      {"{\"type\":\"generation\",\"generation\":5,\"decision\":\"reject\"}\n", "line 5", "where 4 is due"},
      {"{\"type\":\"generation\",\"generation\":3,\"decision\":\"reject\"}\n", "line 5", "where 4 is due"},
      {"{\"type\":\"generation\",\"generation\":1e300,\"decision\":\"reject\"}\n", "line 5",
       "key 'generation' must be a positive integer"},
      {"{\"type\":\"generation\",\"generation\":4.5,\"decision\":\"reject\"}\n", "line 5",
       "key 'generation' must be a positive integer"},
      {"{\"type\":\"end\",\"reason\":\"x\",\"generation\":3,\"best\":{\"BM\":128}}\n{\"type\":\"generation\",\"generation\":4,"
       "\"decision\":\"reject\"}\n", "line 6", "after the search's end (line 5)"},
  };
  char *orig = read_all(f->ledger_b);
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
    FILE *fp = fopen(f->ledger_b, "wb");
    fputs(orig, fp);
    put_lines(fp, cases[i].tail);
    fclose(fp);
    const char *args[] = {f->ledger_b};
    int rc = report(f, 1, args);
    if (rc != 2 || !strstr(f->err, f->ledger_b) || !strstr(f->err, cases[i].line) ||
        !strstr(f->err, cases[i].want))
      fail_msg("case %zu: exit %d, want 2, '%s' and '%s' in: %s", i, rc, cases[i].line,
               cases[i].want, f->err);
    assert_string_equal(f->out, "");
  }
  /* two generations swapped */
  FILE *fp = fopen(f->ledger_b, "wb");
  char *second = strstr(orig, "\n{\"type\":\"generation\",\"generation\":2");
  char *third = strstr(orig, "\n{\"type\":\"generation\",\"generation\":3");
  assert_true(second && third);
  fprintf(fp, "%.*s%s%.*s\n", (int)(second - orig), orig, third, (int)(third - second - 1), second + 1);
  fclose(fp);
  const char *args[] = {f->ledger_b};
  assert_int_equal(report(f, 1, args), 2);
  assert_non_null(strstr(f->err, "line 3: key 'generation' is 3 where 2 is due"));
  free(orig);
}

/* Text from a ledger is echoed escaped: a newline or an escape sequence in a
 * reason would forge a line of the report or reach the terminal. */
static void report_should_escape_control_characters_of_the_ledger(void **state) {
  fixture *f = *state;
  FILE *fp = fopen(f->ledger_b, "ab");
  put_lines(fp, "{\"type\":\"generation\",\"generation\":4,\"best\":{\"BM\":128},\"new\":{\"BM\":64},"
        "\"change\":{\"BM\":[128,64]},\"rounds\":[{\"best_us\":40.0,\"new_us\":39.0}],"
        "\"median_ratio\":0.975,\"decision\":\"keep\",\"reason\":\"x\"}\n"
        "{\"type\":\"generation\",\"generation\":5,\"decision\":\"reject\",\"status\":\"ok\","
        "\"best\":{\"BM\":64},\"new\":{\"BM\":32},"
        "\"reason\":\"slower\\n## forged heading\\u001b[2J\"}\n"
        "{\"type\":\"end\",\"reason\":\"done\\n- forged: line\",\"generation\":5,"
        "\"best\":{\"BM\":64}}\n");
  fclose(fp);
  const char *args[] = {f->ledger_b};
  assert_int_equal(report(f, 1, args), 0);
  assert_null(strchr(f->out, '\x1b'));
  assert_null(strstr(f->out, "\n## forged"));
  assert_null(strstr(f->out, "\n- forged"));
  assert_non_null(strstr(f->out, "slower\\n## forged heading\\x1b[2J"));
  assert_non_null(strstr(f->out, "- ended: done\\n- forged: line"));
}

/* The device record's words too: a host or GPU name with a newline or a '|' would forge a
 * line or a cell of the report (Markdown and CSV). */
static void report_should_escape_the_device_records_words(void **state) {
  fixture *f = *state;
  char *orig = read_all(f->ledger_b);
  assert_non_null(orig);
  char *host = strstr(orig, "\"host\":\"testhost\"");
  char *name = strstr(orig, "\"name\":\"Simulated H200\"");
  assert_true(host && name && name < host);
  FILE *fp = fopen(f->ledger_b, "wb");
  fprintf(fp, "%.*s\"name\":\"GPU|x\\n## forged\"%.*s\"host\":\"h|ost\\u001b[2J\"%s",
          (int)(name - orig), orig, (int)(host - name - strlen("\"name\":\"Simulated H200\"")),
          name + strlen("\"name\":\"Simulated H200\""), host + strlen("\"host\":\"testhost\""));
  fclose(fp);
  free(orig);
  const char *args[] = {f->ledger_b};
  if (report(f, 1, args) != 0) fail_msg("%s", f->err);
  assert_null(strchr(f->out, '\x1b'));
  assert_null(strstr(f->out, "\n## forged"));
  assert_non_null(strstr(f->out, "## h\\|ost\\x1b[2J gpu1 GPU\\|x\\n## forged (SIM-bbbb2222"));
  const char *csv[] = {"--csv", f->ledger_b};
  if (report(f, 2, csv) != 0) fail_msg("%s", f->err);
  assert_null(strchr(f->out, '\x1b'));
  assert_non_null(strstr(f->out, ",h|ost\\x1b[2J,1,"));
}

static void report_should_answer_help_and_refuse_unknown_options(void **state) {
  fixture *f = *state;
  const char *help[] = {"--help"};
  assert_int_equal(report(f, 1, help), 0);
  assert_non_null(strstr(f->out, "usage: tunefarm report"));
  const char *bad[] = {"--frobnicate"};
  assert_int_equal(report(f, 1, bad), 2);
  assert_non_null(strstr(f->err, "--frobnicate"));
  assert_int_equal(report(f, 0, NULL), 2);
}

/* --json holds every generation of every ledger, the keeps and the final best with
 * its speed-up; devices stay apart. */
static void report_json_should_hold_every_generation_and_the_answer(void **state) {
  fixture *f = *state;
  const char *args[] = {"--json", f->dir};
  if (report(f, 2, args) != 0) fail_msg("%s", f->err);
  cJSON *root = cJSON_Parse(f->out);
  assert_non_null(root);
  const cJSON *ls = cJSON_GetObjectItem(root, "ledgers");
  assert_int_equal(cJSON_GetArraySize(ls), 2);
  const cJSON *a = cJSON_GetArrayItem(ls, 0);
  assert_int_equal(cJSON_GetArraySize(cJSON_GetObjectItem(a, "generations")), 5);
  assert_int_equal(cJSON_GetArraySize(cJSON_GetObjectItem(a, "keeps")), 2);
  const cJSON *best = cJSON_GetObjectItem(a, "final_best");
  assert_true(fabs(cJSON_GetObjectItem(best, "us")->valuedouble - (71.0)) < 1e-9);
  assert_true(fabs(cJSON_GetObjectItem(best, "speedup_over_start")->valuedouble - (81.2 / 71.0)) < 1e-9);
  assert_int_equal(cJSON_GetObjectItem(best, "kept_in")->valueint, 5);
  /* the control in the rounds that measured the final best (the test's rounds fill it with best's) */
  assert_true(fabs(cJSON_GetObjectItem(best, "speedup_over_control")->valuedouble - 79.0 / 71.0) < 1e-9);
  const cJSON *g4 = cJSON_GetArrayItem(cJSON_GetObjectItem(a, "generations"), 3);
  assert_string_equal(cJSON_GetObjectItem(g4, "decision")->valuestring, "refused");
  assert_false(cJSON_IsTrue(cJSON_GetObjectItem(g4, "measured")));
  assert_string_equal(cJSON_GetObjectItem(cJSON_GetObjectItem(a, "device"), "uuid")->valuestring,
                      "SIM-aaaa1111-0000-0000-0000-000000000000");
  cJSON_Delete(root);
}

/* --csv: a header and one row per generation, every row tagged with its device. */
static void report_csv_should_write_a_row_per_generation(void **state) {
  fixture *f = *state;
  const char *args[] = {"--csv", f->dir};
  if (report(f, 2, args) != 0) fail_msg("%s", f->err);
  int lines = 0;
  for (const char *p = f->out; *p; p++) lines += *p == '\n';
  assert_int_equal(lines, 1 + 5 + 3);
  assert_non_null(strstr(f->out, "ledger,host,gpu,uuid,campaign,generation,search,decision,"));
  /* a column per knob, new's under its name and best's under best.NAME; a knob a ledger
   * lacks is an empty cell */
  assert_non_null(strstr(f->out, ",change,BM,BK,best.BM,best.BK,best_us,"));
  assert_non_null(strstr(f->out, ",BK 64→32,64,32,64,64,81.2"));
  /* a reason with a comma is quoted whole */
  assert_non_null(strstr(f->out, ",\"event span says 2.5% faster, kernel time says 0.3% slower\"\n"));
  assert_non_null(strstr(f->out, ",testhost,1,SIM-bbbb2222-0000-0000-0000-000000000000,mm,3,"));
}

/* --t4: one result per configuration of one ledger, best before new in order of first
 * evaluation, with Kernel Tuner's times keys; a configuration's runtimes are its medians of
 * every round it ran in, as best or new; two ledgers are refused, since T4 results name no
 * device and tunefarm pools no GPUs. */
static void report_t4_should_give_each_configuration_its_invalidity(void **state) {
  fixture *f = *state;
  const char *args[] = {"--t4", f->ledger_a};
  if (report(f, 2, args) != 0) fail_msg("%s", f->err);
  cJSON *root = cJSON_Parse(f->out);
  assert_non_null(root);
  assert_string_equal(cJSON_GetObjectItem(root, "schema_version")->valuestring, "1.0.0");
  const cJSON *md = cJSON_GetObjectItem(root, "metadata");
  assert_string_equal(cJSON_GetObjectItem(md, "timeunit")->valuestring, "milliseconds");
  const cJSON *rs = cJSON_GetObjectItem(root, "results");
  assert_int_equal(cJSON_GetArraySize(rs), 6);
  static const char *const want[] = {"correct", "correct", "correct", "correct", "constraints",
                                     "correct"};
  static const int bk[] = {64, 32, 32, 32, 16, 128}, nruns[] = {3, 7, 1, 1, 0, 2};
  for (int i = 0; i < 6; i++) {
    const cJSON *r = cJSON_GetArrayItem(rs, i);
    assert_string_equal(cJSON_GetObjectItem(r, "invalidity")->valuestring, want[i]);
    assert_int_equal(cJSON_GetObjectItem(cJSON_GetObjectItem(r, "configuration"), "BK")->valueint,
                     bk[i]);
    const cJSON *times = cJSON_GetObjectItem(r, "times");
    assert_int_equal(cJSON_GetArraySize(cJSON_GetObjectItem(times, "runtimes")), nruns[i]);
    assert_non_null(cJSON_GetObjectItem(times, "compilation"));
    assert_null(cJSON_GetObjectItem(times, "compilation_time"));
    assert_int_equal(cJSON_GetArraySize(cJSON_GetObjectItem(r, "measurements")), nruns[i] ? 1 : 0);
  }
  const cJSON *first = cJSON_GetArrayItem(rs, 0);
  const cJSON *rt = cJSON_GetObjectItem(cJSON_GetObjectItem(first, "times"), "runtimes");
  assert_true(fabs(cJSON_GetArrayItem(rt, 0)->valuedouble - 0.0812) < 1e-12); /* 81.2 us in ms */
  /* BK=32: 79.9, 78, 79 as new in generation 1, then 79, 79.5, 78, 80 as best: median 79 us */
  const cJSON *m = cJSON_GetArrayItem(cJSON_GetObjectItem(cJSON_GetArrayItem(rs, 1), "measurements"), 0);
  assert_string_equal(cJSON_GetObjectItem(m, "name")->valuestring, "time");
  assert_true(fabs(cJSON_GetObjectItem(m, "value")->valuedouble - 0.079) < 1e-12);
  cJSON_Delete(root);
  const char *two[] = {"--t4", f->ledger_a, f->ledger_b};
  assert_int_equal(report(f, 3, two), 2);
  assert_non_null(strstr(f->err, "--t4 takes one ledger, 2 given"));
  assert_string_equal(f->out, "");
  const char *both[] = {"--t4", "--json", f->ledger_a};
  assert_int_equal(report(f, 3, both), 2);
}

#define assert_near(a, b, eps) assert_true(fabs((double)(a) - (double)(b)) <= (eps))

/* The FP32 peak is SMs x lanes x 2 x clock, from the arch's lanes; an arch not in the table
 * has no peak rather than a guessed one. A rate is work over time. */
static void throughput_should_follow_its_formulas(void **state) {
  (void)state;
  device_record d = {0};
  snprintf(d.arch, sizeof d.arch, "sm_90");
  d.sm_count = 132, d.max_sm_mhz = 1980;
  assert_near(throughput_peak_tflops(&d), 132 * 128 * 2 * 1980e6 / 1e12, 1e-9); /* 66.9 */
  snprintf(d.arch, sizeof d.arch, "sm_80"); /* A100: 64 FP32 lanes per SM, 19.5 TFLOP/s */
  d.sm_count = 108, d.max_sm_mhz = 1410;
  assert_near(throughput_peak_tflops(&d), 19.49, 0.01);
  snprintf(d.arch, sizeof d.arch, "sm_53");
  assert_true(isnan(throughput_peak_tflops(&d)));
  assert_int_equal(throughput_fp32_lanes("sm_86"), 128);
  /* 2*1024^3 flops in 100 us: 21.47 TFLOP/s; 12 MiB in 10 us: 1258.3 GB/s */
  assert_near(throughput_rate(2.0 * 1024 * 1024 * 1024, 100, 1), 21.474836, 1e-6);
  assert_near(throughput_rate(12.0 * 1024 * 1024, 10, 0), 1258.2912, 1e-4);
  assert_true(isnan(throughput_rate(0, 10, 1)));
  assert_true(isnan(throughput_rate(1e9, NAN, 1)));
  /* peak bandwidth: double data rate over the bus; H100 SXM's 2619 MHz x 5120 bits: 3352 GB/s */
  d.max_mem_mhz = 2619, d.mem_bus_bits = 5120;
  assert_near(throughput_peak_gbps(&d), 3352.32, 1e-6);
  d.mem_bus_bits = 0; /* not recorded (the simulated device, an older ledger) */
  assert_true(isnan(throughput_peak_gbps(&d)));
}

static report_gen effect_gen(long long a0, long long b0, long long a1, long long b1, double r) {
  report_gen g = {0};
  g.measured = g.correct = 1;
  g.decision = r < 1 ? DECISION_KEEP : DECISION_REJECT;
  g.median_ratio = r;
  g.best.n = g.new_cfg.n = 2;
  snprintf(g.best.name[0], SPEC_NAME, "BM");
  snprintf(g.best.name[1], SPEC_NAME, "BK");
  memcpy(g.new_cfg.name, g.best.name, sizeof g.best.name);
  g.best.v[0] = a0, g.new_cfg.v[0] = b0, g.best.v[1] = a1, g.new_cfg.v[1] = b1;
  return g;
}

/* Knob effects: only one-knob moves of trusted, judged generations count; per knob (in the
 * configuration's order) all its moves, then each from -> to, each with its median. */
static void knob_effects_should_group_one_knob_moves(void **state) {
  (void)state;
  report_gen g[] = {
      effect_gen(64, 64, 32, 16, 0.90),  /* BK 32->16 */
      effect_gen(64, 64, 32, 16, 0.94),  /* BK 32->16 */
      effect_gen(64, 64, 16, 32, 1.10),  /* BK 16->32 */
      effect_gen(64, 128, 32, 32, 1.20), /* BM 64->128 */
      effect_gen(64, 128, 32, 16, 0.50), /* two knobs: left out */
      effect_gen(64, 32, 32, 32, 0.70),  /* untrusted: left out */
      effect_gen(64, 32, 32, 32, 0.60),  /* refused for drift: left out */
      effect_gen(64, 32, 32, 32, 0.60),  /* a duel: left out */
  };
  g[5].untrusted = 1;
  g[6].decision = DECISION_REFUSED;
  g[7].duel = 1;
  report_ledger l = {0};
  l.gens = g;
  l.ngens = sizeof g / sizeof g[0];
  report_effect *e;
  size_t n;
  assert_int_equal(report_knob_effects(&l, &e, &n), 0);
  assert_int_equal(n, 5);
  assert_string_equal(e[0].knob, "BM");
  assert_true(e[0].all && e[0].count == 1);
  assert_near(e[0].median, 1.20, 1e-12);
  assert_true(!e[1].all && e[1].from == 64 && e[1].to == 128 && e[1].count == 1);
  assert_string_equal(e[2].knob, "BK");
  assert_true(e[2].all && e[2].count == 3);
  assert_near(e[2].median, 0.94, 1e-12);
  assert_true(!e[3].all && e[3].from == 16 && e[3].to == 32 && e[3].count == 1);
  assert_true(!e[4].all && e[4].from == 32 && e[4].to == 16 && e[4].count == 2);
  assert_near(e[4].median, 0.92, 1e-12);
  free(e);
}

/* The report warns when the control beat the final best in the same rounds. */
static void report_should_warn_when_the_control_is_faster(void **state) {
  (void)state;
  report_ledger l = {0};
  l.has_best = 1;
  l.best_us = 10, l.control_us = 9;
  assert_true(report_control_faster(&l));
  l.control_us = 11;
  assert_false(report_control_faster(&l));
  l.control_us = NAN;
  assert_false(report_control_faster(&l));
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(throughput_should_follow_its_formulas),
      cmocka_unit_test(knob_effects_should_group_one_knob_moves),
      cmocka_unit_test(report_should_warn_when_the_control_is_faster),
      cmocka_unit_test_setup_teardown(report_should_show_both_devices_side_by_side, setup,
                                      teardown),
      cmocka_unit_test_setup_teardown(report_should_list_the_kept_generations, setup, teardown),
      cmocka_unit_test_setup_teardown(report_json_should_hold_every_generation_and_the_answer, setup,
                                      teardown),
      cmocka_unit_test_setup_teardown(report_csv_should_write_a_row_per_generation, setup, teardown),
      cmocka_unit_test_setup_teardown(report_t4_should_give_each_configuration_its_invalidity, setup,
                                      teardown),
      cmocka_unit_test_setup_teardown(report_should_leave_out_numbers_that_never_varied, setup,
                                      teardown),
      cmocka_unit_test_setup_teardown(report_should_count_the_other_decisions_by_reason, setup,
                                      teardown),
      cmocka_unit_test_setup_teardown(report_should_list_two_ledgers_of_one_device_apart, setup,
                                      teardown),
      cmocka_unit_test_setup_teardown(report_should_skip_a_torn_last_line_with_a_note, setup,
                                      teardown),
      cmocka_unit_test_setup_teardown(report_should_refuse_a_missing_file, setup, teardown),
      cmocka_unit_test_setup_teardown(report_should_refuse_a_corrupt_line_naming_it, setup,
                                      teardown),
      cmocka_unit_test_setup_teardown(report_should_refuse_a_file_that_is_not_a_ledger, setup,
                                      teardown),
      cmocka_unit_test_setup_teardown(report_should_refuse_generations_out_of_order, setup,
                                      teardown),
      cmocka_unit_test_setup_teardown(report_should_escape_control_characters_of_the_ledger, setup,
                                      teardown),
      cmocka_unit_test_setup_teardown(report_should_escape_the_device_records_words, setup,
                                      teardown),
      cmocka_unit_test_setup_teardown(report_should_answer_help_and_refuse_unknown_options, setup,
                                      teardown),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
