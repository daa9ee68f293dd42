/* cpuref: loading and calling a user's CPU reference library (see cpuref.h). */
#include "common/cpuref.h"

#include <dlfcn.h>
#include <errno.h>
#include <libgen.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/reference.h" /* defines: reference_type_size, reference_type_is_float, reference_put, reference_get */

/* The ABI's numbers are tunefarm's own: a buffer's type and role pass through unchanged. */
#define SAME(a, b) ((int)(a) == (int)(b))
_Static_assert(SAME(TF_REF_F32, REFERENCE_F32) && SAME(TF_REF_F64, REFERENCE_F64) &&
               SAME(TF_REF_F16, REFERENCE_F16) && SAME(TF_REF_BF16, REFERENCE_BF16) &&
               SAME(TF_REF_I8, REFERENCE_I8) && SAME(TF_REF_U8, REFERENCE_U8) &&
               SAME(TF_REF_I32, REFERENCE_I32) && SAME(TF_REF_U32, REFERENCE_U32) &&
               SAME(TF_REF_I64, REFERENCE_I64), "tunefarm_ref.h's types are reference_type's");
_Static_assert(SAME(TF_REF_INPUT, SPEC_ROLE_INPUT) && SAME(TF_REF_OUTPUT, SPEC_ROLE_OUTPUT) &&
               SAME(TF_REF_INOUT, SPEC_ROLE_INOUT) && SAME(TF_REF_SCRATCH, SPEC_ROLE_SCRATCH),
               "tunefarm_ref.h's roles are spec_role's");

int cpuref_open(cpuref *r, const char *path, tf_err *e) {
  memset(r, 0, sizeof *r);
  if (!strchr(path, '/') || strlen(path) >= sizeof r->path)
    return tf_fail(e, TF_EXIT_INPUT, "cpu reference '%s': not a path to a file", path);
  snprintf(r->path, sizeof r->path, "%s", path);
  dlerror();
  if (!(r->handle = dlopen(path, RTLD_NOW | RTLD_LOCAL))) {
    const char *why = dlerror();
    return tf_fail(e, TF_EXIT_INPUT, "cpu reference '%s': dlopen fails: %s", path,
                   why ? why : "(no reason given)");
  }
  /* dlsym hands back functions as object pointers (POSIX): copied, not cast */
  void *sym = dlsym(r->handle, TUNEFARM_REF_SYMBOL);
  void *ver = dlsym(r->handle, TUNEFARM_REF_VERSION_SYMBOL);
  tunefarm_ref_abi_version_fn version = NULL;
  if (ver) memcpy(&version, &ver, sizeof version);
  int v = version ? version() : TUNEFARM_REF_ABI_VERSION;
  int rc = 0;
  if (!sym)
    rc = tf_fail(e, TF_EXIT_INPUT, "cpu reference '%s' exports no function '%s' (include/"
                 "tunefarm_ref.h)", path, TUNEFARM_REF_SYMBOL);
  else if (v != TUNEFARM_REF_ABI_VERSION)
    rc = tf_fail(e, TF_EXIT_INPUT, "cpu reference '%s': %s() says ABI version %d, this tunefarm "
                 "reads version %d: rebuild it against this tunefarm's include/tunefarm_ref.h",
                 path, TUNEFARM_REF_VERSION_SYMBOL, v, TUNEFARM_REF_ABI_VERSION);
  if (rc) {
    cpuref_close(r);
    return rc;
  }
  memcpy(&r->fn, &sym, sizeof r->fn);
  return 0;
}

void cpuref_close(cpuref *r) {
  if (r->handle) dlclose(r->handle);
  r->handle = NULL;
  r->fn = NULL;
}

/* path's real location inside the real folder of the spec at spec_path. */
static int inside(const char *spec_path, const char *path, tf_err *e) {
  char tmp[PATH_MAX], dir[PATH_MAX], real[PATH_MAX];
  snprintf(tmp, sizeof tmp, "%s", spec_path);
  if (!realpath(dirname(tmp), dir) || !realpath(path, real))
    return tf_fail(e, TF_EXIT_INPUT, "cannot open '%s': %s", path, strerror(errno));
  size_t n = strlen(dir);
  if (strncmp(real, dir, n) != 0 || (real[n] != '/' && n > 1))
    return tf_fail(e, TF_EXIT_INPUT, "'%s' leads to '%s', outside the spec's folder '%s' (a "
                   "symbolic link out?)", path, real, dir);
  return 0;
}

