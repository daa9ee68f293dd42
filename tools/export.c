/* export: NAME.h and NAME.cu from a search's final best (tools/export.h). */
#include "tools/export.h"

#include <ctype.h>
#include <errno.h>
#include <getopt.h>
#include <libgen.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common/jsonio.h"    /* defines: jsonio_slurp, JSONIO_MAX_BYTES */
#include "compile/program.h"   /* defines: program_of_job, program_request, program_compile */
#include "coordinator/job.h"  /* defines: job_init, job_set_template_arm */
#include "coordinator/ledger.h" /* defines: ledger_scan */
#include "coordinator/replay.h" /* defines: ledger_best_* */
#include "worker/backend.h"     /* defines: backend_simulated */
#include "worker/tmap.h"        /* defines: tmap_type_name */

#define EXPORT_EXPR 4096

/* ---- text of ledgers, campaigns and templates in generated code ----
 *
 * One rule for every string that reaches NAME.h or NAME.cu from a file: it is inert there.
 * In a comment, printable ASCII stays itself except '\', '*' and '?', which, like every other
 * byte (control characters, newlines, non-ASCII, invalid UTF-8), become the text \xHH: with
 * no '*' no comment can close or open, with no newline a line comment cannot end, with no
 * '\' no line can be spliced, with no '?' no trigraph forms. In a string literal, '"' and
 * '\' are escaped, '?' is \? (no trigraph), and every byte outside printable ASCII is an
 * octal escape of three digits (a digit after it cannot extend it). Names that are written
 * as code are C identifiers (check_identifier). Everything generated is printable ASCII and
 * newlines. */

static void c_comment_text(FILE *f, const char *text) {
  for (const unsigned char *p = (const unsigned char *)text; *p; p++) {
    if (*p < 0x20 || *p > 0x7e || *p == '\\' || *p == '*' || *p == '?') fprintf(f, "\\x%02x", *p);
    else fputc(*p, f);
  }
}

static void c_string(FILE *f, const char *text) {
  fputc('"', f);
  for (const unsigned char *p = (const unsigned char *)text; *p; p++) {
    if (*p == '"' || *p == '\\' || *p == '?') fprintf(f, "\\%c", *p);
    else if (*p < 0x20 || *p > 0x7e) fprintf(f, "\\%03o", *p);
    else fputc(*p, f);
  }
  fputc('"', f);
}

/* ---- names ----
 *
 * The user's names (problem sizes, buffers) reach NAME.cu only behind the prefix tf_p_, and
 * NAME.h only in comments, so they can meet neither the launcher's own names (the prefix
 * tf_l_, the helpers, the `ev` of common/expr.h's C) nor the includer's macros. The kernel's
 * name and NAME are code: C identifiers, no keyword, nothing reserved. */

#define EXPORT_PARAM "tf_p_"
#define EXPORT_LOCAL "tf_l_"

static int is_keyword(const char *s) {
  static const char *const kw[] = {
      "alignas", "alignof", "and", "and_eq", "asm", "auto", "bitand", "bitor", "bool", "break",
      "case", "catch", "char", "char8_t", "char16_t", "char32_t", "class", "co_await",
      "co_return", "co_yield", "compl", "concept", "const", "consteval", "constexpr",
      "constinit", "const_cast", "continue", "decltype", "default", "delete", "do", "double",
      "dynamic_cast", "else", "enum", "explicit", "export", "extern", "false", "float", "for",
      "friend", "goto", "if", "inline", "int", "long", "mutable", "namespace", "new",
      "noexcept", "not", "not_eq", "nullptr", "operator", "or", "or_eq", "private",
      "protected", "public", "register", "reinterpret_cast", "requires", "restrict", "return",
      "short", "signed", "sizeof", "static", "static_assert", "static_cast", "struct",
      "switch", "template", "this", "thread_local", "throw", "true", "try", "typedef",
      "typeid", "typename", "typeof", "typeof_unqual", "union", "unsigned", "using",
      "virtual", "void", "volatile", "wchar_t", "while", "xor", "xor_eq", NULL};
  for (int i = 0; kw[i]; i++)
    if (strcmp(s, kw[i]) == 0) return 1;
  return 0;
}

/* Why s cannot be written as a C or C++ name, or NULL when it can. */
static const char *identifier_flaw(const char *s) {
  if (!s[0] || !(isalpha((unsigned char)s[0]) || s[0] == '_'))
    return "is no C identifier (a letter or '_', then letters, digits and '_')";
  for (const char *p = s; *p; p++)
    if (!(isalnum((unsigned char)*p) || *p == '_'))
      return "is no C identifier (a letter or '_', then letters, digits and '_')";
  if (strlen(s) >= 64) return "is longer than 63 characters";
  if (is_keyword(s)) return "is a C or C++ keyword";
  if (s[0] == '_' && (s[1] == '_' || isupper((unsigned char)s[1])))
    return "is reserved to the compiler ('__' or '_' and a capital)";
  return NULL;
}

static int check_identifier(const char *file, const char *key, const char *s, tf_err *e) {
  const char *flaw = identifier_flaw(s);
  if (!flaw) return 0;
  char q[200];
  tf_escape(q, sizeof q, s);
  return tf_fail(e, TF_EXIT_INPUT, "%s: key '%s': '%s' %s, and export writes it as code", file,
                 key, q, flaw);
}

/* The kernel is called inside the launcher: it is none of the generated file's own names. */
static int check_kernel(const spec *s, const char *name, tf_err *e) {
  static const char *const own[] = {"ev", "tf_ev", "tf_div", "tf_mod", "tf_ceil_div",
                                    "tf_min", "tf_max", NULL};
  char file[SPEC_PATH + 16];
  snprintf(file, sizeof file, "template '%s'", s->path);
  if (check_identifier(file, "kernel", s->kernel, e)) return -1;
  size_t n = strlen(name);
  int clash = strncmp(s->kernel, EXPORT_PARAM, 5) == 0 || strncmp(s->kernel, EXPORT_LOCAL, 5) == 0 ||
              (strncmp(s->kernel, name, n) == 0 && s->kernel[n] == '_');
  for (int i = 0; own[i]; i++) clash |= strcmp(s->kernel, own[i]) == 0;
  if (clash)
    return tf_fail(e, TF_EXIT_INPUT, "%s: key 'kernel': '%s' is a name of the exported code "
                   "(%s_..., " EXPORT_PARAM "..., " EXPORT_LOCAL "..., ev and the tf_ helpers): "
                   "rename the kernel or export under another --name", file, s->kernel, name);
  return 0;
}

/* Every name of the template written into the files, checked before anything is written. */
static int check_names(const spec *s, const char *name, tf_err *e) {
  char file[SPEC_PATH + 16], key[96];
  snprintf(file, sizeof file, "template '%s'", s->path);
  for (int d = 0; d < s->ndims; d++) {
    snprintf(key, sizeof key, "problem.%s", s->dims[d].name);
    if (check_identifier(file, key, s->dims[d].name, e)) return -1;
  }
  for (int b = 0; b < s->nbuffers; b++) {
    snprintf(key, sizeof key, "buffers[%d].name", b);
    if (check_identifier(file, key, s->bufs[b].name, e)) return -1;
  }
  return check_kernel(s, name, e);
}

/* ---- expressions as C ---- */

typedef struct names_ctx {
  const spec *s;
  const config *cfg;
} names_ctx;

/* A knob is the exported configuration's constant, a problem size the function's parameter. */
static int c_name(void *ctx, const char *name, char *buf, size_t len) {
  const names_ctx *n = ctx;
  int k = spec_knob_index(n->s, name);
  if (k >= 0) return snprintf(buf, len, "%lldLL", n->cfg->v[k]) < (int)len ? 0 : -1;
  if (spec_dim_index(n->s, name) >= 0)
    return snprintf(buf, len, EXPORT_PARAM "%s", name) < (int)len ? 0 : -1;
  return -1;
}

/* Binds knobs only, so that expr_check_names finds the expressions that read a problem size. */
static int knob_only(void *ctx, const char *name, long long *out) {
  *out = 0;
  return spec_knob_index(ctx, name) >= 0 ? 0 : -1;
}

static int c_expr(const names_ctx *n, const expr *x, const char *what, char *out, tf_err *e) {
  if (expr_to_c(x, c_name, (void *)n, out, EXPORT_EXPR) == 0) return 0;
  return tf_fail(e, TF_EXIT_FAIL, "the expression of %s does not translate to C", what);
}

/* ---- the files ---- */

/* The declaration's "long long /\* M *\/, long long /\* N *\/": names in comments, where no
 * macro of the includer reaches them. The definition's "long long tf_p_M, ...". */
