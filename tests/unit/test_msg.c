/* Unit tests of common/msg.c: the device record, job and result codecs.
 *
 * Every round trip goes through text (print, then parse), as the messages do
 * over MPI and the child's pipes, and compares every field. */
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

#include "common/msg.h"
#include "common/rule.h"
#include "compile/program.h"
#include "coordinator/job.h"
#include "tests/unit/testutil.h"


/* o -> text -> a new tree (caller deletes); frees o. */
static cJSON *through_text(cJSON *o) {
  char *text = cJSON_PrintUnformatted(o);
  assert_non_null(text);
  cJSON_Delete(o);
  cJSON *back = cJSON_Parse(text);
  if (!back) fail_msg("printed message does not parse: %s", text);
  free(text);
  return back;
}

static int ends_with(const char *s, const char *tail) {
  size_t n = strlen(s), t = strlen(tail);
  return n >= t && strcmp(s + n - t, tail) == 0;
}

/* ------------------------------------------------------------------ device record */

static device_record sample_device(void) {
  device_record d;
  memset(&d, 0, sizeof d);
  snprintf(d.backend, sizeof d.backend, "cuda");
  snprintf(d.name, sizeof d.name, "NVIDIA H200");
  snprintf(d.uuid, sizeof d.uuid, "GPU-3f2a9c1d-7b44-1e2f-9a0b-5c6d7e8f9012");
  snprintf(d.pci_bus_id, sizeof d.pci_bus_id, "00000000:19:00.0");
  d.cc_major = 9;
  d.cc_minor = 0;
  snprintf(d.arch, sizeof d.arch, "sm_90");
  d.sm_count = 132;
  d.mem_bytes = 150121414656LL;
  d.l2_bytes = 62914560LL;
  d.max_sm_mhz = 1980;
  d.cur_sm_mhz = 1755;
  d.driver_version = 12080;
  d.runtime_version = 12060;
  d.nvrtc_major = 12;
  d.nvrtc_minor = 6;
  snprintf(d.host, sizeof d.host, "node-07");
  d.ordinal = 3;
  return d;
}

static void device_should_round_trip_every_field(void **state) {
  (void)state;
  device_record d = sample_device(), b;
  tf_err e = {0};
  cJSON *o = through_text(device_to_json(&d));
  if (device_from_json(o, &b, &e)) fail_msg("%s", e.msg);
  cJSON_Delete(o);
  assert_string_equal(b.backend, d.backend);
  assert_string_equal(b.name, d.name);
  assert_string_equal(b.uuid, d.uuid);
  assert_string_equal(b.pci_bus_id, d.pci_bus_id);
  assert_int_equal(b.cc_major, 9);
  assert_int_equal(b.cc_minor, 0);
  assert_string_equal(b.arch, "sm_90");
  assert_int_equal(b.sm_count, 132);
  assert_int_equal(b.mem_bytes, d.mem_bytes);
  assert_int_equal(b.l2_bytes, d.l2_bytes);
  assert_int_equal(b.max_sm_mhz, 1980);
  assert_int_equal(b.cur_sm_mhz, 1755);
  assert_int_equal(b.driver_version, 12080);
  assert_int_equal(b.runtime_version, 12060);
  assert_int_equal(b.nvrtc_major, 12);
  assert_int_equal(b.nvrtc_minor, 6);
  assert_string_equal(b.host, "node-07");
  assert_int_equal(b.ordinal, 3);
  assert_memory_equal(&b, &d, sizeof d); /* and nothing else differs */
}

/* HELLO both ways: a device and the reason the simulated device was chosen, or an error. */
static void hello_should_round_trip_a_device_or_an_error(void **state) {
  (void)state;
  hello h = {.has_device = 1, .rank = 2, .worker_index = 1}, back;
  snprintf(h.dev.backend, sizeof h.dev.backend, "sim");
  snprintf(h.dev.uuid, sizeof h.dev.uuid, "SIM-1");
  snprintf(h.dev.host, sizeof h.dev.host, "h");
  snprintf(h.fallback, sizeof h.fallback, "the CUDA runtime sees no device");
  tf_err e = {0};
  cJSON *o = hello_to_json(&h);
  assert_int_equal(hello_from_json(o, &back, &e), 0);
  assert_true(back.has_device);
  assert_string_equal(back.dev.uuid, "SIM-1");
  assert_string_equal(back.fallback, h.fallback);
  assert_int_equal(back.rank, 2);
  assert_int_equal(back.worker_index, 1);
  cJSON_Delete(o);
  hello none = {.rank = -1, .worker_index = -1};
  snprintf(none.error, sizeof none.error, "cannot open the device");
  o = hello_to_json(&none);
  assert_int_equal(hello_from_json(o, &back, &e), 0);
  assert_false(back.has_device);
  assert_string_equal(back.error, "cannot open the device");
  assert_int_equal(back.rank, -1);
  cJSON_Delete(o);
  o = cJSON_Parse("{\"type\": \"result\"}");
  assert_int_equal(hello_from_json(o, &back, &e), -1);
  cJSON_Delete(o);
}

static void device_should_refuse_a_record_without_identity(void **state) {
  (void)state;
  static const char *const keys[] = {"uuid", "backend", "host", "ordinal"};
  for (int i = 0; i < 4; i++) {
    device_record d = sample_device(), b;
    tf_err e = {0};
    cJSON *o = device_to_json(&d);
    cJSON_DeleteItemFromObjectCaseSensitive(o, keys[i]);
    if (device_from_json(o, &b, &e) == 0) fail_msg("a record without '%s' was accepted", keys[i]);
    assert_non_null(strstr(e.msg, "device record"));
    cJSON_Delete(o);
  }
  device_record b;
  tf_err e = {0};
  cJSON *arr = cJSON_CreateArray();
  assert_int_equal(device_from_json(arr, &b, &e), -1);
  cJSON_Delete(arr);
}

static void device_uuid8_should_take_eight_hex_digits_after_the_prefix(void **state) {
  (void)state;
  device_record d = sample_device();
  char out[9];
  device_uuid8(&d, out);
  assert_string_equal(out, "3f2a9c1d");
  snprintf(d.uuid, sizeof d.uuid, "SIM-00ab");
  device_uuid8(&d, out);
  assert_string_equal(out, "00ab0000"); /* short ids are padded, never overrun */
}

/* ------------------------------------------------------------------ jobs */

