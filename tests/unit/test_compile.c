/* Unit tests of compile/compile.c: NVRTC compiles of a small template kernel
 * (tests/unit/data/axpy.cu) through the cubin cache. No GPU or driver needed. */
#include <dirent.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>

#include "compile/compile.h"
#include "common/source.h" /* defines: source_check, source_includes_of */
#include "tests/unit/testutil.h"

#ifndef TF_SOURCE_DIR
#define TF_SOURCE_DIR "."
#endif

#define DATA TF_SOURCE_DIR "/tests/unit/data/"

static const char *const axpy_src[] = {DATA "axpy.cu"};
static const char *const axpy_exprs[] = {"axpy<1>", "axpy<4>"};

static compile_req axpy_req(void) {
  return (compile_req){.source_paths = axpy_src, .nsources = 1, .name_exprs = axpy_exprs,
                       .nexprs = 2, .arch = "sm_90", .cache_dir = NULL};
}

/* Compile and fail the test with NVRTC's words if it does not succeed. */
static void compile_ok(const compile_req *req, compile_result *out) {
  tf_err e = {0};
  if (compile_program(req, out, &e) != 0)
    fail_msg("compile failed: %s\n%s", e.msg, out->log ? out->log : "(no log)");
}

/* ---------------------------------------------------------------- tests */

static void compile_should_build_two_instantiations_into_one_cubin(void **state) {
  (void)state;
  compile_req req = axpy_req();
  compile_result r;
  compile_ok(&req, &r);
  assert_int_equal(r.cache_hit, 0);
  assert_true(r.cubin_size > 4);
  assert_memory_equal(r.cubin, "\177ELF", 4); /* a cubin is an ELF image */
  assert_non_null(r.log);
  assert_true(strlen(r.lowered[0]) > 0);
  assert_true(strlen(r.lowered[1]) > 0);
  assert_string_not_equal(r.lowered[0], r.lowered[1]);
  assert_non_null(strstr(r.lowered[0], "axpy")); /* Itanium mangling keeps the name */
  compile_release(&r);
  assert_null(r.cubin);
}

static void compile_should_hit_the_cache_the_second_time(void **state) {
  compile_req req = axpy_req();
  compile_result first, second;
  compile_ok(&req, &first);
  assert_int_equal(first.cache_hit, 0);
  assert_int_equal(count_files(*state, ".cubin"), 1);
  assert_int_equal(count_files(*state, ".names"), 1);
  compile_ok(&req, &second);
  assert_int_equal(second.cache_hit, 1);
  assert_int_equal(second.cubin_size, first.cubin_size);
  assert_memory_equal(second.cubin, first.cubin, first.cubin_size);
  assert_string_equal(second.lowered[0], first.lowered[0]);
  assert_string_equal(second.lowered[1], first.lowered[1]);
  assert_non_null(second.log);
  compile_release(&first);
  compile_release(&second);
}

static void compile_should_miss_when_the_expressions_change(void **state) {
  compile_req req = axpy_req();
  compile_result a, b;
  compile_ok(&req, &a);
  static const char *const swapped[] = {"axpy<4>", "axpy<1>"};
  req.name_exprs = swapped;
  compile_ok(&req, &b);
  assert_int_equal(b.cache_hit, 0);
  assert_string_equal(b.lowered[0], a.lowered[1]); /* names come back in request order */
  assert_int_equal(count_files(*state, ".cubin"), 2);
  compile_release(&a);
  compile_release(&b);
}

static void compile_should_need_both_files_for_a_hit(void **state) {
  compile_req req = axpy_req();
  compile_result r;
  compile_ok(&req, &r);
  compile_release(&r);
  /* Remove the names: a cubin without its lowered names is useless, so this is a miss. */
  DIR *d = opendir(*state);
  struct dirent *ent;
  char path[4096] = "";
  while ((ent = readdir(d)))
    if (strstr(ent->d_name, ".names")) snprintf(path, sizeof path, "%s/%s", (char *)*state, ent->d_name);
  closedir(d);
  assert_int_equal(unlink(path), 0);
  compile_ok(&req, &r);
  assert_int_equal(r.cache_hit, 0);
  assert_int_equal(count_files(*state, ".names"), 1); /* and the entry is whole again */
  compile_release(&r);
}

