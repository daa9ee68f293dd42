/* Unit tests of common/spec.c: loading templates and committed kernels, the
 * static checks, launch geometry and name expressions.
 *
 * The real templates are read from $TF_SOURCE_DIR; every other spec is
 * written by the test into a scratch folder (a small JSON beside a tiny .cu),
 * and each bad spec is the good one with exactly one edit. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <ctype.h>
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common/expr.h"
#include "common/spec.h"
#include "tests/unit/testutil.h"

/* ------------------------------------------------------------------ scratch folder */

typedef struct fixture {
  char dir[256];
  char path[512]; /* dir/toy.json */
} fixture;

static int setup(void **state) {
  fixture *f = calloc(1, sizeof *f);
  if (!f) return -1;
  snprintf(f->dir, sizeof f->dir, "/tmp/tf-test-spec-XXXXXX");
  if (!mkdtemp(f->dir)) return -1;
  snprintf(f->path, sizeof f->path, "%s/toy.json", f->dir);
  *state = f;
  return 0;
}

static int teardown(void **state) {
  fixture *f = *state;
  rm_rf(f->dir);
  free(f);
  return 0;
}


/* ------------------------------------------------------------------ the toy spec */

/* Two knobs, one dimension, two constraints (one on a knob, one on the problem),
 * an output buffer cleared on a condition and every kind of argument. */
static const char toy_json[] =
    "{\n"
    "  \"name\": \"toy\",\n"
    "  \"doc\": \"unit test spec\",\n"
    "  \"source\": \"toy.cu\",\n"
    "  \"kernel\": \"toy_kernel\",\n"
    "  \"problem\": {\"N\": [1, 1048576]},\n"
    "  \"knobs\": {\n"
    "    \"T\": {\"values\": [32, 64, 128], \"labels\": [\"one warp\", \"two\", \"four\"], \"doc\": \"threads\"},\n"
    "    \"U\": {\"values\": [1, 2]}\n"
    "  },\n"
    "  \"constraints\": [\n"
    "    {\"name\": \"two_warps\", \"expr\": \"T >= 64\", \"reason\": \"at least two warps\"},\n"
    "    {\"name\": \"unroll_divides\", \"expr\": \"N % U == 0\", \"reason\": \"no remainder loop\"}\n"
    "  ],\n"
    "  \"launch\": {\"grid\": [\"ceil_div(N, T*U)\", \"1\", \"1\"], \"block\": [\"T\", \"1\", \"1\"], \"smem\": \"4*T\"},\n"
    "  \"buffers\": [\n"
    "    {\"name\": \"x\", \"count\": \"N\", \"role\": \"input\"},\n"
    "    {\"name\": \"y\", \"count\": \"N\", \"role\": \"output\", \"clear\": \"U > 1\"}\n"
    "  ],\n"
    "  \"args\": [\"x\", \"y\", \"N\", \"T*U\", {\"float\": 0.5}],\n"
    "  \"tolerance\": 1e-4,\n"
    "  \"flops\": \"2*N\",\n"
    "  \"bytes\": \"8*N\"\n"
    "}\n";

static const char toy_cu[] =
    "template <int T, int U>\n"
    "__global__ void toy_kernel(const float *x, float *y, int n, int step, float a) {}\n";

/* Write `json` as toy.json (and toy.cu beside it) and load it. */
static int load_text(fixture *f, const char *json, spec *s, tf_err *e) {
  write_file(f->dir, "toy.cu", toy_cu);
  write_file(f->dir, "toy.json", json);
  memset(e, 0, sizeof *e);
  return spec_load(s, f->path, e);
}

static void load_toy(fixture *f, spec *s) {
  tf_err e;
  if (load_text(f, toy_json, s, &e)) fail_msg("toy spec did not load: %s", e.msg);
}

static config cfg2(long long t, long long u) {
  config c = {2, {t, u}};
  return c;
}

/* ------------------------------------------------------------------ the real templates */

/* The int template parameters of `kernel` in a .cu file: the `template <...>` that
 * introduces its __global__ definition. Returns their number. */
static int cu_template_params(const char *cu, const char *kernel, char names[][SPEC_NAME], int max) {
  FILE *fp = fopen(cu, "r");
  if (!fp) fail_msg("cannot open '%s'", cu);
  static char src[1 << 20];
  size_t len = fread(src, 1, sizeof src - 1, fp);
  fclose(fp);
  src[len] = '\0';
  const char *def = NULL, *g = src;
  size_t kl = strlen(kernel);
  while (!def && (g = strstr(g, "__global__"))) {
    const char *k = strstr(g, kernel);
    if (k && k - g < 200 && k[kl] == '(') def = g;
    g++;
  }
  if (!def) fail_msg("no __global__ definition of '%s' in '%s'", kernel, cu);
  const char *t = NULL;
  for (const char *p = src; (p = strstr(p, "template")) && p < def; p++) t = p;
  if (!t) fail_msg("'%s' in '%s' is not a template", kernel, cu);
  const char *lt = strchr(t, '<'), *gt = strchr(t, '>');
  assert_non_null(lt);
  assert_non_null(gt);
  int n = 0;
  for (const char *p = lt + 1; p < gt && n < max;) {
    char type[16], name[SPEC_NAME];
    int used = 0;
    if (sscanf(p, " %15[a-z] %47[A-Za-z0-9_]%n", type, name, &used) != 2)
      fail_msg("cannot read the template parameters of '%s'", kernel);
    if (strcmp(type, "int") != 0) fail_msg("parameter '%s' of '%s' is not an int", name, kernel);
    snprintf(names[n++], SPEC_NAME, "%s", name);
    p += used;
    while (p < gt && (*p == ',' || isspace((unsigned char)*p))) p++;
  }
  return n;
}

static void assert_knobs_follow_the_template(const spec *s) {
  char names[SPEC_MAX_KNOBS + 4][SPEC_NAME];
  int n = cu_template_params(s->source_path, s->kernel, names, SPEC_MAX_KNOBS + 4);
  assert_int_equal(n, s->nknobs);
  for (int k = 0; k < n; k++)
    if (strcmp(names[k], s->knobs[k].name) != 0)
      fail_msg("'%s': knob %d is '%s' but template parameter %d is '%s'", s->path, k,
               s->knobs[k].name, k, names[k]);
}

static void spec_should_load_the_matmul_template(void **state) {
  (void)state;
  static spec s;
  load_spec("templates/matmul.json", &s);
  static const char *const knobs[] = {"BM", "BN", "BK", "TM", "TN", "AK", "VEC", "STAGING", "PIPE", "SPLITK", "WARP", "KSLICE", "FRAG"};
  assert_int_equal(s.nknobs, 13);
  for (int k = 0; k < 13; k++) assert_string_equal(s.knobs[k].name, knobs[k]);
  assert_knobs_follow_the_template(&s);
  assert_string_equal(s.name, "matmul");
  assert_string_equal(s.kernel, "tf_matmul");
  assert_string_equal(s.ref_kernel, "ref_matmul");
  /* BK keeps the four steps of the foundation issue and adds cuBLAS's 8 */
  int bk = spec_knob_index(&s, "BK");
  assert_int_equal(s.knobs[bk].nvalues, 5);
  assert_int_equal(s.knobs[bk].values[0], 8);
  assert_int_equal(s.knobs[bk].values[1], 16);
  assert_int_equal(s.knobs[bk].values[4], 128);
  assert_int_equal(s.ndims, 3);
  assert_string_equal(s.dims[0].name, "M");
  assert_string_equal(s.dims[1].name, "N");
  assert_string_equal(s.dims[2].name, "K");
  assert_int_equal(s.nbuffers, 3);
  assert_int_equal(s.bufs[2].output, 1);
  assert_int_equal(s.bufs[0].output, 0);
  assert_int_equal(s.nargs, 6);
  assert_int_equal(s.args[0].kind, SPEC_ARG_BUFFER);
  assert_int_equal(s.args[3].kind, SPEC_ARG_INT);
  assert_true(s.nconstraints > 0);
  for (int i = 0; i < s.nconstraints; i++) assert_true(strlen(s.cons[i].reason) > 0);
  spec_release(&s);
}

static void spec_should_load_the_layernorm_template(void **state) {
  (void)state;
  static spec s;
  load_spec("templates/layernorm.json", &s);
  static const char *const knobs[] = {"FORM",  "WARPS", "BLOCK", "VEC",
                                      "RSQRT", "CACHE", "HINT",  "ROWS"};
  assert_int_equal(s.nknobs, 8);
  for (int k = 0; k < 8; k++) assert_string_equal(s.knobs[k].name, knobs[k]);
  assert_knobs_follow_the_template(&s);
  assert_string_equal(s.kernel, "tf_layernorm");
  assert_string_equal(s.ref_kernel, "ref_layernorm");
  assert_int_equal(s.ndims, 2);
  assert_string_equal(s.dims[0].name, "R");
  assert_string_equal(s.dims[1].name, "D");
  assert_int_equal(s.nbuffers, 4);
  assert_int_equal(s.bufs[3].output, 1);
  assert_int_equal(s.nargs, 7);
  assert_int_equal(s.args[6].kind, SPEC_ARG_FLOAT);
  assert_true(s.args[6].f == 1e-5);
  int vec = spec_knob_index(&s, "VEC");
  assert_string_equal(s.knobs[vec].labels[2], "float4");
  spec_release(&s);
}

