/* strategy_random: proposer "random" (coordinator/propose.h, the table). Every candidate is a
 * configuration of the space the search may reach (the reachable list `run` enumerated),
 * drawn uniformly, that the search has not tried: the first untried point of a sequence drawn
 * from the segment's seed, so the proposal is a function of the seed and the tried set alone
 * and a resumed search draws what the interrupted one would have. It learns nothing from the
 * decisions; best is the fastest kept so far (each candidate is measured against it). It is
 * the baseline the other strategies have to beat. */
#include <string.h>

#include "coordinator/propose.h" /* defines: proposer_ops, propose_draw_reachable */

static void random_init(proposer *p, const spec *s, const long long *dims,
                        unsigned long long seed, const double *param) {
  proposer_start(p, s, dims, seed, param);
}

static int random_next(const proposer *p, const config *best, const tried_set *tried,
                       int prefer_two, config *out, int *nchanged) {
  (void)prefer_two;
  if (!propose_draw_reachable(p, tried, p->seed, out)) return 0;
  *nchanged = propose_changed(p->s, best, out);
  return 1;
}

static int random_restart(const proposer *p, const tried_set *tried, unsigned long long seed,
                          config *out) {
  return propose_draw_reachable(p, tried, seed, out);
}

static void random_feedback(proposer *p, const config *best, const config *cand,
                            const propose_obs *o) {
  (void)p, (void)best, (void)cand, (void)o;
}

const proposer_ops proposer_random = {
    .name = "random", .init = random_init, .next = random_next, .restart = random_restart,
    .feedback = random_feedback};