static void compile_should_refuse_a_syntax_error_with_the_log(void **state) {
  /* The error is in the second file: its #line makes the log name it, not the first. */
  static const char *const srcs[] = {DATA "axpy.cu", DATA "bad.cu"};
  compile_req req = axpy_req();
  req.source_paths = srcs;
  req.nsources = 2;
  compile_result r;
  tf_err e = {0};
  assert_int_equal(compile_program(&req, &r, &e), -1);
  assert_int_equal(e.code, TF_COMPILE_REFUSED);
  assert_non_null(r.log);
  assert_non_null(strstr(r.log, "bad.cu(5)")); /* the '}' after the missing ';' */
  assert_non_null(strstr(r.log, "error"));
  assert_non_null(strstr(e.msg, "bad.cu(5)")); /* the summary quotes the first error */
  assert_null(r.cubin);
  assert_int_equal(count_files(*state, ".cubin"), 0);
  assert_int_equal(count_files(*state, ".refused"), 1); /* the log, for the next request */
  compile_release(&r);
}

static void compile_should_refuse_again_from_the_cache_with_the_same_log(void **state) {
  (void)state;
  static const char *const srcs[] = {DATA "axpy.cu", DATA "bad.cu"};
  compile_req req = axpy_req();
  req.source_paths = srcs;
  req.nsources = 2;
  compile_result a, b;
  tf_err ea = {0}, eb = {0};
  assert_int_equal(compile_program(&req, &a, &ea), -1);
  assert_int_equal(compile_program(&req, &b, &eb), -1);
  assert_int_equal(eb.code, TF_COMPILE_REFUSED);
  assert_int_equal(a.cache_hit, 0);
  assert_int_equal(b.cache_hit, 1);
  assert_string_equal(ea.msg, eb.msg); /* the generation's record says the same either way */
  assert_string_equal(a.log, b.log);
  compile_release(&a);
  compile_release(&b);
}

static compile_req simulated_req(double seconds) {
  compile_req req = axpy_req();
  req.simulate_s = seconds;
  return req;
}

static void compile_should_simulate_under_keys_of_its_own(void **state) {
  (void)state;
  compile_req sim = simulated_req(0.01), real = axpy_req();
  compile_result s, r;
  char ks[CACHE_KEY_HEX], kr[CACHE_KEY_HEX];
  tf_err e = {0};
  assert_int_equal(compile_cached(&sim, ks, &e), 0);
  compile_ok(&sim, &s);
  assert_int_equal(compile_cached(&sim, ks, &e), 1);
  assert_int_equal(compile_cached(&real, kr, &e), 0); /* a stand-in is never a real cubin */
  assert_string_not_equal(ks, kr);
  assert_string_equal(s.lowered[1], "axpy<4>");
  assert_true(s.ms >= 10.0);
  compile_release(&s);
  compile_ok(&sim, &s);
  assert_int_equal(s.cache_hit, 1);
  compile_release(&s);
  compile_ok(&real, &r);
  assert_int_equal(r.cache_hit, 0);
  compile_release(&r);
}

/* While another process compiles a program, a second request waits for its cubin instead of
 * compiling it again. */
static void compile_should_wait_for_the_process_compiling_it(void **state) {
  (void)state;
  compile_req req = simulated_req(0.6);
  pid_t pid = fork();
  assert_true(pid >= 0);
  if (pid == 0) {
    compile_result r;
    tf_err e = {0};
    _exit(compile_program(&req, &r, &e) == 0 && r.cache_hit == 0 ? 0 : 1);
  }
  usleep(200000); /* the other process holds the lock by now */
  compile_result r;
  compile_ok(&req, &r);
  int status = 0;
  waitpid(pid, &status, 0);
  assert_true(WIFEXITED(status) && WEXITSTATUS(status) == 0);
  assert_int_equal(r.cache_hit, 1);
  assert_true(r.wait_ms > 100.0);
  assert_true(r.ms >= r.wait_ms);
  compile_release(&r);
}