int cpuref_validate(const char *spec_path, const char *key, const char *path, tf_err *e) {
  cpuref r;
  if (inside(spec_path, path, e) || cpuref_open(&r, path, e))
    return tf_wrap(e, "spec '%s': key '%s'", spec_path, key);
  cpuref_close(&r);
  return 0;
}

int cpuref_out_type(int type) {
  return reference_type_is_float(type) ? REFERENCE_F64 : type;
}

/* The kernel's scalar arguments, in order, with their values at this problem. */
static int scalars_of(const cpuref_set *s, tf_ref_scalar *out) {
  const job *j = s->j;
  int n = 0;
  for (int a = 0; a < j->nargs; a++) {
    if (j->arg_kind[a] == SPEC_ARG_BUFFER || j->arg_kind[a] == SPEC_ARG_TMAP) continue;
    tf_ref_scalar *x = &out[n++];
    x->name = j->arg_names[a];
    int t = j->arg_type[a] - 1;
    if (j->arg_kind[a] == SPEC_ARG_FLOAT) {
      x->type = t >= 0 ? t : TF_REF_F32;
      /* the value the kernel receives: rounded to its type (an epsilon in f16 is not 1e-5) */
      unsigned char v[8];
      reference_put(x->type, v, 0, j->arg_float[a]);
      x->value.f = reference_get(x->type, v, 0);
    } else {
      x->type = t >= 0 ? t : TF_REF_I64;
      x->value.i = s->iargs[a];
    }
  }
  return n;
}

/* Each buffer as the library sees it; the outputs allocated and poisoned (0xFF bytes: NaN
 * doubles), so that an element the library leaves unwritten fails every arm's check. */
static int buffers_of(const cpuref_set *s, tf_ref_buffer *out, void **outs, int *out_type,
                      tf_err *e) {
  const job *j = s->j;
  for (int b = 0; b < j->nbuffers; b++) {
    tf_ref_buffer *x = &out[b];
    int role = j->buf_role[b];
    if (j->buf_output[b] && !SPEC_ROLE_CHECKED(role)) role = SPEC_ROLE_OUTPUT;
    *x = (tf_ref_buffer){.name = j->buf_names[b], .role = role, .type = j->buf_type[b],
                         .count = (uint64_t)s->counts[b],
                         .out_type = cpuref_out_type(j->buf_type[b])};
    out_type[b] = x->out_type;
    outs[b] = NULL;
    if (SPEC_ROLE_FILLED(role)) x->in = s->in[b];
    if (!SPEC_ROLE_CHECKED(role)) continue;
    size_t bytes = (size_t)s->counts[b] * reference_type_size(x->out_type);
    if (!(outs[b] = malloc(bytes ? bytes : 1)))
      return tf_fail(e, TF_EXIT_FAIL, "out of memory for the cpu reference's '%s'",
                     j->buf_names[b]);
    memset(outs[b], 0xFF, bytes);
    x->out = outs[b];
  }
  return 0;
}

int cpuref_run(const cpuref *r, const cpuref_set *s, void **out, int *out_type, tf_err *e) {
  const job *j = s->j;
  tf_ref_scalar dims[SPEC_MAX_DIMS], scalars[SPEC_MAX_ARGS];
  tf_ref_buffer bufs[SPEC_MAX_BUFFERS];
  for (int b = 0; b < SPEC_MAX_BUFFERS; b++) out[b] = NULL;
  if (!r->fn) return tf_fail(e, TF_EXIT_FAIL, "cpu reference: not loaded");
  for (int d = 0; d < j->ndims; d++)
    dims[d] = (tf_ref_scalar){.name = j->dim_names[d], .type = TF_REF_I64,
                              .value.i = j->dims[d]};
  if (buffers_of(s, bufs, out, out_type, e)) return -1;
  tf_ref_args args = {.abi_version = TUNEFARM_REF_ABI_VERSION, .ndims = j->ndims, .dims = dims,
                      .nbuffers = j->nbuffers, .buffers = bufs, .set = s->set};
  args.nscalars = scalars_of(s, scalars);
  args.scalars = scalars;
  char why[512] = "";
  if (r->fn(&args, why, sizeof why) != 0) {
    why[sizeof why - 1] = '\0';
    return tf_fail(e, TF_EXIT_FAIL, "cpu reference '%s' fails on input set %d: %s", r->path,
                   s->set, why[0] ? why : "(it gives no reason)");
  }
  return 0;
}
