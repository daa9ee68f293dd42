/* prefetch: the programs of the jobs a device's search may send next, for a JOB message's
 * "prefetch" list, which the device's worker compiles ahead while the GPU measures
 * (worker/compile_pool.h).
 *
 * The guesses are the search's own (search_peek: the next candidates if the job in flight is
 * rejected, then if it is kept); each becomes the program of its job: the job just built with
 * best's and new's name expressions replaced (the same sources and control), which is what
 * job_build would give, without building the rest of a job. Guessing changes nothing in the
 * search: the proposals and the decisions are the same with or without it (tests/mpi/
 * speculation.sh compares the ledgers).
 * Ownership: the list is a new tree the caller deletes (or hands to a message). */
#ifndef TF_PREFETCH_H
#define TF_PREFETCH_H

#include <cjson/cJSON.h>

#include "common/err.h"
#include "common/msg.h"
#include "coordinator/search.h"

/* Up to SEARCH_PEEK_PER * n programs (search_peek's guesses) after `pending`, whose job is
 * `sent`; NULL when there are none (n 0, the search ended) or when out of memory (e). */
cJSON *prefetch_list(const search *s, const search_step *pending, const job *sent, int n,
                     tf_err *e);

#endif