static void load_campaign(const char *name, campaign *c) {
  char path[1024];
  tf_err e = {0};
  unsetenv("TUNEFARM_ROOT");
  snprintf(path, sizeof path, "%s/campaigns/%s", source_dir(), name);
  if (campaign_load(c, path, &e)) fail_msg("'%s' did not load: %s", path, e.msg);
}

static void assert_arm_equal(const job *j, int a, const job_arm *x, const job_arm *y) {
  const char *n = arm_names[a];
  if (strcmp(x->name_expr, y->name_expr)) fail_msg("%s: name_expr '%s' != '%s'", n, x->name_expr, y->name_expr);
  assert_int_equal(x->from_template, y->from_template);
  assert_true(config_equal(&x->cfg, &y->cfg));
  for (int i = 0; i < 3; i++) {
    assert_int_equal(x->geom.grid[i], y->geom.grid[i]);
    assert_int_equal(x->geom.block[i], y->geom.block[i]);
  }
  assert_int_equal(x->geom.smem, y->geom.smem);
  for (int b = 0; b < j->nbuffers; b++) {
    assert_int_equal(x->geom.count[b], y->geom.count[b]);
    assert_int_equal(x->geom.clear[b], y->geom.clear[b]);
  }
  for (int i = 0; i < j->nargs; i++) assert_int_equal(x->geom.iarg[i], y->geom.iarg[i]);
  assert_memory_equal(x->geom.tmap_dim, y->geom.tmap_dim, sizeof x->geom.tmap_dim);
  assert_memory_equal(x->geom.tmap_box, y->geom.tmap_box, sizeof x->geom.tmap_box);
  assert_string_equal(x->fault, y->fault);
  assert_string_equal(x->library, y->library);
}

static void assert_job_equal(const job *x, const job *y) {
  assert_int_equal(x->id, y->id);
  assert_int_equal(x->generation, y->generation);
  assert_string_equal(x->campaign, y->campaign);
  assert_string_equal(x->ref_kernel, y->ref_kernel);
  assert_string_equal(x->ref_source, y->ref_source);
  assert_string_equal(x->root, y->root);
  assert_int_equal(x->arch_specific, y->arch_specific);
  assert_int_equal(x->nsources, y->nsources);
  for (int i = 0; i < x->nsources; i++) {
    assert_string_equal(x->sources[i], y->sources[i]);
    assert_string_equal(x->specs[i], y->specs[i]);
  }
  assert_int_equal(x->ndims, y->ndims);
  for (int d = 0; d < x->ndims; d++) {
    assert_string_equal(x->dim_names[d], y->dim_names[d]);
    assert_int_equal(x->dims[d], y->dims[d]);
  }
  assert_int_equal(x->nbuffers, y->nbuffers);
  for (int b = 0; b < x->nbuffers; b++) {
    assert_string_equal(x->buf_names[b], y->buf_names[b]);
    assert_int_equal(x->buf_output[b], y->buf_output[b]);
  }
  assert_int_equal(x->nargs, y->nargs);
  for (int a = 0; a < x->nargs; a++) {
    assert_int_equal(x->arg_kind[a], y->arg_kind[a]);
    assert_int_equal(x->arg_buffer[a], y->arg_buffer[a]);
    assert_true(x->arg_float[a] == y->arg_float[a]);
    if (x->arg_kind[a] != SPEC_ARG_TMAP) continue;
    assert_int_equal(x->arg_tmap[a], y->arg_tmap[a]);
    assert_int_equal(x->arg_rank[a], y->arg_rank[a]);
    assert_int_equal(x->arg_swizzle[a], y->arg_swizzle[a]);
  }
  assert_int_equal(x->ntmaps, y->ntmaps);
  for (int a = 0; a < ARM_COUNT; a++) assert_arm_equal(x, a, &x->arm[a], &y->arm[a]);
  assert_true(x->tolerance == y->tolerance);
  const measure_opts *m = &x->measure, *n = &y->measure;
  assert_int_equal(m->burn_in, n->burn_in);
  assert_int_equal(m->rounds, n->rounds);
  assert_int_equal(m->samples, n->samples);
  assert_int_equal(m->input_sets, n->input_sets);
  assert_int_equal(m->flush_l2, n->flush_l2);
  assert_true(m->deadline_s == n->deadline_s);
  assert_int_equal(m->seed, n->seed);
  const decide_opts *d = &x->decide, *f = &y->decide;
  assert_string_equal(d->rule, f->rule);
  assert_true(d->min_gain == f->min_gain);
  assert_true(d->drift_tolerance == f->drift_tolerance);
  assert_int_equal(d->max_requeue, f->max_requeue);
  assert_memory_equal(d->param, f->param, sizeof d->param);
  assert_true(d->clock_skew == f->clock_skew);
  assert_true(d->throttle_mhz == f->throttle_mhz);
  assert_int_equal(d->max_screened, f->max_screened);
}