static void dim_params(FILE *f, const spec *s, int define) {
  for (int d = 0; d < s->ndims; d++) {
    fprintf(f, "%slong long ", d ? ", " : "");
    if (define) fprintf(f, EXPORT_PARAM "%s", s->dims[d].name);
    else fputs("/* ", f), c_comment_text(f, s->dims[d].name), fputs(" */", f);
  }
}

/* ---- element and scalar types ----
 *
 * A buffer is a pointer to its element type's C type, const where the kernel only reads it
 * (role input). NAME.h is C as well as C++ (extern "C"), and cuda_fp16.h and cuda_bf16.h
 * declare __half and __nv_bfloat16 for C++ alone: an f16 or bf16 buffer is a void pointer
 * in the launcher's signature, so that NAME.h includes nothing but cuda_runtime.h and builds
 * in a C file; NAME.cu includes those headers and passes the kernel typed pointers. */

static const char *c_type(int type) {
  static const char *const names[REFERENCE_NTYPES] = {
      [REFERENCE_F32] = "float", [REFERENCE_F64] = "double", [REFERENCE_F16] = "__half",
      [REFERENCE_BF16] = "__nv_bfloat16", [REFERENCE_I8] = "signed char",
      [REFERENCE_U8] = "unsigned char", [REFERENCE_I32] = "int", [REFERENCE_U32] = "unsigned int",
      [REFERENCE_I64] = "long long"};
  return type >= 0 && type < REFERENCE_NTYPES ? names[type] : "float";
}

/* Buffer b's pointee in the launcher's signature: its C type, or void for f16 and bf16,
 * const for an input. */
static void param_type(const spec_buffer *b, char *buf, size_t len) {
  int half = b->type == REFERENCE_F16 || b->type == REFERENCE_BF16;
  snprintf(buf, len, "%s%s", b->role == SPEC_ROLE_INPUT ? "const " : "",
           half ? "void" : c_type(b->type));
}

/* Whether any buffer or scalar of s has the type t (NAME.cu then includes its header). */
static int uses_type(const spec *s, int t) {
  for (int b = 0; b < s->nbuffers; b++)
    if (s->bufs[b].type == t) return 1;
  for (int a = 0; a < s->nargs; a++)
    if (s->args[a].kind != SPEC_ARG_BUFFER && s->args[a].type == t) return 1;
  return 0;
}

static int has_tmaps(const spec *s) {
  for (int a = 0; a < s->nargs; a++)
    if (s->args[a].kind == SPEC_ARG_TMAP) return 1;
  return 0;
}

static void buffer_params(FILE *f, const spec *s, int define) {
  for (int b = 0; b < s->nbuffers; b++) {
    char t[32];
    param_type(&s->bufs[b], t, sizeof t);
    fprintf(f, "%s *", t);
    if (define) fprintf(f, EXPORT_PARAM "%s, ", s->bufs[b].name);
    else fputs(" /* ", f), c_comment_text(f, s->bufs[b].name), fputs(" */, ", f);
  }
}

/* The header's list of the buffers: each one's element type and role. */
static void buffer_list(FILE *f, const spec *s) {
  static const char *const roles[] = {"input", "output", "inout", "scratch"};
  fputs(" * Buffers are device pointers in the template's order (const: read only; f16 and bf16\n"
        " * elements, __half of cuda_fp16.h and __nv_bfloat16 of cuda_bf16.h, as void pointers):\n", f);
  for (int b = 0; b < s->nbuffers; b++) {
    const spec_buffer *sb = &s->bufs[b];
    fputs(" *   ", f), c_comment_text(f, sb->name);
    fprintf(f, ": %s, %s\n", reference_type_name(sb->type),
            sb->role >= 0 && sb->role <= SPEC_ROLE_SCRATCH ? roles[sb->role] : "?");
  }
  fputs(" */\n", f);
}

static void provenance(FILE *f, const export_what *w) {
  const spec *s = &w->c->tmpl;
  char cfg[1024];
  spec_config_str(s, &w->cfg, cfg, sizeof cfg);
  fputs(" * Template '", f), c_comment_text(f, s->name), fputs("', configuration ", f);
  c_comment_text(f, cfg);
  fputs(".\n * Tuned by campaign '", f), c_comment_text(f, w->c->name), fputs("' at", f);
  for (int d = 0; d < s->ndims; d++) {
    fputc(' ', f), c_comment_text(f, s->dims[d].name);
    fprintf(f, "=%lld", w->c->dims[d]);
  }
  if (w->dev) {
    fputs(" on ", f), c_comment_text(f, w->dev->name), fputs(" (", f);
    c_comment_text(f, w->dev->uuid), fputs(")", f);
  }
  if (isfinite(w->us)) fprintf(f, ", %.2f us per launch (event span, L2 flushed)", w->us);
  fprintf(f, ".\n");
  if (w->ledger) fputs(" * Ledger: ", f), c_comment_text(f, w->ledger), fputs("\n", f);
}

/* An architecture NVRTC compiles machine code for: "sm_" and digits, then at most an 'a' or
 * 'f' ("sm_90a", "sm_100f"). */
static int valid_arch(const char *a) {
  if (strncmp(a, "sm_", 3) != 0 || !isdigit((unsigned char)a[3])) return 0;
  const char *p = a + 3;
  while (isdigit((unsigned char)*p)) p++;
  if (*p == 'a' || *p == 'f') p++;
  return *p == '\0' && p - a < 12;
}

/* nvcc's flags for arch: an arch-specific one ("sm_90a") as -gencode, since nvcc's -arch=sm_90a
 * also embeds plain compute_90 PTX, which a kernel using wgmma does not assemble to; for an
 * arch-specific template and no GPU named ("native", which is portable), that form with the
 * GPU's digits left to fill in. */
static void nvcc_arch(const char *arch, int specific, char *out, size_t len) {
  size_t n = strlen(arch);
  if (specific && strcmp(arch, "native") == 0)
    snprintf(out, len, "-gencode arch=compute_XXa,code=sm_XXa");
  else if (n > 3 && (arch[n - 1] == 'a' || arch[n - 1] == 'f'))
    snprintf(out, len, "-gencode arch=compute_%s,code=%s", arch + 3, arch);
  else
    snprintf(out, len, "-arch=%s", arch);
}

static int write_header(FILE *f, const export_what *w) {
  const spec *s = &w->c->tmpl;
  const char *nm = w->name;
  const char *arch = w->build_arch && valid_arch(w->build_arch) ? w->build_arch : "native";
  char flags[80];
  nvcc_arch(arch, s->arch_specific, flags, sizeof flags);
  fprintf(f, "/* %s: a kernel exported by `tunefarm export`; it needs nothing of tunefarm.\n", nm);
  provenance(f, w);
  fprintf(f, " * Build: nvcc -std=c++17 %s -c %s.cu (%s).\n", flags, nm,
          strcmp(arch, "native") == 0 && s->arch_specific
              ? "XX the GPU's compute capability: the template is arch-specific"
          : strcmp(arch, "native") == 0
              ? "the GPU of the machine that builds; name one, like -arch=sm_90, where it has none"
              : "the architecture it was tuned for; nvcc's default is older, and may lack what "
                "the kernel uses");
  if (w->lowered)
    fprintf(f, " * %s.cubin is NVRTC's build of it as the farm compiles it; %s_use_cubin loads it\n"
               " * (CUDA 12.6 or newer; older, it says cudaErrorNotSupported).\n", nm, nm);
  buffer_list(f, s);
  if (has_tmaps(s))
    fprintf(f, "/* Its tensor maps are made at each launch, by the driver's cuTensorMapEncodeTiled\n"
               " * through the runtime (no libcuda to link; CUDA 12.5 or newer to build). */\n");
  fprintf(f, "#ifndef %s_H\n#define %s_H\n\n#include <cuda_runtime.h>\n\n", nm, nm);
  fprintf(f, "#ifdef __cplusplus\nextern \"C\" {\n#endif\n\n");
  fprintf(f, "/* NULL when this configuration accepts the problem sizes, else why it refuses them. */\n");
  fprintf(f, "const char *%s_check(", nm);
  dim_params(f, s, 0);
  fprintf(f, ");\n\n/* Check, then launch on the stream; cudaErrorInvalidValue (nothing launched) for\n"
             " * sizes %s_check refuses. */\ncudaError_t %s_launch(", nm, nm);
  buffer_params(f, s, 0);
  dim_params(f, s, 0);
  fprintf(f, ", cudaStream_t /* stream */);\n\n");
  if (w->lowered)
    fprintf(f, "/* Launch NVRTC's build, the machine code the farm measures: load %s.cubin (for the\n"
               " * GPU it was tuned on; nvcc's build of %s.cu can run at another speed), so that\n"
               " * %s_launch launches it from then on. cudaSuccess, or why it cannot be used\n"
               " * (another GPU, a missing file): %s_launch then launches %s.cu's own build. NULL:\n"
               " * back to that build. Call it before launching, not beside a launch. */\n"
               "cudaError_t %s_use_cubin(const char * /* path */);\n\n", nm, nm, nm, nm, nm, nm);
  fprintf(f, "#ifdef __cplusplus\n}\n#endif\n\n#endif\n");
  return 0;
}