/* A holder that keeps the lock past wait_s is presumed stuck: the waiter compiles itself. */
static void compile_should_compile_itself_after_waiting_too_long(void **state) {
  compile_req req = simulated_req(0.01);
  req.wait_s = 0.2;
  char key[CACHE_KEY_HEX], path[4200];
  tf_err e = {0};
  assert_int_equal(compile_cached(&req, key, &e), 0);
  snprintf(path, sizeof path, "%s/%s.lock", (const char *)*state, key);
  int fd = open(path, O_RDWR | O_CREAT, 0666);
  assert_true(fd >= 0);
  assert_int_equal(flock(fd, LOCK_EX), 0);
  compile_result r;
  compile_ok(&req, &r);
  assert_int_equal(r.cache_hit, 0);
  assert_true(r.wait_ms >= 200.0);
  compile_release(&r);
  close(fd);
}

static void compile_should_refuse_an_unknown_name_expression(void **state) {
  (void)state;
  static const char *const exprs[] = {"axpy<1>", "saxpy<2>"};
  compile_req req = axpy_req();
  req.name_exprs = exprs;
  compile_result r;
  tf_err e = {0};
  assert_int_equal(compile_program(&req, &r, &e), -1);
  assert_int_equal(e.code, TF_COMPILE_REFUSED);
  assert_non_null(strstr(r.log, "saxpy"));
  compile_release(&r);
}

static void compile_should_name_a_missing_source_file(void **state) {
  (void)state;
  static const char *const srcs[] = {DATA "axpy.cu", DATA "no-such-kernel.cu"};
  compile_req req = axpy_req();
  req.source_paths = srcs;
  req.nsources = 2;
  compile_result r;
  tf_err e = {0};
  assert_int_equal(compile_program(&req, &r, &e), -1);
  assert_int_not_equal(e.code, TF_COMPILE_REFUSED);
  assert_int_not_equal(e.code, 0);
  assert_non_null(strstr(e.msg, "no-such-kernel.cu"));
  compile_release(&r);
}

static void compile_should_refuse_a_virtual_architecture(void **state) {
  (void)state;
  compile_req req = axpy_req();
  req.arch = "compute_90"; /* PTX only: no cubin to load */
  compile_result r;
  tf_err e = {0};
  assert_int_equal(compile_program(&req, &r, &e), -1);
  assert_non_null(strstr(e.msg, "'compute_90'"));
  compile_release(&r);
}

/* The matmul template's newest structure in one program: CI's audit covers matmul at 4096^3,
 * where K slices are never reachable, so one instantiation of each new form compiles here
 * (K slices with static and with cp.async stages, warp tiles with k-major A, a 16x8 tile
 * with a fourth stage, pipelined fragments with row-major A in K slices and with k-major A). */
static void compile_should_build_the_matmul_templates_newest_forms(void **state) {
  (void)state;
  static char path[1024];
  snprintf(path, sizeof path, "%s/templates/matmul.cu", source_dir());
  const char *paths[1] = {path};
  static const char *const exprs[] = {
      "tf_matmul<64, 64, 64, 8, 8, 0, 4, 2, 0, 1, 0, 2, 0>",
      "tf_matmul<64, 128, 64, 8, 8, 0, 4, 2, 2, 2, 1, 2, 0>",
      "tf_matmul<64, 128, 32, 8, 8, 1, 1, 2, 3, 1, 1, 1, 0>",
      "tf_matmul<128, 128, 8, 16, 8, 0, 4, 1, 4, 1, 1, 1, 0>",
      "tf_matmul<64, 128, 64, 8, 8, 0, 4, 2, 2, 1, 0, 2, 1>",
      "tf_matmul<128, 128, 16, 8, 8, 1, 1, 1, 2, 1, 1, 1, 1>",
  };
  enum { N = sizeof exprs / sizeof exprs[0] };
  compile_req req = {.source_paths = paths, .nsources = 1, .name_exprs = exprs, .nexprs = N,
                     .arch = "sm_90", .cache_dir = NULL};
  compile_result r;
  compile_ok(&req, &r);
  for (int i = 0; i < N; i++) assert_non_null(strstr(r.lowered[i], "tf_matmul"));
  compile_release(&r);
}

/* ---------------------------------------------------------------- confinement */

