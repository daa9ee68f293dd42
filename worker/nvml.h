/* nvml: the few NVML calls tunefarm uses (SM clock, clock-event reasons,
 * driver version), loaded at run time.
 *
 * The machines have no nvml.h and linking libnvidia-ml would tie the binary to
 * an installed driver, so libnvidia-ml.so.1 is opened with dlopen and the
 * functions are found with dlsym; the few types and constants used are
 * declared here with NVML's names and values. Everything degrades: when the
 * library, its initialisation or a function is missing, the handle says so in
 * `why`, clocks read as 0, and nothing is ever an error for the caller.
 *
 * Ownership: a tf_nvml is a caller-owned value; nvml_load fills it (and calls
 * nvmlInit_v2), nvml_unload calls nvmlShutdown and closes the library. NVML's
 * init is reference-counted, so two loaded handles in one process are fine. */
#ifndef TF_NVML_H
#define TF_NVML_H

#include <stddef.h>

#include "common/err.h"

/* NVML's own names and values (nvml.h, stable since NVML 2.x). */
typedef int nvmlReturn_t; /* an enum in NVML; 0 is success */
typedef struct nvmlDevice_st *nvmlDevice_t;
typedef int nvmlClockType_t;
enum { TF_NVML_SUCCESS = 0, TF_NVML_CLOCK_SM = 1 };

typedef struct tf_nvml {
  void *lib;        /* dlopen handle, NULL when not loaded */
  int ok;           /* 1: library loaded and nvmlInit_v2 succeeded */
  char why[256];    /* when ok == 0: "unavailable: <reason>" */
  /* Named as NVML names them so that NVML_CHECK's message names the call. Any but
   * the first three may be NULL (an older driver): callers go through the helpers below. */
  nvmlReturn_t (*nvmlInit_v2)(void);
  nvmlReturn_t (*nvmlShutdown)(void);
  const char *(*nvmlErrorString)(nvmlReturn_t);
  nvmlReturn_t (*nvmlDeviceGetHandleByUUID)(const char *uuid, nvmlDevice_t *dev);
  nvmlReturn_t (*nvmlDeviceGetHandleByPciBusId_v2)(const char *bus_id, nvmlDevice_t *dev);
  nvmlReturn_t (*nvmlDeviceGetClockInfo)(nvmlDevice_t dev, nvmlClockType_t type, unsigned *mhz);
  nvmlReturn_t (*nvmlDeviceGetMaxClockInfo)(nvmlDevice_t dev, nvmlClockType_t type, unsigned *mhz);
  /* nvmlDeviceGetCurrentClocksEventReasons, or the older ...ThrottleReasons (same mask) */
  nvmlReturn_t (*nvmlDeviceGetCurrentClocksEventReasons)(nvmlDevice_t dev,
                                                          unsigned long long *reasons);
  nvmlReturn_t (*nvmlSystemGetDriverVersion)(char *version, unsigned len);
} tf_nvml;

/* Load libnvidia-ml.so.1 and initialise NVML. Never fails: n->ok says whether NVML is usable. */
void nvml_load(tf_nvml *n);
/* The same from a named library (tests use a name that does not exist). */
void nvml_load_from(tf_nvml *n, const char *library);
void nvml_unload(tf_nvml *n);

/* One check for every NVML call: fills *e naming the call, file and line; returns -1 unless r is 0. */
int nvml_check(const tf_nvml *n, nvmlReturn_t r, const char *call, const char *file, int line,
               tf_err *e);
#define NVML_CHECK(n, call, e) nvml_check((n), (call), #call, __FILE__, __LINE__, (e))

/* The NVML handle of a device, by UUID ("GPU-...") and else by PCI bus id; -1 with *e if neither
 * is found or NVML is not usable. */
int nvml_device(const tf_nvml *n, const char *uuid, const char *pci_bus_id, nvmlDevice_t *dev,
                tf_err *e);

/* Readings; each returns 0 (and writes 0) when NVML or the function is unavailable. */
unsigned nvml_sm_mhz(const tf_nvml *n, nvmlDevice_t dev);
unsigned nvml_max_sm_mhz(const tf_nvml *n, nvmlDevice_t dev);
unsigned long long nvml_clock_reasons(const tf_nvml *n, nvmlDevice_t dev);
/* "580.65.06"; "" when unavailable. */
void nvml_driver_version(const tf_nvml *n, char *buf, size_t len);

#endif