static void job_build_should_resolve_matmul_1024(void **state) {
  (void)state;
  static campaign c;
  static job j;
  load_campaign("matmul-1024.json", &c);
  config nw = c.start;
  nw.v[spec_knob_index(&c.tmpl, "BK")] = 32;
  nw.v[spec_knob_index(&c.tmpl, "SPLITK")] = 2;
  tf_err e = {0};
  if (job_build(&j, &c, 17, 5, &c.start, &nw, &e)) fail_msg("%s", e.msg);
  assert_int_equal(j.id, 17);
  assert_int_equal(j.generation, 5);
  assert_string_equal(j.campaign, "matmul-1024");
  assert_string_equal(j.ref_kernel, "ref_matmul");
  assert_true(ends_with(j.ref_source, "ref_matmul.cu"));
  assert_string_equal(j.root, c.root);
  assert_int_equal(j.nsources, 2);
  assert_int_equal(j.ndims, 3);
  assert_string_equal(j.dim_names[2], "K");
  assert_int_equal(j.dims[2], 1024);
  assert_int_equal(j.nbuffers, 3);
  assert_string_equal(j.buf_names[2], "C");
  assert_int_equal(j.buf_output[2], 1);
  assert_int_equal(j.nargs, 6);
  assert_int_equal(j.arg_kind[2], SPEC_ARG_BUFFER);
  assert_int_equal(j.arg_buffer[2], 2);
  assert_int_equal(j.arg_kind[5], SPEC_ARG_INT);
  /* the arms */
  const job_arm *best = &j.arm[ARM_BEST], *nu = &j.arm[ARM_NEW], *ctl = &j.arm[ARM_CONTROL];
  assert_string_equal(best->name_expr, "tf_matmul<64, 64, 64, 4, 8, 0, 1, 2, 0, 1, 0, 1, 0>");
  assert_string_equal(nu->name_expr, "tf_matmul<64, 64, 32, 4, 8, 0, 1, 2, 0, 2, 0, 1, 0>");
  assert_string_equal(ctl->name_expr, "tf_matmul_regtile");
  assert_int_equal(best->from_template, 1);
  assert_int_equal(ctl->from_template, 0);
  assert_int_equal(ctl->cfg.n, 0);
  assert_true(config_equal(&best->cfg, &c.start));
  assert_true(config_equal(&nu->cfg, &nw));
  assert_int_equal(best->geom.grid[0], 16);
  assert_int_equal(best->geom.grid[2], 1);
  assert_int_equal(best->geom.block[0], 128);
  assert_int_equal(nu->geom.grid[2], 2);
  assert_int_equal(nu->geom.clear[2], 1);
  assert_int_equal(best->geom.clear[2], 0);
  assert_int_equal(ctl->geom.grid[0], 8);
  assert_int_equal(ctl->geom.block[0], 256);
  for (int a = 0; a < ARM_COUNT; a++) {
    assert_int_equal(j.arm[a].geom.count[0], 1024 * 1024);
    assert_int_equal(j.arm[a].geom.iarg[3], 1024);
    assert_string_equal(j.arm[a].fault, "");
  }
  /* files relative to the project root, which travels apart */
  assert_string_equal(j.sources[0], "templates/matmul.cu");
  assert_string_equal(j.specs[0], "templates/matmul.json");
  assert_string_equal(j.sources[1], "kernels/matmul_regtile.cu");
  assert_string_equal(j.specs[1], "kernels/matmul_regtile.json");
  assert_string_equal(j.root, c.root);
  cJSON *o = job_to_json(&j);
  job_drop_root(o);
  assert_null(cJSON_GetObjectItem(o, "root"));
  cJSON_Delete(o);
  assert_true(j.tolerance == c.tmpl.tolerance);
  assert_int_equal(j.measure.samples, c.measure.samples);
  assert_string_equal(j.decide.rule, c.decide.rule);
  campaign_release(&c);
}

static void job_should_round_trip_every_field(void **state) {
  (void)state;
  static campaign c;
  static job j, b;
  load_campaign("matmul-1024.json", &c);
  config nw = c.start;
  nw.v[spec_knob_index(&c.tmpl, "PIPE")] = 2;
  nw.v[spec_knob_index(&c.tmpl, "SPLITK")] = 2;
  tf_err e = {0};
  if (job_build(&j, &c, 123456789012LL, 39, &c.start, &nw, &e)) fail_msg("%s", e.msg);
  snprintf(j.arm[ARM_NEW].fault, sizeof j.arm[ARM_NEW].fault, "hang");
  *decide_param(&j.decide, "alpha") = 0.025;
  j.decide.throttle_mhz = 1500.5;
  j.arch_specific = 1;
  cJSON *o = through_text(job_to_json(&j));
  if (job_from_json(o, &b, &e)) fail_msg("%s", e.msg);
  cJSON_Delete(o);
  assert_job_equal(&j, &b);
  campaign_release(&c);
}

/* A control given as a configuration of the template: one source, three template arms;
 * layernorm adds a float argument. */
static void job_should_round_trip_a_template_control(void **state) {
  (void)state;
  static campaign c;
  static job j, b;
  load_campaign("layernorm-4096x768.json", &c);
  tf_err e = {0};
  if (job_build(&j, &c, 1, 0, &c.start, &c.start, &e)) fail_msg("%s", e.msg);
  int f = -1;
  for (int a = 0; a < j.nargs; a++)
    if (j.arg_kind[a] == SPEC_ARG_FLOAT) f = a;
  assert_true(f >= 0);
  assert_true(j.arg_float[f] == 1e-5);
  if (job_set_template_arm(&j, &c, ARM_CONTROL, &c.start, &e)) fail_msg("%s", e.msg);
  assert_int_equal(j.nsources, 1);
  assert_int_equal(j.arm[ARM_CONTROL].from_template, 1);
  cJSON *o = through_text(job_to_json(&j));
  if (job_from_json(o, &b, &e)) fail_msg("%s", e.msg);
  cJSON_Delete(o);
  assert_job_equal(&j, &b);
  campaign_release(&c);
}

/* A template brought with its own reference kernel, using every kind of buffer and scalar:
 * each element type, role, fill and check, typed scalars of integer and float types, an
 * untyped int and float, a cleared output. */
static const char typed_template[] =
    "{\"name\": \"typed\", \"source\": \"typed.cu\", \"kernel\": \"tf_typed\",\n"
    " \"reference\": {\"kernel\": \"ref_typed\", \"source\": \"ref_typed.cu\",\n"
    "   \"launch\": {\"grid\": [\"ceil_div(N, 128)\", \"1\", \"1\"], \"block\": [\"128\", \"1\", \"1\"],"
    " \"smem\": \"4*K\"}},\n"
    " \"problem\": {\"N\": [1, 1048576], \"K\": [1, 200]},\n"
    " \"knobs\": {\"BLOCK\": {\"values\": [64, 128]}},\n"
    " \"launch\": {\"grid\": [\"ceil_div(N, BLOCK)\", \"1\", \"1\"], \"block\": [\"BLOCK\", \"1\", \"1\"]},\n"
    " \"buffers\": [\n"
    "  {\"name\": \"x\", \"count\": \"N\", \"role\": \"input\", \"type\": \"f16\", \"init\": {\"normal\": [0.5, 2]}},\n"
    "  {\"name\": \"idx\", \"count\": \"N\", \"role\": \"input\", \"type\": \"i32\", \"init\": {\"int\": [\"0\", \"N - 1\"]}},\n"
    "  {\"name\": \"q\", \"count\": \"N\", \"role\": \"inout\", \"type\": \"u8\", \"init\": {\"int\": [\"1\", \"K\"]}, \"check\": \"exact\"},\n"
    "  {\"name\": \"acc\", \"count\": \"K\", \"role\": \"output\", \"type\": \"u32\", \"clear\": \"1\", \"check\": \"exact\"},\n"
    "  {\"name\": \"y\", \"count\": \"N\", \"role\": \"output\", \"type\": \"bf16\", \"check\": {\"rtol\": 0.01, \"atol\": 0.001}, \"allow_nonfinite\": true},\n"
    "  {\"name\": \"w\", \"count\": \"N\", \"role\": \"input\", \"type\": \"f64\", \"init\": {\"const\": 0.25}},\n"
    "  {\"name\": \"u\", \"count\": \"N\", \"role\": \"input\", \"type\": \"i8\", \"init\": {\"uniform\": [-100, 100]}},\n"
    "  {\"name\": \"tmp\", \"count\": \"2*N\", \"role\": \"scratch\", \"type\": \"i64\"}],\n"
    " \"args\": [\"x\", \"idx\", \"q\", \"acc\", \"y\", \"w\", \"u\", \"tmp\",\n"
    "   {\"name\": \"n\", \"type\": \"u32\", \"value\": \"N\"}, {\"name\": \"k\", \"type\": \"i8\", \"value\": \"K - 100\"},\n"
    "   {\"name\": \"s\", \"type\": \"f16\", \"value\": \"0.1\"}, {\"name\": \"d\", \"type\": \"f64\", \"value\": 1e-300},\n"
    "   {\"name\": \"big\", \"type\": \"i64\", \"value\": \"N*N\"}, \"K\", {\"float\": 0.5}],\n"
    " \"tolerance\": 0.001}\n";