static const char helpers[] =
    "namespace {\n"
    "// The template language's arithmetic: a zero divisor is recorded, never undefined.\n"
    "struct tf_ev { int bad; };\n"
    "[[maybe_unused]] long long tf_div(tf_ev *ev, long long a, long long b) { return b ? a / b : (ev->bad = 1, 0); }\n"
    "[[maybe_unused]] long long tf_mod(tf_ev *ev, long long a, long long b) { return b ? a % b : (ev->bad = 1, 0); }\n"
    "[[maybe_unused]] long long tf_ceil_div(tf_ev *ev, long long a, long long b) {\n"
    "  if (!b) return ev->bad = 1, 0;\n"
    "  long long q = a / b, r = a % b;\n"
    "  return r != 0 && (r < 0) == (b < 0) ? q + 1 : q;\n"
    "}\n"
    "[[maybe_unused]] long long tf_min(long long a, long long b) { return a < b ? a : b; }\n"
    "[[maybe_unused]] long long tf_max(long long a, long long b) { return a > b ? a : b; }\n"
    "}  // namespace\n\n";

static int geom_expr(FILE *f, const names_ctx *n, const expr *g, const char *what, char *x,
                     tf_err *e);

/* A tensor map as the farm's measure process makes it (worker/tmap.c): cuTensorMapEncodeTiled
 * through the runtime's entry point, so the launcher links no libcuda; and the farm's
 * refusals of a map TMA cannot take, for NAME_check. */
static const char tmap_helpers[] =
    "#if CUDART_VERSION < 12050\n"
    "#error \"a tensor-map argument needs CUDA 12.5 or newer (cudaGetDriverEntryPointByVersion)\"\n"
    "#endif\n"
    "namespace {\n"
    "typedef CUresult (*tf_encode_fn)(CUtensorMap *, CUtensorMapDataType, cuuint32_t, void *,\n"
    "    const cuuint64_t *, const cuuint64_t *, const cuuint32_t *, const cuuint32_t *,\n"
    "    CUtensorMapInterleave, CUtensorMapSwizzle, CUtensorMapL2promotion, CUtensorMapFloatOOBfill);\n"
    "// Extents d and box x, innermost first, of es-byte elements: why TMA cannot take them, or 0.\n"
    "const char *tf_tmap_fit(int rank, const long long *d, const long long *x, long long es,\n"
    "                        long long swizzle, long long count) {\n"
    "  double n = 1;\n"
    "  for (int i = 0; i < rank; i++) {\n"
    "    if (d[i] < 1 || d[i] > 4294967296LL) return \"a tensor map's extent is outside [1, 2^32]\";\n"
    "    if (x[i] < 1 || x[i] > 256) return \"a tensor map's box is outside [1, 256]\";\n"
    "    n *= (double)d[i];\n"
    "  }\n"
    "  if (n > (double)count) return \"a tensor map's dimensions hold more elements than its buffer\";\n"
    "  if (rank > 1 && d[0] * es % 16) return \"a tensor map's row is not a multiple of 16 bytes\";\n"
    "  if (x[0] * es % 16) return \"a tensor map's box is not a multiple of 16 bytes wide\";\n"
    "  if (swizzle && x[0] * es > swizzle) return \"a tensor map's box is wider than its swizzle\";\n"
    "  return 0;\n"
    "}\n"
    "// The map into out (128 bytes, 64-byte aligned): unit element strides, 256-byte L2\n"
    "// promotion, zeros past the extents.\n"
    "cudaError_t tf_tmap(void *out, CUtensorMapDataType t, long long es, int rank, const void *p,\n"
    "                    const long long *d, const long long *x, CUtensorMapSwizzle sw) {\n"
    "  static tf_encode_fn fn;\n"
    "  if (!fn) {\n"
    "    void *q = 0;\n"
    "    cudaDriverEntryPointQueryResult r = cudaDriverEntryPointSymbolNotFound;\n"
    "    cudaError_t err = cudaGetDriverEntryPointByVersion(\"cuTensorMapEncodeTiled\", &q, 12000,\n"
    "                                                       cudaEnableDefault, &r);\n"
    "    if (err != cudaSuccess) return err;\n"
    "    if (r != cudaDriverEntryPointSuccess) return cudaErrorNotSupported;\n"
    "    fn = (tf_encode_fn)q;\n"
    "  }\n"
    "  cuuint64_t dim[5], stride[5], s = (cuuint64_t)es;\n"
    "  cuuint32_t box[5], unit[5];\n"
    "  for (int i = 0; i < rank; i++) {\n"
    "    dim[i] = (cuuint64_t)d[i], box[i] = (cuuint32_t)x[i], unit[i] = 1;\n"
    "    stride[i] = s *= dim[i]; // stride[i] is dimension i+1's\n"
    "  }\n"
    "  return fn((CUtensorMap *)out, t, (cuuint32_t)rank, const_cast<void *>(p), dim, stride, box,\n"
    "            unit, CU_TENSOR_MAP_INTERLEAVE_NONE, sw, CU_TENSOR_MAP_L2_PROMOTION_L2_256B,\n"
    "            CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE) == CUDA_SUCCESS ? cudaSuccess\n"
    "                                                             : cudaErrorInvalidValue;\n"
    "}\n"
    "}  // namespace\n\n";

/* Tensor-map argument a's extents and box as the arrays tf_l_d and tf_l_x. */
static int tmap_arrays(FILE *f, const names_ctx *n, int a, char *x, tf_err *e) {
  const spec_arg *arg = &n->s->args[a];
  char what[48];
  for (int k = 0; k < 2; k++) {
    fprintf(f, k ? ", tf_l_x[] = {" : "    long long tf_l_d[] = {");
    for (int i = 0; i < arg->rank; i++) {
      snprintf(what, sizeof what, "args[%d].tensormap.%s[%d]", a, k ? "box" : "dims", i);
      if (i) fprintf(f, ", ");
      if (geom_expr(f, n, k ? arg->box[i] : arg->dim[i], what, x, e)) return -1;
    }
    fprintf(f, "}");
  }
  fprintf(f, ";\n");
  return 0;
}

/* NAME_check's refusal of sizes at which a tensor map cannot be made, as the farm refuses them. */
static int check_tmaps(FILE *f, const names_ctx *n, char *x, tf_err *e) {
  for (int a = 0; a < n->s->nargs; a++) {
    const spec_arg *arg = &n->s->args[a];
    if (arg->kind != SPEC_ARG_TMAP) continue;
    const spec_buffer *b = &n->s->bufs[arg->buffer];
    char what[48];
    fprintf(f, "  {\n    tf_ev *ev = tf_l_pev;\n");
    if (tmap_arrays(f, n, a, x, e)) return -1;
    snprintf(what, sizeof what, "buffers[%d].count", arg->buffer);
    fprintf(f, "    const char *tf_l_why = tf_tmap_fit(%d, tf_l_d, tf_l_x, %d, %d, ", arg->rank,
            (int)reference_type_size(b->type), arg->swizzle);
    if (geom_expr(f, n, b->count, what, x, e)) return -1;
    fprintf(f, ");\n    if (tf_l_why || ev->bad) return tf_l_why ? tf_l_why : ");
    c_string(f, "a tensor map's extents divide by zero");
    fprintf(f, ";\n  }\n");
  }
  return 0;
}

