/* Unit tests of compile/program.c: a job's program compiles kernel by kernel, each distinct
 * name expression alone, with the machine code it has beside the others. NVRTC, no GPU. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "compile/program.h"
#include "tests/unit/testutil.h"

/* A program of the test template (tests/unit/data/axpy.cu) with these arms' expressions. */
static program_ref axpy(const char *best, const char *new_, const char *control) {
  program_ref p;
  memset(&p, 0, sizeof p);
  snprintf(p.root, sizeof p.root, "%s", source_dir());
  p.nsources = 1;
  snprintf(p.sources[0], sizeof p.sources[0], "tests/unit/data/axpy.cu");
  snprintf(p.exprs[ARM_BEST], sizeof p.exprs[0], "%s", best);
  snprintf(p.exprs[ARM_NEW], sizeof p.exprs[0], "%s", new_);
  snprintf(p.exprs[ARM_CONTROL], sizeof p.exprs[0], "%s", control);
  return p;
}

static const program_target sm90 = {.arch = "sm_90"};

static void build_ok(const program_ref *p, program_req *pr, program_build *b) {
  tf_err e = {0};
  program_request(p, &sm90, pr);
  if (program_compile(pr, b, &e) != 0) fail_msg("compile failed: %s", e.msg);
}

/* The bytes of the ELF section `name` of a cubin, or NULL. */
static const unsigned char *section(const compile_result *r, const char *name, size_t *len) {
  const unsigned char *b = r->cubin;
  uint64_t shoff;
  uint16_t shentsize, shnum, shstrndx;
  memcpy(&shoff, b + 0x28, 8);
  memcpy(&shentsize, b + 0x3A, 2);
  memcpy(&shnum, b + 0x3C, 2);
  memcpy(&shstrndx, b + 0x3E, 2);
  uint64_t stroff;
  memcpy(&stroff, b + shoff + (uint64_t)shstrndx * shentsize + 0x18, 8);
  for (int i = 0; i < shnum; i++) {
    const unsigned char *sh = b + shoff + (uint64_t)i * shentsize;
    uint32_t nm;
    uint64_t off, size;
    memcpy(&nm, sh, 4);
    memcpy(&off, sh + 0x18, 8);
    memcpy(&size, sh + 0x20, 8);
    if (strcmp((const char *)b + stroff + nm, name) == 0) {
      *len = size;
      return b + off;
    }
  }
  return NULL;
}

static void program_should_compile_each_distinct_kernel_alone(void **state) {
  program_ref p = axpy("axpy<1>", "axpy<4>", "axpy<1>");
  program_req pr;
  program_build b;
  build_ok(&p, &pr, &b);
  assert_int_equal(pr.nkernels, 2); /* best and the control share one */
  assert_int_equal(pr.kernel_of[ARM_BEST], 0);
  assert_int_equal(pr.kernel_of[ARM_NEW], 1);
  assert_int_equal(pr.kernel_of[ARM_CONTROL], 0);
  assert_int_equal(b.nkernels, 2);
  assert_int_equal(b.cache_hit, 0);
  assert_int_equal(b.failed, -1);
  assert_int_equal(count_files(*state, ".cubin"), 2);
  assert_non_null(strstr(b.kernel[0].lowered[0], "axpyILi1E"));
  assert_non_null(strstr(b.kernel[1].lowered[0], "axpyILi4E"));
  assert_true(b.ms >= b.kernel[0].ms + b.kernel[1].ms - 1e-9);
  program_build_release(&b);
}

/* What a generation compiles is what is new: best and the control come from the cache. */
static void program_should_compile_only_what_is_new(void **state) {
  program_ref first = axpy("axpy<1>", "axpy<4>", "axpy<8>");
  program_ref next = axpy("axpy<4>", "axpy<2>", "axpy<8>");
  program_req pr;
  program_build b;
  build_ok(&first, &pr, &b);
  program_build_release(&b);
  build_ok(&next, &pr, &b);
  assert_int_equal(b.cache_hit, 0);
  assert_int_equal(b.kernel[0].cache_hit, 1); /* best: new in the first program */
  assert_int_equal(b.kernel[1].cache_hit, 0); /* new */
  assert_int_equal(b.kernel[2].cache_hit, 1); /* the control */
  assert_int_equal(count_files(*state, ".cubin"), 4);
  program_build_release(&b);
  build_ok(&next, &pr, &b);
  assert_int_equal(b.cache_hit, 1);
  program_build_release(&b);
}

static int text_sections(const compile_result *r) {
  const unsigned char *b = r->cubin;
  uint64_t shoff, stroff;
  uint16_t shentsize, shnum, shstrndx;
  memcpy(&shoff, b + 0x28, 8);
  memcpy(&shentsize, b + 0x3A, 2);
  memcpy(&shnum, b + 0x3C, 2);
  memcpy(&shstrndx, b + 0x3E, 2);
  memcpy(&stroff, b + shoff + (uint64_t)shstrndx * shentsize + 0x18, 8);
  int n = 0;
  for (int i = 0; i < shnum; i++) {
    uint32_t nm;
    memcpy(&nm, b + shoff + (uint64_t)i * shentsize, 4);
    n += strncmp((const char *)b + stroff + nm, ".text.", 6) == 0;
  }
  return n;
}

