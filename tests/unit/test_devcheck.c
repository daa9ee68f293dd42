/* Tests of worker/devcheck.c, the gate's comparisons on the device.
 *
 * Without arguments (label `unit`, `nvrtc`): its kernels compile with NVRTC for sm_90, so a
 * machine without a GPU still catches a broken source. With --gpu (ctest `gpu_devcheck`,
 * label `gpu`; exit 77, a visible skip, without a device): on the device, every verdict equals
 * reference_compare's on the same elements, for every element type, every kind of check,
 * with non-finite elements, planted failures and lengths that are no multiple of a block;
 * and devcheck_same finds one changed byte anywhere in a buffer. */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "compile/compile.h"
#include "common/reference.h"
#include "tests/unit/testutil.h"
#include "worker/cuda_util.h"
#include "worker/devcheck.h"

static void devcheck_source_should_compile_for_sm_90(void **state) {
  (void)state;
  const compile_req req = {.text = devcheck_source(), .text_name = "devcheck",
                           .name_exprs = devcheck_kernels, .nexprs = 2, .arch = "sm_90"};
  compile_result r;
  tf_err e = {0};
  if (compile_program(&req, &r, &e))
    fail_msg("the device check does not compile: %s\n%s", e.msg, r.log ? r.log : "");
  assert_true(r.cubin_size > 4);
  assert_non_null(strstr(r.lowered[0], "tf_check_compare"));
  assert_non_null(strstr(r.lowered[1], "tf_check_same"));
  compile_release(&r);
}

/* ---------------------------------------------------------------- on the device */

typedef struct gpu {
  devcheck d;
  cudaStream_t s;
  uint64_t rng;
} gpu;

static gpu G;

static int gpu_setup(void **state) {
  (void)state;
  tf_err e = {0};
  char arch[16];
  struct cudaDeviceProp p;
  if (CUDA_CHECK(cudaGetDeviceProperties(&p, 0), &e) ||
      CUDA_CHECK(cudaStreamCreateWithFlags(&G.s, cudaStreamNonBlocking), &e))
    return fprintf(stderr, "%s\n", e.msg), -1;
  snprintf(arch, sizeof arch, "sm_%d%d", p.major, p.minor);
  if (devcheck_open(&G.d, arch, NULL, &e)) return fprintf(stderr, "%s\n", e.msg), -1;
  G.rng = 0x9e3779b97f4a7c15ull;
  return 0;
}

static int gpu_teardown(void **state) {
  (void)state;
  devcheck_close(&G.d);
  (void)cudaStreamDestroy(G.s);
  return 0;
}

static double uniform(void) { return (double)(test_xorshift64(&G.rng) >> 11) / 9007199254740992.0; }

/* n elements of `type` near 1 in magnitude (integers 0..15) into a new host array. */
static void *fill(int type, size_t n) {
  void *h = malloc(n * reference_type_size(type) + 1);
  assert_non_null(h);
  for (size_t i = 0; i < n; i++)
    reference_put(type, h, i, reference_type_is_float(type) ? 2.0 * uniform() - 1.0
                                                            : floor(16.0 * uniform()));
  return h;
}

static void *upload(const void *h, size_t bytes) {
  void *d = NULL;
  tf_err e = {0};
  if (CUDA_CHECK(cudaMalloc(&d, bytes ? bytes : 1), &e) ||
      CUDA_CHECK(cudaMemcpy(d, h, bytes, cudaMemcpyHostToDevice), &e) ||
      CUDA_CHECK(cudaDeviceSynchronize(), &e)) /* a copy from pageable memory may return early,
                                                * and the check's stream does not wait for it */
    fail_msg("%s", e.msg);
  return d;
}

/* got against ref on the host and on the device: the same verdict. */
static void same_verdict(const void *got, int gt, const void *ref, int rt, size_t n,
                         const reference_check *c, const char *what) {
  reference_verdict host, dev;
  reference_compare(got, gt, ref, rt, n, c, 1e-5, &host);
  void *dg = upload(got, n * reference_type_size(gt)), *dr = upload(ref, n * reference_type_size(rt));
  tf_err e = {0};
  if (devcheck_compare(&G.d, G.s, dg, gt, dr, rt, n, c, 1e-5, &dev, &e)) fail_msg("%s", e.msg);
  cudaFree(dg);
  cudaFree(dr);
  if (host.pass != dev.pass || host.bad != dev.bad)
    fail_msg("%s: host pass %d bad %lld, device pass %d bad %lld", what, host.pass, host.bad,
             dev.pass, dev.bad);
  if (host.bad >= 0 && !((host.got == dev.got || (isnan(host.got) && isnan(dev.got))) &&
                         (host.want == dev.want || (isnan(host.want) && isnan(dev.want)))))
    fail_msg("%s: element %lld: host %g/%g, device %g/%g", what, host.bad, host.got, host.want,
             dev.got, dev.want);
  const double a = host.rel_err, b = dev.rel_err;
  if (!(a == b || fabs(a - b) <= 1e-9 * fabs(a) + 1e-300))
    fail_msg("%s: relative error %.17g on the host, %.17g on the device", what, a, b);
}

