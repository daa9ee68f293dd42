/* audit: `tunefarm check` and `tunefarm audit`, the static view of a campaign.
 *
 * check: load and validate the campaign and its template; compile the start's instantiation,
 *   the reference kernel and a committed control kernel (cubin cache) to compare their
 *   parameters with the specs (compile/iface.h), a mismatch is bad input; print the size of the knob space, how many configurations every
 *   constraint accepts, how many are reachable from the start by one- and
 *   two-knob moves through accepted configurations (what a search can visit),
 *   and how many each constraint refuses; warn, per launch value (grid, block,
 *   shared memory, buffer size, argument), of the accepted configurations where
 *   it cannot be computed (division by zero, overflow, out of its range).
 * audit: the same interface check and enumeration, then render and compile every reachable
 *   configuration with NVRTC (through the cubin cache, in batches of several
 *   instantiations per program), print counts and every failure with its
 *   NVRTC log, and fail if any accepted configuration does not compile. Under
 *   mpirun the batches are spread over the ranks. --run also launches every
 *   reachable configuration on the GPU, three to a job, through the farm's
 *   measurement protocol (worker/protocol.h) with no timed rounds: prepared
 *   as a generation is, and every arm checked against the template's reference on
 *   two input sets. */
#ifndef TF_AUDIT_H
#define TF_AUDIT_H

#include "coordinator/space.h" /* defines: space_view, space_enumerate, space_at */

int check_main(int argc, char **argv);
int audit_main(int argc, char **argv); /* MPI is initialised by main when under mpirun */

#endif
