/* iface: a kernel's interface as the compiler sees it, compared with its spec.
 *
 * NVRTC lowers a name expression ("tf_softmax<32, 1, 1>") to the Itanium-mangled name of the
 * instantiation ("_Z10tf_softmaxILi32ELi1ELi1EEvPKfPfS2_ii"), which holds the kernel's
 * template argument count and its parameter types in order. iface_demangle reads those from
 * the mangled text itself: a small parser of the subset kernel signatures use (builtin types,
 * pointers, const/volatile/restrict, class names such as __half and __nv_bfloat16 and float4,
 * nested names, substitutions S_ S0_..., template parameters T_ T0_..., template arguments
 * I..E with literals L..E). It needs no C++ runtime, and what it cannot read it says so
 * (the caller skips the check rather than guessing). libstdc++'s __cxa_demangle would give
 * the whole declaration as text, which would then need parsing again.
 *
 * iface_check compares a demangled signature with a spec's arguments (count, then each
 * argument in order: a buffer's pointer element type and const-ness against its role, an
 * integer or float scalar's type) and the template argument count with the knobs;
 * iface_template_params reads the names of the kernel's template parameters from its source,
 * which iface_check_knob_names compares with the knobs' names and order.
 *
 * Ownership: plain values. */
#ifndef TF_IFACE_H
#define TF_IFACE_H

#include <stddef.h>

#include "common/err.h"
#include "common/spec.h"

#define IFACE_MAX_PARAMS 32
#define IFACE_TYPE 96

/* One parameter type: `pointers` levels of pointer to `base`, which is const when is_const. */
typedef struct iface_type {
  int pointers;
  int is_const; /* the innermost pointee (or the value itself without pointers) is const */
  char base[IFACE_TYPE]; /* as C spells it: "float", "unsigned int", "__half", "ns::Vec<...>" */
} iface_type;

typedef struct iface_sig {
  char name[128];  /* the kernel's (qualified) name */
  int ntargs;      /* template arguments; -1: not a template */
  int nparams;     /* 0 for (void) */
  iface_type params[IFACE_MAX_PARAMS];
} iface_sig;

/* The signature in mangled (an Itanium name, "_Z..."); -1 with why (and where) in err when it
 * is not one or uses a construct this parser does not read. */
int iface_demangle(const char *mangled, iface_sig *out, char *err, size_t errlen);

/* "const float *" */
void iface_type_str(const iface_type *t, char *buf, size_t len);

/* The kernel (named `kernel` in messages: its name expression) against s: the template
 * argument count against the knobs (key 'knobs'), the parameter count against the arguments
 * (key 'args') and each parameter against its argument (key 'args[i]'). With `reference` set,
 * the kernel is s's reference kernel, which takes the same arguments and no knobs.
 * TF_EXIT_INPUT naming s's file, the key and both sides. Accepted: a buffer of type T as a
 * pointer to T (f32 float, f64 double, f16 __half, bf16 __nv_bfloat16, i8 signed char or char,
 * u8 unsigned char or char, i32 int, u32 unsigned int, i64 long long or long), to a CUDA
 * vector of T (float4 ...) or to void; const only for an input; an untyped integer as int,
 * unsigned int, long, unsigned long, long long or unsigned long long; {"float": x} as float or
 * double; a typed scalar exactly as its buffer element would be. */
int iface_check(const spec *s, const iface_sig *sig, const char *kernel, int reference, tf_err *e);

/* The names of the template parameters of the __global__ function `kernel` as the source at
 * path declares it (comments, strings and preprocessor lines skipped), into names. Returns
 * their number, 0 when the source declares no such template there with every parameter
 * named (in an included file, through a macro, `template <int, int>`), -1 when the file
 * cannot be read (e). */
int iface_template_params(const char *path, const char *kernel, char (*names)[SPEC_NAME],
                          int max, tf_err *e);

/* The knobs' names against the n template parameter names, in order (key 'knobs'). */
int iface_check_knob_names(const spec *s, char (*names)[SPEC_NAME], int n, tf_err *e);

#endif
