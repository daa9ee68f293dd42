/* Unit tests of common/cpuref.c: a CPU reference from a user's shared library
 * (include/tunefarm_ref.h), loaded and called as the measure child calls it, on a job built
 * from a campaign by the coordinator and sent through the job codec. The library is the
 * example's (examples/softmax/templates/ref_softmax.c), built by CMake: $TF_REF_SOFTMAX. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common/campaign.h"
#include "common/cpuref.h"
#include "common/jsonio.h"
#include "coordinator/job.h"
#include "common/reference.h"
#include "tests/unit/testutil.h"

#define R 3
#define D 5

typedef struct fixture {
  char dir[64];
  campaign c;
  job j;     /* as the measure child reads it */
  cpuref r;
} fixture;

static const char *example_library(void) {
  const char *p = getenv("TF_REF_SOFTMAX");
  if (!p || !p[0]) fail_msg("TF_REF_SOFTMAX names no library (tests/CMakeLists.txt sets it)");
  return p;
}

/* A project in a fresh folder: the example's template and kernel, its library under
 * templates/lib/, and a campaign at R x D. */
static void make_project(fixture *f) {
  snprintf(f->dir, sizeof f->dir, "/tmp/tf-cpuref-XXXXXX");
  assert_non_null(mkdtemp(f->dir));
  char path[1024], sub[128];
  const char *files[2] = {"softmax_cpu.json", "softmax.cu"};
  snprintf(sub, sizeof sub, "%s/templates", f->dir);
  assert_int_equal(mkdir(sub, 0755), 0);
  for (int i = 0; i < 2; i++) {
    size_t n;
    snprintf(path, sizeof path, "%s/examples/softmax/templates/%s", source_dir(), files[i]);
    char *text = jsonio_slurp(path, "file", 1 << 20, &n, NULL);
    assert_non_null(text);
    write_file(sub, files[i], text);
    free(text);
  }
  snprintf(path, sizeof path, "%s/templates/lib", f->dir);
  assert_int_equal(mkdir(path, 0755), 0);
  snprintf(path, sizeof path, "%s/templates/lib/libref_softmax.so", f->dir);
  assert_int_equal(symlink(example_library(), path), 0);
  snprintf(sub, sizeof sub, "%s/campaigns", f->dir);
  assert_int_equal(mkdir(sub, 0755), 0);
  write_file(sub, "c.json",
             "{\"template\": \"softmax_cpu\", \"problem\": {\"R\": 3, \"D\": 5},"
             " \"start\": {\"BLOCK\": 32, \"VEC\": 1, \"ROWS\": 1, \"HOLD\": 0},"
             " \"control\": {\"BLOCK\": 32, \"VEC\": 1, \"ROWS\": 1, \"HOLD\": 0},"
             " \"measure\": {\"input_sets\": 1}}");
}

static int setup(void **state) {
  fixture *f = calloc(1, sizeof *f);
  assert_non_null(f);
  make_project(f);
  char path[1024];
  tf_err e = {0};
  snprintf(path, sizeof path, "%s/campaigns/c.json", f->dir);
  if (campaign_load(&f->c, path, &e)) fail_msg("%s", e.msg);
  job *built = calloc(1, sizeof *built);
  assert_non_null(built);
  if (job_build(built, &f->c, 1, 1, &f->c.start, &f->c.start, &e)) fail_msg("%s", e.msg);
  cJSON *o = job_to_json(built);
  if (job_from_json(o, &f->j, &e)) fail_msg("%s", e.msg);
  cJSON_Delete(o);
  free(built);
  *state = f;
  return 0;
}

static int teardown(void **state) {
  fixture *f = *state;
  cpuref_close(&f->r);
  campaign_release(&f->c);
  rm_rf(f->dir);
  free(f);
  return 0;
}

static void job_should_carry_the_library_its_scalars_names_and_values(void **state) {
  const fixture *f = *state;
  assert_string_equal(f->j.ref_library, "templates/lib/libref_softmax.so");
  assert_string_equal(f->j.ref_kernel, "");
  assert_int_equal(f->j.nargs, 5);
  assert_string_equal(f->j.arg_names[3], "R");
  assert_string_equal(f->j.arg_names[4], "D");
  assert_int_equal(f->j.ref_geom.iarg[3], R);
  assert_int_equal(f->j.ref_geom.iarg[4], D);
}

static void assert_near(double got, double want, double tol) {
  if (!(fabs(got - want) <= tol)) fail_msg("%.17g is not %.17g within %g", got, want, tol);
}

/* The softmax of one row and its log-sum-exp, in double, as the test's own known values. */
static void softmax_row(const float *x, double *y, double *lse) {
  double m = x[0], s = 0;
  for (int i = 1; i < D; i++) m = fmax(m, x[i]);
  for (int i = 0; i < D; i++) s += exp((double)x[i] - m);
  for (int i = 0; i < D; i++) y[i] = exp((double)x[i] - m) / s;
  *lse = m + log(s);
}

