/* test_study_replay: `tunefarm study --ledgers` on small synthetic ledgers
 * (tools/study_replay.h), where each rule's decision on each record is known by
 * construction (the arithmetic is in the comments of each record). */
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

#include "tools/study_replay.h"
#include "tests/unit/testutil.h"

#define UUID_A "GPU-aaaaaaaa-0000-0000-0000-000000000000"
#define UUID_B "GPU-bbbbbbbb-0000-0000-0000-000000000000"
#define UUID_C "GPU-cccccccc-0000-0000-0000-000000000000"

/* A small, fixed, zero-median scatter on new (fractions), as in test_decide. */
static const double wobble[8] = {0.004, -0.003, 0.001, -0.005, 0.002, -0.001, 0.003, -0.002};

typedef struct fixture {
  char dir[256];
} fixture;

static int setup(void **state) {
  fixture *f = calloc(1, sizeof *f);
  if (!f) return -1;
  snprintf(f->dir, sizeof f->dir, "/tmp/tf_study_replay_XXXXXX");
  if (!mkdtemp(f->dir)) return -1;
  *state = f;
  return 0;
}

static int teardown(void **state) {
  fixture *f = *state;
  rm_rf(f->dir);
  free(f);
  return 0;
}

/* ---- building ledgers ---- */

/* The chain kernel's job: best at best_iters, new at new_iters, the median rule. */
static cJSON *chain_job(const char *name, int best_iters, int new_iters, const char *rule) {
  job *j = calloc(1, sizeof *j);
  assert_non_null(j);
  snprintf(j->campaign, sizeof j->campaign, "%s", name);
  snprintf(j->sources[0], SPEC_PATH, "templates/chain.cu");
  j->nsources = 1;
  j->ndims = 1;
  snprintf(j->dim_names[0], SPEC_NAME, "N");
  j->dims[0] = 1048576;
  j->nbuffers = 1;
  snprintf(j->buf_names[0], SPEC_NAME, "y");
  j->buf_output[0] = 1;
  j->nargs = 1;
  j->arg_kind[0] = SPEC_ARG_BUFFER;
  int iters[ARM_COUNT] = {best_iters, new_iters, 1000};
  for (int a = 0; a < ARM_COUNT; a++) {
    job_arm *arm = &j->arm[a];
    snprintf(arm->name_expr, sizeof arm->name_expr, "tf_chain<%d>", iters[a]);
    arm->from_template = 1;
    arm->cfg.n = 1;
    arm->cfg.v[0] = iters[a];
    arm->geom.grid[0] = arm->geom.grid[1] = arm->geom.grid[2] = 1;
    arm->geom.block[0] = 256;
    arm->geom.block[1] = arm->geom.block[2] = 1;
    arm->geom.count[0] = 1024;
  }
  j->tolerance = 1e-5;
  j->measure = (measure_opts){.burn_in = 4, .rounds = 8, .samples = 10, .max_samples = 10, .input_sets = 2,
                              .flush_l2 = 1, .deadline_s = 60, .seed = 7};
  decide_defaults(&j->decide);
  snprintf(j->decide.rule, sizeof j->decide.rule, "%s", rule);
  j->decide.max_requeue = 0;
  cJSON *o = job_to_json(j);
  free(j);
  return o;
}

static cJSON *header(const char *uuid, const char *name) {
  device_record d;
  memset(&d, 0, sizeof d);
  snprintf(d.backend, sizeof d.backend, "cuda");
  snprintf(d.name, sizeof d.name, "NVIDIA H200");
  snprintf(d.uuid, sizeof d.uuid, "%s", uuid);
  snprintf(d.host, sizeof d.host, "node1");
  d.driver_version = 12040;
  cJSON *h = cJSON_CreateObject();
  cJSON_AddStringToObject(h, "type", "device");
  cJSON_AddItemToObject(h, "device", device_to_json(&d));
  cJSON_AddStringToObject(h, "campaign", name);
  cJSON_AddStringToObject(h, "campaign_path", "campaigns/x.json");
  cJSON_AddStringToObject(h, "campaign_hash", "0123abcd");
  cJSON_AddStringToObject(h, "backend", "cuda");
  cJSON_AddStringToObject(h, "created", "2026-11-29T00:00:00Z");
  cJSON_AddStringToObject(h, "tunefarm", "0.1.0");
  return h;
}

