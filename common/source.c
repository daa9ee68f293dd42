/* source: what a kernel source may include (common/source.h).
 *
 * A small scanner of the preprocessor's directives: it reads every line that could start
 * one, wherever a '#' does, so that nothing NVRTC would follow escapes the check. */
#include "common/source.h"

#include <errno.h>
#include <libgen.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "common/jsonio.h" /* defines: jsonio_slurp */

void source_headers_release(source_headers *h) {
  for (int i = 0; i < h->n; i++) free(h->texts[i]);
  h->n = 0;
}

int source_confined(const char *path, char *dir, tf_err *e) {
  char tmp[PATH_MAX], real[PATH_MAX];
  if (strlen(path) >= sizeof tmp)
    return tf_fail(e, TF_EXIT_INPUT, "kernel source '%.64s...': path too long", path);
  memcpy(tmp, path, strlen(path) + 1);
  if (!realpath(dirname(tmp), dir) || !realpath(path, real))
    return tf_fail(e, TF_EXIT_INPUT, "kernel source '%s': cannot open: %s", path, strerror(errno));
  size_t n = strlen(dir);
  if (strncmp(real, dir, n) != 0 || (real[n] != '/' && n > 1))
    return tf_fail(e, TF_EXIT_INPUT,
                   "kernel source '%s' leads to '%s', outside its folder '%s' (a symbolic link "
                   "out?): a kernel and what it includes stay in the kernel's folder",
                   path, real, dir);
  return 0;
}

/* A reader of source text as the preprocessor sees it: backslash-newlines joined away. */
typedef struct cursor {
  const char *t;
  size_t i, n;
} cursor;

static int peek(cursor *c) {
  for (;;) {
    size_t j = c->i;
    if (j < c->n && c->t[j] == '\\' && j + 1 < c->n && c->t[j + 1] == '\n') c->i = j + 2;
    else if (j < c->n && c->t[j] == '\\' && j + 2 < c->n && c->t[j + 1] == '\r' &&
             c->t[j + 2] == '\n')
      c->i = j + 3;
    else
      return j < c->n ? (unsigned char)c->t[j] : -1;
  }
}

static void advance(cursor *c) {
  if (peek(c) >= 0) c->i++;
}

/* 1 and advance past it when the text at the cursor is `s` (joined lines allowed inside). */
static int take(cursor *c, const char *s) {
  cursor at = *c;
  for (; *s; s++, advance(&at))
    if (peek(&at) != (unsigned char)*s) return 0;
  *c = at;
  return 1;
}

/* Past spaces, tabs and block comments (the preprocessor reads a comment as a space). */
static void skip_blank(cursor *c) {
  for (;;) {
    int ch = peek(c);
    if (ch == ' ' || ch == '\t' || ch == '\v' || ch == '\f' || ch == '\r') {
      advance(c);
    } else if (take(c, "/*")) {
      while (peek(c) >= 0 && !take(c, "*/")) advance(c);
    } else {
      return;
    }
  }
}

