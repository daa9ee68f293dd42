/* cpuref: a CPU reference from a shared library the user builds (include/tunefarm_ref.h).
 *
 * cpuref_open loads the library with dlopen, finds tunefarm_reference and, where the library
 * exports it, compares tunefarm_ref_abi_version() with TUNEFARM_REF_ABI_VERSION: `check` and
 * `audit` call it to validate a template, the measure child to use it. cpuref_run calls it on
 * one input set of a job and hands back its outputs.
 *
 * Ownership: a cpuref is a caller-owned value; cpuref_close unloads the library. cpuref_run
 * allocates out[b] (malloc) for every checked buffer b (roles output and inout) and NULL for
 * the others; the caller frees them, also when it fails. */
#ifndef TF_CPUREF_H
#define TF_CPUREF_H

#include "common/err.h"
#include "common/msg.h" /* defines: job */
#include "include/tunefarm_ref.h"

typedef struct cpuref {
  void *handle;              /* dlopen's; NULL when closed */
  tunefarm_reference_fn fn;
  char path[SPEC_PATH];
} cpuref;

/* Load the library at path (a path with a '/': never looked up in the linker's folders).
 * TF_EXIT_INPUT when it cannot be opened, lacks tunefarm_reference or reports another ABI
 * version; the message names the file, the caller adds the spec and the key. */
int cpuref_open(cpuref *r, const char *path, tf_err *e);
void cpuref_close(cpuref *r);

/* What `check` and `audit` hold a template's library to: the file at path exists, resolves
 * inside the spec's folder (no symbolic link out), and cpuref_open loads it. TF_EXIT_INPUT
 * naming the spec, the key and the file. */
int cpuref_validate(const char *spec_path, const char *key, const char *path, tf_err *e);

/* One input set of job j: counts[b] elements per buffer, in[b] the host inputs of the filled
 * buffers (input, inout; NULL for the others), iargs[a] the integer arguments' values. */
typedef struct cpuref_set {
  const job *j;
  const long long *counts;
  const void *const *in;
  const long long *iargs;
  int set;
} cpuref_set;

/* The element type an output's reference is written in: f64 for a floating type, the type
 * itself for an integer one. */
int cpuref_out_type(int type);

/* Call the library on one input set; out[b] as the header says, out_type[b] its type.
 * TF_EXIT_FAIL with the library's own message when it returns nonzero. */
int cpuref_run(const cpuref *r, const cpuref_set *s, void **out, int *out_type, tf_err *e);

#endif