static void spec_should_load_every_committed_kernel_without_knobs(void **state) {
  (void)state;
  char dir[1024];
  snprintf(dir, sizeof dir, "%s/kernels", source_dir());
  DIR *d = opendir(dir);
  assert_non_null(d);
  struct dirent *de;
  int n = 0;
  while ((de = readdir(d))) {
    size_t l = strlen(de->d_name);
    if (l < 6 || strcmp(de->d_name + l - 5, ".json") != 0) continue;
    static spec s;
    char rel[512];
    snprintf(rel, sizeof rel, "kernels/%s", de->d_name);
    load_spec(rel, &s);
    assert_int_equal(s.nknobs, 0);
    char name[256];
    config none = {0, {0}};
    assert_int_equal(spec_name_expr(&s, &none, name, sizeof name), 0);
    assert_string_equal(name, s.kernel);
    spec_release(&s);
    n++;
  }
  closedir(d);
  assert_true(n >= 4);
}

/* ------------------------------------------------------------------ a minimal spec */

static void spec_should_load_every_key_of_a_minimal_spec(void **state) {
  fixture *f = *state;
  static spec s;
  load_toy(f, &s);
  assert_string_equal(s.path, f->path);
  char want[1024];
  snprintf(want, sizeof want, "%s/toy.cu", f->dir);
  assert_string_equal(s.source_path, want);
  assert_string_equal(s.name, "toy");
  assert_string_equal(s.kernel, "toy_kernel");
  assert_int_equal(spec_has_reference(&s), 0); /* a campaign's template needs one */
  assert_int_equal(s.ndims, 1);
  assert_string_equal(s.dims[0].name, "N");
  assert_int_equal(s.dims[0].lo, 1);
  assert_int_equal(s.dims[0].hi, 1048576);
  /* knobs, in file order, values and labels */
  assert_int_equal(s.nknobs, 2);
  assert_string_equal(s.knobs[0].name, "T");
  assert_int_equal(s.knobs[0].nvalues, 3);
  assert_int_equal(s.knobs[0].values[2], 128);
  assert_string_equal(s.knobs[0].labels[0], "one warp");
  assert_string_equal(s.knobs[1].name, "U");
  assert_int_equal(s.knobs[1].nvalues, 2);
  assert_string_equal(s.knobs[1].labels[0], "");
  assert_int_equal(spec_knob_index(&s, "U"), 1);
  assert_int_equal(spec_knob_index(&s, "N"), -1);
  assert_int_equal(spec_dim_index(&s, "N"), 0);
  assert_int_equal(spec_value_index(&s, 0, 64), 1);
  assert_int_equal(spec_value_index(&s, 0, 48), -1);
  /* constraints keep their name, text and reason */
  assert_int_equal(s.nconstraints, 2);
  assert_string_equal(s.cons[0].name, "two_warps");
  assert_string_equal(s.cons[0].text, "T >= 64");
  assert_string_equal(s.cons[1].reason, "no remainder loop");
  assert_non_null(s.cons[1].e);
  /* launch */
  assert_string_equal(s.grid_text[0], "ceil_div(N, T*U)");
  assert_string_equal(s.block_text[0], "T");
  assert_string_equal(s.smem_text, "4*T");
  /* buffers */
  assert_int_equal(s.nbuffers, 2);
  assert_string_equal(s.bufs[0].name, "x");
  assert_int_equal(s.bufs[0].output, 0);
  assert_null(s.bufs[0].clear);
  assert_int_equal(s.bufs[1].output, 1);
  assert_string_equal(s.bufs[1].clear_text, "U > 1");
  /* args: two buffers, two integer expressions, one float */
  assert_int_equal(s.nargs, 5);
  assert_int_equal(s.args[0].kind, SPEC_ARG_BUFFER);
  assert_int_equal(s.args[0].buffer, 0);
  assert_int_equal(s.args[1].kind, SPEC_ARG_BUFFER);
  assert_int_equal(s.args[1].buffer, 1);
  assert_int_equal(s.args[2].kind, SPEC_ARG_INT);
  assert_string_equal(s.args[3].text, "T*U");
  assert_int_equal(s.args[4].kind, SPEC_ARG_FLOAT);
  assert_true(s.args[4].f == 0.5);
  assert_true(s.tolerance == 1e-4);
  assert_string_equal(s.flops_text, "2*N");
  long long dims[1] = {1000}, v = -1;
  config c = cfg2(64, 2);
  tf_err e = {0};
  assert_int_equal(spec_eval(&s, s.flops, dims, &c, &v, &e), 0);
  assert_int_equal(v, 2000);
  assert_int_equal(spec_eval(&s, NULL, dims, &c, &v, &e), 0);
  assert_int_equal(v, 0);
  spec_release(&s);
  assert_int_equal(s.nknobs, 0);
  assert_string_equal(s.path, f->path); /* release keeps the path for messages */
}

static void spec_should_default_the_optional_keys(void **state) {
  fixture *f = *state;
  static spec s;
  char *a = subst(toy_json, ", \"smem\": \"4*T\"", "");
  char *b = subst(a, "  \"tolerance\": 1e-4,\n", "");
  char *c = subst(b, "    {\"name\": \"two_warps\", \"expr\": \"T >= 64\", \"reason\": \"at least two warps\"},\n"
                     "    {\"name\": \"unroll_divides\", \"expr\": \"N % U == 0\", \"reason\": \"no remainder loop\"}\n",
                  "");
  tf_err e;
  if (load_text(f, c, &s, &e)) fail_msg("did not load: %s", e.msg);
  assert_string_equal(s.smem_text, "0");
  assert_true(s.tolerance == 1e-5);
  assert_int_equal(s.nconstraints, 0);
  spec_release(&s);
  free(a);
  free(b);
  free(c);
}

/* ------------------------------------------------------------------ every spec error */

typedef struct bad_case {
  const char *what, *from, *to;
  const char *want[2]; /* substrings the message must hold */
} bad_case;

