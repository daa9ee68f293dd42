/* Unit tests of worker/sim_backend.c: the simulated device's identity, its
 * seeded noise model and its injected faults. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <ctype.h>
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>

#include "tests/unit/testutil.h"
#include "worker/backend.h"
#include "worker/sim_noise.h"
#include "worker/simcost.h"

static const sim_noise_params quiet = {0, 0, 0, 0, 0, 0, 1.0, 0, 0};

/* Arm `arm` in the default place: its own code, the shared buffers. */
static const placement *at(int arm) {
  static placement p[ARM_COUNT];
  p[arm] = (placement){.arm = arm};
  return &p[arm];
}

static void *open_dev(int ordinal) {
  void *self = NULL;
  backend_opts o = {ordinal, NULL, 0};
  tf_err e;
  tf_err_clear(&e);
  if (backend_sim.open(&self, &o, &e) != 0) fail_msg("open: %s", e.msg);
  return self;
}

/* The chain template's job: best, new and control at ITERS 1000, 1030 and 1100; its arms'
 * noiseless times come from the cost model of templates/chain.json (chain_us). */
static const long long chain_iters[ARM_COUNT] = {1000, 1030, 1100};

static job *make_job(void) {
  job *j = calloc(1, sizeof *j);
  assert_non_null(j);
  j->id = 42;
  snprintf(j->root, sizeof j->root, "%s", source_dir());
  snprintf(j->sources[0], SPEC_PATH, "templates/chain.cu");
  snprintf(j->specs[0], SPEC_PATH, "templates/chain.json");
  j->nsources = 1;
  j->ndims = 1;
  snprintf(j->dim_names[0], SPEC_NAME, "N");
  j->dims[0] = 1 << 24;
  for (int a = 0; a < ARM_COUNT; a++) {
    j->arm[a].from_template = 1;
    j->arm[a].cfg = (config){1, {chain_iters[a]}};
  }
  j->measure.seed = 7;
  j->measure.samples = 10;
  j->measure.max_samples = 10;
  return j;
}

static double chain_us(const job *j, int arm) {
  spec *s = calloc(1, sizeof *s);
  assert_non_null(s);
  load_spec("templates/chain.json", s);
  double us = simcost_us(s, j->dims, &j->arm[arm].cfg, j->measure.seed);
  spec_release(s);
  free(s);
  return us;
}

static void describe_should_give_a_distinct_sim_identity_per_ordinal(void **state) {
  (void)state;
  unsetenv("TUNEFARM_SIM_UUID");
  device_record d0, d1, d0b;
  tf_err e;
  void *a = open_dev(0), *b = open_dev(1);
  assert_int_equal(backend_sim.describe(a, &d0, &e), 0);
  assert_int_equal(backend_sim.describe(b, &d1, &e), 0);
  assert_int_equal(backend_sim.describe(a, &d0b, &e), 0);
  assert_string_equal(d0.backend, "sim");
  assert_string_equal(d0.name, "tunefarm simulated device");
  assert_string_equal(d0.arch, "sm_90");
  assert_int_equal(strlen(d0.uuid), 4 + 32);
  assert_memory_equal(d0.uuid, "SIM-", 4);
  for (int i = 4; i < 36; i++) assert_true(isxdigit((unsigned char)d0.uuid[i]));
  assert_string_not_equal(d0.uuid, d1.uuid);
  assert_string_equal(d0.uuid, d0b.uuid);
  assert_int_equal(d1.ordinal, 1);
  assert_true(d0.host[0] != '\0');
  backend_sim.close(a);
  backend_sim.close(b);
}

static void uuid_env_should_put_two_workers_on_one_device(void **state) {
  (void)state;
  setenv("TUNEFARM_SIM_UUID", "SIM-00000000000000000000000000000001", 1);
  device_record d0, d1;
  tf_err e;
  void *a = open_dev(0), *b = open_dev(1);
  backend_sim.describe(a, &d0, &e);
  backend_sim.describe(b, &d1, &e);
  assert_string_equal(d0.uuid, d1.uuid);
  unsetenv("TUNEFARM_SIM_UUID");
  backend_sim.close(a);
  backend_sim.close(b);
}

