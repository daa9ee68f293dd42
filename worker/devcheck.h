/* devcheck: the correctness gate's comparisons, run on the device.
 *
 * An arm's outputs are compared with the reference's where both already are, in device
 * memory, and its inputs with a pristine device copy: nothing but a few hundred bytes of
 * partial sums crosses PCIe. The verdict is reference_compare's (common/reference.h) for the
 * same elements: the same first failing element, the same pass or fail, and a relative error
 * that differs from the host's only by the order of the sums (per-block partial sums in
 * double, added on the host in block order, so it is the same from run to run).
 *
 * The two kernels are tunefarm's own source (devcheck_source), compiled by NVRTC for the
 * device's architecture through the cubin cache (compile/compile.h) once per process.
 * Calls enqueue on the caller's stream and synchronize it before they return.
 *
 * Ownership: a devcheck is opened by one process on its current device and closed by it;
 * after a sticky error the caller skips devcheck_close's frees, as for its own buffers. */
#ifndef TF_DEVCHECK_H
#define TF_DEVCHECK_H

#include <cuda_runtime_api.h>
#include <stddef.h>

#include "common/err.h"
#include "common/reference.h" /* defines: reference_check, reference_verdict */

typedef struct devcheck {
  int open;
  cudaLibrary_t lib;
  cudaKernel_t compare, same;
  void *parts;       /* device: a partial result per block */
  void *parts_host;  /* page-locked copy of them, and room for one failing element */
} devcheck;

/* The program's text (for `tunefarm`'s own tests: it must compile wherever NVRTC does). */
const char *devcheck_source(void);
/* The name expressions of its two kernels, in the order compare, same. */
extern const char *const devcheck_kernels[2];

/* Compile (or fetch from the cache at cache_dir, NULL: the default) and load for arch. */
int devcheck_open(devcheck *d, const char *arch, const char *cache_dir, tf_err *e);
/* reference_compare of n device elements got (got_type) against ref (ref_type). */
int devcheck_compare(devcheck *d, cudaStream_t s, const void *got, int got_type, const void *ref,
                     int ref_type, size_t n, const reference_check *c, double tolerance,
                     reference_verdict *v, tf_err *e);
/* *same = 1 when the `bytes` bytes of device buffers a and b are equal, else 0. */
int devcheck_same(devcheck *d, cudaStream_t s, const void *a, const void *b, size_t bytes,
                  int *same, tf_err *e);
void devcheck_close(devcheck *d);

#endif