/* One round: best 100 us, new ratio * 100 us with the scatter, control as given;
 * every arm's SM clock 1980 MHz, new's boosted 10% when `boosted`. */
static cJSON *round_json(int i, double ratio, double control, int boosted) {
  round_rec r;
  memset(&r, 0, sizeof r);
  for (int a = 0; a < ARM_COUNT; a++) {
    r.order[a] = (a + i) % ARM_COUNT;
    r.kernel_us[a] = -1.0;
    r.arm_mhz[a] = 1980.0;
  }
  r.us[ARM_BEST] = 100.0;
  r.us[ARM_NEW] = 100.0 * ratio * (1.0 + wobble[i % 8]);
  r.us[ARM_CONTROL] = control;
  if (boosted) r.arm_mhz[ARM_NEW] = 1980.0 * 1.1;
  r.sm_mhz[0] = r.sm_mhz[1] = 1980.0;
  return round_to_json(&r);
}

/* A generation record: rounds[i] at ratio[i], control[i], boosted[i]. */
static cJSON *generation(int g, cJSON *jobj, const char *recorded, const double *ratio,
                         const double *control, const int *boosted) {
  cJSON *rec = cJSON_CreateObject();
  cJSON_AddStringToObject(rec, "type", "generation");
  cJSON_AddNumberToObject(rec, "generation", g);
  cJSON_AddStringToObject(rec, "status", "ok");
  cJSON_AddBoolToObject(rec, "correct", 1);
  cJSON_AddStringToObject(rec, "decision", recorded);
  cJSON *rounds = cJSON_AddArrayToObject(rec, "rounds");
  for (int i = 0; i < 8; i++)
    cJSON_AddItemToArray(rounds, round_json(i, ratio[i], control[i], boosted[i]));
  cJSON_AddItemToObject(rec, "job", jobj);
  return rec;
}

static void write_lines(const char *path, cJSON **lines, int n) {
  FILE *f = fopen(path, "w");
  assert_non_null(f);
  for (int i = 0; i < n; i++) { /* completed as the coordinator writes a record */
    char *s = cJSON_PrintUnformatted(lines[i]);
    char *full = test_record_line(s);
    fprintf(f, "%s\n", full);
    free(full);
    free(s);
    cJSON_Delete(lines[i]);
  }
  fclose(f);
}

static const double steady[8] = {80, 80, 80, 80, 80, 80, 80, 80};
static const int calm[8] = {0};

static void fill(double *x, double v) {
  for (int i = 0; i < 8; i++) x[i] = v;
}

/* Device uuid, campaign decide-aa: three replayed A/A records, and three that are not. */
static void write_aa_ledger(const char *path, const char *uuid) {
  double same[8], faster[8], mixed[8];
  int boosted[8] = {1, 1, 1, 1, 0, 0, 0, 0};
  fill(same, 1.0);
  fill(faster, 0.97);
  fill(mixed, 0.99);
  for (int i = 0; i < 4; i++) mixed[i] = 0.90;
  cJSON *l[8];
  int n = 0;
  l[n++] = header(uuid, "decide-aa");
  /* 1. No difference. median: 1.000, reject. sequential: at 4 rounds the scale is its floor
   *    (1% x sqrt(5/3)) and the location ~ -0.08%: LLR -4.5 <= -2.99, reject after 4. */
  l[n++] = generation(1, chain_job("decide-aa", 1000, 1000, "median"), "reject", same, steady,
                      calm);
  /* 2. New reads 3% faster in every round (noise that looks like a gain): both keep, the
   *    sequential rule after 4 rounds (LLR 9.9 >= 4.55, 4 of 4 faster). */
  l[n++] = generation(2, chain_job("decide-aa", 1000, 1000, "median"), "keep", faster, steady,
                      calm);
  /* 3. Four rounds boosted on new (10% faster, its clock 10% up), four at 0.99. median:
   *    (0.90 + 0.99) / 2 < 0.99, a false keep. sequential: the four boosted rounds are
   *    screened (4 <= max_screened), the other four give LLR ~ -0.2, no boundary; the
   *    recorded rounds run out and the cap's median of 0.9905 rejects. */
  l[n++] = generation(3, chain_job("decide-aa", 1000, 1000, "median"), "keep", mixed, steady,
                      boosted);
  /* Not replayed: a fault, an incorrect result, a static refusal, the end. */
  l[n] = generation(4, chain_job("decide-aa", 1000, 1000, "median"), "reject", same, steady, calm);
  cJSON_ReplaceItemInObject(l[n++], "status", cJSON_CreateString("fault"));
  l[n] = generation(5, chain_job("decide-aa", 1000, 1000, "median"), "reject", same, steady, calm);
  cJSON_ReplaceItemInObject(l[n++], "correct", cJSON_CreateFalse());
  l[n] = cJSON_Parse("{\"type\":\"generation\",\"generation\":6,\"decision\":\"refused\"}");
  assert_non_null(l[n++]);
  write_lines(path, l, n);
}