static void noise_spec_should_parse_and_refuse_clearly(void **state) {
  (void)state;
  sim_noise_params p;
  sim_noise_defaults(&p);
  char err[256];
  assert_int_equal(sim_noise_parse("jitter=0.02,boost_p=0.2,boost=0.15,drift=0,cold=0.1", &p, err,
                                   sizeof err),
                   0);
  assert_true(p.jitter == 0.02 && p.boost_p == 0.2 && p.boost == 0.15 && p.drift == 0.0);
  assert_int_equal(sim_noise_parse("jiter=0.1", &p, err, sizeof err), -1);
  assert_non_null(strstr(err, "unknown key 'jiter'"));
  assert_int_equal(sim_noise_parse("jitter=abc", &p, err, sizeof err), -1);
  assert_non_null(strstr(err, "'jitter' needs a number"));
  assert_int_equal(sim_noise_parse("boost_p=1.5", &p, err, sizeof err), -1);
  assert_non_null(strstr(err, "'boost_p' must be in"));
  assert_int_equal(sim_noise_parse("jitter", &p, err, sizeof err), -1);
  assert_non_null(strstr(err, "not key=value"));
  setenv("TUNEFARM_SIM_NOISE", "cold=x", 1);
  tf_err e;
  tf_err_clear(&e);
  void *self = NULL;
  backend_opts o = {0, NULL, 0};
  assert_int_equal(backend_sim.open(&self, &o, &e), -1);
  assert_int_equal(e.code, TF_EXIT_INPUT);
  assert_non_null(strstr(e.msg, "TUNEFARM_SIM_NOISE"));
  unsetenv("TUNEFARM_SIM_NOISE");
  setenv("TUNEFARM_SIM_SLEEP", "fast", 1);
  assert_int_equal(backend_sim.open(&self, &o, &e), -1);
  assert_non_null(strstr(e.msg, "TUNEFARM_SIM_SLEEP"));
  unsetenv("TUNEFARM_SIM_SLEEP");
}

static void streams_should_repeat_for_the_same_seed_and_differ_otherwise(void **state) {
  (void)state;
  sim_noise_params p;
  sim_noise_defaults(&p);
  sim_noise a, b, c;
  sim_noise_start(&a, &p, 7, 0, 42);
  sim_noise_start(&b, &p, 7, 0, 42);
  sim_noise_start(&c, &p, 7, 1, 42); /* another device */
  int differ = 0;
  for (int i = 0; i < 30; i++) {
    double ka, kb;
    double x = sim_noise_sample(&a, i % 3, 100.0, 10, &ka);
    double y = sim_noise_sample(&b, i % 3, 100.0, 10, &kb);
    double z = sim_noise_sample(&c, i % 3, 100.0, 10, NULL);
    assert_true(x == y && ka == kb);
    differ += x != z;
  }
  assert_true(differ > 0);
}

static void quiet_device_should_read_its_simulated_time(void **state) {
  (void)state;
  sim_noise n;
  sim_noise_start(&n, &quiet, 1, 0, 1);
  double k = 0;
  assert_true(sim_noise_sample(&n, ARM_NEW, 95.0, 10, &k) == 95.0);
  assert_true(fabs(k - 95.0 * SIM_KERNEL_SHARE) < 1e-12);
  assert_true(sim_noise_mhz(&n) == SIM_NOMINAL_MHZ);
}

static void cold_start_should_fade_within_the_burn_in(void **state) {
  (void)state;
  sim_noise_params p = quiet;
  p.cold = 0.05;
  p.cold_tau = 3.0;
  sim_noise n;
  sim_noise_start(&n, &p, 1, 0, 1);
  assert_true(fabs(sim_noise_sample(&n, 0, 100.0, 1, NULL) - 105.0) < 1e-9);
  for (int i = 1; i < 12; i++) sim_noise_sample(&n, i % 3, 100.0, 1, NULL); /* 4 rounds */
  assert_true(sim_noise_sample(&n, 0, 100.0, 1, NULL) < 100.1);
}

static void boost_should_land_on_either_arm_with_its_clock(void **state) {
  (void)state;
  sim_noise_params p = quiet;
  p.boost_p = 0.1;
  p.boost = 0.10;
  sim_noise n;
  sim_noise_start(&n, &p, 3, 0, 5);
  int boosted[2] = {0, 0};
  for (int r = 0; r < 400; r++) {
    for (int arm = 0; arm < 2; arm++) {
      int expect = sim_noise_boosted(&n, arm, r);
      double t = sim_noise_sample(&n, arm, 100.0, 5, NULL);
      if (expect) {
        assert_true(fabs(t - 100.0 / 1.1) < 1e-9);
        assert_true(fabs(sim_noise_mhz(&n) - SIM_NOMINAL_MHZ * 1.1) < 1e-9);
        boosted[arm]++;
      } else {
        assert_true(t == 100.0);
        assert_true(sim_noise_mhz(&n) == SIM_NOMINAL_MHZ);
      }
    }
  }
  for (int arm = 0; arm < 2; arm++) assert_true(boosted[arm] > 20 && boosted[arm] < 70);
}

