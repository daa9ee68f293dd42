/* source: what a kernel source may include, checked before any compiler reads it.
 *
 * A kernel source brings in nothing from outside its own folder: the file lies in the folder
 * it is named in (a symbolic link out of it is refused), and every #include is a quoted plain
 * file name ("helpers.cuh": no path, no '..', no <...>) of that same folder, which exists
 * there and obeys the same rule, or one of the CUDA toolkit's fp16/bf16 headers by <name>;
 * __has_include and computed includes are refused. A line that looks like an #include counts
 * even inside a comment or a string. compile_program (compile/compile.h) checks every source
 * so before NVRTC sees anything and hands NVRTC the included files itself, so NVRTC never
 * opens a file (it would read any path, and put the file's text in its log, which a GPU run
 * stores in the ledger). spec_load checks templates and committed kernels the same way when
 * they load, and the campaign's hash covers what they include. Errors are TF_EXIT_INPUT
 * naming the file, the line and why.
 *
 * Ownership: source_includes and source_headers own their texts (their _release frees them). */
#ifndef TF_SOURCE_H
#define TF_SOURCE_H

#include <limits.h>
#include <stddef.h>

#include "common/err.h"

#define SOURCE_MAX_HEADERS 16
/* A kernel source larger than this is not a kernel file someone wrote. */
#define SOURCE_MAX_BYTES (4L * 1024 * 1024)

/* Check path as above. */
int source_check(const char *path, tf_err *e);

/* What a kernel source includes, directly or through another included file: each file once,
 * in the order the preprocessor first meets it (depth first through the source's text), so
 * the same files give the same list. names are the plain file names as written (files of the
 * source's own folder, joined to it they give the path); texts the bytes as read and checked. */
typedef struct source_includes {
  int n;
  char names[SOURCE_MAX_HEADERS][64];
  char *texts[SOURCE_MAX_HEADERS];
  size_t lens[SOURCE_MAX_HEADERS];
} source_includes;

/* source_check of path, keeping what it found in *out (zeroed first; left empty on failure,
 * with e as source_check fills it). */
int source_includes_of(const char *path, source_includes *out, tf_err *e);
void source_includes_release(source_includes *inc);

/* ---- for a compiler that reads several sources into one program (compile/compile.c) */

/* The files the sources include, each read once: NVRTC is handed these texts by these names
 * and never opens a file itself. Starts zeroed; grows through source_gather. */
typedef struct source_headers {
  int n;
  int toolkit; /* 1: a source includes a toolkit header (fp16, bf16), which NVRTC finds itself */
  char names[SOURCE_MAX_HEADERS][64];
  char real[SOURCE_MAX_HEADERS][PATH_MAX];
  char *texts[SOURCE_MAX_HEADERS];
  size_t lens[SOURCE_MAX_HEADERS];
} source_headers;

void source_headers_release(source_headers *h);

/* The real path of path's folder into dir (PATH_MAX bytes); -1 when path itself resolves
 * outside that folder (a symbolic link out) or does not resolve. */
int source_confined(const char *path, char *dir, tf_err *e);

/* Every #include (#import, #include_next, #embed) of path's text (len bytes), wherever a '#'
 * starts one, and no __has_include or __has_embed (each would reach files NVRTC should not
 * see): each included file of dir checked, read once and added to h, then gathered in turn.
 * A file of one name included again is skipped; another file under an earlier name is
 * refused. */
int source_gather(const char *path, const char *dir, const char *text, size_t len,
                  source_headers *h, tf_err *e);

#endif
