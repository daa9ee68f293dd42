/* cpus: which cores a worker's helpers run on.
 *
 * mpirun binds each rank to a core when it starts at most two (one worker on a one-GPU
 * node), and a worker's measure child inherits that binding: the core that launches and
 * times kernels. CPU work beside it, the compile pool's processes and the OpenMP threads of
 * the child's CPU reference and check, belongs on the node's other cores, or a large CPU
 * reference takes minutes instead of seconds. A worker that is not bound
 * (or is bound to every core) has no core of its own to keep free. A worker that a scheduler
 * or the user confined (srun -c N --cpu-bind=cores, taskset) has only its mask: its helpers
 * share it with the measure child. Owns nothing; reads and sets only the calling thread's
 * affinity. */
#ifndef TF_CPUS_H
#define TF_CPUS_H

#include <sched.h>

/* How many CPUs a worker's helpers may use, and how many workers of its node use the same.
 *
 * A worker's affinity mask means one of two things. Where Open MPI's mpirun bound the rank
 * itself (OMPI_MCA_orte_bound_at_launch; its default for one or two ranks is a core each), the
 * mask only places the measure child: the worker may use the node's online CPUs, shared with
 * the node's other workers, and its helpers go beside the mask. Any other mask (srun's
 * --cpu-bind, taskset, numactl, a container's cpuset) is what the worker was given: its
 * helpers stay inside it. Workers whose masks together hold more CPUs than the node has
 * share them: as many share a mask as its CPUs times the node's workers over the node's CPUs,
 * rounded up (every worker on every CPU: all of them; each on cores of its own: one). */
typedef struct cpus_share {
  int cpus;     /* the CPUs the worker may use, >= 1 */
  int sharers;  /* workers of the node that use the same CPUs, 1..workers on the node */
  int placed;   /* 1: the mask is mpirun's placement, not a limit */
} cpus_share;

/* The share from the CPUs in the worker's mask (`mask`), the node's online CPUs, whether
 * mpirun placed it, and the node's workers (< 1 counts as 1). */
cpus_share cpus_share_of(int mask, long online, int placed, int workers_on_node);

/* cpus_share_of for the calling thread's mask; an unreadable mask counts as every online CPU. */
cpus_share cpus_share_mine(int workers_on_node);

/* The CPUs a share gives each worker: cpus / sharers, at least 1. */
int cpus_per_worker(const cpus_share *s);

/* As flags over `n` CPU ids: those not in `bound`, the worker's binding, or every id when
 * that leaves none. */
void cpus_beside(int n, const unsigned char *bound, unsigned char *use);

/* Where the calling thread's helpers run. Placed by mpirun (cpus_share): cpus_beside for its
 * binding (sched_getaffinity) over the configured CPU ids, online or not (the kernel narrows a
 * set to the CPUs online and allowed), so that an offline CPU does not hide the ids above it;
 * a thread bound to every online CPU gets every id. Otherwise its own mask, which its helpers
 * must not leave. A binding that cannot be read gives every id. */
void cpus_beside_mine(cpu_set_t *out);

/* Start OpenMP's threads on cpus_beside_mine while the calling thread keeps its binding,
 * when that binding holds fewer CPUs than OpenMP's threads (OMP_NUM_THREADS, or else one per
 * online CPU, which this then asks for): threads inherit the affinity of the thread that
 * creates them, and libgomp keeps its team for the later parallel regions this thread starts
 * with as many threads or fewer (the reference's and the check's). A binding that holds the
 * threads (a socket, or none) is left alone, and so is any placement the user asked for
 * (OMP_PROC_BIND, OMP_PLACES, GOMP_CPU_AFFINITY: libgomp then places threads within the
 * process's first binding), and so is a mask mpirun did not place (cpus_share: the threads
 * stay in it). Call once, before any parallel region. Returns 0, or -1 with
 * errno when the caller could not be put back on its own binding (it then runs on
 * cpus_beside_mine). Where the kernel refuses those CPUs, nothing changes. */
int cpus_spread_openmp(void);

#endif
