/* Unit tests of the CPU-side parts of the cuda backend (worker/cuda_backend.c,
 * worker/cuda_util.c, worker/nvml.c, worker/cupti_timer.c, worker/devices.c):
 * what must hold on a machine without a GPU or a driver (CI), and still holds,
 * or is skipped visibly, on a GPU machine. GPU behaviour is tested under the
 * ctest label `gpu`. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "common/msg.h"
#include "worker/backend.h"
#include "worker/cuda_util.h"
#include "worker/cupti_timer.h"
#include "worker/devices.h"
#include "worker/nvml.h"

#define ABSENT_NVML "libnvidia-ml-tunefarm-test-absent.so.1"

/* 1 when this machine has a usable CUDA device (then the no-GPU cases are skipped). */
static int have_gpu(int *n) {
  tf_err e = {0};
  int count = 0;
  int ok = cuda_device_count(&count, &e) == 0;
  if (n) *n = count;
  return ok;
}

/* ---------------------------------------------------------------- no GPU present */

static void cuda_open_should_refuse_without_a_device(void **state) {
  (void)state;
  if (have_gpu(NULL)) {
    print_message("a CUDA device is present: the no-device case cannot be checked here\n");
    skip();
  }
  tf_err e = {0};
  void *self = (void *)&e; /* must be reset to NULL */
  backend_opts o = {.ordinal = 0, .cache_dir = NULL};
  assert_int_equal(backend_cuda.open(&self, &o, &e), -1);
  assert_null(self);
  assert_int_not_equal(e.code, 0);
  assert_int_not_equal(e.code, TF_STICKY);
  /* a clear message that names the reason */
  assert_int_equal(strncmp(e.msg, "no CUDA device: ", 16), 0);
  assert_true(strlen(e.msg) > 16);
  assert_non_null(strstr(e.msg, "cudaGetDeviceCount"));
  print_message("open without a device: %s\n", e.msg);
}

static void cuda_open_should_tolerate_null_options(void **state) {
  (void)state;
  if (have_gpu(NULL)) skip();
  tf_err e = {0};
  void *self = NULL;
  assert_int_equal(backend_cuda.open(&self, NULL, &e), -1);
  assert_null(self);
  assert_non_null(strstr(e.msg, "no CUDA device"));
}

static void cuda_open_should_refuse_an_ordinal_out_of_range(void **state) {
  (void)state;
  int n = 0;
  if (!have_gpu(&n)) {
    print_message("no CUDA device: the ordinal check cannot be reached here\n");
    skip();
  }
  tf_err e = {0};
  void *self = NULL;
  /* With one device visible every non-negative ordinal opens it (cuda_choose_ordinal). */
  backend_opts o = {.ordinal = n > 1 ? n : -1, .cache_dir = NULL};
  assert_int_equal(backend_cuda.open(&self, &o, &e), -1);
  assert_null(self);
  assert_non_null(strstr(e.msg, "out of range"));
}

/* ---------------------------------------------------------------- which device a worker opens */

static void cuda_choose_ordinal_should_take_the_asked_device_when_visible(void **state) {
  (void)state;
  tf_err e = {0};
  int got = -7;
  assert_int_equal(cuda_choose_ordinal(0, 1, NULL, &got, &e), 0);
  assert_int_equal(got, 0);
  assert_int_equal(cuda_choose_ordinal(3, 8, "0,1,2,3,4,5,6,7", &got, &e), 0);
  assert_int_equal(got, 3);
  assert_int_equal(cuda_choose_ordinal(1, 2, NULL, &got, &e), 0);
  assert_int_equal(got, 1);
  assert_int_equal(e.code, 0);
}

/* srun --gpus-per-task=1: worker 2 of a node sees one GPU, its own, as ordinal 0. */
static void cuda_choose_ordinal_should_take_the_only_visible_device(void **state) {
  (void)state;
  tf_err e = {0};
  int got = -7;
  assert_int_equal(cuda_choose_ordinal(2, 1, "2", &got, &e), 0);
  assert_int_equal(got, 0);
  assert_int_equal(cuda_choose_ordinal(7, 1, NULL, &got, &e), 0);
  assert_int_equal(got, 0);
  assert_int_equal(e.code, 0);
}