static const char typed_kernel[] =
    "template <int BLOCK> __global__ void tf_typed(const unsigned short *x, const int *idx,\n"
    "    unsigned char *q, unsigned int *acc, unsigned short *y, const double *w,\n"
    "    const signed char *u, long long *tmp, unsigned int n, signed char k, unsigned short s,\n"
    "    double d, long long big, int K, float f) {}\n";

static const char typed_reference[] =
    "__global__ void ref_typed(const unsigned short *x, const int *idx, unsigned char *q,\n"
    "    unsigned int *acc, unsigned short *y, const double *w, const signed char *u,\n"
    "    long long *tmp, unsigned int n, signed char k, unsigned short s, double d,\n"
    "    long long big, int K, float f) {}\n";

static const char typed_campaign[] =
    "{\"template\": \"typed\", \"problem\": {\"N\": 100000, \"K\": 150},\n"
    " \"start\": {\"BLOCK\": 64}, \"control\": {\"BLOCK\": 128},\n"
    " \"search\": {\"budget\": 4},\n"
    " \"measure\": {\"burn_in\": 1, \"rounds\": 3, \"samples\": 5, \"input_sets\": 2, \"seed\": 7},\n"
    " \"decide\": {\"rule\": \"median\"}}\n";

/* The job of a template with its own reference kernel, typed buffers and scalars writes out
 * and reads back to the same text: every role, type, fill, check, scalar type and the
 * reference kernel's launch cross the wire between coordinator, worker and measure child. */
static void job_should_round_trip_typed_buffers_scalars_and_a_reference(void **state) {
  (void)state;
  static campaign c;
  static job j, b;
  char root[] = "/tmp/tf-test-msg-XXXXXX", dir[64], path[96];
  if (!mkdtemp(root)) fail_msg("mkdtemp failed");
  snprintf(dir, sizeof dir, "%s/templates", root);
  assert_int_equal(mkdir(dir, 0777), 0);
  write_file(dir, "typed.json", typed_template);
  write_file(dir, "typed.cu", typed_kernel);
  write_file(dir, "ref_typed.cu", typed_reference);
  snprintf(dir, sizeof dir, "%s/campaigns", root);
  assert_int_equal(mkdir(dir, 0777), 0);
  write_file(dir, "typed.json", typed_campaign);
  snprintf(path, sizeof path, "%s/typed.json", dir);
  tf_err e = {0};
  if (campaign_load(&c, path, &e)) fail_msg("'%s' did not load: %s", path, e.msg);
  config nw = c.start;
  nw.v[0] = 128;
  if (job_build(&j, &c, 42, 3, &c.start, &nw, &e)) fail_msg("%s", e.msg);
  rm_rf(root);

  /* what the job carries, before it travels */
  assert_int_equal(j.nbuffers, 8);
  assert_int_equal(j.buf_role[2], SPEC_ROLE_INOUT);
  assert_int_equal(j.buf_role[7], SPEC_ROLE_SCRATCH);
  assert_int_equal(j.buf_type[4], REFERENCE_BF16);
  assert_int_equal(j.buf_type[7], REFERENCE_I64);
  assert_int_equal(j.buf_init[1].kind, REFERENCE_INIT_INT);
  assert_true(j.buf_init[1].a == 0 && j.buf_init[1].b == 99999); /* evaluated at N */
  assert_int_equal(j.buf_init[0].kind, REFERENCE_INIT_NORMAL);
  assert_int_equal(j.buf_check[3].kind, REFERENCE_CHECK_EXACT);
  assert_int_equal(j.buf_check[4].kind, REFERENCE_CHECK_TOL);
  assert_int_equal(j.arg_type[9], REFERENCE_I8 + 1);
  assert_int_equal(j.arg_type[10], REFERENCE_F16 + 1);
  assert_int_equal(j.arg_type[13], 0); /* an untyped int */
  assert_string_equal(j.ref_kernel, "ref_typed");
  assert_int_equal(j.ref_geom.smem, 600);
  assert_int_equal(j.ref_geom.iarg[12], 100000LL * 100000LL);

  cJSON *o = job_to_json(&j);
  char *sent = cJSON_PrintUnformatted(o);
  cJSON *back = through_text(o);
  if (job_from_json(back, &b, &e)) fail_msg("%s", e.msg);
  cJSON_Delete(back);
  cJSON *again = job_to_json(&b);
  char *received = cJSON_PrintUnformatted(again);
  cJSON_Delete(again);
  assert_string_equal(received, sent);
  assert_job_equal(&j, &b);
  free(sent), free(received);
  campaign_release(&c);
}

/* A job without a template arm (the bench's committed kernels and library calls) carries the
 * template's reference all the same: the measure child checks every arm against it. */
static void job_of_kernels_and_peers_should_carry_the_templates_reference(void **state) {
  (void)state;
  static campaign c;
  static job j;
  load_campaign("matmul-1024.json", &c);
  tf_err e = {0};
  if (job_init(&j, &c, 9, 0, &e) ||
      job_set_kernel_arm(&j, &c, ARM_BEST, &c.control_kernel, &e) ||
      job_set_gemm_arm(&j, &c, ARM_NEW, &c.peers[0], &e) ||
      job_set_kernel_arm(&j, &c, ARM_CONTROL, &c.control_kernel, &e))
    fail_msg("%s", e.msg);
  assert_string_equal(j.ref_kernel, "ref_matmul");
  assert_true(ends_with(j.ref_source, "templates/ref_matmul.cu"));
  /* ceil_div(N, 16) x ceil_div(M, 16) blocks of 16 x 16 at 1024^3 */
  assert_int_equal(j.ref_geom.grid[0], 64);
  assert_int_equal(j.ref_geom.grid[1], 64);
  assert_int_equal(j.ref_geom.block[0], 16);
  assert_int_equal(j.ref_geom.block[1], 16);
  assert_int_equal(j.ref_geom.iarg[5], 1024); /* K, the sixth argument */
  /* and it travels */
  cJSON *o = job_to_json(&j);
  static job back;
  if (job_from_json(o, &back, &e)) fail_msg("%s", e.msg);
  cJSON_Delete(o);
  assert_string_equal(back.ref_kernel, "ref_matmul");
  assert_int_equal(back.ref_geom.grid[1], 64);
  campaign_release(&c);
}