static const bad_case bad_cases[] = {
    {"missing key", "  \"kernel\": \"toy_kernel\",\n", "", {"key 'kernel' is missing", NULL}},
    {"misspelt top-level key", "  \"buffers\": [", "  \"bufferz\": [", {"unknown key 'bufferz'", NULL}},
    {"wrong type (number for string)", "\"kernel\": \"toy_kernel\"", "\"kernel\": 2",
     {"key 'kernel' must be a string", NULL}},
    {"wrong type (string for number)", "\"tolerance\": 1e-4", "\"tolerance\": \"tight\"",
     {"key 'tolerance' must be a number", NULL}},
    {"wrong type (array for object)", "\"problem\": {\"N\": [1, 1048576]}", "\"problem\": [1, 1048576]",
     {"key 'problem' must be an object", NULL}},
    {"wrong type (values not an array)", "\"values\": [1, 2]", "\"values\": 2",
     {"key 'knobs.U.values' must be an array", NULL}},
    {"non-integer knob value", "\"values\": [1, 2]", "\"values\": [1, 2.5]",
     {"key 'knobs.U.values' must hold integers", NULL}},
    {"unknown top-level key", "  \"doc\":", "  \"colour\": \"red\",\n  \"doc\":",
     {"unknown key 'colour'", NULL}},
    {"unknown knob key", "\"values\": [1, 2]", "\"values\": [1, 2], \"step\": 1",
     {"unknown key 'knobs.U.step'", NULL}},
    {"unknown constraint key", "\"reason\": \"at least two warps\"",
     "\"reason\": \"at least two warps\", \"why\": \"x\"", {"unknown key 'constraints[0].why'", NULL}},
    {"duplicate knob value", "[32, 64, 128]", "[32, 64, 32]", {"key 'knobs.T.values' repeats 32", NULL}},
    {"labels of the wrong length", "[\"one warp\", \"two\", \"four\"]", "[\"one warp\", \"two\"]",
     {"key 'knobs.T.labels' must have one label per value", NULL}},
    {"expression syntax", "\"T >= 64\"", "\"T >= * 64\"", {"key 'constraints[0].expr'", "column 6"}},
    {"unknown name in a constraint", "\"T >= 64\"", "\"T >= BX\"",
     {"key 'constraints[0].expr': column 6: unknown name 'BX'", NULL}},
    {"unknown name in the launch", "\"block\": [\"T\",", "\"block\": [\"TT\",",
     {"key 'launch.block[0]': column 1: unknown name 'TT'", NULL}},
    {"unknown name in a buffer count", "\"count\": \"N\", \"role\": \"input\"",
     "\"count\": \"N*Q\", \"role\": \"input\"", {"key 'buffers[0].count': column 3: unknown name 'Q'", NULL}},
    {"unknown name in an argument", "\"T*U\",", "\"T*V\",", {"key 'args[3]': column 3: unknown name 'V'", NULL}},
    {"source in the parent folder", "\"source\": \"toy.cu\"", "\"source\": \"../toy.cu\"",
     {"key 'source'", "not a path"}},
    {"source as an absolute path", "\"source\": \"toy.cu\"", "\"source\": \"/etc/passwd\"",
     {"key 'source'", "not a path"}},
    {"source in a subfolder", "\"source\": \"toy.cu\"", "\"source\": \"sub/toy.cu\"",
     {"key 'source'", "not a path"}},
    {"source that does not exist", "\"source\": \"toy.cu\"", "\"source\": \"nosuch.cu\"",
     {"key 'source': cannot open", NULL}},
    {"name not matching the file", "\"name\": \"toy\"", "\"name\": \"other\"",
     {"key 'name': 'other' must match the file name", NULL}},
    {"name with a prefix of the file's", "\"name\": \"toy\"", "\"name\": \"to\"",
     {"key 'name'", "must match the file name"}},
    {"no output buffer", "\"role\": \"output\"", "\"role\": \"input\"",
     {"key 'buffers' has no output buffer", NULL}},
    {"unknown buffer role", "\"role\": \"output\"", "\"role\": \"bogus\"",
     {"key 'buffers[1].role'", NULL}},
    {"launch with two expressions", "\"grid\": [\"ceil_div(N, T*U)\", \"1\", \"1\"]",
     "\"grid\": [\"ceil_div(N, T*U)\", \"1\"]", {"key 'launch.grid' must list 3 expressions", NULL}},
    {"float argument with an extra key", "{\"float\": 0.5}", "{\"float\": 0.5, \"int\": 1}",
     {"key 'args[4]'", NULL}},
    {"knob named like a dimension", "\"U\": {\"values\": [1, 2]}", "\"N\": {\"values\": [1, 2]}",
     {"key 'knobs.N' has a problem dimension's name", NULL}},
    {"knob name that is not an identifier", "\"U\": {\"values\": [1, 2]}",
     "\"U-2\": {\"values\": [1, 2]}", {"key 'knobs.U-2'", "not a valid name"}},
    {"empty problem", "\"problem\": {\"N\": [1, 1048576]}", "\"problem\": {}",
     {"key 'problem' names no dimension", NULL}},
    {"inverted problem range", "[1, 1048576]", "[8, 4]", {"key 'problem.N' must be integers", NULL}},
    {"tolerance out of range", "\"tolerance\": 1e-4", "\"tolerance\": 2", {"key 'tolerance'", NULL}},
    {"constraint without a reason", "\"reason\": \"no remainder loop\"", "\"reason\": \"\"",
     {"key 'constraints[1].reason' must say why", NULL}},
    {"duplicate knob name", "\"U\": {\"values\": [1, 2]}", "\"U\": {\"values\": [1, 2]}, \"T\": {\"values\": [1, 2]}",
     {"key 'knobs.T'", "more than once"}},
    {"duplicate problem dimension", "\"N\": [1, 1048576]", "\"N\": [1, 1048576], \"N\": [1, 8]",
     {"key 'problem.N'", "more than once"}},
    {"duplicate buffer name", "{\"name\": \"y\", \"count\"", "{\"name\": \"x\", \"count\"",
     {"key 'buffers[1].name'", "more than once"}},
    /* Numbers are cast to integers only when they are whole and in range */
    {"smem of 1e300", "\"smem\": \"4*T\"", "\"smem\": 1e300",
     {"key 'launch.smem' must be an expression string or a whole number", NULL}},
    {"fractional grid", "\"grid\": [\"ceil_div(N, T*U)\", \"1\"", "\"grid\": [\"ceil_div(N, T*U)\", 1.5",
     {"key 'launch.grid[1]' must be an expression string or a whole number", NULL}},
    {"fractional block", "\"block\": [\"T\"", "\"block\": [1000.7", {"key 'launch.block[0]'", "whole number"}},
    {"huge knob default", "\"values\": [1, 2]}", "\"values\": [1, 2], \"default\": 1e300}",
     {"key 'knobs.U.default' must be one of the knob's values", NULL}},
    {"fractional problem range", "[1, 1048576]", "[1, 1048576.5]", {"key 'problem.N' must be integers", NULL}},
    {"float argument beyond a float", "{\"float\": 0.5}", "{\"float\": 1e300}",
     {"key 'args[4].float' is beyond a float's range", NULL}},
    /* A key given twice anywhere is refused, not read as its first copy */
    {"duplicate top-level key", "  \"tolerance\": 1e-4,\n", "  \"tolerance\": 1e-4,\n  \"tolerance\": 0.5,\n",
     {"key 'tolerance' appears more than once", NULL}},
    /* found by fuzz_template: the count's tree leaked when the clear did not parse */
    {"buffer clear that does not parse", "\"clear\": \"U > 1\"", "\"clear\": \"U >\"",
     {"key 'buffers[1].clear'", NULL}},
    /* "family" named a built-in reference, which tunefarm no longer has */
    {"a family", "\"kernel\": \"toy_kernel\",", "\"kernel\": \"toy_kernel\", \"family\": \"scale2\",",
     {"key 'family': tunefarm has no built-in references", "'reference'"}},
    {"duplicate constraint key", "\"expr\": \"T >= 64\",", "\"expr\": \"T >= 64\", \"expr\": \"1\",",
     {"key 'constraints[0].expr' appears more than once", NULL}},
    /* text that reaches ledgers and reports: UTF-8, and one line where it prints as one */
    {"reason not UTF-8 (a stray byte)", "\"reason\": \"no remainder loop\"",
     "\"reason\": \"no remainder \xff loop\"", {"key 'constraints[1].reason' is not valid UTF-8", NULL}},
    {"reason not UTF-8 (overlong '/')", "\"reason\": \"no remainder loop\"",
     "\"reason\": \"no remainder \xC0\xAF loop\"", {"key 'constraints[1].reason' is not valid UTF-8", NULL}},
    {"doc not UTF-8 (a surrogate)", "\"doc\": \"unit test spec\"", "\"doc\": \"unit \xED\xA0\x80 test\"",
     {"key 'doc' is not valid UTF-8", NULL}},
    {"label not UTF-8 (past U+10FFFF)", "\"two\", \"four\"", "\"two\", \"f\xF4\x90\x80\x80our\"",
     {"key 'knobs.T.labels[2]' is not valid UTF-8", NULL}},
    {"constraint name not UTF-8 (cut short)", "\"name\": \"two_warps\"", "\"name\": \"two_warps\xE2\x82\"",
     {"key 'constraints[0].name' is not valid UTF-8", NULL}},
    {"a key not UTF-8", "\"values\": [1, 2]}", "\"values\": [1, 2], \"d\xFF" "oc\": \"x\"}",
     {"a key of 'knobs.U' is not valid UTF-8", NULL}},
    {"newline in a reason", "\"reason\": \"no remainder loop\"", "\"reason\": \"no remainder\\nloop\"",
     {"key 'constraints[1].reason' holds a control character", NULL}},
    {"escape sequence in a constraint name", "\"name\": \"two_warps\"", "\"name\": \"two\\u001b[2J\"",
     {"key 'constraints[0].name' holds a control character", NULL}},
    {"C1 control in a reason", "\"reason\": \"no remainder loop\"", "\"reason\": \"no \\u009b2J loop\"",
     {"key 'constraints[1].reason' holds a control character", NULL}},
    {"newline in a label", "\"two\", \"four\"", "\"two\", \"fo\\nur\"",
     {"key 'knobs.T.labels[2]' holds a control character", NULL}},
};

static void spec_should_refuse_each_bad_spec_naming_the_file_and_key(void **state) {
  fixture *f = *state;
  for (size_t i = 0; i < sizeof bad_cases / sizeof bad_cases[0]; i++) {
    const bad_case *b = &bad_cases[i];
    static spec s;
    tf_err e;
    char *text = subst(toy_json, b->from, b->to);
    int rc = load_text(f, text, &s, &e);
    free(text);
    if (rc == 0) {
      spec_release(&s);
      fail_msg("%s: the spec loaded", b->what);
    }
    assert_int_equal(rc, -1);
    if (e.code != TF_EXIT_INPUT) fail_msg("%s: code %d, not bad input: %s", b->what, e.code, e.msg);
    if (!strstr(e.msg, f->path)) fail_msg("%s: the message does not name the file: %s", b->what, e.msg);
    for (int w = 0; w < 2; w++)
      if (b->want[w] && !strstr(e.msg, b->want[w]))
        fail_msg("%s: the message lacks \"%s\": %s", b->what, b->want[w], e.msg);
  }
}