static void cuda_choose_ordinal_should_refuse_what_is_not_visible(void **state) {
  (void)state;
  tf_err e = {0};
  int got = -7;
  /* two visible, the third worker of the node: no guess between them */
  assert_int_equal(cuda_choose_ordinal(2, 2, "4,5", &got, &e), -1);
  assert_int_equal(got, -1);
  assert_int_not_equal(e.code, 0);
  assert_non_null(strstr(e.msg, "ordinal 2 is out of range: 2 device(s) visible"));
  assert_non_null(strstr(e.msg, "CUDA_VISIBLE_DEVICES='4,5'"));
  assert_non_null(strstr(e.msg, "one worker per visible GPU"));
  print_message("%s\n", e.msg);
  tf_err_clear(&e);
  assert_int_equal(cuda_choose_ordinal(-1, 1, NULL, &got, &e), -1);
  assert_null(strstr(e.msg, "CUDA_VISIBLE_DEVICES"));
  tf_err_clear(&e);
  assert_int_equal(cuda_choose_ordinal(0, 0, "", &got, &e), -1);
  assert_non_null(strstr(e.msg, "0 device(s) visible (CUDA_VISIBLE_DEVICES='')"));
}

static void devices_should_say_no_cuda_device_and_exit_1(void **state) {
  (void)state;
  if (have_gpu(NULL)) skip();
  char *argv[] = {"devices", NULL};
  assert_int_equal(devices_main(1, argv), 1);
}

static void devices_should_answer_help_and_refuse_bad_usage(void **state) {
  (void)state;
  char *help[] = {"devices", "--help", NULL};
  assert_int_equal(devices_main(2, help), 0);
  char *bad[] = {"devices", "--frobnicate", NULL};
  assert_int_equal(devices_main(2, bad), 2);
  char *extra[] = {"devices", "gpu0", NULL};
  assert_int_equal(devices_main(2, extra), 2);
}

/* ---------------------------------------------------------------- NVML missing */

static void nvml_should_report_unavailable_without_the_library(void **state) {
  (void)state;
  tf_nvml n;
  nvml_load_from(&n, ABSENT_NVML);
  assert_int_equal(n.ok, 0);
  assert_null(n.lib);
  assert_int_equal(strncmp(n.why, "unavailable: ", 13), 0);
  assert_non_null(strstr(n.why, "libnvidia-ml"));
  /* readings degrade to 0, never an error */
  assert_int_equal(nvml_sm_mhz(&n, NULL), 0);
  assert_int_equal(nvml_max_sm_mhz(&n, NULL), 0);
  assert_true(nvml_clock_reasons(&n, NULL) == 0);
  char ver[80] = "x";
  nvml_driver_version(&n, ver, sizeof ver);
  assert_string_equal(ver, "");
  /* asking for a device handle says why there is none */
  tf_err e = {0};
  nvmlDevice_t dev = (nvmlDevice_t)&e;
  assert_int_equal(nvml_device(&n, "GPU-00000000-0000-0000-0000-000000000000", "0000:00:00.0",
                               &dev, &e), -1);
  assert_null(dev);
  assert_non_null(strstr(e.msg, "unavailable"));
  nvml_unload(&n);
  nvml_unload(&n); /* twice is harmless */
}

/* The driver's NVML, whichever this machine has: usable, with the calls nvml.h requires and a
 * driver version, or unavailable with the reason and every reading at 0 (nvml.h's contract). */
static void nvml_default_load_should_never_fail(void **state) {
  (void)state;
  tf_nvml n;
  nvml_load(&n);
  tf_err e = {0};
  nvmlDevice_t dev = (nvmlDevice_t)&e;
  char ver[80] = "x";
  nvml_driver_version(&n, ver, sizeof ver);
  if (n.ok) {
    print_message("nvml here: driver %s\n", ver);
    assert_non_null(n.lib);
    assert_string_equal(n.why, "");
    assert_non_null(n.nvmlInit_v2);
    assert_non_null(n.nvmlShutdown);
    assert_true(ver[0] >= '0' && ver[0] <= '9' && strchr(ver, '.')); /* "580.65.06" */
    /* a device NVML does not have: a defined error, no handle */
    assert_int_equal(nvml_device(&n, "GPU-00000000-0000-0000-0000-000000000000", NULL, &dev, &e),
                     -1);
    assert_null(dev);
    assert_non_null(strstr(e.msg, "no device with UUID 'GPU-00000000"));
  } else {
    print_message("nvml here: %s\n", n.why);
    assert_null(n.lib);
    assert_int_equal(strncmp(n.why, "unavailable: ", 13), 0);
    assert_string_equal(ver, "");
    assert_int_equal(nvml_device(&n, "GPU-00000000-0000-0000-0000-000000000000", NULL, &dev, &e),
                     -1);
    assert_null(dev);
    assert_non_null(strstr(e.msg, "unavailable"));
    assert_int_equal(nvml_sm_mhz(&n, NULL), 0);
  }
  nvml_unload(&n);
  assert_null(n.lib);
  assert_int_equal(n.ok, 0);
}

