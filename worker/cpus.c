/* cpus: the contract is worker/cpus.h. */
#define _GNU_SOURCE
#include "worker/cpus.h"

#include <stdlib.h>
#include <string.h>
#include <unistd.h>

void cpus_beside(int n, const unsigned char *bound, unsigned char *use) {
  int left = 0;
  for (int c = 0; c < n; c++) left += use[c] = !bound[c];
  if (left == 0) memset(use, 1, (size_t)n);
}

/* CPU ids run up to the configured CPUs (online or not), or past them where the binding
 * holds a higher id (a container's view of /sys may count fewer). */
static int cpu_ids(const cpu_set_t *mine) {
  long conf = sysconf(_SC_NPROCESSORS_CONF);
  int n = conf < 1 ? 1 : conf > CPU_SETSIZE ? CPU_SETSIZE : (int)conf;
  for (int c = CPU_SETSIZE - 1; c >= n; c--)
    if (CPU_ISSET(c, mine)) return c + 1;
  return n;
}

/* Open MPI 4's mpirun says so in its ranks' environment when it bound them itself. */
static int placed_by_mpirun(void) {
  const char *b = getenv("OMPI_MCA_orte_bound_at_launch");
  return b && *b && strcmp(b, "0") != 0;
}

cpus_share cpus_share_of(int mask, long online, int placed, int workers_on_node) {
  int workers = workers_on_node > 0 ? workers_on_node : 1;
  long node = online > mask ? online : mask;
  cpus_share s = {.cpus = mask, .sharers = 1, .placed = placed};
  if (node < 1) node = 1;
  if (placed || mask < 1) s.cpus = (int)node;
  long together = (long)s.cpus * workers;
  s.sharers = placed ? workers : (int)((together + node - 1) / node);
  if (s.sharers > workers) s.sharers = workers;
  if (s.sharers < 1) s.sharers = 1;
  return s;
}

cpus_share cpus_share_mine(int workers_on_node) {
  cpu_set_t mine;
  int mask = sched_getaffinity(0, sizeof mine, &mine) == 0 ? CPU_COUNT(&mine) : 0;
  return cpus_share_of(mask, sysconf(_SC_NPROCESSORS_ONLN), placed_by_mpirun(), workers_on_node);
}

int cpus_per_worker(const cpus_share *s) {
  int per = s->sharers > 0 ? s->cpus / s->sharers : s->cpus;
  return per > 1 ? per : 1;
}

void cpus_beside_mine(cpu_set_t *out) {
  unsigned char bound[CPU_SETSIZE], use[CPU_SETSIZE];
  long online = sysconf(_SC_NPROCESSORS_ONLN);
  cpu_set_t mine;
  if (sched_getaffinity(0, sizeof mine, &mine) != 0) CPU_ZERO(&mine);
  int n = cpu_ids(&mine), held = CPU_COUNT(&mine), bound_here = held > 0 && held < online;
  if (bound_here && !placed_by_mpirun()) { /* a limit, not a placement: stay inside it */
    *out = mine;
    return;
  }
  for (int c = 0; c < n; c++) bound[c] = bound_here && CPU_ISSET(c, &mine);
  cpus_beside(n, bound, use);
  CPU_ZERO(out);
  for (int c = 0; c < n; c++)
    if (use[c]) CPU_SET(c, out);
}
