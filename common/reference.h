/* reference: the host side of every check: the seeded input fills, the element types and
 * their conversions, and the comparison of an arm's output with its reference's (a
 * reference kernel's or a reference library's; tunefarm has no references of its own). */
#ifndef TF_REFERENCE_H
#define TF_REFERENCE_H

#include <stddef.h>

#include "common/err.h"

/* Fill n floats with uniform values in [-1, 1) from a seeded generator (never zeros-only). */
void reference_fill(float *x, size_t n, unsigned long long seed);

/* The seed of one input buffer: buffer `buffer` (its index in the spec's buffer list) of input
 * set `set` in a job seeded with `seed`. Independent streams per (seed, set, buffer). Every
 * path that feeds a kernel (the cuda backend's arms, the bench's cuBLAS arm) fills with
 * reference_fill(x, n, reference_input_seed(...)), so they all see the same inputs. */
unsigned long long reference_input_seed(unsigned long long seed, int set, int buffer);
/* The stride of `set` in those seeds: a spec's most buffers (SPEC_MAX_BUFFERS, which
 * common/spec.c checks it equals), so that no two (set, buffer) pairs share a stream. */
#define REFERENCE_SEED_STRIDE 8

/* ---------------------------------------------------------------- element types
 *
 * A buffer's elements are one of these types (a spec's buffers[i].type, default f32). The
 * host fills, converts and compares them; fp16 and bf16 are converted in plain C, rounding
 * to nearest even, so the host side needs no CUDA header. */
typedef enum {
  REFERENCE_F32 = 0, REFERENCE_F64, REFERENCE_F16, REFERENCE_BF16, REFERENCE_I8, REFERENCE_U8,
  REFERENCE_I32, REFERENCE_U32, REFERENCE_I64, REFERENCE_NTYPES
} reference_type;

/* "f32", ...; NULL for a value that is no type. */
const char *reference_type_name(int type);
/* The type named `name`, or -1. */
int reference_type_of(const char *name);
/* Bytes per element (0 for a value that is no type). */
size_t reference_type_size(int type);
/* 1 for f32, f64, f16 and bf16. */
int reference_type_is_float(int type);
/* The smallest and largest value of an integer type (as double: i64's and u32's are exact in
 * the range a fill uses, |v| <= 2^53). */
void reference_type_range(int type, double *lo, double *hi);

unsigned short reference_f32_to_f16(float f);
float reference_f16_to_f32(unsigned short h);
unsigned short reference_f32_to_bf16(float f);
float reference_bf16_to_f32(unsigned short h);

/* Element i of the array p of `type`, as double; and v stored there (floats rounded to
 * nearest even, integers truncated toward zero and saturated to the type's range). */
double reference_get(int type, const void *p, size_t i);
void reference_put(int type, void *p, size_t i, double v);

/* How an input is filled (a spec's buffers[i].init). REFERENCE_INIT_DEFAULT: uniform in
 * [-1, 1) for a float type (exactly reference_fill for f32), integers in
 * [REFERENCE_INT_LO, REFERENCE_INT_HI] for an integer type. */
typedef enum {
  REFERENCE_INIT_DEFAULT = 0, REFERENCE_INIT_UNIFORM, REFERENCE_INIT_NORMAL, REFERENCE_INIT_INT,
  REFERENCE_INIT_CONST
} reference_init_kind;

#define REFERENCE_INT_LO 0
#define REFERENCE_INT_HI 15

typedef struct reference_init {
  int kind; /* reference_init_kind */
  double a, b; /* uniform [a, b); normal mean a, sd b; int [a, b] inclusive; const a */
} reference_init;

/* n elements of `type` at x from the seeded generator as `init` says. Deterministic in
 * (type, init, seed); never all zeros unless init is {"const": 0} or an int range of only 0:
 * an all-zero input would hide unwritten outputs, so where the draw gives only zeros the
 * first element takes the range's largest value. */
void reference_fill_typed(void *x, int type, size_t n, const reference_init *init,
                          unsigned long long seed);

/* How one output is compared with its reference (a spec's buffers[i].check). */
typedef enum {
  REFERENCE_CHECK_L2 = 0, /* no check of its own: the relative L2 error against the tolerance */
  REFERENCE_CHECK_TOL,    /* element by element: |got - ref| <= atol + rtol*|ref| */
  REFERENCE_CHECK_EXACT   /* element by element: equal */
} reference_check_kind;

typedef struct reference_check {
  int kind;           /* reference_check_kind */
  double rtol, atol;
  int allow_nonfinite; /* 1: NaN and Inf pass where the reference has the same */
} reference_check;

typedef struct reference_verdict {
  double rel_err;   /* ||got - ref||_2 / ||ref||_2 over the finite elements; INFINITY when a
                     * non-finite element fails */
  int pass;         /* the output's own check (REFERENCE_CHECK_L2: rel_err <= tolerance) */
  long long bad;    /* the first element that fails, or -1 */
  double got, want; /* its values */
} reference_verdict;

/* Compare n elements got (of got_type) with ref (of ref_type) under c; `tolerance` is the
 * spec's, for REFERENCE_CHECK_L2. */
void reference_compare(const void *got, int got_type, const void *ref, int ref_type, size_t n,
                       const reference_check *c, double tolerance, reference_verdict *v);
/* What the protocol's gate compares with the tolerance for one output: its relative error,
 * capped at the tolerance when its own check passes (an output with a check of its own is
 * judged by it), INFINITY when it fails. The worst over outputs is an arm's error. */
double reference_verdict_error(const reference_verdict *v, double tolerance);
/* One line naming the output and the element that failed. */
void reference_verdict_text(const reference_verdict *v, const char *output, char *buf,
                            size_t len);

#endif
