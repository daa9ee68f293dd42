/* sweep: `tunefarm sweep CAMPAIGN`, every reachable configuration of a campaign's space
 * (coordinator/space.h, as `audit` enumerates it) measured on one device, written as a
 * recorded space (common/spacefile.h) that the replay backend answers jobs from.
 *
 * Two phases. Compile: every configuration's kernel alone, several at once over the node's
 * cores, each in a `tunefarm compile` process (worker/compile_pool.h's), whose own report of
 * its NVRTC time is the configuration's compile time (unknown, null, when the cubin cache
 * already held it: an empty TUNEFARM_CACHE records every one). Measure: one job per
 * configuration in a measure child (worker/protocol.h, the farm's protocol and correctness
 * gate): the reference configuration (the campaign's start) in the best place, the
 * configuration in the new place and the campaign's control, in rotated paired rounds under
 * the median rule (every round recorded), so that each round's reference time can take the
 * device's drift out of the configuration's.
 *
 * Never half-written: every configuration measured is appended to OUT.part at once (flushed;
 * the same command resumes from it, for the same campaign and device), and OUT appears only at
 * the end, written to a temporary file and renamed. Exit status 0, 1 (a device failure, the
 * reference fails its check), 2 (bad input or usage), 3 (no device). */
#ifndef TF_SWEEP_H
#define TF_SWEEP_H

#include "common/campaign.h"
#include "common/err.h"
#include "common/spacefile.h"
#include "coordinator/space.h"

int sweep_main(int argc, char **argv); /* argv[0] is "sweep" */

/* Whether the space file at `space` can answer every job of the campaign at `campaign_path`:
 * a readable space (spacefile_load), of the campaign's template, knobs and problem, holding
 * every configuration the campaign's search can reach. 0, or -1 with e (TF_EXIT_INPUT, one
 * message naming the file and, for a missing one, the configuration). */
int sweep_check_space(const char *campaign_path, const char *space, tf_err *e);
/* The same check for a loaded campaign c and its enumerated space v, keeping the space: 0 with
 * sf filled (the caller releases it, spacefile_release), or -1 with e and sf released. */
int sweep_load_space(const campaign *c, const space_view *v, const char *space, space_file *sf,
                     tf_err *e);

#endif