/* The bench puts any committed kernel of the template's interface into any arm, one kernel
 * per job. */
static void job_set_kernel_arm_should_take_one_kernel_of_the_interface(void **state) {
  (void)state;
  static campaign c;
  static spec pipelined, layernorm;
  static job j;
  load_campaign("matmul-1024.json", &c);
  load_spec("kernels/matmul_pipelined.json", &pipelined);
  load_spec("kernels/layernorm_row.json", &layernorm);
  tf_err e = {0};
  if (job_init(&j, &c, 7, 0, &e) || job_set_template_arm(&j, &c, ARM_BEST, &c.start, &e) ||
      job_set_kernel_arm(&j, &c, ARM_NEW, &pipelined, &e) ||
      job_set_kernel_arm(&j, &c, ARM_CONTROL, &pipelined, &e))
    fail_msg("%s", e.msg);
  assert_int_equal(j.nsources, 2);
  assert_true(ends_with(j.sources[1], "matmul_pipelined.cu"));
  assert_int_equal(j.arm[ARM_NEW].from_template, 0);
  assert_string_equal(j.arm[ARM_NEW].name_expr, pipelined.kernel);
  /* another committed kernel would need a second program */
  assert_int_equal(job_set_kernel_arm(&j, &c, ARM_BEST, &c.control_kernel, &e), -1);
  assert_non_null(strstr(e.msg, "one committed kernel at most"));
  /* another interface never fits */
  tf_err_clear(&e);
  assert_int_equal(job_set_kernel_arm(&j, &c, ARM_BEST, &layernorm, &e), -1);
  assert_int_equal(e.code, TF_EXIT_INPUT);
  assert_non_null(strstr(e.msg, "layernorm_row"));
  /* with no kernel arm left, the program is the template alone */
  if (job_set_template_arm(&j, &c, ARM_NEW, &c.start, &e) ||
      job_set_template_arm(&j, &c, ARM_CONTROL, &c.start, &e))
    fail_msg("%s", e.msg);
  assert_int_equal(j.nsources, 1);
  assert_string_equal(j.sources[1], "");
  spec_release(&pipelined);
  spec_release(&layernorm);
  campaign_release(&c);
}

/* The bench's peer arm: the campaign's GEMM on the job's own buffers; it travels with its
 * library and fields, and the job's NVRTC program leaves it out. */
static void job_set_gemm_arm_should_travel_and_refuse_what_the_job_lacks(void **state) {
  (void)state;
  static campaign c, ln;
  static job j, b;
  load_campaign("matmul-1024.json", &c);
  load_campaign("layernorm-4096x768.json", &ln);
  assert_int_equal(c.npeers, 1);
  tf_err e = {0};
  if (job_init(&j, &c, 3, 0, &e) || job_set_template_arm(&j, &c, ARM_BEST, &c.start, &e) ||
      job_set_gemm_arm(&j, &c, ARM_NEW, &c.peers[0], &e) ||
      job_set_kernel_arm(&j, &c, ARM_CONTROL, &c.control_kernel, &e))
    fail_msg("%s", e.msg);
  assert_string_equal(j.arm[ARM_NEW].library, ARM_LIBRARY_GEMM);
  assert_int_equal(j.arm[ARM_NEW].gemm[6], 0); /* B[K][N] */
  assert_int_equal(j.nsources, 2); /* the GEMM is no committed kernel */
  for (int i = 0; i < j.nbuffers; i++) /* A, B, C: 1024 x 1024 each */
    assert_int_equal(j.arm[ARM_NEW].geom.count[i], 1024 * 1024);
  program_ref p;
  program_of_job(&j, &p);
  assert_string_equal(p.exprs[ARM_NEW], j.arm[ARM_BEST].name_expr);
  assert_string_equal(p.exprs[ARM_CONTROL], j.arm[ARM_CONTROL].name_expr);
  cJSON *o = through_text(job_to_json(&j));
  if (job_from_json(o, &b, &e)) fail_msg("%s", e.msg);
  assert_job_equal(&j, &b);
  assert_memory_equal(b.arm[ARM_NEW].gemm, j.arm[ARM_NEW].gemm, sizeof j.arm[ARM_NEW].gemm);
  cJSON *arm = cJSON_GetArrayItem(cJSON_GetObjectItemCaseSensitive(o, "arms"), ARM_NEW);
  /* a field beyond the job's buffers would index past the worker's buffer table */
  cJSON_ReplaceItemInArray(cJSON_GetObjectItemCaseSensitive(arm, "gemm"), 2, cJSON_CreateNumber(3));
  assert_int_equal(job_from_json(o, &b, &e), -1);
  assert_non_null(strstr(e.msg, "out of range"));
  cJSON_SetValuestring(cJSON_GetObjectItemCaseSensitive(arm, "library"), "cublas_dgemm");
  assert_int_equal(job_from_json(o, &b, &e), -1);
  assert_int_equal(e.code, TF_EXIT_INPUT);
  assert_non_null(strstr(e.msg, "cublas_dgemm"));
  cJSON_Delete(o);
  /* no template arm before it: the program repeats the first kernel arm there */
  if (job_set_gemm_arm(&j, &c, ARM_BEST, &c.peers[0], &e)) fail_msg("%s", e.msg);
  program_of_job(&j, &p);
  assert_string_equal(p.exprs[ARM_BEST], j.arm[ARM_CONTROL].name_expr);
  /* a peer whose dimension the job lacks: a layernorm has two */
  tf_err_clear(&e);
  assert_int_equal(job_init(&j, &ln, 4, 0, &e), 0);
  assert_int_equal(job_set_gemm_arm(&j, &ln, ARM_CONTROL, &c.peers[0], &e), -1);
  assert_int_equal(e.code, TF_EXIT_INPUT);
  assert_non_null(strstr(e.msg, "lacks"));
  campaign_release(&c);
  campaign_release(&ln);
}