/* A kernel folder beside the cache: k.cu (body given), and helper.cuh. */
static void kernel_folder(const char *cache, char *dir, size_t len, const char *body) {
  snprintf(dir, len, "%s/kernels", cache);
  assert_int_equal(mkdir(dir, 0755), 0);
  write_file(dir, "helper.cuh", "__device__ inline float twice(float v) { return 2.0f * v; }\n");
  char text[2048];
  snprintf(text, sizeof text,
           "%s\ntemplate <int V> __global__ void k(float *y) { y[threadIdx.x] = twice(V); }\n", body);
  write_file(dir, "k.cu", text);
}

static int compile_kernel(const char *dir, compile_result *r, tf_err *e) {
  static char path[1024];
  snprintf(path, sizeof path, "%s/k.cu", dir);
  static const char *const paths[1] = {path}, *const exprs[1] = {"k<3>"};
  compile_req req = {.source_paths = paths, .nsources = 1, .name_exprs = exprs, .nexprs = 1,
                     .arch = "sm_90", .cache_dir = NULL};
  tf_err_clear(e);
  return compile_program(&req, r, e);
}

/* A header of the kernel's own folder compiles, and editing it is another program. */
static void compile_should_take_a_header_of_the_kernels_folder(void **state) {
  char dir[512];
  kernel_folder(*state, dir, sizeof dir, "#include \"helper.cuh\"");
  compile_result r;
  tf_err e;
  if (compile_kernel(dir, &r, &e)) fail_msg("%s\n%s", e.msg, r.log ? r.log : "");
  compile_release(&r);
  write_file(dir, "helper.cuh", "__device__ inline float twice(float v) { return v + v; }\n");
  if (compile_kernel(dir, &r, &e)) fail_msg("%s", e.msg);
  assert_int_equal(r.cache_hit, 0); /* not the cubin of the old header */
  compile_release(&r);
  assert_int_equal(count_files(*state, ".cubin"), 2);
}

/* Nothing from outside the kernel's folder reaches NVRTC, hence its log, hence a ledger: each
 * of these is refused as bad input naming the line, before NVRTC runs (no log at all). */
static void compile_should_refuse_includes_from_outside_the_folder(void **state) {
  static const struct {
    const char *body, *want;
  } cases[] = {
      {"#include \"/etc/hostname\"", "line 1: #include must name a file of the kernel's folder"},
      {"\n\n  #  include \"../helper.cuh\"", "line 3: #include must name"},
      {"#include <cstdio>", "#include <...>: a kernel includes no system header"},
      {"#define F \"/etc/hostname\"\n#include F", "line 2: #include must name"},
      {"#include \"nosuch.cuh\"", "#include \"nosuch.cuh\": no such file"},
      {"#/* a comment */include \"/etc/hostname\"", "line 1: #include must name"},
      {"#inc\\\nlude \"/etc/hostname\"", "line 1: #include must name"},
      {"%:include \"/etc/hostname\"", "line 1: #include must name"},
      {"#include_next \"/etc/hostname\"", "#include_next must name"},
      {"#if __has_include(\"/etc/passwd\")\n#endif", "line 1: __has_include would look at files"},
      {"#include \"outside.cuh\"", "outside its folder"},
      {"#include \"nested.cuh\"", "nested.cuh': line 1: #include must name"},
  };
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
    char dir[512], out[1024], link[1024];
    snprintf(dir, sizeof dir, "%s/kernels", (char *)*state);
    rm_rf(dir);
    kernel_folder(*state, dir, sizeof dir, cases[i].body);
    write_file(*state, "outside.cuh", "#error the text of a file outside the folder\n");
    snprintf(out, sizeof out, "%s/outside.cuh", (char *)*state);
    snprintf(link, sizeof link, "%s/outside.cuh", dir);
    assert_int_equal(symlink(out, link), 0);
    write_file(dir, "nested.cuh", "#include \"/etc/hostname\"\n");
    compile_result r;
    tf_err e;
    if (compile_kernel(dir, &r, &e) == 0) fail_msg("case %zu compiled: %s", i, cases[i].body);
    if (e.code != TF_EXIT_INPUT || !strstr(e.msg, "k.cu") || !strstr(e.msg, cases[i].want))
      fail_msg("case %zu: code %d, want '%s' in: %s", i, e.code, cases[i].want, e.msg);
    if (r.log && r.log[0]) fail_msg("case %zu: NVRTC ran: %s", i, r.log);
    compile_release(&r);
  }
}

