/* cuda_util: what the cuda backend, the cuBLAS arm and `tunefarm devices` share:
 * the CUDA runtime's check macro, sticky-error detection, the device count with
 * a clear "no CUDA device" message, the device record, and the pool of timing events
 * and sample scratch (per job in the cuda backend, per handle in the cuBLAS arm).
 *
 * Runtime API only (libcudart): nothing here links or calls libcuda, so a
 * binary using it starts, and fails with words, on a machine without a driver. */
#ifndef TF_CUDA_UTIL_H
#define TF_CUDA_UTIL_H

#include <cuda_runtime_api.h>

#include "common/err.h"
#include "common/msg.h"
#include "worker/nvml.h"

/* One check for every CUDA runtime call: fills *e with "<call> failed: <text> (<name>)
 * [file:line]" and returns -1 unless r is cudaSuccess. e->code is TF_STICKY
 * (worker/backend.h) when the error leaves the context unusable, else TF_EXIT_FAIL. */
int cuda_check(cudaError_t r, const char *call, const char *file, int line, tf_err *e);
#define CUDA_CHECK(call, e) cuda_check((call), #call, __FILE__, __LINE__, (e))

/* 1 if after `r` this process must not use the device again: the errors the runtime documents
 * as leaving the process in an inconsistent state, or any error that cudaGetLastError cannot
 * clear (this probe resets a clearable last error as a side effect). */
int cuda_error_is_sticky(cudaError_t r);

/* Number of visible devices (CUDA_VISIBLE_DEVICES applies). None, no driver, or a driver too
 * old: -1 with e->msg "no CUDA device: <reason>". */
int cuda_device_count(int *n, tf_err *e);

/* The visible device a process opens when asked for ordinal `asked` with `visible` devices
 * visible: `asked` when it is one of them; else 0 when exactly one is visible, since a
 * scheduler that gives each rank its own GPU (srun --gpus-per-task=1) leaves every worker one
 * device, ordinal 0, whatever the worker's index on the node; else -1 with e->msg saying why
 * (`cuda_visible_devices`, the variable's value or NULL, is named in it). */
int cuda_choose_ordinal(int asked, int visible, const char *cuda_visible_devices, int *ordinal,
                        tf_err *e);

/* The record of visible device `ordinal` (backend "cuda"); clocks from NVML when `nv` is
 * usable (else the maximum from the runtime and a current clock of 0). Creates no context. */
int cuda_describe(int ordinal, const tf_nvml *nv, device_record *d, tf_err *e);

/* "GPU-xxxxxxxx-xxxx-xxxx-xxxx-xxxxxxxxxxxx" from cudaDeviceProp.uuid's 16 bytes. */
void cuda_uuid_str(const cudaUUID_t *u, char *out, size_t len);

/* Two events per sample (start, end) and per-sample scratch, grown on demand and kept across
 * batches. The owner embeds it zeroed and releases it when done (a second release of the
 * zeroed pool does nothing). ev[0..nev) are exactly the
 * created events; span holds nscratch doubles, kern nscratch * kern_per_sample. */
typedef struct sample_pool {
  cudaEvent_t *ev;
  int nev;
  double *span, *kern;
  int nscratch;
} sample_pool;

/* Room for n samples; may reallocate ev, span and kern. kern_per_sample must be the same on
 * every call for one pool. 0, or -1 with *e set (what was grown stays, and is released). */
int sample_pool_reserve(sample_pool *p, int n, int kern_per_sample, tf_err *e);

/* Destroys the created events when touch_device (never after a sticky error), frees the
 * arrays and zeroes *p; releasing a zeroed pool does nothing. */
void sample_pool_release(sample_pool *p, int touch_device);

#endif
