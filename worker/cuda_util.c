/* cuda_util: CUDA_CHECK, sticky errors, device count and record, sample pool; see cuda_util.h. */
#include "worker/cuda_util.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "compile/compile.h" /* defines: compile_nvrtc_version */
#include "worker/backend.h" /* defines: TF_STICKY */

/* Errors about the machine rather than the work: no driver, no device. They are never sticky
 * in our sense (there was no context to lose), and probing after them is meaningless. */
static int cuda_error_is_environment(cudaError_t r) {
  switch (r) {
  case cudaErrorInsufficientDriver:
  case cudaErrorNoDevice:
  case cudaErrorInvalidDevice:
  case cudaErrorInitializationError:
  case cudaErrorCallRequiresNewerDriver:
  case cudaErrorSystemDriverMismatch:
  case cudaErrorCompatNotSupportedOnDevice:
  case cudaErrorDevicesUnavailable:
  case cudaErrorStubLibrary:
  case cudaErrorSystemNotReady:
  case cudaErrorCudartUnloading:
    return 1;
  default:
    return 0;
  }
}

int cuda_error_is_sticky(cudaError_t r) {
  switch (r) {
  case cudaSuccess:
    return 0;
  /* documented: "the process must be terminated and relaunched" */
  case cudaErrorIllegalAddress:
  case cudaErrorLaunchTimeout:
  case cudaErrorAssert:
  case cudaErrorHardwareStackError:
  case cudaErrorIllegalInstruction:
  case cudaErrorMisalignedAddress:
  case cudaErrorInvalidAddressSpace:
  case cudaErrorInvalidPc:
  case cudaErrorLaunchFailure:
  case cudaErrorTensorMemoryLeak:
  case cudaErrorECCUncorrectable:
  case cudaErrorNvlinkUncorrectable:
  case cudaErrorContextIsDestroyed:
    return 1;
  default:
    break;
  }
  if (cuda_error_is_environment(r)) return 0;
  /* Anything else is sticky if it survives a reset of the last error. */
  (void)cudaGetLastError();
  return cudaGetLastError() != cudaSuccess;
}

int cuda_check(cudaError_t r, const char *call, const char *file, int line, tf_err *e) {
  if (r == cudaSuccess) return 0;
  int sticky = cuda_error_is_sticky(r);
  return tf_fail(e, sticky ? TF_STICKY : TF_EXIT_FAIL, "%s failed: %s (%s)%s [%s:%d]", call,
                 cudaGetErrorString(r), cudaGetErrorName(r),
                 sticky ? "; the CUDA context is unusable" : "", file, line);
}

int cuda_device_count(int *n, tf_err *e) {
  int count = 0;
  *n = 0;
  cudaError_t r = cudaGetDeviceCount(&count);
  const char *vis = getenv("CUDA_VISIBLE_DEVICES");
  char where[160] = "";
  if (vis) snprintf(where, sizeof where, " (CUDA_VISIBLE_DEVICES='%.100s')", vis);
  if (r != cudaSuccess) {
    (void)cudaGetLastError();
    const char *hint = r == cudaErrorInsufficientDriver
                           ? " (is the NVIDIA driver installed and at least as new as the CUDA runtime?)"
                           : where;
    return tf_fail(e, TF_EXIT_FAIL, "no CUDA device: cudaGetDeviceCount() failed: %s (%s)%s",
                   cudaGetErrorString(r), cudaGetErrorName(r), hint);
  }
  if (count <= 0)
    return tf_fail(e, TF_EXIT_FAIL, "no CUDA device: cudaGetDeviceCount() found none%s", where);
  *n = count;
  return 0;
}

int cuda_choose_ordinal(int asked, int visible, const char *cuda_visible_devices, int *ordinal,
                        tf_err *e) {
  *ordinal = -1;
  if (asked >= 0 && asked < visible) {
    *ordinal = asked;
    return 0;
  }
  if (asked > 0 && visible == 1) {
    *ordinal = 0;
    return 0;
  }
  const char *vis = cuda_visible_devices;
  return tf_fail(e, TF_EXIT_FAIL,
                 "cuda device ordinal %d is out of range: %d device(s) visible%s%.100s%s; a node "
                 "runs at most one worker per visible GPU, or each worker sees exactly one GPU",
                 asked, visible, vis ? " (CUDA_VISIBLE_DEVICES='" : "", vis ? vis : "",
                 vis ? "')" : "");
}

void cuda_uuid_str(const cudaUUID_t *u, char *out, size_t len) {
  const unsigned char *b = (const unsigned char *)u->bytes;
  snprintf(out, len,
           "GPU-%02x%02x%02x%02x-%02x%02x-%02x%02x-%02x%02x-%02x%02x%02x%02x%02x%02x", b[0], b[1],
           b[2], b[3], b[4], b[5], b[6], b[7], b[8], b[9], b[10], b[11], b[12], b[13], b[14],
           b[15]);
}