static void jitter_should_be_about_its_sigma(void **state) {
  (void)state;
  sim_noise_params p = quiet;
  p.round = 0.01;
  sim_noise n;
  sim_noise_start(&n, &p, 11, 0, 1);
  double s = 0, ss = 0;
  int m = 4000;
  for (int i = 0; i < m; i++) {
    double x = log(sim_noise_sample(&n, 0, 100.0, 1, NULL) / 100.0);
    s += x;
    ss += x * x;
  }
  double mean = s / m, sd = sqrt(ss / m - mean * mean);
  assert_true(fabs(mean) < 0.001);
  assert_true(sd > 0.009 && sd < 0.011);
}

static void backend_should_sample_and_check_through_its_table(void **state) {
  (void)state;
  void *self = open_dev(0);
  job *j = make_job();
  result *r = calloc(1, sizeof *r);
  assert_non_null(r);
  tf_err e;
  tf_err_clear(&e);
  assert_int_equal(backend_sim.prepare(self, j, r, &e), 0);
  assert_true(r->compile_ms == 0.0);
  double err = -1, us = 0, k = 0, mhz = 0;
  unsigned long long reasons = 1;
  assert_int_equal(backend_sim.check(self, at(ARM_NEW), 0, &err, &e), 0);
  assert_true(err == 0.0);
  assert_int_equal(backend_sim.sample(self, at(ARM_BEST), 0, 10, &us, &k, NULL, &e), 0);
  double want = chain_us(j, ARM_BEST); /* the spec's cost, times the noise */
  assert_true(want > 0 && us > 0.8 * want && us < 1.3 * want && k > 0.0);
  backend_sim.clock(self, &mhz, &reasons);
  assert_true(mhz >= SIM_NOMINAL_MHZ);
  assert_true(reasons == 0);
  backend_sim.finish(self);
  snprintf(j->arm[ARM_NEW].fault, sizeof j->arm[ARM_NEW].fault, "wrong");
  assert_int_equal(backend_sim.prepare(self, j, r, &e), 0);
  assert_int_equal(backend_sim.check(self, at(ARM_NEW), 1, &err, &e), 0);
  assert_true(err == 0.5);
  assert_int_equal(backend_sim.check(self, at(ARM_BEST), 1, &err, &e), 0);
  assert_true(err == 0.0);
  j->arm[ARM_CONTROL].from_template = 0; /* a committed kernel, but the job names no spec */
  assert_int_equal(backend_sim.prepare(self, j, r, &e), -1);
  assert_non_null(strstr(e.msg, "names no spec for its committed kernel's arm"));
  backend_sim.close(self);
  free(j);
  free(r);
}

/* Run check() on a faulty arm in a child process; returns its wait status,
 * or -1 if it was still running after `wait_s` seconds (then it is killed). */
static int check_in_child(const char *fault, double wait_s) {
  pid_t pid = fork();
  assert_true(pid >= 0);
  if (pid == 0) {
    signal(SIGSEGV, SIG_DFL); /* cmocka's handler would catch it otherwise */
    void *self = open_dev(0);
    job *j = make_job();
    snprintf(j->arm[ARM_NEW].fault, sizeof j->arm[ARM_NEW].fault, "%s", fault);
    tf_err e;
    double err;
    backend_sim.prepare(self, j, NULL, &e);
    backend_sim.check(self, at(ARM_NEW), 0, &err, &e);
    _exit(0);
  }
  int status = 0;
  for (double t = 0; t < wait_s; t += 0.01) {
    if (waitpid(pid, &status, WNOHANG) == pid) return status;
    struct timespec ts = {0, 10000000};
    nanosleep(&ts, NULL);
  }
  kill(pid, SIGKILL);
  waitpid(pid, &status, 0);
  return -1;
}

static void injected_crash_and_hang_should_end_only_the_child(void **state) {
  (void)state;
  int status = check_in_child("crash", 5.0);
  assert_true(status != -1 && WIFSIGNALED(status) && WTERMSIG(status) == SIGSEGV);
  assert_int_equal(check_in_child("hang", 0.3), -1);
  status = check_in_child("", 5.0);
  assert_true(status != -1 && WIFEXITED(status) && WEXITSTATUS(status) == 0);
}

