/* protocol: one job measured on one device, the same way on every backend.
 *
 * prepare -> correctness gate (every arm, every input set, outputs poisoned by
 * the backend) -> burn-in (unrecorded; every arm launched) -> the A/A canary
 * when the job asks for one (best against a second copy of itself in new's
 * place, worker/placement.h) -> recorded rounds, the arm order cycling through
 * all six permutations so that best runs before new in every other round ->
 * stop when the rule says enough (decide_enough) or at the cap. Where each
 * arm's code and buffers sit in each round is worker/placement.h's rule. A round the clock screen rejects is kept, marked, and run
 * again; more than decide.max_screened of them end the measurement (the
 * decision then refuses the generation as noisy).
 * Returns 0 with *r filled (status says ok / compile_error / error), or -1 when
 * the device is unusable (e->code == TF_STICKY): the caller reports a
 * fault and must not touch the device again. */
#ifndef TF_PROTOCOL_H
#define TF_PROTOCOL_H

#include "common/msg.h"
#include "worker/backend.h"

int protocol_run(const backend_ops *ops, void *self, const job *j, result *r, tf_err *e);

/* The arm order of recorded round i. */
void protocol_order(int i, int order[ARM_COUNT]);

#endif
