/* placement: the layout rules (see placement.h). */
#include "worker/placement.h"

int placement_slots(const job *j) {
  return j->measure.layout == LAYOUT_SHARED ? 1 : PLACEMENT_MAX_SLOTS;
}

int placement_copies(const job *j) {
  return j->measure.code == CODE_PER_ARM || j->canary_rounds > 0 ? 2 : 1;
}

int placement_phase(const measure_opts *m, int round) {
  int sets = m->input_sets > 0 ? m->input_sets : 1;
  return round / sets % 2;
}

static int slot_of(const measure_opts *m, int round, int arm) {
  switch (m->layout) {
    case LAYOUT_PER_ARM: return arm;
    case LAYOUT_SWAP: /* best and new exchange buffers once every input set has been used,
                       * so each pair of slots is exchanged on the same input set */
      return arm == ARM_CONTROL || placement_phase(m, round) == 0 ? arm : ARM_NEW - arm;
    default: return 0;
  }
}

placement placement_of(const measure_opts *m, int round, int arm) {
  placement p = {.arm = arm, .code = 0, .bufs = slot_of(m, round, arm)};
  if (m->code == CODE_PER_ARM && arm == ARM_NEW) p.code = 1;
  return p;
}

placement placement_canary(const measure_opts *m, int round, int which) {
  if (which == 0) return (placement){.arm = ARM_BEST, .code = 0, .bufs = slot_of(m, round, ARM_BEST)};
  return (placement){.arm = ARM_BEST, .code = 1, .bufs = slot_of(m, round, ARM_NEW)};
}