/* Copy with truncation (a device name may be longer than the record keeps). */
static void cuda_copy_str(char *dst, size_t len, const char *src) {
  size_t n = strnlen(src, len - 1);
  memcpy(dst, src, n);
  dst[n] = '\0';
}

int cuda_describe(int ordinal, const tf_nvml *nv, device_record *d, tf_err *e) {
  struct cudaDeviceProp prop;
  memset(d, 0, sizeof *d);
  memset(&prop, 0, sizeof prop);
  if (CUDA_CHECK(cudaGetDeviceProperties(&prop, ordinal), e)) return -1;
  cuda_copy_str(d->backend, sizeof d->backend, "cuda");
  prop.name[sizeof prop.name - 1] = '\0';
  cuda_copy_str(d->name, sizeof d->name, prop.name);
  cuda_uuid_str(&prop.uuid, d->uuid, sizeof d->uuid);
  if (CUDA_CHECK(cudaDeviceGetPCIBusId(d->pci_bus_id, (int)sizeof d->pci_bus_id, ordinal), e))
    return -1;
  d->pci_bus_id[sizeof d->pci_bus_id - 1] = '\0';
  d->cc_major = prop.major;
  d->cc_minor = prop.minor;
  snprintf(d->arch, sizeof d->arch, "sm_%d%d", prop.major, prop.minor);
  d->sm_count = prop.multiProcessorCount;
  d->mem_bytes = (long long)prop.totalGlobalMem;
  d->l2_bytes = prop.l2CacheSize;

  nvmlDevice_t nd = NULL;
  tf_err ignored;
  if (nv && nv->ok && nvml_device(nv, d->uuid, d->pci_bus_id, &nd, &ignored) == 0) {
    d->max_sm_mhz = (int)nvml_max_sm_mhz(nv, nd);
    d->cur_sm_mhz = (int)nvml_sm_mhz(nv, nd);
  }
  if (d->max_sm_mhz <= 0) { /* the runtime's peak clock, in kHz */
    int khz = 0;
    if (cudaDeviceGetAttribute(&khz, cudaDevAttrClockRate, ordinal) == cudaSuccess && khz > 0)
      d->max_sm_mhz = khz / 1000;
    else
      (void)cudaGetLastError();
  }

  /* the memory's peak clock (kHz) and bus width: the peak bandwidth a report measures against */
  int mem_khz = 0, bus = 0;
  if (cudaDeviceGetAttribute(&mem_khz, cudaDevAttrMemoryClockRate, ordinal) == cudaSuccess &&
      cudaDeviceGetAttribute(&bus, cudaDevAttrGlobalMemoryBusWidth, ordinal) == cudaSuccess &&
      mem_khz > 0 && bus > 0) {
    d->max_mem_mhz = mem_khz / 1000;
    d->mem_bus_bits = bus;
  } else {
    (void)cudaGetLastError();
  }

  if (CUDA_CHECK(cudaDriverGetVersion(&d->driver_version), e)) return -1;
  if (CUDA_CHECK(cudaRuntimeGetVersion(&d->runtime_version), e)) return -1;
  compile_nvrtc_version(&d->nvrtc_major, &d->nvrtc_minor);
  if (gethostname(d->host, sizeof d->host) != 0) cuda_copy_str(d->host, sizeof d->host, "unknown");
  d->host[sizeof d->host - 1] = '\0';
  d->ordinal = ordinal;
  return 0;
}

int sample_pool_reserve(sample_pool *p, int n, int kern_per_sample, tf_err *e) {
  if (n > p->nscratch) {
    double *span = realloc(p->span, (size_t)n * sizeof *span);
    if (span) p->span = span;
    double *kern = realloc(p->kern, (size_t)n * (size_t)kern_per_sample * sizeof *kern);
    if (kern) p->kern = kern;
    if (!span || !kern) return tf_fail(e, TF_EXIT_FAIL, "out of memory for %d samples", n);
    p->nscratch = n;
  }
  if (2 * n > p->nev) {
    cudaEvent_t *ev = realloc(p->ev, (size_t)(2 * n) * sizeof *ev);
    if (!ev) return tf_fail(e, TF_EXIT_FAIL, "out of memory for %d events", 2 * n);
    p->ev = ev;
    for (; p->nev < 2 * n; p->nev++)
      if (CUDA_CHECK(cudaEventCreate(&p->ev[p->nev]), e)) return -1;
  }
  return 0;
}

void sample_pool_release(sample_pool *p, int touch_device) {
  if (touch_device)
    for (int i = 0; i < p->nev; i++) (void)cudaEventDestroy(p->ev[i]);
  free(p->ev);
  free(p->span);
  free(p->kern);
  memset(p, 0, sizeof *p);
}
