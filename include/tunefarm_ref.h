/* tunefarm_ref.h: the C ABI of a CPU reference that a user builds as a shared library.
 *
 * A template names the library with "reference": {"library": "lib/libref_NAME.so"} (a path
 * inside the template's folder). The measure child loads it with dlopen and, once per input
 * set, calls tunefarm_reference with the set's inputs in host memory; what it writes into
 * each output is what every arm's output is compared with, under that output's check
 * (tolerances or exact) as for a reference kernel. `tunefarm check` and `tunefarm audit`
 * load the library, find the entry point and compare its ABI version before any run.
 *
 * Build (this header needs nothing but the C standard library):
 *   cc -shared -fPIC -O2 -I<tunefarm>/include -o lib/libref_NAME.so ref_NAME.c -lm
 *
 * The library exports
 *   int tunefarm_reference(const tf_ref_args *args, char *err, size_t errlen);
 *     0: every output written; nonzero: a failure, described in err (NUL-terminated, at most
 *     errlen bytes), which fails the job with that text. It is called from one thread; it
 *     may use threads of its own. It keeps no pointer from args after it returns.
 *   int tunefarm_ref_abi_version(void);   (optional)
 *     TUNEFARM_REF_ABI_VERSION as the library was built; a library that exports it with
 *     another value is refused. Export it: a library built against another version of this
 *     header is then refused instead of reading its arguments wrongly.
 *
 * Ownership: tunefarm owns every pointer in args, for the duration of the call. Inputs are
 * read-only; each output points at `count` elements of out_type, poisoned (NaN for doubles,
 * 0xFF bytes otherwise) so that an element left unwritten fails the check. */
#ifndef TUNEFARM_REF_H
#define TUNEFARM_REF_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define TUNEFARM_REF_ABI_VERSION 1

/* Element types, as a template's buffers[i].type names them. f16 and bf16 elements are
 * their 16 bits (IEEE half; the top half of a float). */
typedef enum tf_ref_type {
  TF_REF_F32 = 0, TF_REF_F64, TF_REF_F16, TF_REF_BF16, TF_REF_I8, TF_REF_U8, TF_REF_I32,
  TF_REF_U32, TF_REF_I64
} tf_ref_type;

/* A buffer's role, as buffers[i].role names it. */
typedef enum tf_ref_role {
  TF_REF_INPUT = 0, /* in set, out NULL */
  TF_REF_OUTPUT,    /* out set, in NULL */
  TF_REF_INOUT,     /* both: in holds what the kernel reads, out takes what it leaves */
  TF_REF_SCRATCH    /* neither: the kernel's own memory, not checked */
} tf_ref_role;

/* One buffer of the kernel, in the template's buffer order. */
typedef struct tf_ref_buffer {
  const char *name;  /* buffers[i].name */
  int role;          /* tf_ref_role */
  int type;          /* tf_ref_type: the kernel's element type */
  uint64_t count;    /* elements, at this problem */
  const void *in;    /* input and inout: `count` elements of `type`; NULL otherwise */
  void *out;         /* output and inout: `count` elements of out_type to write; NULL otherwise */
  int out_type;      /* TF_REF_F64 where `type` is a floating type (the reference in double),
                      * `type` itself for an integer type */
} tf_ref_buffer;

typedef union tf_ref_value {
  double f;  /* a floating type */
  int64_t i; /* an integer type */
} tf_ref_value;

/* A named number: a problem size, or a scalar argument of the kernel. */
typedef struct tf_ref_scalar {
  const char *name; /* a problem size's name; a typed argument's "name"; "" for an untyped one */
  int type;         /* tf_ref_type: TF_REF_I64 for a problem size and an untyped integer
                     * argument, TF_REF_F32 for an untyped {"float": x} */
  tf_ref_value value; /* a floating argument rounded to its type, as the kernel receives it */
} tf_ref_scalar;

typedef struct tf_ref_args {
  int abi_version;               /* TUNEFARM_REF_ABI_VERSION of the caller */
  int ndims;                     /* the problem's sizes, in the template's "problem" order */
  const tf_ref_scalar *dims;
  int nbuffers;                  /* every buffer, in the template's "buffers" order */
  const tf_ref_buffer *buffers;
  int nscalars;                  /* the kernel's scalar arguments, in "args" order (buffers */
  const tf_ref_scalar *scalars;  /* left out) */
  int set;                       /* which input set (0, 1, ...): for messages */
} tf_ref_args;

/* What the library defines (declared here so that its compiler checks the definitions). */
int tunefarm_reference(const tf_ref_args *args, char *err, size_t errlen);
int tunefarm_ref_abi_version(void);

typedef int (*tunefarm_reference_fn)(const tf_ref_args *args, char *err, size_t errlen);
typedef int (*tunefarm_ref_abi_version_fn)(void);

#define TUNEFARM_REF_SYMBOL "tunefarm_reference"
#define TUNEFARM_REF_VERSION_SYMBOL "tunefarm_ref_abi_version"

#ifdef __cplusplus
}
#endif

#endif