static void job_from_json_should_refuse_malformed_jobs(void **state) {
  (void)state;
  static campaign c;
  static job j, b;
  load_campaign("matmul-1024.json", &c);
  tf_err e = {0};
  if (job_build(&j, &c, 1, 0, &c.start, &c.start, &e)) fail_msg("%s", e.msg);
  campaign_release(&c);
  static const char *const drop[] = {"sources", "arms", "buffers", "args", "dims"};
  for (int i = 0; i < 5; i++) {
    cJSON *o = job_to_json(&j);
    cJSON_DeleteItemFromObjectCaseSensitive(o, drop[i]);
    memset(&e, 0, sizeof e);
    if (job_from_json(o, &b, &e) == 0) fail_msg("a job without '%s' was accepted", drop[i]);
    assert_true(strlen(e.msg) > 0);
    cJSON_Delete(o);
  }
  /* an arm whose buffer count is empty, and a round count out of range */
  cJSON *o = job_to_json(&j);
  cJSON *counts = cJSON_GetObjectItemCaseSensitive(cJSON_GetArrayItem(cJSON_GetObjectItemCaseSensitive(o, "arms"), 1), "counts");
  cJSON_ReplaceItemInArray(counts, 0, cJSON_CreateNumber(0));
  assert_int_equal(job_from_json(o, &b, &e), -1);
  cJSON_Delete(o);
  o = job_to_json(&j);
  cJSON_ReplaceItemInObjectCaseSensitive(cJSON_GetObjectItemCaseSensitive(o, "measure"), "rounds",
                                         cJSON_CreateNumber(MSG_MAX_ROUNDS + 1));
  assert_int_equal(job_from_json(o, &b, &e), -1);
  assert_non_null(strstr(e.msg, "measure"));
  cJSON_Delete(o);
  /* found by fuzz_protocol: a role given twice left another arm empty, a job that read in
   * but could not be read back once written */
  o = job_to_json(&j);
  cJSON *control = cJSON_GetArrayItem(cJSON_GetObjectItemCaseSensitive(o, "arms"), 2);
  cJSON_ReplaceItemInObjectCaseSensitive(control, "role", cJSON_CreateString("new"));
  assert_int_equal(job_from_json(o, &b, &e), -1);
  assert_non_null(strstr(e.msg, "once each"));
  cJSON_Delete(o);
  /* a tolerance that is no finite number (null is how cJSON writes inf) would pass every
   * arm; a fractional count is malformed, not rounded */
  o = job_to_json(&j);
  cJSON_ReplaceItemInObjectCaseSensitive(o, "tolerance", cJSON_CreateNull());
  assert_int_equal(job_from_json(o, &b, &e), -1);
  assert_non_null(strstr(e.msg, "tolerance"));
  cJSON_Delete(o);
  o = job_to_json(&j);
  counts = cJSON_GetObjectItemCaseSensitive(cJSON_GetArrayItem(cJSON_GetObjectItemCaseSensitive(o, "arms"), 1), "counts");
  cJSON_ReplaceItemInArray(counts, 0, cJSON_CreateNumber(1048576.5));
  assert_int_equal(job_from_json(o, &b, &e), -1);
  cJSON_Delete(o);
}

/* The wgmma example's tensor maps travel; an arm without them, or out of range, is refused. */
static void job_should_round_trip_tensor_maps(void **state) {
  (void)state;
  static campaign c;
  static job j, b;
  load_campaign("../examples/matmul_bf16/campaigns/matmul-bf16-wgmma-4096.json", &c);
  config nw = c.start;
  nw.v[spec_knob_index(&c.tmpl, "BM")] = 256;
  tf_err e = {0};
  if (job_build(&j, &c, 7, 1, &c.start, &nw, &e)) fail_msg("%s", e.msg);
  campaign_release(&c);
  assert_int_equal(j.ntmaps, 2);
  assert_int_equal(j.arg_kind[4], SPEC_ARG_TMAP);
  assert_int_equal(j.arg_buffer[4], 1);
  assert_int_equal(j.arg_tmap[4], 1);
  assert_int_equal(j.arg_swizzle[3], 128);
  assert_int_equal(j.arm[ARM_NEW].geom.tmap_box[0][1], 256);
  assert_int_equal(j.arm[ARM_BEST].geom.tmap_box[0][1], 128);
  assert_int_equal(j.arm[ARM_BEST].geom.tmap_dim[1][0], 4096);
  cJSON *o = through_text(job_to_json(&j));
  if (job_from_json(o, &b, &e)) fail_msg("%s", e.msg);
  cJSON_Delete(o);
  assert_job_equal(&j, &b);
  static const char *const bad[] = {"drop", "box", "swizzle"};
  for (int i = 0; i < 3; i++) {
    o = job_to_json(&j);
    cJSON *arm = cJSON_GetArrayItem(cJSON_GetObjectItemCaseSensitive(o, "arms"), 1);
    cJSON *arg = cJSON_GetArrayItem(cJSON_GetObjectItemCaseSensitive(o, "args"), 3);
    if (i == 0) cJSON_DeleteItemFromObjectCaseSensitive(arm, "tmaps");
    if (i == 1)
      cJSON_ReplaceItemInArray(cJSON_GetArrayItem(cJSON_GetObjectItemCaseSensitive(arm, "tmaps"), 0), 2,
                               cJSON_CreateNumber(257));
    if (i == 2) cJSON_ReplaceItemInObjectCaseSensitive(arg, "swizzle", cJSON_CreateNumber(96));
    memset(&e, 0, sizeof e);
    if (job_from_json(o, &b, &e) == 0) fail_msg("case '%s' was accepted", bad[i]);
    assert_non_null(strstr(e.msg, i == 2 ? "tensor map" : "tmaps"));
    cJSON_Delete(o);
  }
}

/* A job's id is read as the whole number it was sent as, or refused: 2^64 must not read as
 * 0 and be answered as job 0; 2^53 + 1 reads as 2^53, a 16-digit id is written as another. */
