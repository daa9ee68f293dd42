/* cpus: which cores a worker's helpers run on.
 *
 * mpirun binds each rank to a core when it starts at most two (one worker on a one-GPU
 * node), and a worker's measure child inherits that binding: the core that launches and
 * times kernels. CPU work beside it, the compile pool's processes and the OpenMP threads of
 * the child's CPU reference and check, belongs on the node's other cores; on one core, the
 * reference at 4096x3072x6144 took 80 s instead of seconds. A worker that is not bound
 * (or is bound to every core) has no core of its own to keep free. Owns nothing; reads and
 * sets only the calling thread's affinity. */
#ifndef TF_CPUS_H
#define TF_CPUS_H

#include <sched.h>

/* As flags over the node's `online` cores: those not in `bound`, the worker's binding, or
 * every core when that leaves none. */
void cpus_beside(int online, const unsigned char *bound, unsigned char *use);

/* cpus_beside for the calling thread's binding (sched_getaffinity). */
void cpus_beside_mine(cpu_set_t *out);

/* Start OpenMP's threads on cpus_beside_mine, while the calling thread keeps its own
 * binding: threads inherit the affinity of the thread that creates them, and OpenMP keeps
 * them for every later parallel region of the process. Call once, before any parallel
 * region. Where the kernel refuses those cores (a cpuset without them), the threads start
 * as bound as the caller. */
void cpus_spread_openmp(void);

#endif
