/* throughput: what one launch achieves, in TFLOP/s and GB/s, and the device's peak; the one
 * code path `bench` and `report` compute them with (docs/reference/report.md, "Throughput").
 *
 * Work is a spec's `flops` or `bytes` expression (templates/NAME.json, kernels/NAME.json) for
 * one problem and one configuration: the arithmetic and the minimum memory traffic of one
 * launch, not what the kernel happens to move. A rate is that work over a time per launch. */
#ifndef TF_THROUGHPUT_H
#define TF_THROUGHPUT_H

#include "common/msg.h"  /* defines: device_record */
#include "common/spec.h" /* defines: spec, config */

/* Flops (flops 1) or bytes (flops 0) of one launch; 0 when the spec has no such expression or
 * it cannot be evaluated for this configuration. */
double throughput_work(const spec *s, int flops, const long long *dims, const config *c);

/* work per launch over us microseconds per launch, in TFLOP/s (flops 1) or GB/s (flops 0);
 * NAN when either is unknown (work <= 0, us not a positive number). */
double throughput_rate(double work, double us, int flops);

/* 1 when the work is compute-bound (at least 10 flops per byte of minimum traffic, as
 * matmul), so TFLOP/s is the rate to print; 0 for GB/s (layernorm). */
int throughput_unit_flops(const spec *s, const long long *dims, const config *start);

/* FP32 lanes per SM of an architecture ("sm_90"); 0 when it is not in the table. */
int throughput_fp32_lanes(const char *arch);

/* The device's FP32 peak in TFLOP/s: sm_count x FP32 lanes per SM x 2 (an FMA is two flops)
 * x max_sm_mhz; NAN when the arch is not in the table or a count is not recorded. */
double throughput_peak_tflops(const device_record *d);

/* The device's peak memory bandwidth in GB/s: 2 (double data rate) x max_mem_mhz x
 * mem_bus_bits / 8; NAN when either is not recorded (the simulated device, older ledgers). */
double throughput_peak_gbps(const device_record *d);

#endif