static void nvml_check_should_name_the_call(void **state) {
  (void)state;
  tf_nvml n;
  nvml_load_from(&n, ABSENT_NVML);
  tf_err e = {0};
  assert_int_equal(nvml_check(&n, 0, "nvmlInit_v2()", "x.c", 1, &e), 0);
  assert_int_equal(nvml_check(&n, 3, "nvmlDeviceGetClockInfo(dev, 1, &mhz)", "x.c", 12, &e), -1);
  assert_non_null(strstr(e.msg, "nvmlDeviceGetClockInfo(dev, 1, &mhz) failed"));
  assert_non_null(strstr(e.msg, "x.c:12"));
  nvml_unload(&n);
}

/* ---------------------------------------------------------------- CUDA and CUPTI checks */

static void cuda_check_should_name_the_call_and_flag_sticky_errors(void **state) {
  (void)state;
  tf_err e = {0};
  assert_int_equal(cuda_check(cudaSuccess, "cudaFree(p)", "x.c", 1, &e), 0);
  assert_int_equal(cuda_check(cudaErrorIllegalAddress, "cudaStreamSynchronize(s)", "x.c", 42, &e),
                   -1);
  assert_int_equal(e.code, TF_STICKY);
  assert_non_null(strstr(e.msg, "cudaStreamSynchronize(s) failed"));
  assert_non_null(strstr(e.msg, "cudaErrorIllegalAddress"));
  assert_non_null(strstr(e.msg, "x.c:42"));
  assert_int_equal(cuda_check(cudaErrorInsufficientDriver, "cudaSetDevice(0)", "x.c", 2, &e), -1);
  assert_int_equal(e.code, TF_EXIT_FAIL);
}

static void cuda_sticky_list_should_match_the_runtime_documentation(void **state) {
  (void)state;
  const cudaError_t sticky[] = {cudaErrorIllegalAddress,     cudaErrorLaunchFailure,
                                cudaErrorHardwareStackError, cudaErrorIllegalInstruction,
                                cudaErrorMisalignedAddress,  cudaErrorInvalidPc,
                                cudaErrorAssert,             cudaErrorLaunchTimeout,
                                cudaErrorInvalidAddressSpace};
  for (size_t i = 0; i < sizeof sticky / sizeof sticky[0]; i++)
    assert_true(cuda_error_is_sticky(sticky[i]));
  assert_false(cuda_error_is_sticky(cudaSuccess));
  assert_false(cuda_error_is_sticky(cudaErrorNoDevice));
  assert_false(cuda_error_is_sticky(cudaErrorInsufficientDriver));
}

static void cupti_check_should_name_the_call(void **state) {
  (void)state;
  tf_err e = {0};
  assert_int_equal(cupti_check(CUPTI_SUCCESS, "cuptiActivityFlushAll(1)", "x.c", 1, &e), 0);
  assert_int_equal(cupti_check(CUPTI_ERROR_INVALID_PARAMETER, "cuptiActivityEnable(k)", "x.c", 5,
                               &e), -1);
  assert_non_null(strstr(e.msg, "cuptiActivityEnable(k) failed"));
}

static void cupti_timer_should_refuse_batches_when_not_open(void **state) {
  (void)state;
  tf_err e = {0};
  double ns[4];
  cupti_timer_close(); /* never opened: harmless */
  assert_int_equal(cupti_timer_begin(&e), -1);
  assert_non_null(strstr(e.msg, "not open"));
  assert_int_equal(cupti_timer_collect(ns, 4, &e), -1);
}

/* ---------------------------------------------------------------- the device record */