static void job_from_json_should_read_the_id_exactly_or_refuse_it(void **state) {
  (void)state;
  static campaign c;
  static job j, b;
  load_campaign("matmul-1024.json", &c);
  tf_err e = {0};
  if (job_build(&j, &c, 1, 0, &c.start, &c.start, &e)) fail_msg("%s", e.msg);
  campaign_release(&c);
  static const char *const bad[] = {"18446744073709551616", "9007199254740993", "1000000000000000",
                                    "-1", "1.5", "1e300", "\"7\"", "null", NULL};
  for (int i = 0; i < 9; i++) {
    cJSON *o = job_to_json(&j);
    if (bad[i]) cJSON_ReplaceItemInObjectCaseSensitive(o, "id", cJSON_CreateRaw(bad[i]));
    else cJSON_DeleteItemFromObjectCaseSensitive(o, "id");
    o = through_text(o);
    memset(&e, 0, sizeof e);
    long long id = 42;
    if (job_from_json(o, &b, &e) == 0)
      fail_msg("a job with id %s was read as job %lld", bad[i] ? bad[i] : "(none)", b.id);
    assert_int_equal(e.code, TF_EXIT_INPUT);
    assert_non_null(strstr(e.msg, "key 'id'"));
    assert_int_equal(job_id_from_json(o, &id), -1);
    cJSON_Delete(o);
  }
  j.id = MSG_MAX_ID; /* the largest, exactly */
  cJSON *o = through_text(job_to_json(&j));
  if (job_from_json(o, &b, &e)) fail_msg("%s", e.msg);
  assert_true(b.id == MSG_MAX_ID);
  cJSON_Delete(o);
}

/* ------------------------------------------------------------------ results */

static round_rec sample_round(int i) {
  round_rec r;
  memset(&r, 0, sizeof r);
  for (int a = 0; a < ARM_COUNT; a++) {
    r.order[a] = (a + i) % ARM_COUNT;
    r.us[a] = 100.0 + 10.0 * a + 0.125 * i;
    r.kernel_us[a] = 95.0 + 10.0 * a + 0.0625 * i;
    r.arm_mhz[a] = 1980.0 - (double)a;
  }
  r.sm_mhz[0] = 1980;
  r.sm_mhz[1] = 1965;
  r.reasons[0] = 0;
  r.reasons[1] = 0x40ULL | (1ULL << 40);
  return r;
}

static void assert_round_equal(int i, const round_rec *x, const round_rec *y) {
  for (int a = 0; a < ARM_COUNT; a++) {
    assert_int_equal(x->order[a], y->order[a]);
    if (!(x->us[a] == y->us[a])) fail_msg("round %d arm %d: us %g != %g", i, a, x->us[a], y->us[a]);
    if (x->kernel_us[a] < 0)
      assert_true(y->kernel_us[a] < 0);
    else
      assert_true(x->kernel_us[a] == y->kernel_us[a]);
    assert_true(x->arm_mhz[a] == y->arm_mhz[a]);
  }
  for (int k = 0; k < 2; k++) {
    assert_true(x->sm_mhz[k] == y->sm_mhz[k]);
    assert_int_equal(x->reasons[k], y->reasons[k]);
  }
  assert_int_equal(x->screened, y->screened);
}

static void result_should_round_trip_every_field(void **state) {
  (void)state;
  static result r, b;
  memset(&r, 0, sizeof r);
  r.id = 9876543210LL;
  r.status = RESULT_OK;
  snprintf(r.detail, sizeof r.detail, "fine: \"quoted\" and a\nnewline");
  snprintf(r.device, sizeof r.device, "GPU-3f2a9c1d-7b44-1e2f-9a0b-5c6d7e8f9012");
  r.correct = 1;
  r.rel_err[ARM_BEST] = 3.25e-7;
  r.rel_err[ARM_NEW] = INFINITY; /* a kernel that wrote inf */
  r.rel_err[ARM_CONTROL] = NAN;  /* and one that wrote nan */
  r.nrounds = 3;
  for (int i = 0; i < 3; i++) r.rounds[i] = sample_round(i);
  for (int a = 0; a < ARM_COUNT; a++) r.rounds[1].kernel_us[a] = -1.0; /* no CUPTI time this round */
  r.rounds[2].screened = 1;
  r.burn_in = 4;
  r.compile_ms = 1234.5;
  r.cache_hit = 1;
  r.wall_s = 7.75;
  tf_err e = {0};
  cJSON *o = through_text(result_to_json(&r));
  /* the null kernel times are written as null, not as a number */
  cJSON *r1 = cJSON_GetArrayItem(cJSON_GetObjectItemCaseSensitive(o, "rounds"), 1);
  assert_true(cJSON_IsNull(cJSON_GetObjectItemCaseSensitive(r1, "new_kernel_us")));
  if (result_from_json(o, &b, &e)) fail_msg("%s", e.msg);
  cJSON_Delete(o);
  assert_int_equal(b.id, r.id);
  assert_int_equal(b.status, RESULT_OK);
  assert_string_equal(b.detail, r.detail);
  assert_string_equal(b.device, r.device);
  assert_int_equal(b.correct, 1);
  assert_true(b.rel_err[ARM_BEST] == 3.25e-7);
  assert_false(isfinite(b.rel_err[ARM_NEW]));
  assert_false(isfinite(b.rel_err[ARM_CONTROL]));
  /* whatever comes back must still fail any tolerance */
  assert_false(b.rel_err[ARM_NEW] <= 1e-5);
  assert_false(b.rel_err[ARM_CONTROL] <= 1e-5);
  assert_int_equal(b.nrounds, 3);
  for (int i = 0; i < 3; i++) assert_round_equal(i, &r.rounds[i], &b.rounds[i]);
  assert_true(b.rounds[1].kernel_us[ARM_NEW] < 0);
  assert_int_equal(b.burn_in, 4);
  assert_true(b.compile_ms == 1234.5);
  assert_int_equal(b.cache_hit, 1);
  assert_true(b.wall_s == 7.75);
}

/* clock_reasons is a bit mask; 1e300 cast to an integer is undefined behaviour and
 * 1.5 is no mask, so a round carrying either is malformed, not read as some number. */
static void round_from_json_should_refuse_clock_reasons_that_are_no_bit_mask(void **state) {
  (void)state;
  static const char *const bad[] = {"1e300", "-1", "1.5", "1000.7", "1e19"};
  for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
    round_rec r = sample_round(0), b;
    cJSON *o = through_text(round_to_json(&r));
    cJSON_ReplaceItemInArray(cJSON_GetObjectItemCaseSensitive(o, "clock_reasons"), 1,
                             cJSON_Parse(bad[i]));
    if (round_from_json(o, &b) != -1) fail_msg("clock_reasons %s was read as %llu", bad[i], b.reasons[1]);
    cJSON_Delete(o);
  }
  round_rec r = sample_round(1), b;
  cJSON *o = through_text(round_to_json(&r));
  assert_int_equal(round_from_json(o, &b), 0);
  assert_round_equal(1, &r, &b);
  cJSON_Delete(o);
}