/* What one-line text may hold: any character of UTF-8 but the controls (U+00A0, U+10FFFF),
 * and a tab. */
static void spec_should_accept_utf8_and_tabs_in_one_line_text(void **state) {
  fixture *f = *state;
  static spec s;
  tf_err e;
  char *t = subst(toy_json, "\"reason\": \"no remainder loop\"",
                  "\"reason\": \"N \xE2\x89\xA5 U,\\tno r\xC3\xA9ste \xC2\xA0\xF4\x8F\xBF\xBF\"");
  if (load_text(f, t, &s, &e)) fail_msg("%s", e.msg);
  free(t);
  assert_string_equal(s.cons[1].reason, "N \xE2\x89\xA5 U,\tno r\xC3\xA9ste \xC2\xA0\xF4\x8F\xBF\xBF");
  spec_release(&s);
}

static void spec_should_refuse_a_missing_or_malformed_file(void **state) {
  fixture *f = *state;
  static spec s;
  tf_err e = {0};
  assert_int_equal(spec_load(&s, f->path, &e), -1); /* nothing written yet */
  assert_int_equal(e.code, TF_EXIT_INPUT);
  assert_non_null(strstr(e.msg, "cannot open"));
  char trunc[200];
  snprintf(trunc, sizeof trunc, "%.120s", toy_json);
  assert_int_equal(load_text(f, trunc, &s, &e), -1);
  assert_non_null(strstr(e.msg, "not valid JSON"));
  assert_int_equal(load_text(f, "[1, 2]\n", &s, &e), -1);
  assert_non_null(strstr(e.msg, "top level must be a JSON object"));
}

/* A spec with n knobs K0..K(n-1) of one value each. */
static char *spec_with_knobs(int n) {
  size_t cap = 4096;
  char *t = malloc(cap);
  assert_non_null(t);
  size_t len = (size_t)snprintf(t, cap,
                                "{\"name\": \"toy\", \"source\": \"toy.cu\", \"kernel\": \"toy_kernel\","
                                " \"problem\": {\"N\": [1, 100]}, \"knobs\": {");
  for (int k = 0; k < n; k++)
    len += (size_t)snprintf(t + len, cap - len, "%s\"K%d\": {\"values\": [%d]}", k ? ", " : "", k, k);
  snprintf(t + len, cap - len,
           "}, \"launch\": {\"grid\": [1, 1, 1], \"block\": [32, 1, 1]},"
           " \"buffers\": [{\"name\": \"x\", \"count\": \"N\", \"role\": \"input\"},"
           " {\"name\": \"y\", \"count\": \"N\", \"role\": \"output\"}], \"args\": [\"x\", \"y\"]}");
  return t;
}

static void spec_should_load_knobs_up_to_a_configs_capacity(void **state) {
  fixture *f = *state;
  static spec s;
  tf_err e;
  char *t = spec_with_knobs(SPEC_MAX_KNOBS);
  if (load_text(f, t, &s, &e)) fail_msg("%d knobs did not load: %s", SPEC_MAX_KNOBS, e.msg);
  assert_int_equal(s.nknobs, SPEC_MAX_KNOBS);
  assert_string_equal(s.knobs[SPEC_MAX_KNOBS - 1].name, "K31");
  spec_release(&s);
  free(t);
  t = spec_with_knobs(64);
  assert_int_equal(load_text(f, t, &s, &e), -1);
  assert_int_equal(e.code, TF_EXIT_INPUT);
  assert_non_null(strstr(e.msg, "key 'knobs' declares 64 entries, more than the limit of 32"));
  assert_non_null(strstr(e.msg, "toy.json"));
  free(t);
}

/* ------------------------------------------------------------------ checks */

static void spec_check_should_name_the_first_broken_constraint(void **state) {
  fixture *f = *state;
  static spec s;
  load_toy(f, &s);
  tf_err e = {0};
  int bad = 99;
  long long even[1] = {1000}, odd[1] = {1001};
  config c;
  c = cfg2(64, 1);
  assert_int_equal(spec_check(&s, even, &c, &bad, &e), 0);
  assert_int_equal(bad, -1);
  c = cfg2(32, 1);
  assert_int_equal(spec_check(&s, even, &c, &bad, &e), 0);
  assert_int_equal(bad, 0);
  c = cfg2(128, 2);
  assert_int_equal(spec_check(&s, odd, &c, &bad, &e), 0);
  assert_int_equal(bad, 1);
  c = cfg2(32, 2); /* breaks both: the first is named */
  assert_int_equal(spec_check(&s, odd, &c, &bad, &e), 0);
  assert_int_equal(bad, 0);
  spec_release(&s);
}

static void spec_check_all_should_give_every_verdict(void **state) {
  fixture *f = *state;
  static spec s;
  load_toy(f, &s);
  tf_err e = {0};
  long long even[1] = {1000}, odd[1] = {1001};
  unsigned char broken[2] = {7, 7};
  config c = cfg2(32, 2);
  assert_int_equal(spec_check_all(&s, odd, &c, broken, &e), 0);
  assert_int_equal(broken[0], 1);
  assert_int_equal(broken[1], 1);
  assert_int_equal(spec_check_all(&s, even, &c, broken, &e), 0);
  assert_int_equal(broken[0], 1);
  assert_int_equal(broken[1], 0);
  c = cfg2(64, 2);
  assert_int_equal(spec_check_all(&s, odd, &c, broken, &e), 0);
  assert_int_equal(broken[0], 0);
  assert_int_equal(broken[1], 1);
  c = cfg2(128, 1);
  assert_int_equal(spec_check_all(&s, odd, &c, broken, &e), 0);
  assert_int_equal(broken[0] | broken[1], 0);
  spec_release(&s);
}

static void spec_check_should_fail_when_a_constraint_cannot_be_evaluated(void **state) {
  fixture *f = *state;
  static spec s;
  char *t = subst(toy_json, "\"N % U == 0\"", "\"N / (T - 32) >= 0\"");
  tf_err e;
  if (load_text(f, t, &s, &e)) fail_msg("did not load: %s", e.msg);
  free(t);
  long long dims[1] = {1000};
  int bad = 5;
  unsigned char broken[2];
  config c = cfg2(64, 1);
  assert_int_equal(spec_check(&s, dims, &c, &bad, &e), 0);
  assert_int_equal(bad, -1);
  c = cfg2(32, 1); /* T - 32 == 0, but constraint 0 already refuses: check stops there */
  assert_int_equal(spec_check(&s, dims, &c, &bad, &e), 0);
  assert_int_equal(bad, 0);
  memset(&e, 0, sizeof e);
  assert_int_equal(spec_check_all(&s, dims, &c, broken, &e), -1);
  assert_non_null(strstr(e.msg, "constraints[1].expr"));
  assert_non_null(strstr(e.msg, "division by zero"));
  assert_non_null(strstr(e.msg, "T=32 U=1"));
  spec_release(&s);
}

/* ------------------------------------------------------------------ launch geometry */

static void spec_launch_should_evaluate_geometry_buffers_and_arguments(void **state) {
  fixture *f = *state;
  static spec s;
  load_toy(f, &s);
  tf_err e = {0};
  launch_geom g;
  long long dims[1] = {1000};
  config c = cfg2(64, 2);
  if (spec_launch(&s, dims, &c, &g, &e)) fail_msg("%s", e.msg);
  assert_int_equal(g.grid[0], 8); /* ceil(1000 / 128) */
  assert_int_equal(g.grid[1], 1);
  assert_int_equal(g.grid[2], 1);
  assert_int_equal(g.block[0], 64);
  assert_int_equal(g.block[1], 1);
  assert_int_equal(g.smem, 256);
  assert_int_equal(g.count[0], 1000);
  assert_int_equal(g.count[1], 1000);
  assert_int_equal(g.clear[0], 0);
  assert_int_equal(g.clear[1], 1);
  assert_int_equal(g.iarg[2], 1000);
  assert_int_equal(g.iarg[3], 128);
  c = cfg2(128, 1);
  if (spec_launch(&s, dims, &c, &g, &e)) fail_msg("%s", e.msg);
  assert_int_equal(g.grid[0], 8);
  assert_int_equal(g.block[0], 128);
  assert_int_equal(g.smem, 512);
  assert_int_equal(g.clear[1], 0);
  assert_int_equal(g.iarg[3], 128);
  spec_release(&s);
}

