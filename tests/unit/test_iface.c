/* Unit tests of compile/iface.c: the demangler on names NVRTC lowers (one program of small
 * kernels, compiled in a fresh cache; no GPU needed) and on hand-written ones, the comparison
 * with a spec's arguments and knobs (the softmax example), and the template parameter names
 * read from a source. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "compile/compile.h"
#include "compile/iface.h"
#include "common/spec.h"
#include "tests/unit/testutil.h"

static const char kernels_cu[] =
    "#include <cuda_fp16.h>\n"
    "#include <cuda_bf16.h>\n"
    "namespace ns { struct Vec { float x; }; }\n"
    "template <int A, int B> __global__ void k2(const float *__restrict__ x, float *y,\n"
    "    const float *z, int n, long long m, float eps) {}\n"
    "__global__ void plain(const __half *h, __nv_bfloat16 *b, signed char *c, unsigned char *u,\n"
    "    unsigned int *w, long long *q, long *l, double d) {}\n"
    "template <typename T> __global__ void typed(const T *a, T *b, T s) {}\n"
    "namespace ns { template <int N> __global__ void inner(const Vec *v, Vec *w,\n"
    "    const volatile float *f, float4 *g) {} }\n"
    "__global__ void none(void) {}\n"
    "template <bool F> __global__ void flag(int **pp, unsigned long long u, __half h) {}\n"
    "extern \"C\" __global__ void cname(float *x) {}\n";

enum { NEXPRS = 7 };
static const char *const exprs[NEXPRS] = {"k2<1, 2>", "plain", "typed<float>", "ns::inner<3>",
                                          "none", "flag<true>", "cname"};
/* What each takes, as iface_type_str spells it, joined by "; ". */
static const char *const want[NEXPRS] = {
    "const float *; float *; const float *; int; long long; float",
    "const __half *; __nv_bfloat16 *; signed char *; unsigned char *; unsigned int *; "
    "long long *; long *; double",
    "const float *; float *; float",
    "const ns::Vec *; ns::Vec *; const float *; float4 *",
    "",
    "int **; unsigned long long; __half",
    NULL};
static const int want_targs[NEXPRS] = {2, -1, 1, 1, -1, 1, 0};

static void sig_str(const iface_sig *sig, char *buf, size_t len) {
  size_t n = 0;
  buf[0] = '\0';
  for (int i = 0; i < sig->nparams; i++) {
    char t[IFACE_TYPE + 40];
    iface_type_str(&sig->params[i], t, sizeof t);
    n += (size_t)snprintf(buf + n, len - n, "%s%s", i ? "; " : "", t);
  }
}

static void demangle_ok(const char *mangled, iface_sig *sig) {
  char err[600];
  if (iface_demangle(mangled, sig, err, sizeof err)) fail_msg("%s", err);
}

static void demangle_should_read_the_names_nvrtc_lowers(void **state) {
  char dir[512];
  snprintf(dir, sizeof dir, "%s", (const char *)*state);
  write_file(dir, "k.cu", kernels_cu);
  char path[600];
  snprintf(path, sizeof path, "%s/k.cu", dir);
  const char *srcs[1] = {path};
  compile_req req = {.source_paths = srcs, .nsources = 1, .name_exprs = exprs,
                     .nexprs = NEXPRS, .arch = "sm_90"};
  compile_result r = {0};
  tf_err e = {0};
  if (compile_program(&req, &r, &e)) fail_msg("%s\n%s", e.msg, r.log ? r.log : "");
  for (int i = 0; i < NEXPRS; i++) {
    iface_sig sig;
    char err[600], got[600];
    if (!want[i]) { /* extern "C": no mangling, nothing to read */
      assert_int_equal(iface_demangle(r.lowered[i], &sig, err, sizeof err), -1);
      assert_non_null(strstr(err, "not an Itanium-mangled name"));
      continue;
    }
    demangle_ok(r.lowered[i], &sig);
    sig_str(&sig, got, sizeof got);
    if (strcmp(got, want[i]) || sig.ntargs != want_targs[i])
      fail_msg("%s (%s): got '%s' with %d template arguments", exprs[i], r.lowered[i], got,
               sig.ntargs);
  }
  compile_release(&r);
}

