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

/* As flags over `n` CPU ids: those not in `bound`, the worker's binding, or every id when
 * that leaves none. */
void cpus_beside(int n, const unsigned char *bound, unsigned char *use);

/* cpus_beside for the calling thread's binding (sched_getaffinity) over the configured CPU
 * ids, online or not (the kernel narrows a set to the CPUs online and allowed), so that an
 * offline CPU does not hide the ids above it. A thread bound to every online CPU, or whose
 * binding cannot be read, gets every id. */
void cpus_beside_mine(cpu_set_t *out);

/* Start OpenMP's threads on cpus_beside_mine while the calling thread keeps its binding,
 * when that binding holds fewer CPUs than OpenMP's threads (OMP_NUM_THREADS, or else one per
 * online CPU, which this then asks for): threads inherit the affinity of the thread that
 * creates them, and libgomp keeps its team for the later parallel regions this thread starts
 * with as many threads or fewer (the reference's and the check's). A binding that holds the
 * threads (a socket, or none) is left alone, and so is any placement the user asked for
 * (OMP_PROC_BIND, OMP_PLACES, GOMP_CPU_AFFINITY: libgomp then places threads within the
 * process's first binding). Call once, before any parallel region. Returns 0, or -1 with
 * errno when the caller could not be put back on its own binding (it then runs on
 * cpus_beside_mine). Where the kernel refuses those CPUs, nothing changes. */
int cpus_spread_openmp(void);

#endif