static void spec_launch_should_match_the_matmul_tiles(void **state) {
  (void)state;
  static spec s;
  load_spec("templates/matmul.json", &s);
  long long dims[3] = {1024, 1024, 1024};
  /* the start of campaigns/matmul-1024.json, then its cp.async x2 twin */
  config c = {12, {64, 64, 64, 4, 8, 0, 1, 2, 0, 1, 0, 1}};
  launch_geom g;
  tf_err e = {0};
  if (spec_launch(&s, dims, &c, &g, &e)) fail_msg("%s", e.msg);
  assert_int_equal(g.grid[0], 16);
  assert_int_equal(g.grid[1], 16);
  assert_int_equal(g.grid[2], 1);
  assert_int_equal(g.block[0], 128); /* (64/4) * (64/8) */
  assert_int_equal(g.smem, 0);
  assert_int_equal(g.count[0], 1024 * 1024);
  assert_int_equal(g.clear[2], 0);
  c.v[8] = 2;                        /* PIPE */
  c.v[9] = 2;                        /* SPLITK */
  if (spec_launch(&s, dims, &c, &g, &e)) fail_msg("%s", e.msg);
  assert_int_equal(g.grid[2], 2);
  assert_int_equal(g.smem, 2 * 4 * (64 * (64 + 4) + 64 * 64));
  assert_int_equal(g.clear[2], 1); /* split-K adds into C */
  c.v[11] = 2;                     /* KSLICE: two thread groups share the tile */
  if (spec_launch(&s, dims, &c, &g, &e)) fail_msg("%s", e.msg);
  assert_int_equal(g.block[0], 256);
  spec_release(&s);
}

typedef struct launch_case {
  const char *what, *from, *to;
  long long n, t;
  const char *want;
} launch_case;

static const launch_case launch_cases[] = {
    {"more than 1024 threads", "\"block\": [\"T\", \"1\", \"1\"]", "\"block\": [\"T\", \"T\", \"1\"]",
     1000, 64, "key 'launch.block': more than 1024 threads"},
    {"one dimension over 1024", "\"block\": [\"T\", \"1\", \"1\"]", "\"block\": [\"T*32\", \"1\", \"1\"]",
     1000, 64, "key 'launch.block[0]' evaluates to 2048"},
    {"an empty block", "\"block\": [\"T\", \"1\", \"1\"]", "\"block\": [\"T\", \"0\", \"1\"]", 1000, 64,
     "key 'launch.block[1]' evaluates to 0"},
    {"a zero grid", "\"grid\": [\"ceil_div(N, T*U)\", \"1\", \"1\"]",
     "\"grid\": [\"N / 4096\", \"1\", \"1\"]", 1000, 64, "key 'launch.grid[0]' evaluates to 0"},
    {"a grid.y over 65535", "\"grid\": [\"ceil_div(N, T*U)\", \"1\", \"1\"]",
     "\"grid\": [\"1\", \"N\", \"1\"]", 65536, 64, "key 'launch.grid[1]' evaluates to 65536"},
    {"too much shared memory", "\"smem\": \"4*T\"", "\"smem\": \"4096*T\"", 1000, 64,
     "key 'launch.smem' evaluates to 262144"},
    {"an absurd buffer", "{\"name\": \"x\", \"count\": \"N\"", "{\"name\": \"x\", \"count\": \"N*N*N\"",
     1048576, 64, "key 'buffers[0].count' gives 1152921504606846976 elements"},
    {"a buffer count that overflows", "{\"name\": \"x\", \"count\": \"N\"",
     "{\"name\": \"x\", \"count\": \"N*N*N*N\"", 1048576, 64, "overflow"},
    {"an empty buffer", "{\"name\": \"x\", \"count\": \"N\"", "{\"name\": \"x\", \"count\": \"N - N\"",
     1000, 64, "key 'buffers[0].count' gives 0 elements"},
    {"an argument that does not fit an int", "\"T*U\",", "\"N*N\",", 1048576, 64,
     "key 'args[3]' does not fit an int"},
};

static void spec_launch_should_refuse_empty_or_absurd_launches(void **state) {
  fixture *f = *state;
  for (size_t i = 0; i < sizeof launch_cases / sizeof launch_cases[0]; i++) {
    const launch_case *lc = &launch_cases[i];
    static spec s;
    tf_err e;
    char *text = subst(toy_json, lc->from, lc->to);
    if (load_text(f, text, &s, &e)) fail_msg("%s: did not load: %s", lc->what, e.msg);
    free(text);
    long long dims[1] = {lc->n};
    config c = cfg2(lc->t, 1);
    launch_geom g;
    memset(&e, 0, sizeof e);
    int rc = spec_launch(&s, dims, &c, &g, &e);
    spec_release(&s);
    if (rc == 0) fail_msg("%s: launch accepted", lc->what);
    if (!strstr(e.msg, lc->want)) fail_msg("%s: message lacks \"%s\": %s", lc->what, lc->want, e.msg);
    if (!strstr(e.msg, "toy.json")) fail_msg("%s: message does not name the file: %s", lc->what, e.msg);
  }
}

/* check tabulates the launch value by value: the values are spec_launch's, in its order, each
 * reading the knobs its expressions name. */
static void spec_launch_values_should_be_what_spec_launch_computes(void **state) {
  fixture *f = *state;
  static spec s;
  load_toy(f, &s);
  spec_launch_value v[SPEC_LAUNCH_VALUES];
  int n = spec_launch_values(&s, v);
  static const char *const keys[] = {"launch.grid[0]", "launch.block[0]", "launch.grid[1]",
                                     "launch.block[1]", "launch.grid[2]", "launch.block[2]",
                                     "launch.block", "launch.smem", "buffers[0].count",
                                     "buffers[1].count", "buffers[1].clear", "args[2]", "args[3]"};
  assert_int_equal(n, sizeof keys / sizeof keys[0]);
  long long dims[1] = {1000};
  config c = cfg2(64, 2);
  launch_geom g;
  tf_err e = {0};
  if (spec_launch(&s, dims, &c, &g, &e)) fail_msg("%s", e.msg);
  const long long want[] = {g.grid[0], g.block[0], g.grid[1], g.block[1], g.grid[2], g.block[2],
                            64, g.smem, g.count[0], g.count[1], g.clear[1], g.iarg[2], g.iarg[3]};
  for (int i = 0; i < n; i++) {
    char buf[32];
    long long x;
    assert_string_equal(spec_launch_value_key(&v[i], buf, sizeof buf), keys[i]);
    if (spec_launch_value_eval(&s, &v[i], dims, &c, &x, &e)) fail_msg("%s", e.msg);
    if (v[i].kind == SPEC_VALUE_CLEAR) x = x != 0;
    if (x != want[i]) fail_msg("%s: %lld, spec_launch %lld", keys[i], x, want[i]);
  }
  unsigned char used[SPEC_MAX_KNOBS];
  memset(used, 0, sizeof used);
  assert_int_equal(spec_launch_value_knobs(&s, &v[0], used), 0); /* ceil_div(N, T*U) */
  assert_true(used[0] && used[1]);
  memset(used, 0, sizeof used);
  assert_int_equal(spec_launch_value_knobs(&s, &v[6], used), 0); /* the threads: T * 1 * 1 */
  assert_true(used[0] && !used[1]);
  memset(used, 0, sizeof used);
  assert_int_equal(spec_launch_value_knobs(&s, &v[8], used), 0); /* N: no knob */
  assert_true(!used[0] && !used[1]);
  spec_release(&s);
}

static void spec_launch_should_accept_exactly_1024_threads(void **state) {
  fixture *f = *state;
  static spec s;
  tf_err e;
  char *text = subst(toy_json, "\"block\": [\"T\", \"1\", \"1\"]", "\"block\": [\"T\", \"T\", \"1\"]");
  if (load_text(f, text, &s, &e)) fail_msg("did not load: %s", e.msg);
  free(text);
  long long dims[1] = {1000};
  config c = cfg2(32, 1);
  launch_geom g;
  if (spec_launch(&s, dims, &c, &g, &e)) fail_msg("32 x 32 refused: %s", e.msg);
  assert_int_equal(g.block[0] * g.block[1], 1024);
  spec_release(&s);
}

/* ------------------------------------------------------------------ names */