/* Device UUID_B, campaign decide-gain3: new ITERS 1000 against best ITERS 1030. */
static void write_gain_ledger(const char *path) {
  double gain[8], drifting[8];
  fill(gain, 0.97);
  memcpy(drifting, steady, sizeof drifting);
  for (int i = 2; i < 8; i++) drifting[i] = 84.0;
  cJSON *l[3];
  l[0] = header(UUID_B, "decide-gain3");
  /* 1. A clear 3% gain: both keep, the sequential rule after 4 rounds. */
  l[1] = generation(1, chain_job("decide-gain3", 1030, 1000, "median"), "keep", gain, steady,
                    calm);
  /* 2. The control moves 5% from round 3 on: both refuse, the sequential rule at round 3. */
  l[2] = generation(2, chain_job("decide-gain3", 1030, 1000, "median"), "refused", gain,
                    drifting, calm);
  write_lines(path, l, 3);
}

/* <dir>/ledgers/decide-aa/a.jsonl and <dir>/ledgers/decide-gain3/b.jsonl */
static void write_ledgers(const fixture *f, char *ledgers, size_t len) {
  char p[1024];
  snprintf(ledgers, len, "%s/ledgers", f->dir);
  mkdir(ledgers, 0755);
  snprintf(p, sizeof p, "%s/decide-aa", ledgers);
  mkdir(p, 0755);
  snprintf(p, sizeof p, "%s/decide-aa/node1-gpu0-aaaaaaaa.jsonl", ledgers);
  write_aa_ledger(p, UUID_A);
  snprintf(p, sizeof p, "%s/decide-gain3", ledgers);
  mkdir(p, 0755);
  snprintf(p, sizeof p, "%s/decide-gain3/node1-gpu1-bbbbbbbb.jsonl", ledgers);
  write_gain_ledger(p);
}

static void assert_tally(const study_tally *t, long gens, long keep, long reject, long refused,
                         long rounds, long screened, long ran_out) {
  assert_non_null(t);
  assert_int_equal(t->generations, gens);
  assert_int_equal(t->kinds[DECISION_KEEP], keep);
  assert_int_equal(t->kinds[DECISION_REJECT], reject);
  assert_int_equal(t->kinds[DECISION_REFUSED], refused);
  assert_int_equal(t->kinds[DECISION_AMBIGUOUS], 0);
  assert_int_equal(t->rounds, rounds);
  assert_int_equal(t->screened, screened);
  assert_int_equal(t->ran_out, ran_out);
}

/* ---- tests ---- */

