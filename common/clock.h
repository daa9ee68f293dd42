/* clock: the one monotonic clock every deadline, wait and timing of the farm reads, in
 * seconds as a double (CLOCK_MONOTONIC: never steps back when the wall clock is set). */
#ifndef TF_CLOCK_H
#define TF_CLOCK_H

double tf_monotonic_s(void);

#endif