static void demangle_should_read_hand_written_names(void **state) {
  (void)state;
  iface_sig sig;
  char got[600];
  demangle_ok("_Z10tf_softmaxILi32ELi1ELi1EEvPKfPfS2_ii", &sig);
  sig_str(&sig, got, sizeof got);
  assert_string_equal(got, "const float *; float *; float *; int; int");
  assert_int_equal(sig.ntargs, 3);
  assert_string_equal(sig.name, "tf_softmax");
  /* a negative literal, a restrict volatile pointee, a class substitution, seq-id 10 (SA_) */
  demangle_ok("_Z1kILin5EEvPrVKcP13__nv_bfloat16S3_", &sig);
  sig_str(&sig, got, sizeof got);
  assert_string_equal(got, "const char *; __nv_bfloat16 *; __nv_bfloat16 *");
  demangle_ok("_Z1kPaPhPsPtPiPjPlPmPxPyPfPdS9_SA_", &sig);
  assert_int_equal(sig.nparams, 14);
  iface_type_str(&sig.params[12], got, sizeof got);
  assert_string_equal(got, "float *"); /* S9_ and SA_: the 11th and 12th candidates */
  iface_type_str(&sig.params[13], got, sizeof got);
  assert_string_equal(got, "double *");
  demangle_ok("_Z1kv", &sig);
  assert_int_equal(sig.nparams, 0);
  assert_int_equal(sig.ntargs, -1);
}

static void demangle_should_say_what_it_cannot_read(void **state) {
  (void)state;
  static const struct {
    const char *mangled, *why;
  } bad[] = {
      {"tf_kernel", "not an Itanium-mangled name"},
      {"_Z1kPFviE", "a type this parser does not read"}, /* a function pointer */
      {"_Z1k", "no parameter types"},
      {"_Z9kPf", "a name runs past the end"},
      {"_Z1kILi1E", "template arguments without their 'E'"},
      {"_Z1kPfS3_", "a substitution of nothing seen"},
      {"_Z1kILi1EEvT0_", "a template parameter of no argument"},
      {"_Z1kIXadL_Z1gEEEvv", "a template argument expression or pack"},
  };
  for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
    iface_sig sig;
    char err[600];
    assert_int_equal(iface_demangle(bad[i].mangled, &sig, err, sizeof err), -1);
    if (!strstr(err, bad[i].why)) fail_msg("%s: '%s' lacks '%s'", bad[i].mangled, err, bad[i].why);
  }
}

/* iface_check of the softmax example against a hand-written mangled name; NULL: it fits. */
static void check_softmax(const char *mangled, const char *want_msg, const char *want_msg2) {
  spec *s = malloc(sizeof *s);
  assert_non_null(s);
  load_spec("examples/softmax/templates/softmax.json", s);
  iface_sig sig;
  tf_err e = {0};
  demangle_ok(mangled, &sig);
  int rc = iface_check(s, &sig, "tf_softmax<32, 1, 1, 0, 0>", 0, &e);
  if (!want_msg) {
    if (rc) fail_msg("%s: %s", mangled, e.msg);
  } else {
    assert_int_equal(rc, -1);
    assert_int_equal(e.code, TF_EXIT_INPUT);
    if (!strstr(e.msg, want_msg) || (want_msg2 && !strstr(e.msg, want_msg2)))
      fail_msg("%s: '%s' lacks '%s' or '%s'", mangled, e.msg, want_msg, want_msg2);
    assert_non_null(strstr(e.msg, "softmax.json'"));
  }
  spec_release(s);
  free(s);
}

static void check_should_accept_the_kernel_that_fits(void **state) {
  (void)state;
  check_softmax("_Z10tf_softmaxILi32ELi1ELi1ELi0ELi0EEvPKfPfS2_ii", NULL, NULL);
  check_softmax("_Z10tf_softmaxILi32ELi1ELi1ELi0ELi0EEvPfS0_S0_ii", NULL, NULL); /* non-const input */
  /* vector, void */
  check_softmax("_Z10tf_softmaxILi32ELi1ELi1ELi0ELi0EEvPK6float4PvS3_ii", NULL, NULL);
}

static void check_should_name_the_key_and_both_sides(void **state) {
  (void)state;
  check_softmax("_Z10tf_softmaxILi32ELi1ELi1ELi0ELi0EEvPKfPfS2_i",
                "key 'args': kernel 'tf_softmax<32, 1, 1, 0, 0>' takes 4 parameters (const float *, "
                "float *, float *, int), the spec passes 5 arguments", NULL);
  check_softmax("_Z10tf_softmaxILi32ELi1ELi1ELi0ELi0EEvPKfS1_Pfii", "key 'args[1]': kernel "
                "'tf_softmax<32, 1, 1, 0, 0>' takes 'const float *', the spec passes buffer 'y' of "
                "type f32 (role output)", "which the kernel writes");
  check_softmax("_Z10tf_softmaxILi32ELi1ELi1ELi0ELi0EEvPK6__halfPfS3_ii", "key 'args[0]'",
                "takes 'const __half *', the spec passes buffer 'x' of type f32");
  check_softmax("_Z10tf_softmaxILi32ELi1ELi1ELi0ELi0EEvPKfPfS2_iS2_", "key 'args[4]'",
                "takes 'float *', the spec passes scalar 'D' of type i32");
  check_softmax("_Z10tf_softmaxILi32ELi1ELi1ELi0ELi0EEviPKfPfS2_i", "key 'args[0]'", "takes 'int'");
  check_softmax("_Z10tf_softmaxILi32ELi1EEvPKfPfS1_ii", "key 'knobs': kernel 'tf_softmax<32, 1, "
                "1, 0, 0>' takes 2 template parameters", "5 knobs (BLOCK, VEC, ROWS, HOLD, LOAD)");
}