static void replay_should_count_both_rules_per_device_and_truth(void **state) {
  fixture *f = *state;
  char ledgers[512];
  write_ledgers(f, ledgers, sizeof ledgers);
  study_replay sr;
  tf_err e = {0};
  assert_int_equal(study_replay_init(&sr, &e), 0);
  if (study_replay_add(&sr, ledgers, &e)) fail_msg("%s", e.msg);
  assert_int_equal(sr.files, 2);
  assert_int_equal(sr.ndevices, 2);
  assert_int_equal(sr.records, 7); /* the static refusal has no status: not a measurement */
  assert_int_equal(sr.not_ok, 1);
  assert_int_equal(sr.incorrect, 1);
  assert_int_equal(sr.differ, 0); /* the median replay gives every recorded decision */
  /*                                              gens keep rej  ref  rounds scr  out */
  assert_tally(study_replay_tally(&sr, UUID_A, 1, "median"), 3, 2, 1, 0, 24, 0, 0);
  assert_tally(study_replay_tally(&sr, UUID_A, 1, "sequential"), 3, 1, 2, 0, 16, 4, 1);
  assert_tally(study_replay_tally(&sr, UUID_B, 0, "median"), 2, 1, 0, 1, 16, 0, 0);
  assert_tally(study_replay_tally(&sr, UUID_B, 0, "sequential"), 2, 1, 0, 1, 7, 0, 0);
  /* never pooled: device A has no gain generations, device B no A/A ones */
  assert_null(study_replay_tally(&sr, UUID_A, 0, "median"));
  assert_null(study_replay_tally(&sr, UUID_B, 1, "median"));
  study_replay_release(&sr);
}

static void replay_should_measure_the_true_ratio_from_every_round(void **state) {
  fixture *f = *state;
  char ledgers[512];
  write_ledgers(f, ledgers, sizeof ledgers);
  study_replay sr;
  tf_err e = {0};
  assert_int_equal(study_replay_init(&sr, &e), 0);
  if (study_replay_add(&sr, ledgers, &e)) fail_msg("%s", e.msg);
  const study_cell *c = study_replay_cell(&sr, UUID_B, 0);
  assert_non_null(c);
  assert_int_equal(c->span.n, 16); /* every recorded round, not only the rule's prefix */
  assert_int_equal(c->kernel.n, 0);
  assert_true(fabs(study_ratios_median(&c->span) - 0.97) < 1e-9);
  study_replay_release(&sr);
}

static char *print_to_string(const study_replay *sr) {
  FILE *out = tmpfile();
  assert_non_null(out);
  study_replay_print(sr, out);
  long n = ftell(out);
  rewind(out);
  char *text = calloc(1, (size_t)n + 1);
  assert_non_null(text);
  assert_int_equal(fread(text, 1, (size_t)n, out), (size_t)n);
  fclose(out);
  return text;
}

static void print_should_list_devices_apart_and_label_pooled_rows(void **state) {
  fixture *f = *state;
  char a[512], c[512];
  snprintf(a, sizeof a, "%s/a.jsonl", f->dir);
  snprintf(c, sizeof c, "%s/c.jsonl", f->dir);
  write_aa_ledger(a, UUID_A);
  write_aa_ledger(c, UUID_C);
  study_replay sr;
  tf_err e = {0};
  assert_int_equal(study_replay_init(&sr, &e), 0);
  assert_int_equal(study_replay_add(&sr, a, &e), 0);
  assert_int_equal(study_replay_add(&sr, c, &e), 0);
  char *text = print_to_string(&sr);
  assert_non_null(strstr(text, "| " UUID_A " | median | 3 | 2 | 66.67% (≤ "));
  assert_non_null(strstr(text, "| " UUID_C " | sequential | 3 | 1 | 33.33% (≤ "));
  assert_non_null(strstr(text, "| all devices, pooled counts | sequential | 6 | 2 | "));
  assert_non_null(strstr(text, "1 (33.3%) |\n")); /* the sequential rule ran out once */
  free(text);
  study_replay_release(&sr);
}

static void replay_should_refuse_a_ledger_of_the_sequential_rule(void **state) {
  fixture *f = *state;
  char p[512];
  snprintf(p, sizeof p, "%s/seq.jsonl", f->dir);
  double same[8];
  fill(same, 1.0);
  cJSON *l[2] = {header(UUID_A, "x"),
                 generation(1, chain_job("x", 1000, 1000, "sequential"), "reject", same, steady,
                            calm)};
  write_lines(p, l, 2);
  study_replay sr;
  tf_err e = {0};
  assert_int_equal(study_replay_init(&sr, &e), 0);
  assert_int_equal(study_replay_add(&sr, p, &e), -1);
  assert_int_equal(e.code, TF_EXIT_INPUT);
  assert_non_null(strstr(e.msg, p));
  assert_non_null(strstr(e.msg, "line 2"));
  assert_non_null(strstr(e.msg, "rule 'sequential'"));
  study_replay_release(&sr);
}

