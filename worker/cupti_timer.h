/* cupti_timer: kernel-only time of the launches of one sample batch, from
 * CUPTI activity records (CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL).
 *
 * The event span of a launch includes launch latency and whatever the GPU
 * does between the two events; CUPTI's kernel record holds the kernel's own
 * start and end on the GPU. Both are taken for the same launches.
 *
 * Use: cupti_timer_open once (before or after the CUDA context exists); per
 * batch, with the device idle: cupti_timer_begin, the launches, a stream
 * synchronize, cupti_timer_collect. The batch's kernel records come back in
 * completion order (= launch order on one stream). Memsets (the L2 flush, the
 * clears) are other record kinds and are not counted. The caller compares the
 * count with its number of launches and treats a mismatch as "kernel time
 * unavailable" for that batch: never fatal.
 *
 * CUPTI's buffer callbacks carry no user pointer, so the state behind these
 * functions is one per process (a static in cupti_timer.c, guarded by a mutex
 * because CUPTI may call back from its own thread). */
#ifndef TF_CUPTI_TIMER_H
#define TF_CUPTI_TIMER_H

#include <cupti.h>

#include "common/err.h"

/* One check for every CUPTI call: fills *e naming the call, file and line. */
int cupti_check(CUptiResult r, const char *call, const char *file, int line, tf_err *e);
#define CUPTI_CHECK(call, e) cupti_check((call), #call, __FILE__, __LINE__, (e))

/* Register the buffer callbacks and enable kernel records. -1 with *e if CUPTI refuses
 * (another profiler attached, no CUPTI support): the caller carries on without kernel time. */
int cupti_timer_open(tf_err *e);
/* Flush and disable; safe to call when open failed or was never called. */
void cupti_timer_close(void);

/* Discard every record of earlier work (the device must be idle: synchronize first). */
int cupti_timer_begin(tf_err *e);

/* Flush and copy the durations (end - start, nanoseconds) of the kernel records since
 * cupti_timer_begin into ns[0..max). Returns the number of records seen (which may exceed
 * max: only max are copied), or -1 with *e when CUPTI failed or reported dropped or
 * incomplete records. */
int cupti_timer_collect(double *ns, int max, tf_err *e);

#endif