static void spec_name_expr_should_list_the_knob_values_in_order(void **state) {
  fixture *f = *state;
  static spec s;
  load_toy(f, &s);
  char buf[64];
  config c = cfg2(128, 2);
  assert_int_equal(spec_name_expr(&s, &c, buf, sizeof buf), 0);
  assert_string_equal(buf, "toy_kernel<128, 2>");
  assert_int_equal(spec_name_expr(&s, &c, buf, 10), -1); /* too small: refused, not cut */
  assert_int_equal(spec_name_expr(&s, &c, buf, strlen("toy_kernel<128, 2>")), -1);
  assert_int_equal(spec_name_expr(&s, &c, buf, strlen("toy_kernel<128, 2>") + 1), 0);
  spec_config_str(&s, &c, buf, sizeof buf);
  assert_string_equal(buf, "T=128 U=2");
  spec_release(&s);

  static spec m;
  load_spec("templates/matmul.json", &m);
  config mc = {13, {64, 64, 64, 4, 8, 0, 1, 2, 0, 1, 1, 2, 1}};
  char name[256];
  assert_int_equal(spec_name_expr(&m, &mc, name, sizeof name), 0);
  assert_string_equal(name, "tf_matmul<64, 64, 64, 4, 8, 0, 1, 2, 0, 1, 1, 2, 1>");
  spec_release(&m);
}

/* ------------------------------------------------------------------ configurations */

static void spec_config_from_json_should_want_every_knob_from_its_domain(void **state) {
  fixture *f = *state;
  static spec s;
  load_toy(f, &s);
  tf_err e = {0};
  config c;
  cJSON *o = cJSON_Parse("{\"U\": 2, \"T\": 64}");
  assert_int_equal(spec_config_from_json(&s, o, "campaign", "c.json", "start", &c, &e), 0);
  assert_int_equal(c.n, 2);
  assert_int_equal(c.v[0], 64);
  assert_int_equal(c.v[1], 2);
  cJSON *back = spec_config_to_json(&s, &c);
  config c2;
  assert_int_equal(spec_config_from_json(&s, back, "campaign", "c.json", "start", &c2, &e), 0);
  assert_true(config_equal(&c, &c2));
  cJSON_Delete(back);
  cJSON_Delete(o);
  static const struct {
    const char *json, *want;
  } bad[] = {
      {"{\"T\": 64}", "key 'start.U' is missing"},
      {"{\"T\": 48, \"U\": 1}", "key 'start.T': 48 is not in the knob's domain {32, 64, 128}"},
      {"{\"T\": 64, \"U\": 1, \"V\": 1}", "key 'start.V': template 'toy' has no knob 'V'"},
      {"{\"T\": \"64\", \"U\": 1}", "key 'start.T' must be an integer"},
      {"[64, 1]", "key 'start' must be an object"},
  };
  for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
    o = cJSON_Parse(bad[i].json);
    assert_non_null(o);
    memset(&e, 0, sizeof e);
    assert_int_equal(spec_config_from_json(&s, o, "campaign", "c.json", "start", &c, &e), -1);
    assert_int_equal(e.code, TF_EXIT_INPUT);
    if (!strstr(e.msg, bad[i].want)) fail_msg("%s: message lacks \"%s\": %s", bad[i].json, bad[i].want, e.msg);
    /* named as every other key of the campaign is: "campaign 'c.json': key ..." */
    if (strncmp(e.msg, "campaign 'c.json': key '", 24) != 0) fail_msg("not named as a campaign's key: %s", e.msg);
    cJSON_Delete(o);
  }
  config a = cfg2(64, 1), b = cfg2(64, 2);
  assert_false(config_equal(&a, &b));
  b.n = 1;
  a.n = 1;
  assert_true(config_equal(&a, &b));
  spec_release(&s);
}

/* A knob added to a template later names a default, so that campaigns and ledgers written
 * before it still load and mean the kernel they measured; a knob without one stays required. */
static void spec_config_from_json_should_fill_a_missing_knob_from_its_default(void **state) {
  fixture *f = *state;
  static spec s;
  tf_err e = {0};
  char *text = subst(toy_json, "\"U\": {\"values\": [1, 2]}", "\"U\": {\"values\": [1, 2], \"default\": 2}");
  if (load_text(f, text, &s, &e)) fail_msg("did not load: %s", e.msg);
  free(text);
  config c;
  cJSON *o = cJSON_Parse("{\"T\": 64}");
  assert_int_equal(spec_config_from_json(&s, o, "campaign", "c.json", "start", &c, &e), 0);
  assert_int_equal(c.v[0], 64);
  assert_int_equal(c.v[1], 2);
  cJSON_Delete(o);
  o = cJSON_Parse("{\"U\": 1}");
  assert_int_equal(spec_config_from_json(&s, o, "campaign", "c.json", "start", &c, &e), -1);
  assert_non_null(strstr(e.msg, "key 'start.T' is missing"));
  cJSON_Delete(o);
  spec_release(&s);

  text = subst(toy_json, "\"U\": {\"values\": [1, 2]}", "\"U\": {\"values\": [1, 2], \"default\": 3}");
  memset(&e, 0, sizeof e);
  assert_int_equal(load_text(f, text, &s, &e), -1);
  free(text);
  assert_int_equal(e.code, TF_EXIT_INPUT);
  if (!strstr(e.msg, "key 'knobs.U.default' must be one of the knob's values"))
    fail_msg("message: %s", e.msg);
}

/* ------------------------------------------------------------------ typed buffers, reference kernel */

/* The toy with a reference kernel, buffers of several types, roles,
 * fills and checks, and typed scalars. */
static char *typed_json(void) {
  char *a = subst(toy_json, "\"kernel\": \"toy_kernel\",",
                  "\"kernel\": \"toy_kernel\", "
                  "\"reference\": {\"kernel\": \"toy_ref\", \"source\": \"toy_ref.cu\", "
                  "\"launch\": {\"grid\": [\"N\", \"1\", \"1\"], \"block\": [1, 1, 1]}},");
  char *b = subst(a,
                  "    {\"name\": \"x\", \"count\": \"N\", \"role\": \"input\"},\n"
                  "    {\"name\": \"y\", \"count\": \"N\", \"role\": \"output\", \"clear\": \"U > 1\"}\n",
                  "    {\"name\": \"x\", \"count\": \"N\", \"role\": \"input\", \"type\": \"f16\", "
                  "\"init\": {\"normal\": [0, 2]}},\n"
                  "    {\"name\": \"idx\", \"count\": \"N\", \"role\": \"input\", \"type\": \"i32\", "
                  "\"init\": {\"int\": [\"0\", \"N - 1\"]}},\n"
                  "    {\"name\": \"y\", \"count\": \"N\", \"role\": \"output\", \"type\": \"bf16\", "
                  "\"check\": {\"rtol\": 1e-2, \"atol\": 0}},\n"
                  "    {\"name\": \"z\", \"count\": \"N\", \"role\": \"inout\", \"type\": \"f64\", "
                  "\"check\": \"exact\", \"allow_nonfinite\": true, \"init\": {\"const\": 3}},\n"
                  "    {\"name\": \"w\", \"count\": \"N\", \"role\": \"scratch\", \"type\": \"u8\"}\n");
  char *c = subst(b, "\"args\": [\"x\", \"y\", \"N\", \"T*U\", {\"float\": 0.5}]",
                  "\"args\": [\"x\", \"y\", \"N\", \"N\", {\"float\": 0.5}, "
                  "{\"name\": \"eps\", \"type\": \"f32\", \"value\": \"1e-5\"}, "
                  "{\"name\": \"n2\", \"type\": \"i64\", \"value\": \"N*N\"}]");
  free(a);
  free(b);
  return c;
}

static int load_typed(fixture *f, const char *json, spec *s, tf_err *e) {
  write_file(f->dir, "toy_ref.cu", "__global__ void toy_ref(const float *x, float *y) {}\n");
  return load_text(f, json, s, e);
}