/* A committed kernel (no template: NVRTC compiles it wherever its source is) comes from its own
 * source only, and an instantiation from the template's: each cubin holds its one kernel. */
static void program_should_compile_each_kernel_from_its_own_source(void **state) {
  write_file(*state, "plain.cu", "__global__ void plain(float *y) { y[threadIdx.x] *= 2.0f; }\n");
  program_ref p = axpy("axpy<1>", "axpy<4>", "plain");
  p.nsources = 2;
  snprintf(p.sources[1], sizeof p.sources[1], "%s/plain.cu", (char *)*state);
  p.from[ARM_CONTROL] = 1;
  program_req pr;
  program_build b;
  build_ok(&p, &pr, &b);
  assert_int_equal(b.nkernels, 3);
  assert_int_equal(pr.req[2].nsources, 1);
  assert_ptr_equal(pr.req[2].source_paths[0], pr.paths[1]);
  for (int k = 0; k < 3; k++) assert_int_equal(text_sections(&b.kernel[k]), 1);
  program_build_release(&b);
  /* Without "from" (an older list): every kernel from every source, the control in each. */
  for (int a = 0; a < ARM_COUNT; a++) p.from[a] = -1;
  build_ok(&p, &pr, &b);
  assert_int_equal(pr.req[0].nsources, 2);
  assert_int_equal(text_sections(&b.kernel[0]), 2);
  program_build_release(&b);
  /* The job's program through JSON keeps each kernel's source. */
  p.from[ARM_CONTROL] = 1;
  p.from[ARM_BEST] = p.from[ARM_NEW] = 0;
  cJSON *o = program_to_json(&p);
  program_ref back;
  tf_err e = {0};
  assert_int_equal(program_from_json(o, p.root, &back, &e), 0);
  assert_true(program_equal(&back, &p));
  cJSON_Delete(o);
  program_ref k[ARM_COUNT];
  assert_int_equal(program_kernels(&p, k), 3);
  assert_int_equal(k[2].nsources, 1);
  assert_string_equal(k[2].sources[0], p.sources[1]);
  assert_string_equal(k[2].exprs[0], "plain");
}

/* Whether kernel i of `whole` compiled alone has the machine code it has beside the others,
 * byte for byte, in one fresh compile of each (a new cache folder, so nothing is reused). */
static int same_code_alone(const compile_req *whole, int i) {
  char dir[] = "/tmp/tf-test-code-XXXXXX";
  if (!mkdtemp(dir)) fail_msg("mkdtemp failed");
  compile_req w_req = *whole, one = *whole;
  w_req.cache_dir = one.cache_dir = dir;
  one.name_exprs = &whole->name_exprs[i];
  one.nexprs = 1;
  compile_result w, alone;
  tf_err e = {0};
  if (compile_program(&w_req, &w, &e)) fail_msg("%s", e.msg);
  if (compile_program(&one, &alone, &e)) fail_msg("%s", e.msg);
  char name[600];
  snprintf(name, sizeof name, ".text.%s", w.lowered[i]);
  size_t lw = 0, la = 0;
  const unsigned char *cw = section(&w, name, &lw), *ca = section(&alone, name, &la);
  assert_non_null(cw);
  assert_non_null(ca);
  assert_true(lw > 1000);
  int same = lw == la && memcmp(cw, ca, lw) == 0;
  if (!same) print_message("kernel %d: %zu bytes beside the others, %zu alone\n", i, lw, la);
  compile_release(&alone);
  compile_release(&w);
  rm_rf(dir);
  return same;
}

/* A kernel compiled alone has the machine code it has beside the others, byte for byte.
 * NVRTC's output is not repeatable to the byte: now and then a compile of the same kernel and
 * options gives other code (docs/design.md, "Compiling ahead"), so
 * a pair that differs is compiled again, a few times, before the test fails: a kernel whose
 * code always changes when compiled alone still fails it. */
static void program_should_keep_each_kernels_machine_code(void **state) {
  (void)state;
  static char path[1024];
  snprintf(path, sizeof path, "%s/templates/matmul.cu", source_dir());
  const char *paths[1] = {path};
  static const char *const exprs[] = {
      "tf_matmul<64, 64, 32, 8, 8, 1, 1, 2, 2, 1, 0, 2, 1>",
      "tf_matmul<64, 128, 64, 8, 8, 0, 4, 1, 2, 2, 0, 2, 1>",
  };
  compile_req whole = {.source_paths = paths, .nsources = 1, .name_exprs = exprs, .nexprs = 2,
                       .arch = "sm_90"};
  enum { TRIES = 4 };
  for (int i = 0; i < 2; i++) {
    int t = 0;
    while (t < TRIES && !same_code_alone(&whole, i)) t++;
    if (t == TRIES) fail_msg("kernel %d: other machine code alone in %d fresh compiles", i, TRIES);
  }
}