static void check_should_type_untyped_scalars_by_kind(void **state) {
  (void)state;
  spec *s = malloc(sizeof *s);
  assert_non_null(s);
  load_spec("templates/layernorm.json", s); /* ..., R, D, {"float": 1e-5} */
  iface_sig sig;
  tf_err e = {0};
  demangle_ok("_Z12tf_layernormILi0ELi1ELi32ELi1ELi0ELi0ELi0ELi1EEvPKfS1_S1_Pfiid", &sig);
  assert_int_equal(iface_check(s, &sig, "ln", 0, &e), 0); /* a double takes {"float": x} */
  demangle_ok("_Z12tf_layernormILi0ELi1ELi32ELi1ELi0ELi0ELi0ELi1EEvPKfS1_S1_Pfifi", &sig);
  assert_int_equal(iface_check(s, &sig, "ln", 0, &e), -1);
  assert_non_null(strstr(e.msg, "key 'args[5]'"));
  assert_non_null(strstr(e.msg, "the integer 'D'"));
  demangle_ok("_Z12tf_layernormILi0ELi1ELi32ELi1ELi0ELi0ELi0ELi1EEvPKfS1_S1_Pfiii", &sig);
  assert_int_equal(iface_check(s, &sig, "ln", 0, &e), -1);
  assert_non_null(strstr(e.msg, "key 'args[6]'"));
  spec_release(s);
  free(s);
}

static void template_params_should_come_from_the_source(void **state) {
  char dir[512], path[600], names[5][SPEC_NAME];
  tf_err e = {0};
  snprintf(dir, sizeof dir, "%s", (const char *)*state);
  snprintf(path, sizeof path, "%s/examples/softmax/templates/softmax.cu", source_dir());
  assert_int_equal(iface_template_params(path, "tf_softmax", names, 5, &e), 5);
  assert_string_equal(names[0], "BLOCK");
  assert_string_equal(names[2], "ROWS");
  assert_string_equal(names[3], "HOLD");
  assert_string_equal(names[4], "LOAD");
  snprintf(path, sizeof path, "%s/t.cu", dir);
  write_file(dir, "t.cu",
             "// template <int X> __global__ void k(int n);  a comment\n"
             "#define K(x) k(x)\n"
             "template <int B = (1 > 0), typename T, unsigned int A>\n"
             "__global__ void __launch_bounds__(A) k(int n) {}\n");
  assert_int_equal(iface_template_params(path, "k", names, 4, &e), 3);
  assert_string_equal(names[0], "B");
  assert_string_equal(names[1], "T");
  assert_string_equal(names[2], "A");
  write_file(dir, "t.cu", "template <int, int> __global__ void k(int n);\n");
  assert_int_equal(iface_template_params(path, "k", names, 4, &e), 0);
  write_file(dir, "t.cu", "/* template <int A> __global__ void k(int n) */\n");
  assert_int_equal(iface_template_params(path, "k", names, 4, &e), 0);

  spec *s = malloc(sizeof *s);
  assert_non_null(s);
  load_spec("examples/softmax/templates/softmax.json", s);
  char order[5][SPEC_NAME] = {"BLOCK", "VEC", "ROWS", "HOLD", "LOAD"};
  assert_int_equal(iface_check_knob_names(s, order, 5, &e), 0);
  char swapped[5][SPEC_NAME] = {"BLOCK", "ROWS", "VEC", "HOLD", "LOAD"};
  assert_int_equal(iface_check_knob_names(s, swapped, 5, &e), -1);
  assert_int_equal(e.code, TF_EXIT_INPUT);
  assert_non_null(strstr(e.msg, "key 'knobs'"));
  assert_non_null(
      strstr(e.msg, "(BLOCK, ROWS, VEC, HOLD, LOAD), the spec's knobs are (BLOCK, VEC, ROWS, HOLD, LOAD)"));
  spec_release(s);
  free(s);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test_setup_teardown(demangle_should_read_the_names_nvrtc_lowers,
                                      fresh_cache_setup, fresh_cache_teardown),
      cmocka_unit_test(demangle_should_read_hand_written_names),
      cmocka_unit_test(demangle_should_say_what_it_cannot_read),
      cmocka_unit_test(check_should_accept_the_kernel_that_fits),
      cmocka_unit_test(check_should_name_the_key_and_both_sides),
      cmocka_unit_test(check_should_type_untyped_scalars_by_kind),
      cmocka_unit_test_setup_teardown(template_params_should_come_from_the_source,
                                      fresh_cache_setup, fresh_cache_teardown),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
