/* nvml: libnvidia-ml.so.1 through dlopen; see nvml.h for why. */
#include "worker/nvml.h"

#include <dlfcn.h>
#include <stdio.h>
#include <string.h>

#define NVML_LIBRARY "libnvidia-ml.so.1"

/* dlsym's void * to a function pointer is what POSIX guarantees works. */
#define NVML_SYM(n, field, symbol) ((n)->field = (__typeof__((n)->field))dlsym((n)->lib, symbol))

static void nvml_unusable(tf_nvml *n, const char *reason) {
  snprintf(n->why, sizeof n->why, "unavailable: %s", reason);
  if (n->lib) dlclose(n->lib);
  n->lib = NULL;
  n->ok = 0;
}

void nvml_load_from(tf_nvml *n, const char *library) {
  memset(n, 0, sizeof *n);
  n->lib = dlopen(library, RTLD_NOW | RTLD_LOCAL);
  char reason[200];
  if (!n->lib) {
    const char *why = dlerror();
    snprintf(reason, sizeof reason, "cannot open the NVIDIA driver's NVML library (%s)",
             why ? why : library);
    nvml_unusable(n, reason);
    return;
  }
  NVML_SYM(n, nvmlInit_v2, "nvmlInit_v2");
  NVML_SYM(n, nvmlShutdown, "nvmlShutdown");
  NVML_SYM(n, nvmlErrorString, "nvmlErrorString");
  NVML_SYM(n, nvmlDeviceGetHandleByUUID, "nvmlDeviceGetHandleByUUID");
  NVML_SYM(n, nvmlDeviceGetHandleByPciBusId_v2, "nvmlDeviceGetHandleByPciBusId_v2");
  NVML_SYM(n, nvmlDeviceGetClockInfo, "nvmlDeviceGetClockInfo");
  NVML_SYM(n, nvmlDeviceGetMaxClockInfo, "nvmlDeviceGetMaxClockInfo");
  NVML_SYM(n, nvmlDeviceGetCurrentClocksEventReasons, "nvmlDeviceGetCurrentClocksEventReasons");
  if (!n->nvmlDeviceGetCurrentClocksEventReasons) /* drivers before the rename */
    NVML_SYM(n, nvmlDeviceGetCurrentClocksEventReasons, "nvmlDeviceGetCurrentClocksThrottleReasons");
  NVML_SYM(n, nvmlSystemGetDriverVersion, "nvmlSystemGetDriverVersion");
  if (!n->nvmlInit_v2 || !n->nvmlShutdown) {
    snprintf(reason, sizeof reason, "%s lacks nvmlInit_v2 or nvmlShutdown", library);
    nvml_unusable(n, reason);
    return;
  }
  nvmlReturn_t r = n->nvmlInit_v2();
  if (r != TF_NVML_SUCCESS) {
    const char *what = n->nvmlErrorString ? n->nvmlErrorString(r) : NULL;
    snprintf(reason, sizeof reason, "nvmlInit_v2() failed: %s (nvml error %d)",
             what ? what : "error", (int)r);
    nvml_unusable(n, reason);
    return;
  }
  n->ok = 1;
}

void nvml_load(tf_nvml *n) { nvml_load_from(n, NVML_LIBRARY); }

void nvml_unload(tf_nvml *n) {
  if (!n) return;
  if (n->ok && n->nvmlShutdown) (void)n->nvmlShutdown();
  if (n->lib) dlclose(n->lib);
  n->lib = NULL;
  n->ok = 0;
}

int nvml_check(const tf_nvml *n, nvmlReturn_t r, const char *call, const char *file, int line,
               tf_err *e) {
  if (r == TF_NVML_SUCCESS) return 0;
  const char *what = n && n->nvmlErrorString ? n->nvmlErrorString(r) : NULL;
  return tf_fail(e, TF_EXIT_FAIL, "%s failed: %s (nvml error %d) [%s:%d]", call,
                 what ? what : "unknown error", (int)r, file, line);
}

int nvml_device(const tf_nvml *n, const char *uuid, const char *pci_bus_id, nvmlDevice_t *dev,
                tf_err *e) {
  *dev = NULL;
  if (!n || !n->ok) return tf_fail(e, TF_EXIT_FAIL, "nvml %s", n ? n->why : "not loaded");
  /* By UUID first: it is exact, and NVML sees every GPU whatever CUDA_VISIBLE_DEVICES says. */
  if (uuid && uuid[0] && n->nvmlDeviceGetHandleByUUID &&
      n->nvmlDeviceGetHandleByUUID(uuid, dev) == TF_NVML_SUCCESS)
    return 0;
  if (!pci_bus_id || !pci_bus_id[0] || !n->nvmlDeviceGetHandleByPciBusId_v2)
    return tf_fail(e, TF_EXIT_FAIL, "nvml has no device with UUID '%s'", uuid ? uuid : "");
  return NVML_CHECK(n, n->nvmlDeviceGetHandleByPciBusId_v2(pci_bus_id, dev), e);
}

unsigned nvml_sm_mhz(const tf_nvml *n, nvmlDevice_t dev) {
  unsigned mhz = 0;
  if (!n || !n->ok || !dev || !n->nvmlDeviceGetClockInfo) return 0;
  if (n->nvmlDeviceGetClockInfo(dev, TF_NVML_CLOCK_SM, &mhz) != TF_NVML_SUCCESS) return 0;
  return mhz;
}

unsigned nvml_max_sm_mhz(const tf_nvml *n, nvmlDevice_t dev) {
  unsigned mhz = 0;
  if (!n || !n->ok || !dev || !n->nvmlDeviceGetMaxClockInfo) return 0;
  if (n->nvmlDeviceGetMaxClockInfo(dev, TF_NVML_CLOCK_SM, &mhz) != TF_NVML_SUCCESS) return 0;
  return mhz;
}

unsigned long long nvml_clock_reasons(const tf_nvml *n, nvmlDevice_t dev) {
  unsigned long long mask = 0;
  if (!n || !n->ok || !dev || !n->nvmlDeviceGetCurrentClocksEventReasons) return 0;
  if (n->nvmlDeviceGetCurrentClocksEventReasons(dev, &mask) != TF_NVML_SUCCESS) return 0;
  return mask;
}

void nvml_driver_version(const tf_nvml *n, char *buf, size_t len) {
  if (!len) return;
  buf[0] = '\0';
  if (!n || !n->ok || !n->nvmlSystemGetDriverVersion) return;
  if (n->nvmlSystemGetDriverVersion(buf, (unsigned)len) != TF_NVML_SUCCESS) buf[0] = '\0';
  buf[len - 1] = '\0';
}
