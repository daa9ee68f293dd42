/* cpus: the contract is worker/cpus.h. */
#define _GNU_SOURCE
#include "worker/cpus.h"

#include <string.h>
#include <unistd.h>

void cpus_beside(int online, const unsigned char *bound, unsigned char *use) {
  int n = 0;
  for (int c = 0; c < online; c++) n += use[c] = !bound[c];
  if (n == 0) memset(use, 1, (size_t)online);
}

void cpus_beside_mine(cpu_set_t *out) {
  unsigned char bound[CPU_SETSIZE], use[CPU_SETSIZE];
  long online = sysconf(_SC_NPROCESSORS_ONLN);
  int n = online < 1 ? 1 : online > CPU_SETSIZE ? CPU_SETSIZE : (int)online;
  cpu_set_t mine;
  if (sched_getaffinity(0, sizeof mine, &mine) != 0) CPU_ZERO(&mine); /* as if not bound */
  for (int c = 0; c < n; c++) bound[c] = CPU_ISSET(c, &mine) != 0;
  cpus_beside(n, bound, use);
  CPU_ZERO(out);
  for (int c = 0; c < n; c++)
    if (use[c]) CPU_SET(c, out);
}

void cpus_spread_openmp(void) {
  cpu_set_t mine, beside;
  if (sched_getaffinity(0, sizeof mine, &mine) != 0) return;
  cpus_beside_mine(&beside);
  int moved = sched_setaffinity(0, sizeof beside, &beside) == 0;
  volatile int started = 0;
#pragma omp parallel
  started = 1; /* the region only makes the threads */
  (void)started;
  if (moved) sched_setaffinity(0, sizeof mine, &mine);
}