static void replay_should_refuse_a_malformed_round_naming_file_and_line(void **state) {
  fixture *f = *state;
  char p[512];
  snprintf(p, sizeof p, "%s/bad.jsonl", f->dir);
  double same[8];
  fill(same, 1.0);
  cJSON *rec = generation(1, chain_job("x", 1000, 1000, "median"), "reject", same, steady, calm);
  char *text = cJSON_PrintUnformatted(rec);
  cJSON_Delete(rec);
  rec = test_record_json(text); /* completed, then one round broken */
  free(text);
  cJSON_DeleteItemFromObject(cJSON_GetArrayItem(cJSON_GetObjectItem(rec, "rounds"), 2), "order");
  cJSON *h = header(UUID_A, "x");
  char *lines[2] = {cJSON_PrintUnformatted(h), cJSON_PrintUnformatted(rec)};
  FILE *fp = fopen(p, "w");
  assert_non_null(fp);
  fprintf(fp, "%s\n%s\n", lines[0], lines[1]);
  fclose(fp);
  free(lines[0]);
  free(lines[1]);
  cJSON_Delete(h);
  cJSON_Delete(rec);
  study_replay sr;
  tf_err e = {0};
  assert_int_equal(study_replay_init(&sr, &e), 0);
  assert_int_equal(study_replay_add(&sr, p, &e), -1);
  assert_int_equal(e.code, TF_EXIT_INPUT);
  assert_non_null(strstr(e.msg, p));
  assert_non_null(strstr(e.msg, "line 2: key 'rounds': round 3 is malformed"));
  study_replay_release(&sr);
}

static void replay_should_refuse_the_same_ledger_twice(void **state) {
  fixture *f = *state;
  char ledgers[512], p[1024];
  write_ledgers(f, ledgers, sizeof ledgers);
  snprintf(p, sizeof p, "%s/decide-aa/node1-gpu0-aaaaaaaa.jsonl", ledgers);
  study_replay sr;
  tf_err e = {0};
  assert_int_equal(study_replay_init(&sr, &e), 0);
  assert_int_equal(study_replay_add(&sr, ledgers, &e), 0);
  assert_int_equal(study_replay_add(&sr, p, &e), -1);
  assert_non_null(strstr(e.msg, "given twice"));
  study_replay_release(&sr);
}

static void main_should_exit_2_on_bad_input(void **state) {
  fixture *f = *state;
  char missing[512], empty[512];
  snprintf(missing, sizeof missing, "%s/none.jsonl", f->dir);
  snprintf(empty, sizeof empty, "%s/empty", f->dir);
  mkdir(empty, 0755);
  char *a1[] = {"study", "--ledgers", missing, NULL};
  char *a2[] = {"study", "--ledgers", empty, NULL};
  char *a3[] = {"study", "--ledgers", NULL};
  char *a4[] = {"study", "--ledgers", empty, "--seed", "3", NULL};
  assert_int_equal(study_replay_main(3, a1), 2);
  assert_int_equal(study_replay_main(3, a2), 2);
  assert_int_equal(study_replay_main(2, a3), 2);
  assert_int_equal(study_replay_main(5, a4), 2);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test_setup_teardown(replay_should_count_both_rules_per_device_and_truth, setup,
                                      teardown),
      cmocka_unit_test_setup_teardown(replay_should_measure_the_true_ratio_from_every_round,
                                      setup, teardown),
      cmocka_unit_test_setup_teardown(print_should_list_devices_apart_and_label_pooled_rows,
                                      setup, teardown),
      cmocka_unit_test_setup_teardown(replay_should_refuse_a_ledger_of_the_sequential_rule,
                                      setup, teardown),
      cmocka_unit_test_setup_teardown(replay_should_refuse_a_malformed_round_naming_file_and_line,
                                      setup, teardown),
      cmocka_unit_test_setup_teardown(replay_should_refuse_the_same_ledger_twice, setup,
                                      teardown),
      cmocka_unit_test_setup_teardown(main_should_exit_2_on_bad_input, setup, teardown),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
