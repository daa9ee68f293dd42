/* placement: where each arm's kernel code and buffers sit in the measure child, round by
 * round (docs/design.md, "Placement").
 *
 * Where the driver puts an arm's buffers can favour that arm for the life of the process
 * (docs/design.md, "Placement"). So the default layout gives every arm the SAME
 * buffers (nothing about memory placement can differ between arms), and the A/A canary runs
 * best against a second loaded copy of itself from new's place to check what remains. The
 * other layouts exist to measure placement, never to tune with.
 *
 * A placement names the kernel (the arm whose code runs), the loaded copy of the code it
 * runs from (0, or 1 for a second load of the job's cubins, a module per kernel) and the
 * buffer slot it reads and writes. The backend allocates placement_slots() buffer slots and
 * placement_copies() code copies for a job; the protocol asks placement_of() for every launch. Pure
 * functions, no state. */
#ifndef TF_PLACEMENT_H
#define TF_PLACEMENT_H

#include "common/msg.h"

#define PLACEMENT_MAX_SLOTS ARM_COUNT
#define PLACEMENT_MAX_COPIES 2

typedef struct placement {
  int arm;   /* whose kernel runs (ARM_*) */
  int code;  /* which loaded copy of the code: 0 or 1 */
  int bufs;  /* which buffer slot: 0 .. placement_slots() - 1 */
} placement;

/* Buffer slots the job needs: 1 for the shared layout, one per arm otherwise. */
int placement_slots(const job *j);
/* Loaded copies of the code the job needs: 2 when new runs from its own copy or when the
 * job runs a canary, else 1. */
int placement_copies(const job *j);
/* Rounds cycle through the input sets (round % input_sets); the phase, 0 or 1, flips after
 * each full cycle: the swap layout exchanges best's and new's buffers by phase, and the canary
 * alternates its order by phase, so both balance on every input set. */
int placement_phase(const measure_opts *m, int round);
/* Where `arm` runs in recorded (or burn-in) round `round`. */
placement placement_of(const measure_opts *m, int round, int arm);
/* The canary's round `round`: which == 0 is best in its own place, which == 1 is best's
 * code from the second module copy, with the buffers new would have in that round. */
placement placement_canary(const measure_opts *m, int round, int which);

#endif
