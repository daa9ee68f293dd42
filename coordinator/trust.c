/* trust: whether one device's measure processes can be trusted (coordinator/trust.h). */
#include "coordinator/trust.h"

#include <stdio.h>
#include <string.h>

void trust_init(trust *t, const canary_opts *canary, int fresh_every) {
  memset(t, 0, sizeof *t);
  t->canary = *canary;
  t->fresh_every = fresh_every;
  trust_begin_run(t);
}

void trust_begin_run(trust *t) {
  t->vetted_child = 0;
  t->canary_due = t->canary.rounds > 0;
  t->fresh_due = 0;
  t->since_canary = t->since_fresh = 0;
}

int trust_allows(const trust *t, const trust_fact *f) {
  if (t->canary.rounds == 0 || f->status != RESULT_OK || !f->correct) return 1;
  if (f->canary != TRUST_NO_CANARY) return f->canary == TRUST_CANARY_OK;
  return f->child == t->vetted_child;
}

void trust_apply(trust *t, const trust_fact *f) {
  const canary_opts *k = &t->canary;
  t->canary_due = t->fresh_due = 0; /* the job carried them */
  if (f->asked_canary) t->since_canary = 0;
  if (f->asked_fresh) t->since_fresh = 0;
  if (f->canary == TRUST_CANARY_OK) {
    t->canaries++;
    t->vetted_child = f->child;
    t->biased_in_row = 0;
  } else if (f->canary == TRUST_CANARY_BIASED) {
    t->canaries++;
    t->biased++;
    t->biased_in_row++;
    t->vetted_child = 0;
    t->fresh_due = 1;
  }
  if (f->untrusted) t->canary_due = 1;
  t->since_canary++;
  t->since_fresh++;
  if (t->fresh_every > 0 && t->since_fresh >= t->fresh_every) t->fresh_due = 1;
  if (k->rounds > 0 && (t->fresh_due || f->status == RESULT_FAULT ||
                        (k->every > 0 && t->since_canary >= k->every)))
    t->canary_due = 1; /* after a fault the worker measures in a fresh process */
  if (f->untrusted) {
    t->untrusted++;
    if (t->biased_in_row > k->max_restarts) t->given_up = 1;
  }
}

void trust_why(const trust *t, char *buf, size_t len) {
  snprintf(buf, len, "the canary found %d measure processes in a row biased beyond %.2f%%: "
           "this GPU's verdicts cannot be trusted", t->biased_in_row,
           100.0 * t->canary.threshold);
}