static void run_should_compute_every_output_in_double_from_the_host_inputs(void **state) {
  fixture *f = *state;
  tf_err e = {0};
  char path[sizeof f->dir + sizeof f->j.ref_library + 2];
  snprintf(path, sizeof path, "%s/%s", f->dir, f->j.ref_library);
  if (cpuref_open(&f->r, path, &e)) fail_msg("%s", e.msg);
  float x[R * D];
  for (int i = 0; i < R * D; i++) x[i] = (float)(i % 7) - 2.5f + 0.125f * (float)i;
  const void *in[SPEC_MAX_BUFFERS] = {x};
  const long long counts[SPEC_MAX_BUFFERS] = {R * D, R * D, R};
  void *out[SPEC_MAX_BUFFERS];
  int type[SPEC_MAX_BUFFERS];
  const cpuref_set s = {.j = &f->j, .counts = counts, .in = in, .iargs = f->j.ref_geom.iarg};
  if (cpuref_run(&f->r, &s, out, type, &e)) fail_msg("%s", e.msg);
  assert_null(out[0]); /* the input gets no reference */
  assert_int_equal(type[1], REFERENCE_F64);
  assert_int_equal(type[2], REFERENCE_F64);
  const double *y = out[1], *lse = out[2];
  for (int r = 0; r < R; r++) {
    double want[D], want_lse;
    softmax_row(x + r * D, want, &want_lse);
    for (int i = 0; i < D; i++) assert_near(y[r * D + i], want[i], 1e-15);
    assert_near(lse[r], want_lse, 1e-13);
  }
  assert_near(y[0] + y[1] + y[2] + y[3] + y[4], 1.0, 1e-15);
  for (int b = 0; b < SPEC_MAX_BUFFERS; b++) free(out[b]);
}

/* A library that refuses its arguments fails the job with its own words, and what it did not
 * write is poison: NaN, never a value an arm could match. */
static void run_should_fail_with_the_librarys_message_and_leave_outputs_poisoned(void **state) {
  fixture *f = *state;
  tf_err e = {0};
  if (cpuref_open(&f->r, example_library(), &e)) fail_msg("%s", e.msg);
  snprintf(f->j.buf_names[2], SPEC_NAME, "logsumexp"); /* the example looks for "lse" */
  float x[R * D] = {0};
  const void *in[SPEC_MAX_BUFFERS] = {x};
  const long long counts[SPEC_MAX_BUFFERS] = {R * D, R * D, R};
  void *out[SPEC_MAX_BUFFERS];
  int type[SPEC_MAX_BUFFERS];
  const cpuref_set s = {.j = &f->j, .counts = counts, .in = in, .iargs = f->j.ref_geom.iarg,
                        .set = 1};
  assert_int_equal(cpuref_run(&f->r, &s, out, type, &e), -1);
  assert_non_null(strstr(e.msg, "fails on input set 1: ref_softmax needs"));
  for (int i = 0; i < R * D; i++) assert_true(isnan(((double *)out[1])[i]));
  for (int b = 0; b < SPEC_MAX_BUFFERS; b++) free(out[b]);
}

static void open_should_refuse_a_missing_file_naming_it(void **state) {
  (void)state;
  cpuref r;
  tf_err e = {0};
  assert_int_equal(cpuref_open(&r, "/nonexistent/libnothing.so", &e), -1);
  assert_int_equal(e.code, TF_EXIT_INPUT);
  assert_non_null(strstr(e.msg, "cpu reference '/nonexistent/libnothing.so': dlopen fails"));
  assert_null(r.handle);
}

/* A spec names a library by a relative path inside its folder, and the job's integer
 * arguments name only problem sizes, as with a reference kernel. */
static void spec_should_confine_the_library_path(void **state) {
  const fixture *f = *state;
  char path[1024];
  size_t n;
  snprintf(path, sizeof path, "%s/templates/softmax_cpu.json", f->dir);
  char *text = jsonio_slurp(path, "file", 1 << 20, &n, NULL);
  assert_non_null(text);
  const char *bad[] = {"../lib.so", "/tmp/lib.so", "lib/", "lib//x.so", "lib/.x.so", "lib/a b.so"};
  for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
    char to[64], dir[128];
    snprintf(to, sizeof to, "\"library\": \"%s\"", bad[i]);
    char *edited = subst(text, "\"library\": \"lib/libref_softmax.so\"", to);
    snprintf(dir, sizeof dir, "%s/templates", f->dir);
    write_file(dir, "softmax_cpu.json", edited);
    spec s;
    tf_err e = {0};
    assert_int_equal(spec_load(&s, path, &e), -1);
    assert_int_equal(e.code, TF_EXIT_INPUT);
    if (!strstr(e.msg, "key 'reference.library'")) fail_msg("%s: %s", bad[i], e.msg);
    free(edited);
  }
  free(text);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test_setup_teardown(job_should_carry_the_library_its_scalars_names_and_values,
                                      setup, teardown),
      cmocka_unit_test_setup_teardown(run_should_compute_every_output_in_double_from_the_host_inputs,
                                      setup, teardown),
      cmocka_unit_test_setup_teardown(
          run_should_fail_with_the_librarys_message_and_leave_outputs_poisoned, setup, teardown),
      cmocka_unit_test(open_should_refuse_a_missing_file_naming_it),
      cmocka_unit_test_setup_teardown(spec_should_confine_the_library_path, setup, teardown),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
