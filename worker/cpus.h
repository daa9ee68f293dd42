/* cpus: which cores a worker's helpers run on.
 *
 * mpirun binds each rank to a core when it starts at most two (one worker on a one-GPU
 * node), and a worker's measure child inherits that binding: the core that launches and
 * times kernels. CPU work beside it, the compile pool's processes, belongs on the node's
 * other cores. A worker that is not bound
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


#endif