static int write_check(FILE *f, const export_what *w, const names_ctx *n, char *x, tf_err *e) {
  const spec *s = &w->c->tmpl;
  fprintf(f, "extern \"C\" const char *%s_check(", w->name);
  dim_params(f, s, 1);
  fprintf(f, ") {\n  tf_ev tf_l_ev0 = {0}, *tf_l_pev = &tf_l_ev0;\n  (void)tf_l_pev;\n");
  for (int d = 0; d < s->ndims; d++) {
    char why[160];
    snprintf(why, sizeof why, "%s must be in [%lld, %lld]", s->dims[d].name, s->dims[d].lo,
             s->dims[d].hi);
    fprintf(f, "  if (" EXPORT_PARAM "%s < %lldLL || " EXPORT_PARAM "%s > %lldLL) return ",
            s->dims[d].name, s->dims[d].lo, s->dims[d].name, s->dims[d].hi);
    c_string(f, why);
    fprintf(f, ";\n");
  }
  for (int i = 0; i < s->nconstraints; i++) {
    char what[96], why[700], err[8];
    /* the configuration passed every constraint at the tuned size: only those that read a
     * problem size can refuse another, and of those only the ones a correct launch needs;
     * one that only keeps slow kernels out of the search has no say over a user's sizes */
    if (s->cons[i].performance ||
        expr_check_names(s->cons[i].e, knob_only, (void *)s, err, sizeof err) == 0)
      continue;
    snprintf(what, sizeof what, "constraint '%s'", s->cons[i].name);
    if (c_expr(n, s->cons[i].e, what, x, e)) return -1;
    snprintf(why, sizeof why, "%s: %s", s->cons[i].name, s->cons[i].reason);
    fprintf(f, "  {\n    tf_ev *ev = tf_l_pev;\n    if (!(%s) || ev->bad) return ", x);
    c_string(f, why);
    fprintf(f, ";\n  }\n");
  }
  if (check_tmaps(f, n, x, e)) return -1;
  fprintf(f, "  return 0;\n}\n\n");
  return 0;
}

/* One launch dimension or size as a C expression into x, named for messages. */
static int geom_expr(FILE *f, const names_ctx *n, const expr *g, const char *what, char *x,
                     tf_err *e) {
  if (c_expr(n, g, what, x, e)) return -1;
  fprintf(f, "%s", x);
  return 0;
}

/* A float scalar as the kernel's parameter takes it: untyped and f32 a float, f64 a double,
 * f16 and bf16 the bits the farm passes (the value rounded to float, then to nearest even),
 * so the export launches with the very argument the farm measured. */
static void float_arg(FILE *f, int a, const spec_arg *arg) {
  char v[48];
  if (arg->type == REFERENCE_F16 || arg->type == REFERENCE_BF16) {
    unsigned short h = arg->type == REFERENCE_F16 ? reference_f32_to_f16((float)arg->f)
                                                  : reference_f32_to_bf16((float)arg->f);
    const char *t = c_type(arg->type);
    snprintf(v, sizeof v, "%.9g", arg->f);
    fprintf(f, "  %s_raw tf_l_r%d;\n  tf_l_r%d.x = 0x%04x; /* %s */\n  %s tf_l_a%d = tf_l_r%d;\n",
            t, a, a, h, v, t, a, a);
    return;
  }
  int dbl = arg->type == REFERENCE_F64;
  snprintf(v, sizeof v, dbl ? "%.17g" : "%.9g", arg->f);
  /* "1f" is no C++ literal: a whole number gets its ".0" */
  fprintf(f, "  %s tf_l_a%d = %s%s%s;\n", dbl ? "double" : "float", a, v,
          strpbrk(v, ".eEn") ? "" : ".0", dbl ? "" : "f");
}

/* An integer scalar: its expression at the caller's sizes, in its type's range (an int's
 * when untyped, as the farm passes it) or the launch is refused, as one the farm refuses. */
static int int_arg(FILE *f, const names_ctx *n, int a, const spec_arg *arg, char *x, tf_err *e) {
  char what[32];
  snprintf(what, sizeof what, "args[%d]", a);
  fprintf(f, "  long long tf_l_v%d = (", a);
  if (geom_expr(f, n, arg->e, what, x, e)) return -1;
  fprintf(f, ");\n");
  int t = arg->type < 0 ? REFERENCE_I32 : arg->type;
  if (t != REFERENCE_I64) {
    double lo, hi;
    reference_type_range(t, &lo, &hi);
    fprintf(f, "  if (tf_l_v%d < %.0fLL || tf_l_v%d > %.0fLL) ev->bad = 1;\n", a, lo, a, hi);
  }
  fprintf(f, "  %s tf_l_a%d = (%s)tf_l_v%d;\n", c_type(t), a, c_type(t), a);
  return 0;
}

/* The kernel's arguments as locals tf_l_a0, tf_l_a1, ..., and the launch's grid and block: the
 * nvcc build's launch and the cubin's cudaLaunchKernel take the same values. A buffer is a
 * pointer to its element type, whatever the signature's const or void. */
static int write_args(FILE *f, const names_ctx *n, char *x, tf_err *e) {
  const spec *s = n->s;
  fprintf(f, "  dim3 tf_l_grid((unsigned)tf_l_g[0], (unsigned)tf_l_g[1], (unsigned)tf_l_g[2]), "
             "tf_l_block((unsigned)tf_l_b[0], (unsigned)tf_l_b[1], (unsigned)tf_l_b[2]);\n");
  for (int a = 0; a < s->nargs; a++) {
    const spec_arg *arg = &s->args[a];
    if (arg->kind == SPEC_ARG_BUFFER) {
      const spec_buffer *b = &s->bufs[arg->buffer];
      const char *t = c_type(b->type);
      fprintf(f, "  %s *tf_l_a%d = static_cast<%s *>(const_cast<void *>(static_cast<const void *>("
                 EXPORT_PARAM "%s)));\n", t, a, t, b->name);
    } else if (arg->kind == SPEC_ARG_TMAP) {
      const spec_buffer *b = &s->bufs[arg->buffer];
      fprintf(f, "  alignas(64) unsigned char tf_l_a%d[128];\n  {\n", a);
      if (tmap_arrays(f, n, a, x, e)) return -1;
      fprintf(f, "    tf_l_r = tf_tmap(tf_l_a%d, %s, %d, %d, " EXPORT_PARAM "%s, tf_l_d, tf_l_x, "
                 "CU_TENSOR_MAP_SWIZZLE_", a, tmap_type_name(b->type),
              (int)reference_type_size(b->type), arg->rank, b->name);
      if (arg->swizzle) fprintf(f, "%dB);\n", arg->swizzle);
      else fprintf(f, "NONE);\n");
      fprintf(f, "    if (tf_l_r != cudaSuccess) return tf_l_r;\n  }\n");
    } else if (arg->kind == SPEC_ARG_FLOAT) {
      float_arg(f, a, arg);
    } else if (int_arg(f, n, a, arg, x, e)) {
      return -1;
    }
  }
  fprintf(f, "  if (ev->bad) return cudaErrorInvalidValue;\n");
  return 0;
}

/* Where NAME_use_cubin loaded the farm's cubin, the launch goes to its kernel. */
static void write_cubin_launch(FILE *f, const export_what *w) {
  fprintf(f, "#if CUDART_VERSION >= 12060\n  if (%s_cubin_kernel) {\n    if (tf_l_smem > 48 * 1024) {\n"
             "      int tf_l_dev = 0;\n      tf_l_r = cudaGetDevice(&tf_l_dev);\n"
             "      if (tf_l_r == cudaSuccess)\n"
             "        tf_l_r = cudaKernelSetAttributeForDevice(%s_cubin_kernel, "
             "cudaFuncAttributeMaxDynamicSharedMemorySize, (int)tf_l_smem, tf_l_dev);\n"
             "      if (tf_l_r != cudaSuccess) return tf_l_r;\n    }\n    void *tf_l_args[] = {",
          w->name, w->name);
  for (int a = 0; a < w->c->tmpl.nargs; a++) fprintf(f, "%s&tf_l_a%d", a ? ", " : "", a);
  fprintf(f, "};\n    return cudaLaunchKernel((const void *)%s_cubin_kernel, tf_l_grid, tf_l_block, "
             "tf_l_args, (size_t)tf_l_smem, tf_l_stream);\n  }\n#endif\n", w->name);
}