/* A measured time reads back as the very double the child measured, whatever its digits: the
 * coordinator decides on what it reads and verify recomputes from the ledger. cJSON alone
 * would write 15 digits for 1.0299999999999998 and read back 1.03. */
static void round_should_read_back_measured_times_exactly(void **state) {
  (void)state;
  round_rec r = sample_round(2), b;
  double odd[ARM_COUNT] = {1.0299999999999998, 74.548946307634203, 1.0 / 3.0};
  unsigned long long seed = 42;
  for (int k = 0; k < 1000; k++) {
    for (int a = 0; a < ARM_COUNT; a++) {
      seed = seed * 6364136223846793005ULL + 1442695040888963407ULL;
      r.us[a] = k == 0 ? odd[a] : (double)(seed >> 11) * 0x1.0p-53 * 1000.0;
      r.kernel_us[a] = r.us[a] * (1.0 - 1e-3 * a);
    }
    cJSON *o = through_text(round_to_json(&r));
    assert_int_equal(round_from_json(o, &b), 0);
    cJSON_Delete(o);
    assert_round_equal(k, &r, &b);
  }
}

static void result_should_round_trip_every_status(void **state) {
  (void)state;
  static result r, b;
  static const result_status all[] = {RESULT_OK, RESULT_FAULT, RESULT_COMPILE_ERROR, RESULT_ERROR};
  for (int i = 0; i < 4; i++) {
    memset(&r, 0, sizeof r);
    r.id = i;
    r.status = all[i];
    tf_err e = {0};
    cJSON *o = through_text(result_to_json(&r));
    if (result_from_json(o, &b, &e)) fail_msg("%s", e.msg);
    cJSON_Delete(o);
    assert_int_equal(b.status, all[i]);
    assert_int_equal(b.nrounds, 0);
  }
}

static void result_from_json_should_refuse_malformed_results(void **state) {
  (void)state;
  static result b;
  tf_err e = {0};
  cJSON *o = cJSON_Parse("{\"type\": \"result\", \"id\": 1, \"status\": \"melted\"}");
  assert_int_equal(result_from_json(o, &b, &e), -1);
  assert_non_null(strstr(e.msg, "unknown status 'melted'"));
  cJSON_Delete(o);
  o = cJSON_Parse("{\"id\": 1, \"status\": \"ok\", \"rounds\": [{\"order\": [\"best\", \"new\"]}]}");
  assert_int_equal(result_from_json(o, &b, &e), -1);
  assert_non_null(strstr(e.msg, "round 0"));
  cJSON_Delete(o);
  o = cJSON_Parse("{\"id\": 1, \"status\": \"ok\", \"rounds\": [{\"order\": [\"best\", \"new\", \"control\"],"
                  " \"best_us\": 1, \"new_us\": null, \"control_us\": 1}]}");
  assert_int_equal(result_from_json(o, &b, &e), -1); /* a round without a time is not a round */
  cJSON_Delete(o);
  o = cJSON_Parse("{\"id\": 1, \"status\": \"ok\", \"rounds\": 3}");
  assert_int_equal(result_from_json(o, &b, &e), -1);
  cJSON_Delete(o);
  /* an id that is no job's is not read as another one's (2^64 must not read as -1) */
  o = cJSON_Parse("{\"id\": 18446744073709551616, \"status\": \"fault\"}");
  assert_int_equal(result_from_json(o, &b, &e), -1);
  assert_non_null(strstr(e.msg, "key 'id'"));
  cJSON_Delete(o);
  o = cJSON_Parse("{\"id\": -1, \"status\": \"fault\"}"); /* a job whose id was unreadable */
  assert_int_equal(result_from_json(o, &b, &e), 0);
  assert_int_equal(b.id, -1);
  cJSON_Delete(o);
}

static void result_fault_should_describe_a_dead_child(void **state) {
  (void)state;
  static result r, b;
  memset(&r, 0x5a, sizeof r); /* whatever was there before */
  result_fault(&r, 42, "GPU-abc", "child %s after %d s", "overran", 120);
  assert_int_equal(r.id, 42);
  assert_int_equal(r.status, RESULT_FAULT);
  assert_string_equal(r.device, "GPU-abc");
  assert_string_equal(r.detail, "child overran after 120 s");
  assert_int_equal(r.correct, 0);
  assert_int_equal(r.nrounds, 0);
  assert_int_equal(r.cache_hit, 0);
  result_fault(&r, 43, NULL, "signal %d", 11);
  assert_string_equal(r.device, "");
  tf_err e = {0};
  cJSON *o = through_text(result_to_json(&r));
  if (result_from_json(o, &b, &e)) fail_msg("%s", e.msg);
  cJSON_Delete(o);
  assert_int_equal(b.status, RESULT_FAULT);
  assert_int_equal(b.id, 43);
  assert_string_equal(b.detail, "signal 11");
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(device_should_round_trip_every_field),
      cmocka_unit_test(device_should_refuse_a_record_without_identity),
      cmocka_unit_test(hello_should_round_trip_a_device_or_an_error),
      cmocka_unit_test(device_uuid8_should_take_eight_hex_digits_after_the_prefix),
      cmocka_unit_test(job_build_should_resolve_matmul_1024),
      cmocka_unit_test(job_set_gemm_arm_should_travel_and_refuse_what_the_job_lacks),
      cmocka_unit_test(job_should_round_trip_every_field),
      cmocka_unit_test(job_should_round_trip_a_template_control),
      cmocka_unit_test(job_should_round_trip_typed_buffers_scalars_and_a_reference),
      cmocka_unit_test(job_set_kernel_arm_should_take_one_kernel_of_the_interface),
      cmocka_unit_test(job_of_kernels_and_peers_should_carry_the_templates_reference),
      cmocka_unit_test(job_from_json_should_refuse_malformed_jobs),
      cmocka_unit_test(job_should_round_trip_tensor_maps),
      cmocka_unit_test(job_from_json_should_read_the_id_exactly_or_refuse_it),
      cmocka_unit_test(result_should_round_trip_every_field),
      cmocka_unit_test(round_from_json_should_refuse_clock_reasons_that_are_no_bit_mask),
      cmocka_unit_test(round_should_read_back_measured_times_exactly),
      cmocka_unit_test(result_should_round_trip_every_status),
      cmocka_unit_test(result_from_json_should_refuse_malformed_results),
      cmocka_unit_test(result_fault_should_describe_a_dead_child),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