static void cuda_uuid_should_read_as_nvidia_smi_prints_it(void **state) {
  (void)state;
  cudaUUID_t u;
  for (int i = 0; i < 16; i++) u.bytes[i] = (char)(i == 0 ? 0xf3 : i);
  char s[64];
  cuda_uuid_str(&u, s, sizeof s);
  assert_string_equal(s, "GPU-f3010203-0405-0607-0809-0a0b0c0d0e0f");
}

static void device_record_should_survive_json(void **state) {
  (void)state;
  device_record d, back;
  memset(&d, 0, sizeof d);
  snprintf(d.backend, sizeof d.backend, "cuda");
  snprintf(d.name, sizeof d.name, "NVIDIA H200");
  cudaUUID_t u;
  for (int i = 0; i < 16; i++) u.bytes[i] = (char)(0x3f + 7 * i);
  cuda_uuid_str(&u, d.uuid, sizeof d.uuid);
  snprintf(d.pci_bus_id, sizeof d.pci_bus_id, "0000:19:00.0");
  d.cc_major = 9;
  d.cc_minor = 0;
  snprintf(d.arch, sizeof d.arch, "sm_90");
  d.sm_count = 132;
  d.mem_bytes = 150754820096LL;
  d.l2_bytes = 62914560LL;
  d.max_sm_mhz = 1980;
  d.cur_sm_mhz = 345;
  d.driver_version = 13000;
  d.runtime_version = 13000;
  d.nvrtc_major = 13;
  d.nvrtc_minor = 0;
  snprintf(d.host, sizeof d.host, "gpu-node-07");
  d.ordinal = 1;

  cJSON *o = device_to_json(&d);
  assert_non_null(o);
  tf_err e = {0};
  assert_int_equal(device_from_json(o, &back, &e), 0);
  cJSON_Delete(o);
  assert_string_equal(back.backend, d.backend);
  assert_string_equal(back.name, d.name);
  assert_string_equal(back.uuid, d.uuid);
  assert_string_equal(back.pci_bus_id, d.pci_bus_id);
  assert_int_equal(back.cc_major, 9);
  assert_int_equal(back.cc_minor, 0);
  assert_string_equal(back.arch, "sm_90");
  assert_int_equal(back.sm_count, 132);
  assert_true(back.mem_bytes == d.mem_bytes);
  assert_true(back.l2_bytes == d.l2_bytes);
  assert_int_equal(back.max_sm_mhz, 1980);
  assert_int_equal(back.cur_sm_mhz, 345);
  assert_int_equal(back.driver_version, 13000);
  assert_int_equal(back.runtime_version, 13000);
  assert_int_equal(back.nvrtc_major, 13);
  assert_int_equal(back.nvrtc_minor, 0);
  assert_string_equal(back.host, d.host);
  assert_int_equal(back.ordinal, 1);
  char u8[9];
  device_uuid8(&back, u8);
  assert_int_equal((int)strlen(u8), 8);
  assert_int_equal(strncmp(u8, d.uuid + 4, 8), 0);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(cuda_open_should_refuse_without_a_device),
      cmocka_unit_test(cuda_open_should_tolerate_null_options),
      cmocka_unit_test(cuda_open_should_refuse_an_ordinal_out_of_range),
      cmocka_unit_test(cuda_choose_ordinal_should_take_the_asked_device_when_visible),
      cmocka_unit_test(cuda_choose_ordinal_should_take_the_only_visible_device),
      cmocka_unit_test(cuda_choose_ordinal_should_refuse_what_is_not_visible),
      cmocka_unit_test(devices_should_say_no_cuda_device_and_exit_1),
      cmocka_unit_test(devices_should_answer_help_and_refuse_bad_usage),
      cmocka_unit_test(nvml_should_report_unavailable_without_the_library),
      cmocka_unit_test(nvml_default_load_should_never_fail),
      cmocka_unit_test(nvml_check_should_name_the_call),
      cmocka_unit_test(cuda_check_should_name_the_call_and_flag_sticky_errors),
      cmocka_unit_test(cuda_sticky_list_should_match_the_runtime_documentation),
      cmocka_unit_test(cupti_check_should_name_the_call),
      cmocka_unit_test(cupti_timer_should_refuse_batches_when_not_open),
      cmocka_unit_test(cuda_uuid_should_read_as_nvidia_smi_prints_it),
      cmocka_unit_test(device_record_should_survive_json),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