static void program_should_name_the_kernel_nvrtc_refused(void **state) {
  (void)state;
  program_ref p = axpy("axpy<1>", "axpy<no>", "axpy<1>");
  program_req pr;
  program_build b;
  tf_err e = {0};
  program_request(&p, &sm90, &pr);
  assert_int_equal(program_compile(&pr, &b, &e), -1);
  assert_int_equal(e.code, TF_COMPILE_REFUSED);
  assert_int_equal(b.failed, 1);
  assert_string_equal(pr.exprs[b.failed], "axpy<no>");
  assert_non_null(b.kernel[1].log);
  program_build_release(&b);
}

/* The compile pool's unit: a program of one kernel, through JSON and back. */
static void program_should_split_into_kernels_and_read_one_back(void **state) {
  (void)state;
  program_ref p = axpy("axpy<1>", "axpy<4>", "axpy<1>"), k[ARM_COUNT], back;
  assert_int_equal(program_kernels(&p, k), 2);
  assert_string_equal(k[0].exprs[0], "axpy<1>");
  assert_string_equal(k[1].exprs[0], "axpy<4>");
  assert_string_equal(k[1].exprs[1], "");
  assert_string_equal(k[1].sources[0], p.sources[0]);
  cJSON *o = program_to_json(&k[1]);
  assert_int_equal(cJSON_GetArraySize(cJSON_GetObjectItem(o, "exprs")), 1);
  tf_err e = {0};
  assert_int_equal(program_from_json(o, p.root, &back, &e), 0);
  assert_true(program_equal(&back, &k[1]));
  cJSON_DeleteItemFromObject(o, "exprs");
  cJSON_AddItemToObject(o, "exprs", cJSON_CreateArray());
  assert_int_equal(program_from_json(o, p.root, &back, &e), -1);
  assert_int_equal(e.code, TF_EXIT_INPUT);
  assert_non_null(strstr(e.msg, "'exprs'"));
  cJSON_Delete(o);
}

/* A template's "arch_specific" reaches every kernel's compile as the arch-specific target,
 * through the split into kernels and the compile pool's JSON, and only there. */
static void program_should_compile_for_the_arch_specific_target_when_asked(void **state) {
  (void)state;
  program_ref p = axpy("axpy<1>", "axpy<4>", "axpy<1>"), k[ARM_COUNT], back;
  program_req pr;
  program_request(&p, &sm90, &pr);
  assert_string_equal(pr.req[0].arch, "sm_90");
  p.arch_specific = 1;
  assert_int_equal(program_kernels(&p, k), 2);
  assert_int_equal(k[1].arch_specific, 1);
  cJSON *o = program_to_json(&k[1]);
  tf_err e = {0};
  assert_int_equal(program_from_json(o, p.root, &back, &e), 0);
  assert_true(program_equal(&back, &k[1]));
  program_request(&back, &sm90, &pr);
  assert_string_equal(pr.req[0].arch, "sm_90a");
  back.arch_specific = 0;
  assert_false(program_equal(&back, &k[1]));
  cJSON_Delete(o);
  char a[16];
  compile_arch_specific("sm_90a", a, sizeof a); /* already specific: as it is */
  assert_string_equal(a, "sm_90a");
  compile_arch_specific("sm_86", a, sizeof a); /* none before 9.0 */
  assert_string_equal(a, "sm_86");
}

/* The simulated device's compile is per kernel: the long ones are the same in every program. */
static void program_should_simulate_each_kernel_for_its_own_time(void **state) {
  (void)state;
  const sim_compile m = {0.01, 0.03, 0.5, 0};
  const program_target t = {.arch = "sm_90", .sim = &m};
  program_ref p = axpy("axpy<1>", "axpy<4>", "axpy<8>");
  program_req pr;
  program_request(&p, &t, &pr);
  for (int k = 0; k < pr.nkernels; k++)
    assert_true(pr.req[k].simulate_s == program_kernel_sim_seconds(pr.exprs[k], &m));
  program_build b;
  tf_err e = {0};
  assert_int_equal(program_compile(&pr, &b, &e), 0);
  assert_int_equal(b.cache_hit, 0);
  program_build_release(&b);
}

int main(void) {
  /* Where a driver is installed NVRTC keeps the PTX it made in the driver's compute cache
   * (docs/design.md, "Compiling ahead"), so a "fresh" compile could return the other
   * code of an earlier one every time: the machine-code test compiles afresh. */
  setenv("CUDA_CACHE_DISABLE", "1", 1);
#define T(f) cmocka_unit_test_setup_teardown(f, fresh_cache_setup, fresh_cache_teardown)
  const struct CMUnitTest tests[] = {
      T(program_should_compile_each_distinct_kernel_alone),
      T(program_should_compile_only_what_is_new),
      T(program_should_keep_each_kernels_machine_code),
      T(program_should_compile_each_kernel_from_its_own_source),
      T(program_should_name_the_kernel_nvrtc_refused),
      T(program_should_split_into_kernels_and_read_one_back),
      T(program_should_compile_for_the_arch_specific_target_when_asked),
      T(program_should_simulate_each_kernel_for_its_own_time),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
