/* protocol: one job measured on one device, the same way on every backend.
 *
 * prepare -> correctness gate (every arm, every input set, outputs poisoned by
 * the backend; a kernel its process has checked before on the same inputs takes
 * that check's errors, gate_memo below) -> burn-in (unrecorded; every arm launched) -> the A/A canary
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

/* The checks a measure process has passed. A kernel is checked on every input set the first
 * time a process measures it (each of two identical arms of one job, the A/A pair, too); a
 * later job that brings it again (best and the control in every generation, a candidate
 * measured again) takes the relative errors remembered: the same code
 * on the same inputs (measure.seed) computes the same outputs, and the check is most of the
 * gate's time. A check that failed is not remembered, nor is an arm with an injected
 * fault; the canary's copy (a module loaded for that job) is checked every time. The result's
 * `checked` says which arms this job checked. Zero-initialise; the caller owns it (the
 * measure child keeps one for its life). */
#define GATE_MEMO_SLOTS 4096
typedef struct gate_memo {
  unsigned long long key[GATE_MEMO_SLOTS]; /* 0: empty */
  double err[GATE_MEMO_SLOTS];
  int used;
} gate_memo;

/* What a measure process lends each job: the checks it has passed, and a question asked
 * before the gate and before every round (burn-in, canary, recorded): has the worker dropped
 * this job
 * (run-ahead, worker/worker.h)? A dropped job ends there with status error, an answer the
 * worker throws away. NULL (or a NULL member): every arm is checked and every job runs to its
 * end (the audit's sweep, the bench). */
typedef struct protocol_ctx {
  gate_memo *memo;
  int (*dropped)(void);
} protocol_ctx;

int protocol_run(const backend_ops *ops, void *self, const job *j, result *r,
                 const protocol_ctx *ctx, tf_err *e);

/* Launches per arm per round after burn-in, for launches of relative spread `spread`
 * (stats_rel_spread; NAN or 0: unknown), under a rule that judges a fixed number of rounds
 * (decide_fixed_rounds; any other rule: measure.samples). A round's ratio new/best is a ratio of two medians
 * of S launches, whose noise is about sqrt(2) * 1.2533 * spread / sqrt(S); for identical
 * kernels the median of measure.rounds such ratios then falls below 1 - min_gain with
 * probability Phi(-min_gain * sqrt(rounds) / (1.2533 * noise)). S is the smallest count that
 * puts this at 0.1%, never below measure.samples; *wanted (when not NULL) gets it, and the
 * return value is it capped at measure.max_samples. docs/design.md, "Samples per round". */
int protocol_samples(const measure_opts *m, const decide_opts *d, double spread, int *wanted);

/* The arm order of recorded round i. */
void protocol_order(int i, int order[ARM_COUNT]);

#endif