static void spec_should_load_typed_buffers_fills_checks_and_a_reference_kernel(void **state) {
  fixture *f = *state;
  static spec s;
  tf_err e;
  char *json = typed_json();
  int rc = load_typed(f, json, &s, &e);
  free(json);
  if (rc) fail_msg("typed spec did not load: %s", e.msg);
  assert_int_equal(spec_has_reference(&s), 1);
  assert_string_equal(s.ref_kernel, "toy_ref");
  assert_non_null(strstr(s.ref_source_path, "toy_ref.cu"));
  assert_int_equal(s.nbuffers, 5);
  assert_int_equal(s.bufs[0].type, REFERENCE_F16);
  assert_int_equal(s.bufs[0].init.kind, REFERENCE_INIT_NORMAL);
  assert_true(s.bufs[0].init.a == 0 && s.bufs[0].init.b == 2);
  assert_int_equal(s.bufs[1].init.kind, REFERENCE_INIT_INT);
  assert_int_equal(s.bufs[2].type, REFERENCE_BF16);
  assert_int_equal(s.bufs[2].check.kind, REFERENCE_CHECK_TOL);
  assert_true(s.bufs[2].check.rtol == 1e-2 && s.bufs[2].output);
  assert_int_equal(s.bufs[3].role, SPEC_ROLE_INOUT);
  assert_true(s.bufs[3].output && s.bufs[3].check.allow_nonfinite);
  assert_int_equal(s.bufs[3].check.kind, REFERENCE_CHECK_EXACT);
  assert_int_equal(s.bufs[3].init.kind, REFERENCE_INIT_CONST);
  assert_int_equal(s.bufs[4].role, SPEC_ROLE_SCRATCH);
  assert_false(s.bufs[4].output);
  assert_int_equal(s.args[4].type, -1); /* {"float": x} stays untyped */
  assert_int_equal(s.args[5].kind, SPEC_ARG_FLOAT);
  assert_int_equal(s.args[5].type, REFERENCE_F32);
  assert_true(s.args[5].f == 1e-5);
  assert_int_equal(s.args[6].kind, SPEC_ARG_INT);
  assert_int_equal(s.args[6].type, REFERENCE_I64);
  launch_geom g;
  long long dims[1] = {100000};
  config c = cfg2(64, 1);
  if (spec_launch(&s, dims, &c, &g, &e)) fail_msg("launch: %s", e.msg);
  assert_int_equal(g.init_lo[1], 0);
  assert_int_equal(g.init_hi[1], 99999);
  assert_int_equal(g.iarg[6], 10000000000LL); /* beyond an int: an i64 holds it */
  if (spec_reference_launch(&s, dims, &g, &e)) fail_msg("reference launch: %s", e.msg);
  assert_int_equal(g.grid[0], 100000);
  assert_int_equal(g.block[0], 1);
  assert_int_equal(g.iarg[2], 100000);
  spec_release(&s);
}

static void spec_launch_should_refuse_an_int_fill_beyond_its_type(void **state) {
  fixture *f = *state;
  static spec s;
  tf_err e;
  char *json = typed_json(), *bad = subst(json, "\"type\": \"i32\"", "\"type\": \"i8\"");
  int rc = load_typed(f, bad, &s, &e);
  free(json);
  free(bad);
  if (rc) fail_msg("did not load: %s", e.msg);
  launch_geom g;
  long long dims[1] = {100};
  config c = cfg2(64, 1);
  assert_int_equal(spec_launch(&s, dims, &c, &g, &e), 0); /* [0, 99] fits i8 */
  dims[0] = 1000;
  assert_int_equal(spec_launch(&s, dims, &c, &g, &e), -1);
  assert_int_equal(e.code, TF_EXIT_INPUT);
  assert_non_null(strstr(e.msg, "key 'buffers[1].init.int' gives [0, 999]"));
  spec_release(&s);
}

static const bad_case typed_bad_cases[] = {
    {"unknown type", "\"type\": \"f16\"", "\"type\": \"f15\"", {"key 'buffers[0].type' must be one of", NULL}},
    {"type not a string", "\"type\": \"f16\"", "\"type\": 16", {"key 'buffers[0].type' must be a string", NULL}},
    {"init on an output", "\"type\": \"bf16\",", "\"type\": \"bf16\", \"init\": {\"const\": 1},",
     {"key 'buffers[2].init': only an input or inout buffer is filled", NULL}},
    {"init on scratch", "\"type\": \"u8\"}", "\"type\": \"u8\", \"init\": {\"const\": 1}}",
     {"key 'buffers[4].init': only an input", NULL}},
    {"unknown init", "{\"normal\": [0, 2]}", "{\"poisson\": [0, 2]}", {"key 'buffers[0].init.poisson' is not one of", NULL}},
    {"two inits", "{\"normal\": [0, 2]}", "{\"normal\": [0, 2], \"const\": 1}", {"key 'buffers[0].init' must be one of", NULL}},
    {"normal without a spread", "{\"normal\": [0, 2]}", "{\"normal\": [0, 0]}", {"key 'buffers[0].init.normal' must have sd > 0", NULL}},
    {"uniform the wrong way round", "{\"normal\": [0, 2]}", "{\"uniform\": [1, -1]}", {"key 'buffers[0].init.uniform' must have lo < hi", NULL}},
    {"uniform of one number", "{\"normal\": [0, 2]}", "{\"uniform\": [1]}", {"key 'buffers[0].init.uniform' must be [lo, hi]", NULL}},
    {"int range naming a knob", "\"N - 1\"", "\"T - 1\"", {"key 'buffers[1].init.int[1]' may name only problem sizes", NULL}},
    {"int range of an unknown name", "\"N - 1\"", "\"Q - 1\"", {"key 'buffers[1].init.int[1]'", "unknown name 'Q'"}},
    {"const not a number", "{\"const\": 3}", "{\"const\": \"3\"}", {"key 'buffers[3].init.const' must be a finite number", NULL}},
    {"check on an input", "\"init\": {\"normal\": [0, 2]}", "\"init\": {\"normal\": [0, 2]}, \"check\": \"exact\"",
     {"key 'buffers[0].check': only an output or inout buffer is checked", NULL}},
    {"allow_nonfinite on scratch", "\"type\": \"u8\"}", "\"type\": \"u8\", \"allow_nonfinite\": true}",
     {"key 'buffers[4].allow_nonfinite': only an output", NULL}},
    {"unknown check word", "\"check\": \"exact\"", "\"check\": \"close\"", {"key 'buffers[3].check' must be \"exact\"", NULL}},
    {"unknown check key", "{\"rtol\": 1e-2, \"atol\": 0}", "{\"rtol\": 1e-2, \"ulps\": 2}", {"unknown key 'buffers[2].check.ulps'", NULL}},
    {"negative rtol", "{\"rtol\": 1e-2, \"atol\": 0}", "{\"rtol\": -1e-2}", {"key 'buffers[2].check.rtol'", NULL}},
    {"allow_nonfinite not a bool", "\"allow_nonfinite\": true", "\"allow_nonfinite\": 1", {"key 'buffers[3].allow_nonfinite' must be", NULL}},
    {"unknown scalar type", "\"type\": \"f32\", \"value\"", "\"type\": \"float\", \"value\"", {"key 'args[5].type' must be one of", NULL}},
    {"float scalar not a number", "\"value\": \"1e-5\"", "\"value\": \"1e-5x\"", {"key 'args[5].value' must be a finite number", NULL}},
    {"scalar without a value", ", \"value\": \"1e-5\"", "", {"key 'args[5].value' is missing", NULL}},
    {"scalar without a name", "\"name\": \"eps\", ", "", {"key 'args[5].name' is missing", NULL}},
    {"unknown scalar key", "\"name\": \"eps\",", "\"name\": \"eps\", \"unit\": 1,", {"unknown key 'args[5].unit'", NULL}},
    {"int argument naming a knob", "\"N\", \"N\", {\"float\"", "\"N\", \"T*U\", {\"float\"",
     {"key 'args[3]' may name only problem sizes", NULL}},
    {"family beside a reference", "\"reference\":", "\"family\": \"scale2\", \"reference\":", {"key 'family'", "no built-in references"}},
    {"reference source as a path", "\"source\": \"toy_ref.cu\"", "\"source\": \"../toy_ref.cu\"", {"key 'reference.source'", "not a path"}},
    {"reference source missing", "\"source\": \"toy_ref.cu\"", "\"source\": \"nosuch.cu\"", {"key 'reference.source': cannot open", NULL}},
    {"reference kernel not a name", "\"kernel\": \"toy_ref\"", "\"kernel\": \"toy ref\"", {"key 'reference.kernel'", NULL}},
    {"reference without a launch", ", \"launch\": {\"grid\": [\"N\", \"1\", \"1\"], \"block\": [1, 1, 1]}", "", {"key 'reference.launch' is missing", NULL}},
    {"reference grid naming a knob", "\"grid\": [\"N\", \"1\", \"1\"], \"block\": [1, 1, 1]", "\"grid\": [\"N/T\", \"1\", \"1\"], \"block\": [1, 1, 1]",
     {"key 'reference.launch.grid[0]' may name only problem sizes", NULL}},
    {"reference block of two", "\"block\": [1, 1, 1]", "\"block\": [1, 1]", {"key 'reference.launch.block' must list 3", NULL}},
    {"unknown reference key", "\"kernel\": \"toy_ref\",", "\"kernel\": \"toy_ref\", \"tolerance\": 1,", {"unknown key 'reference.tolerance'", NULL}},
};

/* Each case's substitution in `good` is refused as bad input naming the file and its key. */
static void refuse_each(fixture *f, const char *good, const bad_case *cases, size_t n) {
  for (size_t i = 0; i < n; i++) {
    const bad_case *b = &cases[i];
    static spec s;
    tf_err e;
    if (!strstr(good, b->from)) fail_msg("%s: '%s' is not in the spec", b->what, b->from);
    char *text = subst(good, b->from, b->to);
    int rc = load_typed(f, text, &s, &e);
    free(text);
    if (rc == 0) {
      spec_release(&s);
      fail_msg("%s: the spec loaded", b->what);
    }
    if (e.code != TF_EXIT_INPUT) fail_msg("%s: code %d, not bad input: %s", b->what, e.code, e.msg);
    if (!strstr(e.msg, f->path)) fail_msg("%s: the message does not name the file: %s", b->what, e.msg);
    for (int w = 0; w < 2; w++)
      if (b->want[w] && !strstr(e.msg, b->want[w]))
        fail_msg("%s: the message lacks \"%s\": %s", b->what, b->want[w], e.msg);
  }
}

