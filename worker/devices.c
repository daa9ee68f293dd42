/* devices: `tunefarm devices`; see devices.h. */
#include "worker/devices.h"

#include <cjson/cJSON.h>
#include <getopt.h>
#include <stdio.h>
#include <string.h>

#include "common/jsonio.h"    /* defines: jsonio_write_line */
#include "common/msg.h"       /* defines: device_record, device_to_json */
#include "worker/cuda_util.h" /* defines: cuda_device_count, cuda_describe */
#include "worker/nvml.h"      /* defines: nvml_load, nvml_driver_version */

static void devices_usage(FILE *f) {
  fprintf(f,
          "usage: tunefarm devices [--json]\n"
          "\n"
          "List the GPUs this process sees (CUDA_VISIBLE_DEVICES applies), with the tags\n"
          "tunefarm's ledgers carry: index (the ordinal `tunefarm measure --device` takes),\n"
          "name, UUID, PCI bus id, architecture, SM count, memory, L2 size, maximum SM clock\n"
          "and driver. Needs no mpirun. Clocks and the driver's version string come from\n"
          "NVML (libnvidia-ml.so.1) when it loads; without it a note says so on stderr and\n"
          "the maximum clock comes from the CUDA runtime.\n"
          "\n"
          "  --json      a JSON array, one device per line (the ledgers' device record, plus\n"
          "              \"driver\": the driver's version string); [] when there is none\n"
          "  -h, --help  this text\n"
          "\n"
          "Exit status: 0 listed (with --json, also when there is no device: [] and the\n"
          "reason on stderr); 1 when there is no CUDA device (no GPU, no driver, or a\n"
          "driver older than the CUDA runtime): \"no CUDA device: <reason>\" on stderr,\n"
          "or when a device could not be described; 2 bad usage.\n");
}

/* "580.65.06 (CUDA 13.0)", or just the CUDA part without NVML. */
static void devices_driver(const tf_nvml *nv, const device_record *d, char *out, size_t len) {
  char ver[96];
  nvml_driver_version(nv, ver, sizeof ver);
  int major = d->driver_version / 1000, minor = d->driver_version % 1000 / 10;
  if (ver[0])
    snprintf(out, len, "%s (CUDA %d.%d)", ver, major, minor);
  else
    snprintf(out, len, "CUDA %d.%d", major, minor);
}

static void devices_print_row(const device_record *d, const char *driver) {
  printf("%-5d  %-26s  %-40s  %-12s  %-6s  %4d  %7.1f  %6.1f  %7d  %s\n", d->ordinal, d->name,
         d->uuid, d->pci_bus_id, d->arch, d->sm_count, (double)d->mem_bytes / (1024.0 * 1024 * 1024),
         (double)d->l2_bytes / (1024.0 * 1024), d->max_sm_mhz, driver);
}

/* One element of the array: a comma before every one but the first, so that the array is
 * valid JSON while each device keeps a line of its own (scripts count them with grep). */
static int devices_print_json(const device_record *d, const char *driver, int first) {
  cJSON *o = device_to_json(d);
  if (!o) return -1;
  cJSON_AddStringToObject(o, "driver", driver);
  if (!first) fputs(",", stdout);
  int rc = jsonio_write_line(stdout, o);
  cJSON_Delete(o);
  return rc;
}

static int devices_parse(int argc, char **argv, int *json) {
  static const struct option longs[] = {
      {"json", no_argument, 0, 'j'}, {"help", no_argument, 0, 'h'}, {0, 0, 0, 0}};
  int c;
  optind = 1;
  while ((c = getopt_long(argc, argv, "jh", longs, NULL)) != -1) {
    switch (c) {
      case 'j': *json = 1; break;
      case 'h': devices_usage(stdout); return 0;
      default: devices_usage(stderr); return 2;
    }
  }
  if (optind < argc) {
    fprintf(stderr, "tunefarm devices: unexpected argument '%s'\n", argv[optind]);
    devices_usage(stderr);
    return 2;
  }
  return -1; /* go on */
}

int devices_main(int argc, char **argv) {
  int json = 0, rc = devices_parse(argc, argv, &json);
  if (rc >= 0) return rc;
  tf_err e = {0};
  int n = 0;
  if (cuda_device_count(&n, &e)) {
    fprintf(stderr, "%s\n", e.msg); /* "no CUDA device: <reason>" */
    if (!json) return 1;
    puts("[]"); /* none is an answer a script can read */
    return 0;
  }
  tf_nvml nv;
  nvml_load(&nv);
  if (!nv.ok) fprintf(stderr, "tunefarm devices: note: NVML %s; no current clocks\n", nv.why);
  if (!json)
    printf("%-5s  %-26s  %-40s  %-12s  %-6s  %4s  %7s  %6s  %7s  %s\n", "index", "name", "uuid",
           "pci", "arch", "SMs", "mem GiB", "L2 MiB", "max MHz", "driver");
  else
    fputs("[\n", stdout);
  rc = 0;
  int listed = 0;
  for (int i = 0; i < n; i++) {
    device_record d;
    char driver[160];
    tf_err_clear(&e);
    if (cuda_describe(i, &nv, &d, &e)) {
      fprintf(stderr, "tunefarm devices: device %d: %s\n", i, e.msg);
      rc = 1;
      continue;
    }
    devices_driver(&nv, &d, driver, sizeof driver);
    if (!json)
      devices_print_row(&d, driver);
    else if (devices_print_json(&d, driver, listed == 0))
      rc = 1;
    listed++;
  }
  if (json) fputs("]\n", stdout);
  fflush(stdout);
  nvml_unload(&nv);
  return rc;
}