/* The loaded cubin and NAME_use_cubin. */
static void write_use_cubin(FILE *f, const export_what *w) {
  const char *nm = w->name;
  /* cudaKernelSetAttributeForDevice came with CUDA 12.6: older, the file builds without the
   * loader */
  fprintf(f, "#if CUDART_VERSION < 12060\nextern \"C\" cudaError_t %s_use_cubin(const char *tf_l_path) {\n"
             "  (void)tf_l_path;\n  return cudaErrorNotSupported;\n}\n#else\n", nm);
  fprintf(f, "static cudaLibrary_t %s_cubin_library;\nstatic cudaKernel_t %s_cubin_kernel;\n\n", nm, nm);
  fprintf(f, "extern \"C\" cudaError_t %s_use_cubin(const char *tf_l_path) {\n", nm);
  fprintf(f, "  if (%s_cubin_library) cudaLibraryUnload(%s_cubin_library);\n", nm, nm);
  fprintf(f, "  %s_cubin_library = 0;\n  %s_cubin_kernel = 0;\n  if (!tf_l_path) return cudaSuccess;\n",
          nm, nm);
  fprintf(f, "  cudaLibrary_t tf_l_lib;\n  cudaKernel_t tf_l_k;\n"
             "  cudaError_t tf_l_r = cudaLibraryLoadFromFile(&tf_l_lib, tf_l_path, NULL, NULL, 0, "
             "NULL, NULL, 0);\n"
             "  if (tf_l_r != cudaSuccess) return tf_l_r;\n"
             "  tf_l_r = cudaLibraryGetKernel(&tf_l_k, tf_l_lib, ");
  c_string(f, w->lowered);
  fprintf(f, ");\n  if (tf_l_r != cudaSuccess) {\n    cudaLibraryUnload(tf_l_lib);\n    return tf_l_r;\n  }\n"
             "  %s_cubin_library = tf_l_lib;\n  %s_cubin_kernel = tf_l_k;\n  return cudaSuccess;\n}\n#endif\n\n",
          nm, nm);
}

static int write_launch(FILE *f, const export_what *w, const names_ctx *n, char *x, tf_err *e) {
  const spec *s = &w->c->tmpl;
  char kname[512];
  if (spec_name_expr(s, &w->cfg, kname, sizeof kname))
    return tf_fail(e, TF_EXIT_FAIL, "the kernel's name is too long");
  fprintf(f, "extern \"C\" cudaError_t %s_launch(", w->name);
  buffer_params(f, s, 1);
  dim_params(f, s, 1);
  fprintf(f, ", cudaStream_t tf_l_stream) {\n  if (%s_check(", w->name);
  for (int d = 0; d < s->ndims; d++) fprintf(f, "%s" EXPORT_PARAM "%s", d ? ", " : "", s->dims[d].name);
  fprintf(f, ")) return cudaErrorInvalidValue;\n  tf_ev tf_l_ev0 = {0}, *ev = &tf_l_ev0;\n"
             "  long long tf_l_g[3], tf_l_b[3];\n");
  static const char *const axis = "xyz";
  for (int d = 0; d < 3; d++) {
    char what[32];
    snprintf(what, sizeof what, "launch.grid.%c", axis[d]);
    fprintf(f, "  tf_l_g[%d] = ", d);
    if (geom_expr(f, n, s->grid[d], what, x, e)) return -1;
    snprintf(what, sizeof what, "launch.block.%c", axis[d]);
    fprintf(f, ";\n  tf_l_b[%d] = ", d);
    if (geom_expr(f, n, s->block[d], what, x, e)) return -1;
    fprintf(f, ";\n");
  }
  fprintf(f, "  long long tf_l_smem = ");
  if (s->smem ? geom_expr(f, n, s->smem, "launch.smem", x, e) : (fprintf(f, "0"), 0)) return -1;
  fprintf(f, ";\n");
  fprintf(f, "  for (int tf_l_d = 0; tf_l_d < 3; tf_l_d++)\n"
             "    if (tf_l_g[tf_l_d] < 1 || tf_l_g[tf_l_d] > 2147483647LL || tf_l_b[tf_l_d] < 1 ||"
             " tf_l_b[tf_l_d] > 1024)\n      ev->bad = 1;\n");
  fprintf(f, "  if (ev->bad || tf_l_smem < 0) return cudaErrorInvalidValue;\n"
             "  cudaError_t tf_l_r = cudaSuccess;\n");
  /* the arguments before any clear: a refused launch leaves the buffers as they were */
  if (write_args(f, n, x, e)) return -1;
  for (int i = 0; i < s->nbuffers; i++) {
    if (!s->bufs[i].clear) continue;
    char what[96];
    snprintf(what, sizeof what, "buffers[%d].clear", i);
    fprintf(f, "  if (");
    if (geom_expr(f, n, s->bufs[i].clear, what, x, e)) return -1;
    fprintf(f, ") { /* the template accumulates into it */\n    tf_l_r = cudaMemsetAsync("
               EXPORT_PARAM "%s, 0, (size_t)(", s->bufs[i].name);
    snprintf(what, sizeof what, "buffers[%d].count", i);
    if (geom_expr(f, n, s->bufs[i].count, what, x, e)) return -1;
    fprintf(f, ") * sizeof(%s), tf_l_stream);\n    if (tf_l_r != cudaSuccess) return tf_l_r;\n  }\n",
            c_type(s->bufs[i].type));
  }
  if (w->lowered) write_cubin_launch(f, w);
  fprintf(f, "  if (tf_l_smem > 48 * 1024) {\n    tf_l_r = cudaFuncSetAttribute(%s, "
             "cudaFuncAttributeMaxDynamicSharedMemorySize, (int)tf_l_smem);\n"
             "    if (tf_l_r != cudaSuccess) return tf_l_r;\n  }\n", kname);
  if (has_tmaps(s)) { /* a map is the template's own 128-byte struct: passed as bytes */
    fprintf(f, "  void *tf_l_args[] = {");
    for (int a = 0; a < s->nargs; a++) fprintf(f, "%s&tf_l_a%d", a ? ", " : "", a);
    fprintf(f, "};\n  return cudaLaunchKernel((const void *)%s, tf_l_grid, tf_l_block, tf_l_args, "
               "(size_t)tf_l_smem, tf_l_stream);\n}\n", kname);
    return 0;
  }
  fprintf(f, "  %s<<<tf_l_grid, tf_l_block, (size_t)tf_l_smem, tf_l_stream>>>(", kname);
  for (int a = 0; a < s->nargs; a++) fprintf(f, "%stf_l_a%d", a ? ", " : "", a);
  fprintf(f, ");\n  return cudaGetLastError();\n}\n");
  return 0;
}

static int write_source(FILE *f, const void *ctx, tf_err *e) {
  const export_what *w = ctx;
  const spec *s = &w->c->tmpl;
  size_t len = 0;
  char *src = jsonio_slurp(s->source_path, "template source", JSONIO_MAX_BYTES, &len, e);
  if (!src) return -1;
  fprintf(f, "// %s: a kernel exported by `tunefarm export` (see %s.h).\n", w->name, w->name);
  fprintf(f, "#include \"%s.h\"\n", w->name);
  /* the element types of the launcher's locals, which the template may not include itself */
  if (uses_type(s, REFERENCE_F16)) fprintf(f, "#include <cuda_fp16.h>\n");
  if (uses_type(s, REFERENCE_BF16)) fprintf(f, "#include <cuda_bf16.h>\n");
  /* CUtensorMap's types only: the encoder comes through the runtime */
  if (has_tmaps(s)) fprintf(f, "#include <cuda.h>\n");
  fprintf(f, "\n// ---- the template, as the farm measured it ----\n");
  fwrite(src, 1, len, f);
  free(src);
  fprintf(f, "\n// ---- the exported configuration ----\n");
  fputs(helpers, f);
  if (has_tmaps(s)) fputs(tmap_helpers, f);
  names_ctx n = {.s = s, .cfg = &w->cfg};
  char *x = malloc(EXPORT_EXPR);
  if (!x) return tf_fail(e, TF_EXIT_FAIL, "out of memory");
  if (w->lowered) write_use_cubin(f, w);
  int rc = write_check(f, w, &n, x, e) || write_launch(f, w, &n, x, e) ? -1 : 0;
  free(x);
  return rc;
}

/* DIR/NAME.EXT written by fn(f, ctx) through a temporary file renamed into place, so a failure
 * leaves no half file. */
static int write_file(const char *dir, const char *name, const char *ext, const void *ctx,
                      int (*fn)(FILE *, const void *, tf_err *), tf_err *e) {
  char path[SPEC_PATH + 80], tmp[SPEC_PATH + 96];
  snprintf(path, sizeof path, "%s/%s%s", dir, name, ext);
  snprintf(tmp, sizeof tmp, "%s.tmp", path);
  FILE *f = fopen(tmp, "wb");
  if (!f) return tf_fail(e, TF_EXIT_FAIL, "cannot write '%s': %s", tmp, strerror(errno));
  int rc = fn(f, ctx, e);
  if (fclose(f) != 0 && rc == 0) rc = tf_fail(e, TF_EXIT_FAIL, "'%s': %s", tmp, strerror(errno));
  if (rc == 0 && rename(tmp, path) != 0)
    rc = tf_fail(e, TF_EXIT_FAIL, "cannot rename '%s': %s", tmp, strerror(errno));
  if (rc) remove(tmp);
  return rc;
}