static void spec_should_refuse_each_bad_typed_spec_naming_the_file_and_key(void **state) {
  char *good = typed_json();
  refuse_each(*state, good, typed_bad_cases, sizeof typed_bad_cases / sizeof typed_bad_cases[0]);
  free(good);
}

/* ------------------------------------------------------------------ tensor maps */

/* The toy with two tensor maps: x as 4*U rows of N/4, box T/U x 4; y, box 8. */
static char *tmap_json(void) {
  char *a = subst(toy_json, "\"kernel\": \"toy_kernel\",",
                  "\"kernel\": \"toy_kernel\", "
                  "\"reference\": {\"kernel\": \"toy_ref\", \"source\": \"toy_ref.cu\", "
                  "\"launch\": {\"grid\": [\"N\", \"1\", \"1\"], \"block\": [1, 1, 1]}},");
  char *b = subst(a, "\"args\": [\"x\", \"y\", \"N\", \"T*U\", {\"float\": 0.5}]",
                  "\"args\": [\"x\", {\"name\": \"tx\", \"tensormap\": {\"buffer\": \"x\", \"dims\": "
                  "[\"N/4\", \"4*U\"], \"box\": [\"T/U\", 4], \"swizzle\": 128}}, \"y\", {\"name\": \"t1\", "
                  "\"tensormap\": {\"buffer\": \"y\", \"dims\": [\"N\"], \"box\": [8]}}, \"N\"]");
  free(a);
  return b;
}

static void spec_should_load_tensor_maps_and_launch_them(void **state) {
  fixture *f = *state;
  static spec s;
  tf_err e;
  char *json = tmap_json();
  int rc = load_typed(f, json, &s, &e);
  free(json);
  if (rc) fail_msg("tensor-map spec did not load: %s", e.msg);
  assert_int_equal(s.ntmaps, 2);
  assert_int_equal(s.args[1].kind, SPEC_ARG_TMAP);
  assert_int_equal(s.args[1].buffer, 0);
  assert_int_equal(s.args[1].rank, 2);
  assert_int_equal(s.args[1].swizzle, 128);
  assert_int_equal(s.args[3].tmap, 1);
  assert_int_equal(s.args[3].swizzle, 0);
  launch_geom g;
  long long dims[1] = {4096};
  config c = cfg2(32, 1);
  if (spec_launch(&s, dims, &c, &g, &e)) fail_msg("launch: %s", e.msg);
  assert_int_equal(g.tmap_dim[0][0], 1024);
  assert_int_equal(g.tmap_dim[0][1], 4);
  assert_int_equal(g.tmap_box[0][0], 32);
  assert_int_equal(g.tmap_box[0][1], 4);
  assert_int_equal(g.tmap_dim[1][0], 4096);
  assert_int_equal(g.tmap_box[1][0], 8);
  static const struct {
    long long n, t, u;
    const char *want;
  } bad[] = {{4100, 32, 1, "a row (dims[0] elements) is not a multiple of 16 bytes"},
             {4096, 64, 1, "the box's inner extent exceeds the swizzle"},
             {4096, 32, 2, "its dimensions hold more elements than the buffer"}};
  for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
    dims[0] = bad[i].n;
    c = cfg2(bad[i].t, bad[i].u);
    assert_int_equal(spec_launch(&s, dims, &c, &g, &e), -1);
    assert_int_equal(e.code, TF_EXIT_INPUT);
    if (!strstr(e.msg, "key 'args[1].tensormap'") || !strstr(e.msg, bad[i].want))
      fail_msg("case %zu: %s", i, e.msg);
  }
  char err[128];
  expr_free(s.args[3].box[0]);
  s.args[3].box[0] = expr_parse("3", err, sizeof err); /* 12 bytes */
  dims[0] = 4096;
  c = cfg2(32, 1);
  assert_int_equal(spec_launch(&s, dims, &c, &g, &e), -1);
  if (!strstr(e.msg, "key 'args[3].tensormap': the box's inner extent is not a multiple of 16"))
    fail_msg("box of 12 bytes: %s", e.msg);
  spec_release(&s);
}

static const bad_case tmap_bad_cases[] = {
    {"no buffer", "\"buffer\": \"x\"", "\"buffer\": \"q\"", {"key 'args[1].tensormap.buffer': no buffer is named 'q'", NULL}},
    {"unknown key", "\"swizzle\": 128", "\"swizzle\": 128, \"fill\": 0", {"unknown key 'args[1].tensormap.fill'", NULL}},
    {"bad swizzle", "\"swizzle\": 128", "\"swizzle\": 16", {"key 'args[1].tensormap.swizzle' must be 0, 32, 64 or 128", NULL}},
    {"box of another rank", "\"box\": [\"T/U\", 4]", "\"box\": [\"T/U\"]", {"key 'args[1].tensormap.box' must list as many", NULL}},
    {"six dimensions", "\"dims\": [\"N\"]", "\"dims\": [1, 1, 1, 1, 1, \"N\"]", {"key 'args[3].tensormap.dims' must list 1 to 5", NULL}},
};

static void spec_should_refuse_each_bad_tensor_map_naming_the_file_and_key(void **state) {
  char *good = tmap_json();
  refuse_each(*state, good, tmap_bad_cases, sizeof tmap_bad_cases / sizeof tmap_bad_cases[0]);
  free(good);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(spec_should_load_the_matmul_template),
      cmocka_unit_test_setup_teardown(spec_should_load_typed_buffers_fills_checks_and_a_reference_kernel,
                                      setup, teardown),
      cmocka_unit_test_setup_teardown(spec_launch_should_refuse_an_int_fill_beyond_its_type, setup,
                                      teardown),
      cmocka_unit_test_setup_teardown(spec_should_refuse_each_bad_typed_spec_naming_the_file_and_key,
                                      setup, teardown),
      cmocka_unit_test_setup_teardown(spec_should_load_tensor_maps_and_launch_them, setup, teardown),
      cmocka_unit_test_setup_teardown(spec_should_refuse_each_bad_tensor_map_naming_the_file_and_key,
                                      setup, teardown),
      cmocka_unit_test(spec_should_load_the_layernorm_template),
      cmocka_unit_test(spec_should_load_every_committed_kernel_without_knobs),
      cmocka_unit_test_setup_teardown(spec_should_load_every_key_of_a_minimal_spec, setup, teardown),
      cmocka_unit_test_setup_teardown(spec_should_default_the_optional_keys, setup, teardown),
      cmocka_unit_test_setup_teardown(spec_should_refuse_each_bad_spec_naming_the_file_and_key, setup,
                                      teardown),
      cmocka_unit_test_setup_teardown(spec_should_refuse_a_missing_or_malformed_file, setup, teardown),
      cmocka_unit_test_setup_teardown(spec_should_accept_utf8_and_tabs_in_one_line_text, setup, teardown),
      cmocka_unit_test_setup_teardown(spec_should_load_knobs_up_to_a_configs_capacity, setup, teardown),
      cmocka_unit_test_setup_teardown(spec_check_should_name_the_first_broken_constraint, setup, teardown),
      cmocka_unit_test_setup_teardown(spec_check_all_should_give_every_verdict, setup, teardown),
      cmocka_unit_test_setup_teardown(spec_check_should_fail_when_a_constraint_cannot_be_evaluated, setup,
                                      teardown),
      cmocka_unit_test_setup_teardown(spec_launch_should_evaluate_geometry_buffers_and_arguments, setup,
                                      teardown),
      cmocka_unit_test(spec_launch_should_match_the_matmul_tiles),
      cmocka_unit_test_setup_teardown(spec_launch_should_refuse_empty_or_absurd_launches, setup, teardown),
      cmocka_unit_test_setup_teardown(spec_launch_values_should_be_what_spec_launch_computes, setup,
                                      teardown),
      cmocka_unit_test_setup_teardown(spec_launch_should_accept_exactly_1024_threads, setup, teardown),
      cmocka_unit_test_setup_teardown(spec_name_expr_should_list_the_knob_values_in_order, setup, teardown),
      cmocka_unit_test_setup_teardown(spec_config_from_json_should_want_every_knob_from_its_domain, setup,
                                      teardown),
      cmocka_unit_test_setup_teardown(spec_config_from_json_should_fill_a_missing_knob_from_its_default,
                                      setup, teardown),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