static void devcheck_should_judge_as_the_host_does(void **state) {
  (void)state;
  static const size_t sizes[] = {1, 255, 257, 100003, 1000001};
  const reference_check checks[] = {{REFERENCE_CHECK_L2, 0, 0, 0},
                                    {REFERENCE_CHECK_TOL, 1e-3, 1e-4, 0},
                                    {REFERENCE_CHECK_TOL, 1e-3, 1e-4, 1},
                                    {REFERENCE_CHECK_EXACT, 0, 0, 0}};
  for (int gt = 0; gt < REFERENCE_NTYPES; gt++) {
    const int rt = gt == REFERENCE_F16 || gt == REFERENCE_BF16 ? REFERENCE_F32 : gt;
    for (size_t k = 0; k < sizeof sizes / sizeof sizes[0]; k++) {
      const size_t n = sizes[k];
      void *ref = fill(rt, n), *got = malloc(n * reference_type_size(gt) + 1);
      assert_non_null(got);
      for (int v = 0; v < 4; v++) { /* equal, near, a planted failure, non-finite elements */
        for (size_t i = 0; i < n; i++) {
          double x = reference_get(rt, ref, i);
          if (v >= 1 && reference_type_is_float(gt)) x *= 1.0 + 1e-6 * (2.0 * uniform() - 1.0);
          reference_put(gt, got, i, x);
        }
        if (v == 2) reference_put(gt, got, n * 2 / 3, reference_get(gt, got, n * 2 / 3) + 3.0);
        if (v == 3 && reference_type_is_float(gt) && reference_type_is_float(rt)) {
          reference_put(gt, got, n / 2, NAN);
          reference_put(rt, ref, n / 2, NAN);
          reference_put(gt, got, n - 1, INFINITY);
        }
        for (size_t c = 0; c < sizeof checks / sizeof checks[0]; c++) {
          char what[128];
          snprintf(what, sizeof what, "%s against %s, n %zu, variant %d, check %zu",
                   reference_type_name(gt), reference_type_name(rt), n, v, c);
          same_verdict(got, gt, ref, rt, n, &checks[c], what);
        }
      }
      free(ref);
      free(got);
    }
  }
}

static void devcheck_should_find_one_changed_byte(void **state) {
  (void)state;
  static const size_t sizes[] = {1, 15, 16, 17, 4096, 1000003};
  for (size_t k = 0; k < sizeof sizes / sizeof sizes[0]; k++) {
    const size_t n = sizes[k];
    unsigned char *h = fill(REFERENCE_U8, n);
    void *a = upload(h, n);
    const size_t at[] = {0, n / 2, n - 1};
    for (size_t w = 0; w < 3; w++) {
      h[at[w]] ^= 0x40;
      void *b = upload(h, n);
      int same = -1;
      tf_err e = {0};
      if (devcheck_same(&G.d, G.s, a, b, n, &same, &e)) fail_msg("%s", e.msg);
      assert_int_equal(same, 0);
      h[at[w]] ^= 0x40;
      if (CUDA_CHECK(cudaMemcpy(b, h, n, cudaMemcpyHostToDevice), &e) ||
          CUDA_CHECK(cudaDeviceSynchronize(), &e) || devcheck_same(&G.d, G.s, a, b, n, &same, &e))
        fail_msg("%s", e.msg);
      assert_int_equal(same, 1);
      cudaFree(b);
    }
    cudaFree(a);
    free(h);
  }
}

int main(int argc, char **argv) {
  if (argc > 1 && strcmp(argv[1], "--gpu") == 0) {
    tf_err e = {0};
    int n = 0;
    if (cuda_device_count(&n, &e) || n < 1) {
      printf("skip: %s: the device check needs a GPU\n", e.msg[0] ? e.msg : "no CUDA device");
      return 77;
    }
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(devcheck_should_judge_as_the_host_does),
        cmocka_unit_test(devcheck_should_find_one_changed_byte),
    };
    return cmocka_run_group_tests(tests, gpu_setup, gpu_teardown);
  }
  const struct CMUnitTest tests[] = {
      cmocka_unit_test_setup_teardown(devcheck_source_should_compile_for_sm_90,
                                      fresh_cache_setup, fresh_cache_teardown),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