static int ident_char(int ch) {
  return ch == '_' || (ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') || (ch >= '0' && ch <= '9');
}

/* The identifier at the cursor (possibly empty), at most len - 1 characters kept. */
static void read_ident(cursor *c, char *buf, size_t len) {
  size_t k = 0;
  for (int ch; ident_char(ch = peek(c)); advance(c))
    if (k + 1 < len) buf[k++] = (char)ch;
  buf[k] = '\0';
}

/* The line of the cursor: counted only for a message (a hostile file may hold a million
 * directives). */
static int line_of(const cursor *c) {
  int line = 1;
  for (size_t j = 0; j < c->i && j < c->n; j++) line += c->t[j] == '\n';
  return line;
}

/* `name`, included by path at the directive `at`: a file of dir, read once and gathered in
 * turn. */
static int add_header(const char *path, const cursor *at, const char *dir, const char *name,
                      source_headers *h, tf_err *e) {
  char file[PATH_MAX + 80], fdir[PATH_MAX];
  snprintf(file, sizeof file, "%s/%s", dir, name);
  struct stat st;
  if (stat(file, &st) != 0 || !S_ISREG(st.st_mode))
    return tf_fail(e, TF_EXIT_INPUT, "kernel source '%s': line %d: #include \"%s\": no such file "
                   "in '%s'", path, line_of(at), name, dir);
  if (source_confined(file, fdir, e))
    return tf_wrap(e, "kernel source '%s': line %d", path, line_of(at));
  char real[PATH_MAX];
  if (!realpath(file, real))
    return tf_fail(e, TF_EXIT_INPUT, "kernel source '%s': cannot open: %s", file, strerror(errno));
  for (int i = 0; i < h->n; i++)
    if (strcmp(h->names[i], name) == 0)
      return strcmp(h->real[i], real) == 0 ? 0 /* included before */
             : tf_fail(e, TF_EXIT_INPUT, "kernel source '%s': line %d: #include \"%s\" names "
                       "another file than an earlier source's ('%s'): one program, one file per "
                       "name", path, line_of(at), name, h->real[i]);
  if (h->n == SOURCE_MAX_HEADERS)
    return tf_fail(e, TF_EXIT_INPUT, "kernel source '%s': more than %d included files", path,
                   SOURCE_MAX_HEADERS);
  int k = h->n;
  size_t n = 0;
  char *text = jsonio_slurp(file, "kernel source", SOURCE_MAX_BYTES, &n, e);
  if (!text) return -1;
  snprintf(h->names[k], sizeof h->names[k], "%s", name);
  snprintf(h->real[k], sizeof h->real[k], "%s", real);
  h->texts[k] = text;
  h->lens[k] = n;
  h->n++; /* before its own includes, so that a cycle ends here */
  return source_gather(file, dir, text, n, h, e);
}

/* The CUDA toolkit's own headers a kernel may include by <name>: fp16 and bf16 types and
 * their conversions. NVRTC finds them in the toolkit's include folder (TF_CUDA_INCLUDE, added
 * with -I to the options of the programs that include them, so no other program's options or
 * cache key change); no other system header is reachable. */
static const char *const toolkit_headers[] = {"cuda_fp16.h", "cuda_bf16.h", NULL};

/* <name> of the directive at `at`, the cursor after the '<': a toolkit header, marked in h. */
static int toolkit_operand(cursor *c, const cursor *at, const char *path, const char *directive,
                           source_headers *h, tf_err *e) {
  char name[64];
  size_t k = 0;
  for (int ch; (ch = peek(c)) >= 0 && ch != '>' && ch != '\n'; advance(c))
    if (k + 1 < sizeof name) name[k++] = (char)ch;
  name[k] = '\0';
  int known = 0;
  for (int i = 0; toolkit_headers[i]; i++) known |= !strcmp(name, toolkit_headers[i]);
  if (peek(c) != '>' || !known || strcmp(directive, "include") != 0)
    return tf_fail(e, TF_EXIT_INPUT, "kernel source '%s': line %d: #%s <...>: a kernel includes "
                   "no system header but <cuda_fp16.h> and <cuda_bf16.h>, only files of its own "
                   "folder by a quoted plain name", path, line_of(at), directive);
  advance(c);
  h->toolkit = 1;
  return 0;
}

/* The operand of the directive that starts at `at`, with the cursor after its name: a quoted
 * plain file name of the folder, or one of the toolkit's headers. */
static int include_operand(cursor *c, const cursor *at, const char *path, const char *dir,
                           const char *directive, source_headers *h, tf_err *e) {
  skip_blank(c);
  int open = peek(c);
  char name[128];
  size_t k = 0;
  if (open == '"') {
    advance(c);
    for (int ch; (ch = peek(c)) >= 0 && ch != '"' && ch != '\n'; advance(c))
      if (k + 1 < sizeof name) name[k++] = (char)ch;
  }
  name[k] = '\0';
  if (open == '<') {
    advance(c);
    return toolkit_operand(c, at, path, directive, h, e);
  }
  if (open != '"' || peek(c) != '"' || !jsonio_safe_name(name) || strlen(name) >= 64)
    return tf_fail(e, TF_EXIT_INPUT, "kernel source '%s': line %d: #%s must name a file of the "
                   "kernel's folder in quotes (\"name.cuh\"), not a path or a macro",
                   path, line_of(at), directive);
  advance(c);
  return add_header(path, at, dir, name, h, e);
}

int source_gather(const char *path, const char *dir, const char *text, size_t len,
                  source_headers *h, tf_err *e) {
  static const char *const directives[] = {"include", "include_next", "import", "embed"};
  cursor c = {text, 0, len};
  int prev = 0;
  for (int ch; (ch = peek(&c)) >= 0; prev = ch) {
    char id[40];
    cursor at = c;
    if (ident_char(ch) && !ident_char(prev)) {
      read_ident(&c, id, sizeof id);
      if (!strcmp(id, "__has_include") || !strcmp(id, "__has_include_next") ||
          !strcmp(id, "__has_embed"))
        return tf_fail(e, TF_EXIT_INPUT, "kernel source '%s': line %d: %s would look at files "
                       "outside the kernel's folder", path, line_of(&at), id);
      ch = 'a';
      continue;
    }
    if (!take(&c, "#") && !take(&c, "%:") && !take(&c, "?\?=")) {
      advance(&c);
      continue;
    }
    skip_blank(&c);
    read_ident(&c, id, sizeof id);
    for (size_t d = 0; d < sizeof directives / sizeof directives[0]; d++)
      if (!strcmp(id, directives[d]) && include_operand(&c, &at, path, dir, id, h, e)) return -1;
    ch = 0;
  }
  return 0;
}

int source_includes_of(const char *path, source_includes *out, tf_err *e) {
  char dir[PATH_MAX];
  size_t n = 0;
  memset(out, 0, sizeof *out);
  if (source_confined(path, dir, e)) return -1;
  char *text = jsonio_slurp(path, "kernel source", SOURCE_MAX_BYTES, &n, e);
  if (!text) return -1;
  source_headers h = {0};
  int rc = source_gather(path, dir, text, n, &h, e);
  free(text);
  if (rc) {
    source_headers_release(&h);
    return -1;
  }
  for (int i = 0; i < h.n; i++) { /* the texts change hands */
    memcpy(out->names[i], h.names[i], sizeof out->names[i]);
    out->texts[i] = h.texts[i];
    out->lens[i] = h.lens[i];
  }
  out->n = h.n;
  return 0;
}

void source_includes_release(source_includes *inc) {
  for (int i = 0; i < inc->n; i++) free(inc->texts[i]);
  memset(inc, 0, sizeof *inc);
}

int source_check(const char *path, tf_err *e) {
  source_includes inc;
  int rc = source_includes_of(path, &inc, e);
  source_includes_release(&inc);
  return rc;
}