static int header_fn(FILE *f, const void *w, tf_err *e) {
  (void)e;
  return write_header(f, w);
}

static int cubin_fn(FILE *f, const void *bin, tf_err *e) {
  const export_bin *b = bin;
  if (fwrite(b->bytes, 1, b->size, f) == b->size) return 0;
  return tf_fail(e, TF_EXIT_FAIL, "writing the cubin: %s", strerror(errno));
}

static int make_dir(const char *dir, tf_err *e) {
  if (mkdir(dir, 0777) != 0 && errno != EEXIST) /* a path the user can fix is bad input */
    return tf_fail(e, user_path_errno(errno) ? TF_EXIT_INPUT : TF_EXIT_FAIL,
                   "cannot make the folder '%s': %s", dir, strerror(errno));
  struct stat st;
  if (stat(dir, &st) != 0 || !S_ISDIR(st.st_mode))
    return tf_fail(e, TF_EXIT_INPUT, "'%s' is not a folder (-o names the folder to write into)",
                   dir);
  return 0;
}

/* NAME, the prefix of every global name of the files: a C identifier that leaves the
 * launcher's own prefixes to it. */
static int check_name(const char *name, tf_err *e) {
  const char *flaw = identifier_flaw(name);
  char q[200];
  tf_escape(q, sizeof q, name);
  if (flaw)
    return tf_fail(e, TF_EXIT_INPUT, "the name '%s' %s (--name sets it; a C identifier: "
                   "letters, digits and '_', not starting with a digit)", q, flaw);
  if (!strcmp(name, "tf_p") || !strcmp(name, "tf_l") || !strncmp(name, EXPORT_PARAM, 5) ||
      !strncmp(name, EXPORT_LOCAL, 5))
    return tf_fail(e, TF_EXIT_INPUT, "the name '%s' starts like the exported code's own names "
                   "(" EXPORT_PARAM ", " EXPORT_LOCAL "): --name sets another", q);
  return 0;
}

/* ---- what the template includes ----
 *
 * NAME.cu holds the template's text, whose #include "x.cuh" lines name files of the
 * template's folder (common/source.h, source_check): each is copied beside NAME.cu,
 * as is, so that the export builds where it lands. The files are found as compile/compile.c
 * finds what NVRTC is handed: every '#', "%:" or "??=" followed (through comments and
 * backslash-newlines) by include, include_next, import or embed and a quoted name, wherever
 * it stands. */

#define EXPORT_MAX_INCLUDES 64

typedef struct includes {
  char dir[SPEC_PATH];
  int n;
  char names[EXPORT_MAX_INCLUDES][64];
} includes;

/* The position past any backslash-newlines at i. */
static size_t joined(const char *t, size_t i, size_t n) {
  for (;;) {
    if (i + 1 < n && t[i] == '\\' && t[i + 1] == '\n') i += 2;
    else if (i + 2 < n && t[i] == '\\' && t[i + 1] == '\r' && t[i + 2] == '\n') i += 3;
    else return i;
  }
}

/* Whether the text at *i is s (joined lines allowed inside); *i past it if so. */
static int take_text(const char *t, size_t n, size_t *i, const char *s) {
  size_t j = *i;
  for (; *s; s++, j++) {
    j = joined(t, j, n);
    if (j >= n || t[j] != *s) return 0;
  }
  *i = j;
  return 1;
}

/* Past blanks and block comments. */
static size_t skip_blanks(const char *t, size_t n, size_t i) {
  for (;;) {
    i = joined(t, i, n);
    if (i < n && strchr(" \t\v\f\r", t[i]) && t[i]) i++;
    else if (take_text(t, n, &i, "/*")) {
      while ((i = joined(t, i, n)) < n && !take_text(t, n, &i, "*/")) i++;
    } else return i;
  }
}

/* The letters, digits and '_' at *i, at most len - 1 of them kept. */
static void word_at(const char *t, size_t n, size_t *i, char *buf, size_t len) {
  size_t k = 0;
  for (size_t j; (j = joined(t, *i, n)) < n && (isalnum((unsigned char)t[j]) || t[j] == '_');
       *i = j + 1)
    if (k + 1 < len) buf[k++] = t[j];
  buf[k] = '\0';
}

static int gather_includes(const char *text, size_t n, includes *inc, tf_err *e);

/* name, included from the template's folder: recorded once, and what it includes in turn. */
static int add_include(const char *name, includes *inc, tf_err *e) {
  for (int k = 0; k < inc->n; k++)
    if (strcmp(inc->names[k], name) == 0) return 0;
  char path[SPEC_PATH + 80];
  snprintf(path, sizeof path, "%s/%s", inc->dir, name);
  if (inc->n == EXPORT_MAX_INCLUDES)
    return tf_fail(e, TF_EXIT_INPUT, "template source in '%s': more than %d included files",
                   inc->dir, EXPORT_MAX_INCLUDES);
  snprintf(inc->names[inc->n++], sizeof inc->names[0], "%s", name);
  size_t len = 0;
  char *text = jsonio_slurp(path, "kernel source", JSONIO_MAX_BYTES, &len, e);
  if (!text) return -1;
  int rc = gather_includes(text, len, inc, e);
  free(text);
  return rc;
}

static int gather_includes(const char *t, size_t n, includes *inc, tf_err *e) {
  static const char *const directives[] = {"include", "include_next", "import", "embed", NULL};
  for (size_t i = 0; (i = joined(t, i, n)) < n;) {
    if (!take_text(t, n, &i, "#") && !take_text(t, n, &i, "%:") && !take_text(t, n, &i, "?\?=")) {
      i++;
      continue;
    }
    char id[40], name[64];
    i = skip_blanks(t, n, i);
    word_at(t, n, &i, id, sizeof id);
    int d = 0;
    while (directives[d] && strcmp(id, directives[d])) d++;
    if (!directives[d]) continue;
    i = skip_blanks(t, n, i);
    if (!take_text(t, n, &i, "\"")) continue;
    size_t k = 0, j;
    for (; (j = joined(t, i, n)) < n && t[j] != '"' && t[j] != '\n'; i = j + 1)
      if (k + 1 < sizeof name) name[k++] = t[j];
    name[k] = '\0';
    /* source_check let only plain names of the folder through */
    if (jsonio_safe_name(name) && add_include(name, inc, e)) return -1;
  }
  return 0;
}

/* The files the template's source includes (spec_load checked them as the farm does). */
static int template_includes(const spec *s, includes *inc, tf_err *e) {
  char tmp[SPEC_PATH];
  snprintf(tmp, sizeof tmp, "%s", s->source_path);
  snprintf(inc->dir, sizeof inc->dir, "%s", dirname(tmp));
  inc->n = 0;
  size_t len = 0;
  char *text = jsonio_slurp(s->source_path, "template source", JSONIO_MAX_BYTES, &len, e);
  if (!text) return -1;
  int rc = gather_includes(text, len, inc, e);
  free(text);
  return rc;
}

typedef struct copy_src {
  const char *path;
} copy_src;

static int copy_fn(FILE *f, const void *ctx, tf_err *e) {
  const copy_src *c = ctx;
  size_t len = 0;
  char *text = jsonio_slurp(c->path, "kernel source", JSONIO_MAX_BYTES, &len, e);
  if (!text) return -1;
  int rc = fwrite(text, 1, len, f) == len ? 0
           : tf_fail(e, TF_EXIT_FAIL, "copying '%s': %s", c->path, strerror(errno));
  free(text);
  return rc;
}

/* Each included file beside NAME.cu; one that would be NAME.h, NAME.cu or NAME.cubin is
 * refused before anything is written. */
static int write_includes(const export_what *w, const includes *inc, const char *dir,
                          int write, tf_err *e) {
  static const char *const ours[] = {".h", ".cu", ".cubin"};
  for (int k = 0; k < inc->n; k++) {
    for (int o = 0; o < 3; o++) {
      char mine[96];
      snprintf(mine, sizeof mine, "%s%s", w->name, ours[o]);
      if (strcmp(inc->names[k], mine) == 0)
        return tf_fail(e, TF_EXIT_INPUT, "template '%s': its source includes \"%s\", a file "
                       "the export writes: --name sets another name", w->c->tmpl.path, mine);
    }
    char path[SPEC_PATH + 80];
    snprintf(path, sizeof path, "%s/%s", inc->dir, inc->names[k]);
    copy_src c = {path};
    if (write && write_file(dir, inc->names[k], "", &c, copy_fn, e)) return -1;
  }
  return 0;
}