/* TUNEFARM_SIM_COMPILE: unset, NVRTC; 0, nothing; seconds, or S,L,F; anything else is refused
 * with the variable named. */
static void sim_compile_should_read_seconds_or_a_long_tail(void **state) {
  (void)state;
  sim_compile m;
  tf_err e = {0};
  unsetenv("TUNEFARM_SIM_COMPILE");
  assert_int_equal(sim_compile_seconds(&m, &e), 0);
  assert_true(m.short_s == 0.0 && m.long_frac == 0.0 && !m.none);
  setenv("TUNEFARM_SIM_COMPILE", "0", 1);
  assert_int_equal(sim_compile_seconds(&m, &e), 0);
  assert_true(m.short_s == 0.0 && m.none);
  setenv("TUNEFARM_SIM_COMPILE", "0.5", 1);
  assert_int_equal(sim_compile_seconds(&m, &e), 0);
  assert_true(m.short_s == 0.5 && m.long_s == 0.0 && m.long_frac == 0.0 && !m.none);
  setenv("TUNEFARM_SIM_COMPILE", "0.06,1.8,0.2", 1);
  assert_int_equal(sim_compile_seconds(&m, &e), 0);
  assert_true(m.short_s == 0.06 && m.long_s == 1.8 && m.long_frac == 0.2);
  const char *bad[] = {"x", "1,2", "0.1,2,1.5", "1,2,0.5,4", "-1", "0.1,,0.2", "0.1,2,0.2x"};
  for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
    setenv("TUNEFARM_SIM_COMPILE", bad[i], 1);
    tf_err_clear(&e);
    assert_int_equal(sim_compile_seconds(&m, &e), -1);
    assert_int_equal(e.code, TF_EXIT_INPUT);
    assert_non_null(strstr(e.msg, "TUNEFARM_SIM_COMPILE"));
  }
  setenv("TUNEFARM_SIM_COMPILE", "0", 1);
}

/* The long tail picks about the fraction asked, and always the same kernels. */
static void sim_compile_should_pick_the_same_long_kernels(void **state) {
  (void)state;
  const sim_compile m = {0.05, 2.0, 0.2, 0}, flat = {0.05, 2.0, 0.0, 0}, none = {0.0, 2.0, 0.2, 1};
  int longs = 0;
  for (int i = 0; i < 2000; i++) {
    char name[32];
    snprintf(name, sizeof name, "k<%d>", i);
    double s = program_kernel_sim_seconds(name, &m);
    assert_true(s == 0.05 || s == 2.0);
    assert_true(program_kernel_sim_seconds(name, &m) == s);
    longs += s == 2.0;
    assert_true(program_kernel_sim_seconds(name, &flat) == 0.05);
    assert_true(program_kernel_sim_seconds(name, &none) == 0.0);
    assert_true(program_kernel_sim_seconds(name, NULL) == 0.0);
  }
  assert_in_range(longs, 320, 480); /* 400 expected; a binomial sd of 18 */
}

int main(void) {
  /* These test the measurement machinery on made-up jobs: the simulated device compiles
   * nothing (its NVRTC compile is tested by tests/cli/sim_compile.sh). */
  setenv("TUNEFARM_SIM_COMPILE", "0", 1);
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(describe_should_give_a_distinct_sim_identity_per_ordinal),
      cmocka_unit_test(uuid_env_should_put_two_workers_on_one_device),
      cmocka_unit_test(noise_spec_should_parse_and_refuse_clearly),
      cmocka_unit_test(streams_should_repeat_for_the_same_seed_and_differ_otherwise),
      cmocka_unit_test(quiet_device_should_read_its_simulated_time),
      cmocka_unit_test(cold_start_should_fade_within_the_burn_in),
      cmocka_unit_test(boost_should_land_on_either_arm_with_its_clock),
      cmocka_unit_test(jitter_should_be_about_its_sigma),
      cmocka_unit_test(backend_should_sample_and_check_through_its_table),
      cmocka_unit_test(injected_crash_and_hang_should_end_only_the_child),
      cmocka_unit_test(sim_compile_should_read_seconds_or_a_long_tail),
      cmocka_unit_test(sim_compile_should_pick_the_same_long_kernels),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