static void compile_should_refuse_a_source_linked_out_of_its_folder(void **state) {
  char dir[512], real[1024], link[1024];
  kernel_folder(*state, dir, sizeof dir, "");
  snprintf(real, sizeof real, "%s/k.cu", dir);
  snprintf(link, sizeof link, "%s/linked", (char *)*state);
  assert_int_equal(mkdir(link, 0755), 0);
  snprintf(link, sizeof link, "%s/linked/k.cu", (char *)*state);
  assert_int_equal(symlink(real, link), 0);
  snprintf(dir, sizeof dir, "%s/linked", (char *)*state);
  compile_result r;
  tf_err e;
  assert_int_equal(compile_kernel(dir, &r, &e), -1);
  assert_int_equal(e.code, TF_EXIT_INPUT);
  assert_non_null(strstr(e.msg, "outside its folder"));
  compile_release(&r);
  assert_int_equal(source_check(link, &e), -1);
  assert_int_equal(source_check(real, &e), 0);
}

/* What a kernel includes, for identities and exports: each file of the folder once, by its
 * plain name, in the order first met (depth first), with its bytes; nothing it does not. */
static void source_includes_should_list_each_file_once_in_order(void **state) {
  char dir[512], path[1024];
  kernel_folder(*state, dir, sizeof dir, "#include \"b.cuh\"\n#include \"helper.cuh\"\n#include \"b.cuh\"");
  write_file(dir, "b.cuh", "#include \"c.cuh\"\n#include \"b.cuh\"\n");
  write_file(dir, "c.cuh", "// c\n");
  write_file(dir, "unrelated.cuh", "// not included\n");
  snprintf(path, sizeof path, "%s/k.cu", dir);
  source_includes inc;
  tf_err e = {0};
  if (source_includes_of(path, &inc, &e)) fail_msg("%s", e.msg);
  assert_int_equal(inc.n, 3);
  assert_string_equal(inc.names[0], "b.cuh");
  assert_string_equal(inc.names[1], "c.cuh");
  assert_string_equal(inc.names[2], "helper.cuh");
  assert_int_equal(inc.lens[1], 5);
  assert_memory_equal(inc.texts[1], "// c\n", 5);
  source_includes_release(&inc);
  assert_int_equal(inc.n, 0);
  write_file(dir, "c.cuh", "#include \"/etc/hostname\"\n");
  assert_int_equal(source_includes_of(path, &inc, &e), -1); /* what the check refuses */
  assert_int_equal(e.code, TF_EXIT_INPUT);
  assert_int_equal(inc.n, 0);
  source_includes_release(&inc);
}

static void compile_should_report_the_nvrtc_version(void **state) {
  (void)state;
  int major = -1, minor = -1;
  compile_nvrtc_version(&major, &minor);
  assert_true(major >= 12); /* the runtime library API and sm_90 both need 12+ */
  assert_true(minor >= 0);
}

int main(void) {
#define T(f) cmocka_unit_test_setup_teardown(f, fresh_cache_setup, fresh_cache_teardown)
  const struct CMUnitTest tests[] = {
      T(compile_should_build_two_instantiations_into_one_cubin),
      T(compile_should_hit_the_cache_the_second_time),
      T(compile_should_miss_when_the_expressions_change),
      T(compile_should_need_both_files_for_a_hit),
      T(compile_should_refuse_a_syntax_error_with_the_log),
      T(compile_should_refuse_again_from_the_cache_with_the_same_log),
      T(compile_should_simulate_under_keys_of_its_own),
      T(compile_should_wait_for_the_process_compiling_it),
      T(compile_should_compile_itself_after_waiting_too_long),
      T(compile_should_refuse_an_unknown_name_expression),
      T(compile_should_name_a_missing_source_file),
      T(compile_should_refuse_a_virtual_architecture),
      T(compile_should_report_the_nvrtc_version),
      T(compile_should_build_the_matmul_templates_newest_forms),
      T(compile_should_take_a_header_of_the_kernels_folder),
      T(compile_should_refuse_includes_from_outside_the_folder),
      T(compile_should_refuse_a_source_linked_out_of_its_folder),
      T(source_includes_should_list_each_file_once_in_order),
  };
#undef T
  return cmocka_run_group_tests(tests, NULL, NULL);
}