int export_render(const export_what *w, const char *dir, tf_err *e) {
  includes *inc = malloc(sizeof *inc);
  if (!inc) return tf_fail(e, TF_EXIT_FAIL, "out of memory");
  int rc = check_name(w->name, e) || check_names(&w->c->tmpl, w->name, e) ||
                   template_includes(&w->c->tmpl, inc, e) || write_includes(w, inc, dir, 0, e) ||
                   make_dir(dir, e) || write_includes(w, inc, dir, 1, e) ||
                   write_file(dir, w->name, ".h", w, header_fn, e) ||
                   write_file(dir, w->name, ".cu", w, write_source, e)
               ? -1
               : 0;
  free(inc);
  return rc;
}

/* The configuration's kernel compiled as a generation's job compiles it: the same program (the
 * template's source named relative to the campaign's root, one name expression), so the same
 * cache key and, where the search ran, the cubin it measured. */
int export_cubin(const export_what *w, const char *arch, export_bin *out, tf_err *e) {
  memset(out, 0, sizeof *out);
  if (!valid_arch(arch))
    return tf_fail(e, TF_EXIT_INPUT, "'%s' is not an architecture NVRTC builds machine "
                   "code for, like sm_90 (--arch)", arch);
  if (!compile_arch_supported(arch)) {
    int major, minor;
    compile_nvrtc_version(&major, &minor);
    return tf_fail(e, TF_EXIT_INPUT, "NVRTC %d.%d builds no machine code for %s", major,
                   minor, arch);
  }
  job *j = malloc(sizeof *j);
  program_ref *p = malloc(sizeof *p), *k = malloc(ARM_COUNT * sizeof *k);
  program_req *pr = malloc(sizeof *pr);
  program_build *b = calloc(1, sizeof *b); /* large: every kernel's lowered names */
  int rc = j && p && k && pr && b ? 0 : tf_fail(e, TF_EXIT_FAIL, "out of memory");
  if (rc == 0) {
    rc = job_init(j, w->c, 0, 0, e);
    for (int a = 0; a < ARM_COUNT && rc == 0; a++)
      rc = job_set_template_arm(j, w->c, a, &w->cfg, e);
  }
  if (rc == 0) {
    program_of_job(j, p);
    program_kernels(p, k); /* one kernel: every arm is the configuration */
    program_target t = {.arch = arch};
    program_request(&k[0], &t, pr);
    rc = program_compile(pr, b, e);
    if (rc) tf_wrap(e, "the configuration for %s", arch);
  }
  if (rc == 0) { /* the cubin is handed over, the rest released */
    compile_result *r = &b->kernel[0];
    snprintf(out->lowered, sizeof out->lowered, "%s", r->lowered[0]);
    out->cached = b->cache_hit;
    out->bytes = r->cubin, out->size = r->cubin_size;
    r->cubin = NULL;
  }
  if (b) program_build_release(b);
  free(b), free(pr), free(k), free(p), free(j);
  return rc;
}

void export_bin_release(export_bin *b) {
  free(b->bytes);
  memset(b, 0, sizeof *b);
}

/* ---- tunefarm export ---- */

typedef struct export_read {
  const char *path;
  record_device head;   /* line 1 */
  ledger_best best;     /* fed every record once the campaign is known */
  int header_only;
} export_read;

static int read_line(void *ctx, long line, const record *rec, tf_err *e) {
  export_read *r = ctx;
  if (rec->kind == RECORD_DEVICE) r->head = rec->device;
  if (r->header_only) return 1; /* stop: the campaign is read first */
  if (ledger_best_add(&r->best, rec, e)) return tf_wrap(e, "ledger '%s': line %ld", r->path, line);
  return 0;
}

/* Whether the ledger's header names c's identity as it is now. */
static int same_campaign(const export_read *r, const campaign *c) {
  return strcmp(r->head.campaign_hash, c->hash) == 0 ||
         strcmp(r->head.campaign_hash, c->hash_v1) == 0;
}

/* The campaign file a ledger's header names, readable from here: campaign_path as recorded
 * when absolute, else under the project root the ledger recorded, else from here (a ledger
 * without a root was written from the project root). 0 when none of them is readable. */
static int recorded_campaign(const record_device *h, char *out, size_t len) {
  const char *cp = h->campaign_path;
  if (!cp[0]) return 0;
  if (cp[0] != '/' && h->root[0]) {
    snprintf(out, len, "%s/%s", h->root, cp);
    if (access(out, R_OK) == 0) return 1;
  }
  snprintf(out, len, "%s", cp);
  return access(out, R_OK) == 0;
}

/* The campaign the ledger names: --campaign, else its recorded path (recorded_campaign), else
 * campaigns/NAME.json under the project root ($TUNEFARM_ROOT or here). */
static int load_campaign(const export_read *r, const char *given, campaign *c, tf_err *e) {
  char path[2 * SPEC_PATH + 80];
  const char *root = getenv("TUNEFARM_ROOT");
  if (given) snprintf(path, sizeof path, "%s", given);
  else if (!recorded_campaign(&r->head, path, sizeof path))
    snprintf(path, sizeof path, "%s/campaigns/%s.json", root && root[0] ? root : ".",
             r->head.campaign);
  if (campaign_load(c, path, e)) return -1;
  if (!same_campaign(r, c)) {
    campaign_release(c);
    return tf_fail(e, TF_EXIT_INPUT, "campaign '%s' or a file it names changed since "
                   "ledger '%s' was written: export from the sources it was measured with",
                   path, r->path);
  }
  return 0;
}

static void usage(FILE *f) {
  fputs("usage: tunefarm export [-o DIR] [--name NAME] [--campaign FILE] [--arch A] [--no-cubin]\n"
        "                       LEDGER\n"
        "       tunefarm export [-o DIR] [--name NAME] [--arch A] --config K=V,... CAMPAIGN\n"
        "\n"
        "A configuration as code to take away: DIR/NAME.h and DIR/NAME.cu, with the files the\n"
        "template includes beside them, which compile with plain nvcc and need nothing of\n"
        "tunefarm: `nvcc -std=c++17 -arch=sm_XY -c DIR/NAME.cu`, with the architecture it was\n"
        "tuned for (--arch, else the ledger's GPU; else -arch=native), which the export prints\n"
        "and NAME.h states (nvcc's default architecture is older than the GPUs the farm tunes\n"
        "on, and a kernel that uses cp.async does not build for it). From a LEDGER: the final best of that GPU's search (the\n"
        "champion, with restarts). NAME_check() says whether the configuration accepts\n"
        "given problem sizes; NAME_launch() checks, computes the launch\n"
        "from the template's expressions at run time and launches. With a GPU architecture,\n"
        "also DIR/NAME.cubin: the configuration as the farm compiled and measured it (NVRTC);\n"
        "NAME_use_cubin(path) makes NAME_launch launch it instead of NAME.cu's nvcc build,\n"
        "which can run at another speed.\n"
        "\n"
        "  -o, --out DIR     where the files go (default: the current folder)\n"
        "  --name NAME       C identifier prefix and file name (default: tf_ and the campaign\n"
        "                    name, '-' and '.' as '_')\n"
        "  --campaign FILE   the ledger's campaign, when the path it recorded is not readable\n"
        "                    here (default: that path, else campaigns/NAME.json under\n"
        "                    $TUNEFARM_ROOT or the current folder)\n"
        "  --config K=V,...  export the CAMPAIGN's start with these knobs set instead (it must\n"
        "                    pass every constraint at the campaign's problem)\n"
        "  --arch sm_XY      also write NAME.cubin for this GPU architecture (default: the\n"
        "                    ledger's GPU; none for a simulated device or --config)\n"
        "  --no-cubin        write no NAME.cubin\n"
        "  -h, --help        this text\n"
        "\n"
        "Exit status: 0, 1 failure, 2 bad input (a ledger without a generation, a campaign that\n"
        "changed since the ledger was written, a configuration a constraint refuses).\n",
        f);
}

/* The architecture of NAME.cubin: --arch, else the ledger's GPU; NULL: none (--no-cubin, a
 * simulated device, a configuration given without --arch). */
static const char *cubin_arch(const export_what *w, const export_opts *o) {
  if (o->no_cubin) return NULL;
  if (o->arch) return o->arch;
  if (w->dev && !backend_simulated(w->dev->backend) && w->dev->arch[0]) return w->dev->arch;
  return NULL;
}

/* The default name: tf_ and the campaign's name with every other character as '_'. */
static void default_name(const campaign *c, char *id, size_t len) {
  snprintf(id, len, "tf_%s", c->name);
  for (char *p = id; *p; p++)
    if (!isalnum((unsigned char)*p)) *p = '_';
}

