/* study_replay: `tunefarm study --ledgers`, every decision rule on the same recorded rounds of
 * GPU ledgers written by fixed-pair campaigns (search mode "aa" or "pair", rule "median",
 * every round recorded: campaigns/decide-aa.json, campaigns/decide-gain3.json).
 *
 * Replay, what is counted. Each generation record with "status": "ok" and
 * "correct": true is one generation. Its truth is A/A when the job's best and
 * new arms are the same kernel (name expression and configuration), else a
 * gain; gains are grouped by (campaign, best, new), A/A pairs all in one
 * group. Rule "median" decides the record's rounds exactly as recorded.
 * Rule "sequential" replays its measurement: the recorded rounds in order,
 * each marked by decide_screen_round, up to the first prefix where
 * decide_enough says stop, or all of them when they run out first (on the GPU
 * a screened round would have been run again: such decisions are counted in
 * ran_out). Devices (the UUID of each ledger's header) are never pooled.
 *
 * Ownership: study_replay_init allocates what the struct holds,
 * study_replay_release frees it; a tally pointer stays valid until then. */
#ifndef TF_STUDY_REPLAY_H
#define TF_STUDY_REPLAY_H

#include <stdio.h>

#include "common/decide.h"
#include "common/err.h"
#include "common/msg.h"
#include "common/rule.h"

#define STUDY_REPLAY_MAX_DEVICES 32
#define STUDY_REPLAY_MAX_PAIRS 8    /* truth groups: A/A, and one per gain pair */

typedef struct study_tally {
  long generations;
  long kinds[4]; /* by decision_kind */
  long rounds;   /* recorded rounds the rule read: all of them (median), its prefix (sequential) */
  long screened; /* rounds the clock screen set aside within those */
  long ran_out;  /* sequential: the recorded rounds ended before decide_enough said stop */
} study_tally;

typedef struct study_ratios { /* growable list of per-round ratios new/best */
  double *v;
  long n, cap;
} study_ratios;

typedef struct study_cell { /* one truth group on one device */
  study_tally t[RULE_MAX]; /* by the rule's place in the registry (common/rule.h) */
  study_ratios span;   /* event span, every recorded round of every generation */
  study_ratios kernel; /* kernel time, the rounds where both arms have one */
} study_cell;

typedef struct study_pair { /* one truth group */
  int aa;
  char campaign[64];
  char best_expr[256], new_expr[256]; /* the arms' name expressions (gain groups) */
  char label[768];                    /* for the heading */
} study_pair;

typedef struct study_device {
  char uuid[64];
  char name[128];
  char host[64];
  int ordinal, driver_version;
} study_device;

typedef struct study_replay {
  int ndevices, npairs;
  study_device devices[STUDY_REPLAY_MAX_DEVICES];
  study_pair pairs[STUDY_REPLAY_MAX_PAIRS];
  study_cell *cells;  /* [pair * STUDY_REPLAY_MAX_DEVICES + device] */
  long files;         /* ledgers read */
  long records;       /* generation records with a measurement (a "status") */
  long not_ok;        /* of those: status other than "ok" (not replayed) */
  long incorrect;     /* of those: "correct" false (not replayed) */
  long differ;        /* replayed records whose median decision is not the recorded one */
  char **seen;        /* real paths of the ledgers read: none is read twice */
  long nseen;
  result *res;        /* scratch */
  job *job;           /* scratch */
} study_replay;

int study_replay_init(study_replay *sr, tf_err *e);
void study_replay_release(study_replay *sr);

/* Replay a ledger, or every *.jsonl under a folder (recursively, in sorted order).
 * Bad input (unreadable, not a ledger, a malformed record, a record not measured by
 * the median rule) is TF_EXIT_INPUT with a message naming the file (and line). */
int study_replay_add(study_replay *sr, const char *path, tf_err *e);

/* Markdown: the inputs, then per truth group the measured ratio and one row per
 * (device, rule). */
void study_replay_print(const study_replay *sr, FILE *out);

/* The tally of one (device UUID, truth, rule), or NULL if none was counted. aa: 1 for
 * the A/A group, 0 for the first gain group. */
const study_tally *study_replay_tally(const study_replay *sr, const char *uuid, int aa,
                                      const char *rule);
/* The same cell's per-round event-span ratios. */
const study_cell *study_replay_cell(const study_replay *sr, const char *uuid, int aa);

/* The median of the ratios (NAN if none). */
double study_ratios_median(const study_ratios *r);

/* `tunefarm study --ledgers PATH...`: argv as study_main's. */
int study_replay_main(int argc, char **argv);

#endif
