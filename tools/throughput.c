/* throughput: rates and the device's peak (tools/throughput.h). */
#include "tools/throughput.h"

#include <math.h>
#include <string.h>

double throughput_work(const spec *s, int flops, const long long *dims, const config *c) {
  long long v = 0;
  if (spec_eval(s, flops ? s->flops : s->bytes, dims, c, &v, NULL) || v <= 0) return 0.0;
  return (double)v;
}

double throughput_rate(double work, double us, int flops) {
  if (!(work > 0.0) || !(us > 0.0) || !isfinite(us)) return NAN;
  return work / (us * 1e-6) / (flops ? 1e12 : 1e9);
}

int throughput_unit_flops(const spec *s, const long long *dims, const config *start) {
  double flops = throughput_work(s, 1, dims, start), bytes = throughput_work(s, 0, dims, start);
  return flops > 0 && (bytes <= 0 || flops >= 10.0 * bytes);
}

/* FP32 lanes (CUDA cores) per SM, from NVIDIA's architecture whitepapers and the CUDA C++
 * Programming Guide's throughput table: Volta, Turing and GA100 have 64, GA10x, Ada, Hopper
 * and Blackwell 128. An arch not listed has no known peak rather than a guessed one. */
static const struct {
  const char *arch;
  int lanes;
} lanes_table[] = {
    {"sm_70", 64},  {"sm_72", 64},  {"sm_75", 64},   {"sm_80", 64},  {"sm_86", 128},
    {"sm_87", 128}, {"sm_89", 128}, {"sm_90", 128},  {"sm_90a", 128}, {"sm_100", 128},
    {"sm_120", 128},
};

int throughput_fp32_lanes(const char *arch) {
  for (size_t i = 0; i < sizeof lanes_table / sizeof lanes_table[0]; i++)
    if (strcmp(arch, lanes_table[i].arch) == 0) return lanes_table[i].lanes;
  return 0;
}

double throughput_peak_tflops(const device_record *d) {
  int lanes = throughput_fp32_lanes(d->arch);
  if (lanes == 0 || d->sm_count <= 0 || d->max_sm_mhz <= 0) return NAN;
  return (double)d->sm_count * lanes * 2.0 * (double)d->max_sm_mhz * 1e6 / 1e12;
}

double throughput_peak_gbps(const device_record *d) {
  if (d->max_mem_mhz <= 0 || d->mem_bus_bits <= 0) return NAN;
  return 2.0 * (double)d->max_mem_mhz * 1e6 * (double)d->mem_bus_bits / 8.0 / 1e9;
}