/* DIR/NAME.cubin removed where it is left from an earlier export. */
static int remove_cubin(const export_opts *o, const export_what *w, tf_err *e) {
  char path[SPEC_PATH + 80];
  snprintf(path, sizeof path, "%s/%s.cubin", o->dir, w->name);
  if (remove(path) != 0 && errno != ENOENT)
    return tf_fail(e, TF_EXIT_FAIL, "cannot remove the old '%s': %s", path,
                   strerror(errno));
  return 0;
}

/* The architecture of the build command printed with the export: --arch, else the ledger's
 * device's (what the farm compiled for), else "native" (the GPU where nvcc runs). nvcc's own
 * default is far older than any GPU the farm tunes on, and a kernel using cp.async, say, does
 * not assemble for it. */
static const char *build_arch(const export_what *w, const export_opts *o) {
  static char specific[16];
  const char *a = o->arch ? o->arch : w->dev && valid_arch(w->dev->arch) ? w->dev->arch : NULL;
  if (!a) return "native";
  if (!w->c->tmpl.arch_specific) return a;
  compile_arch_specific(a, specific, sizeof specific); /* as the farm compiles it */
  return specific;
}

/* What was written, on o->out; and why no cubin, when there is none. */
static void say_written(const export_opts *o, const export_what *w, const char *arch, int cached) {
  fprintf(o->out, "tunefarm export: %s/%s.h and %s/%s.cu", o->dir, w->name, o->dir, w->name);
  if (arch)
    fprintf(o->out, ", and %s/%s.cubin (NVRTC, %s: %s)\n", o->dir, w->name, arch,
           cached ? "found in the farm's cache: where the search ran, the cubin it measured"
                  : "compiled now as the farm compiles");
  else
    fprintf(o->out, " (no cubin: %s; --arch sm_XY builds one)\n",
           o->no_cubin                                     ? "--no-cubin"
           : w->dev && !backend_simulated(w->dev->backend) ? "see the warning"
           : w->dev                                         ? "the ledger's device is simulated"
                                                            : "no GPU named");
  char flags[80];
  nvcc_arch(w->build_arch, w->c->tmpl.arch_specific, flags, sizeof flags);
  fprintf(o->out, "tunefarm export: build with: nvcc -std=c++17 %s -c %s/%s.cu%s\n", flags, o->dir,
          w->name, strstr(flags, "XX") ? " (XX: the GPU's compute capability; --arch sm_XY fills it in)" : "");
}

static int render_named(export_what *w, const export_opts *o, tf_err *e) {
  char id[80];
  if (!o->name) default_name(w->c, id, sizeof id);
  w->name = o->name ? o->name : id;
  int bad;
  if (spec_check(&w->c->tmpl, w->c->dims, &w->cfg, &bad, e)) return -1;
  if (bad >= 0)
    return tf_fail(e, TF_EXIT_INPUT, "the configuration breaks constraint '%s' at the "
                   "campaign's problem: %s", w->c->tmpl.cons[bad].name, w->c->tmpl.cons[bad].reason);
  if (check_name(w->name, e) || check_names(&w->c->tmpl, w->name, e)) return -1;
  const char *arch = cubin_arch(w, o);
  export_bin bin = {.size = 0};
  if (arch && export_cubin(w, arch, &bin, e)) {
    /* the ledger's GPU, which this NVRTC may not build for: the code is still worth having */
    if (o->arch || e->code != TF_EXIT_INPUT) return -1;
    fprintf(o->notes, "tunefarm export: warning: no cubin: %s\n", e->msg);
    tf_err_clear(e);
    arch = NULL;
  }
  w->lowered = arch ? bin.lowered : NULL;
  w->build_arch = build_arch(w, o);
  if (arch) arch = w->build_arch; /* what the cubin was compiled for: "sm_90a", say */
  /* the cubin last, and none left from an earlier export beside code without its loader */
  int rc = export_render(w, o->dir, e) ? -1
           : arch                       ? write_file(o->dir, w->name, ".cubin", &bin, cubin_fn, e)
                                        : remove_cubin(o, w, e);
  int cached = bin.cached;
  export_bin_release(&bin);
  if (rc) return -1;
  say_written(o, w, arch, cached);
  return 0;
}

static int export_config(const export_opts *o, campaign *c, tf_err *e) {
  if (campaign_load(c, o->input, e)) return -1;
  export_what w = {.c = c, .us = NAN};
  int rc = spec_config_parse(&c->tmpl, &c->start, o->config, "--config", &w.cfg, e) ||
                   render_named(&w, o, e)
               ? -1
               : 0;
  campaign_release(c);
  return rc;
}

/* The final best of the ledger whose header r holds, written by campaign c. */
static int export_best(const export_opts *o, export_read *r, const campaign *c, tf_err *e) {
  r->header_only = 0;
  ledger_best_init(&r->best, &c->tmpl, o->input);
  record_cfg best;
  double us = NAN;
  export_what w = {.c = c, .dev = &r->head.dev, .ledger = o->input};
  int rc = ledger_scan(o->input, o->notes, read_line, r, e);
  if (rc == 0 && !ledger_best_get(&r->best, &best, &us, NULL))
    rc = tf_fail(e, TF_EXIT_INPUT, "ledger '%s': no generation yet, so no best to export",
                 o->input);
  w.us = us;
  if (rc == 0) rc = record_cfg_config(&c->tmpl, &best, o->input, "best", &w.cfg, e);
  if (rc == 0) rc = render_named(&w, o, e);
  ledger_best_release(&r->best);
  return rc;
}

static int export_ledger(const export_opts *o, campaign *c, tf_err *e) {
  export_read r = {.path = o->input, .header_only = 1};
  if (ledger_scan(o->input, o->notes, read_line, &r, e) || load_campaign(&r, o->campaign, c, e))
    return -1;
  int rc = export_best(o, &r, c, e);
  campaign_release(c);
  return rc;
}

int export_ledger_among(const export_opts *o, const campaign *const *cs, int n, tf_err *e) {
  export_read r = {.path = o->input, .header_only = 1};
  if (ledger_scan(o->input, o->notes, read_line, &r, e)) return -1;
  for (int i = 0; i < n; i++)
    if (same_campaign(&r, cs[i])) return export_best(o, &r, cs[i], e);
  return tf_fail(e, TF_EXIT_INPUT, "ledger '%s': written by none of the campaigns given",
                 o->input);
}

int export_run(const export_opts *o, tf_err *e) {
  campaign *c = calloc(1, sizeof *c); /* large: on the heap */
  int rc = !c ? tf_fail(e, TF_EXIT_FAIL, "out of memory")
               : o->config ? export_config(o, c, e) : export_ledger(o, c, e);
  free(c);
  return rc;
}

int export_main(int argc, char **argv) {
  static const struct option longs[] = {{"out", required_argument, 0, 'o'},
                                         {"name", required_argument, 0, 'n'},
                                         {"campaign", required_argument, 0, 'c'},
                                         {"config", required_argument, 0, 'k'},
                                         {"arch", required_argument, 0, 'a'},
                                         {"no-cubin", no_argument, 0, 'x'},
                                         {"help", no_argument, 0, 'h'},
                                         {0, 0, 0, 0}};
  export_opts o = {.dir = ".", .out = stdout, .notes = stderr};
  int opt;
  optind = 1;
  while ((opt = getopt_long(argc, argv, "o:h", longs, NULL)) != -1) {
    switch (opt) {
      case 'o': o.dir = optarg; break;
      case 'n': o.name = optarg; break;
      case 'c': o.campaign = optarg; break;
      case 'k': o.config = optarg; break;
      case 'a': o.arch = optarg; break;
      case 'x': o.no_cubin = 1; break;
      case 'h': usage(stdout); return TF_EXIT_OK;
      default: usage(stderr); return TF_EXIT_INPUT;
    }
  }
  if (optind != argc - 1 || (o.config && o.campaign)) {
    fprintf(stderr, "tunefarm export: one LEDGER, or --config with one CAMPAIGN (see --help)\n");
    return TF_EXIT_INPUT;
  }
  if (o.arch && o.no_cubin) {
    fprintf(stderr, "tunefarm export: --arch names the cubin's GPU, --no-cubin asks for none: "
            "give one of them\n");
    return TF_EXIT_INPUT;
  }
  o.input = argv[optind];
  tf_err e;
  tf_err_clear(&e);
  if (export_run(&o, &e) == 0) return TF_EXIT_OK;
  fprintf(stderr, "tunefarm export: %s\n", e.msg);
  return tf_exit_status(&e);
}
