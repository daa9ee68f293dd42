/* report_model: ledgers read whole for the writers of `tunefarm report` (tools/report.h).
 *
 * report_ledger_read reads one ledger through the record codec and the search machine
 * (ledger_scan, ledger_best): every generation's numbers, the restarts, the end, the measure
 * processes and their canaries, the reasons grouped, the final best and what it is worth
 * against the start and the control. The writers only print what it holds: Markdown
 * (report.c), JSON and CSV (report_data.c), T4 (report_t4.c), HTML (report_html.c). A ledger is one
 * device's search; nothing here combines two.
 *
 * Numbers are microseconds per launch, medians over a generation's recorded rounds with the
 * screened ones left out (as every reader does, coordinator/record.h); NAN where a record has
 * none. docs/reference/report.md defines every number the writers print.
 *
 * Ownership: report_ledger_read fills a caller-owned report_ledger and allocates what it
 * holds; report_ledger_release frees it (also after a failed read). */
#ifndef TF_REPORT_MODEL_H
#define TF_REPORT_MODEL_H

#include <stdio.h>

#include "common/decide.h"
#include "common/err.h"
#include "common/msg.h"
#include "coordinator/record.h"

/* One generation record. */
typedef struct report_gen {
  long long generation;
  int restart;               /* the search it belongs to: 0 the first, k the one restart k began */
  int duel;                  /* restart k's best (new) against the champion (best) */
  int measured;              /* 0: a static refusal (no rounds) */
  int untrusted;             /* measured by a process no canary vouched for: decided nothing */
  int correct, cache_hit;
  decision_kind decision;
  result_status status;
  char *reason;              /* the decision in words, whole; owned */
  char *detail;              /* the status's detail, or NULL; owned */
  char constraint[SPEC_NAME];
  char time[32];
  record_cfg best, new_cfg;
  double before_us, after_us, control_us;                /* best's, new's, the control's */
  double before_kernel_us, after_kernel_us, control_kernel_us;
  double median_ratio, kernel_median_ratio, control_drift;
  double *ratios;            /* new/best of every unscreened round (event span); owned */
  double *new_rounds_us;     /* new's median of each of those rounds; owned */
  double *best_rounds_us;    /* best's median of each of those rounds; owned */
  int nratios;
  double rel_err_new;
  double compile_ms, wall_s;
  result_times times;        /* where the job's wall_s went (zero: unmeasured, or not recorded) */
  int child;                 /* the measure process (0: none named) and its run */
  char run[32];
  int has_canary, canary_biased;
  double canary_ratio[2], canary_lo[2], canary_hi[2]; /* [0] event span, [1] kernel time */
  double answer_us;          /* the search's answer after this record: its time, NAN before one */
  double search_best_us;     /* the best of the search this generation belongs to: its time */
} report_gen;

typedef struct report_restart {
  int restart;
  long long after;           /* the last generation before it */
  double champion_us;
  char *reason;              /* owned */
} report_restart;

/* Reasons of one outcome grouped by their words: two reasons are one group when they differ
 * only in their numbers. The first reason of a group is kept whole, with the range of each of
 * its numbers over the group. */
#define REPORT_MAX_NUMBERS 16
typedef struct report_reason {
  char *first;               /* owned */
  char *words;               /* the grouping key: the reason with every number taken out; owned */
  int count;
  size_t order;              /* order of first appearance: ties are listed in it */
  int nnum;                  /* numbers in the reason (at most REPORT_MAX_NUMBERS counted) */
  double lo[REPORT_MAX_NUMBERS], hi[REPORT_MAX_NUMBERS];
} report_reason;

typedef struct report_outcome {
  const char *name;          /* "rejected", "refused", "ambiguous" */
  int count;
  report_reason *groups;
  size_t ngroups, cap;
} report_outcome;

enum { REPORT_REJECT, REPORT_REFUSED, REPORT_AMBIGUOUS, REPORT_OUTCOMES };

/* One measure process (a run's child): its latest canary and, in an A/A study, new/best of
 * every round it measured (both arms the same configuration). */
typedef struct report_process {
  char run[32];
  int child;
  int generations;           /* measured generations, the untrusted ones included */
  int canaries;
  double canary[2], lo[2], hi[2]; /* the latest canary: ratio copy/best and 95% interval */
  char verdict[16];          /* of the latest canary; "" when none ran */
  double *aa[2];             /* A/A rounds: [0] event span, [1] kernel time (NAN if absent) */
  int naa, capaa;
  int keeps, decided;        /* A/A: keeps among the decided (trusted) generations */
} report_process;

/* What one arm's launch achieves at a time per launch (docs/reference/report.md, "Throughput"): the
 * spec's flops and bytes over it (tools/throughput.h). NAN where unknown. */
typedef struct report_rate {
  double us;
  double tflops, gbps;
  double peak_fraction;      /* tflops over the device's FP32 peak */
  double bw_fraction;        /* gbps over the device's peak memory bandwidth */
} report_rate;

/* The measured effect of one knob's moves (docs/reference/report.md, "Knob effects"): over the trusted,
 * judged generations whose change touches that knob alone, the median of their median
 * new/best ratios; all 1 for every move of the knob, else the moves from -> to. */
typedef struct report_effect {
  char knob[SPEC_NAME];
  int all;
  long long from, to;
  int count;
  double median;
} report_effect;

typedef struct report_ledger {
  const char *path;          /* borrowed */
  device_record dev;
  char campaign[64], campaign_path[SPEC_PATH], backend[16], mode[16], created[32];
  char root[SPEC_PATH]; /* the project root the ledger's header recorded, or "" */
  char control[256];         /* the control arm: a committed kernel or an instantiation */
  report_gen *gens;
  size_t ngens, capgens;
  report_restart *restarts;
  size_t nrestarts, caprestarts;
  report_outcome out[REPORT_OUTCOMES];
  report_process *procs;
  size_t nprocs, capprocs;
  long long rounds;          /* recorded rounds, screened ones included */
  int keeps;
  int aa;                    /* every measured generation compared a configuration with itself */
  int ended;
  char *end_reason;          /* owned; NULL while running or interrupted */
  int reopens;               /* reopen records: a later run let the ended search go on */
  /* where the GPU's time went, over the records that say it (times, elapsed_s): the sum over
   * runs of each run's last elapsed_s (its first job to its last result), the measuring time
   * in it, and its measured generations; busy fraction = measure_s / wall_s, decisions per
   * hour = timed / wall_s * 3600 (docs/reference/report.md) */
  double wall_s, measure_s;
  long timed;
  /* measured generations, those refused for the control's drift, and of those the ones whose
   * best and new held within the tolerance over the same (unscreened) rounds: the control
   * alone moved (docs/design.md, "Control drift"; `run` prints the same per run) */
  long measured, drifted, drifted_alone;
  char timed_run[32];        /* the run being summed, and its wall so far */
  double run_wall_s;
  /* the answer: the final best (with restarts, the champion) */
  int has_best;              /* a generation was recorded */
  record_cfg best_cfg;
  double best_us;            /* its latest median (NAN: never measured) */
  long long best_gen;        /* the generation that measured it (-1) */
  long long winner_gen;      /* the keep that made it the answer (-1: it is the start) */
  double start_us;           /* the start configuration's first measured median */
  double control_us;         /* the control's median in best_gen's rounds: paired with best_us */
  double control_lo, control_hi; /* the control's per-generation medians over the campaign */
  double control_median;     /* and their median */
  double drift_tolerance, min_gain; /* the rule's, from the latest measured record (NAN: none) */
  /* throughput: the template's (and the committed control's) spec, read at the path the
   * first measured record's job names (under TUNEFARM_ROOT, else the current folder) */
  int has_start;
  record_cfg start_cfg;      /* the configuration start_us times */
  double peak_tflops;        /* the device's FP32 peak (NAN: its arch is not in the table) */
  double peak_gbps;          /* its peak memory bandwidth (NAN: not in the device record) */
  int unit_flops;            /* the work is compute-bound: TFLOP/s is its measure, else GB/s */
  char spec_path[SPEC_PATH]; /* the template's spec as the job names it; "" before a job */
  char work_note[320];       /* why there is no throughput; "" when there is */
  report_rate rate_start, rate_best, rate_control;
  report_effect *effects;    /* per knob in the template's order: all, then each move */
  size_t neffects;
} report_ledger;

/* Read the ledger at path (ledger_scan's checks: bad input is TF_EXIT_INPUT naming the file
 * and the line; a torn last line is a note on log). */
int report_ledger_read(report_ledger *l, const char *path, FILE *log, tf_err *e);
void report_ledger_release(report_ledger *l);

/* The generation record of gen, or NULL. */
const report_gen *report_gen_at(const report_ledger *l, long long gen);

/* "search 1", "restart 2", "duel 2": the search a generation belongs to, in words. */
void report_search_label(const report_gen *g, char *buf, size_t len);
/* best -> new as "BK 64→32, TM 4→8", or "—" when they are the same. */
void report_change_text(const record_cfg *from, const record_cfg *to, char *buf, size_t len);

/* The groups of an outcome, most frequent first (ties in order of first appearance). */
void report_outcome_sort(report_outcome *oc);
/* A group's numbers over the group: "0.1 to 2.5, 1" (a number that never varied once). */
void report_reason_ranges(const report_reason *r, char *buf, size_t len);

/* The knob effects of l's generations into *out (n entries, the caller frees *out); -1 when
 * out of memory. report_ledger_read fills l->effects with it. */
int report_knob_effects(const report_ledger *l, report_effect **out, size_t *n);

/* 1 when the control (a committed kernel, an instantiation or, in a job that has one, a
 * library routine) was faster than the final best in the same rounds: a warning to print. */
int report_control_faster(const report_ledger *l);

/* How every page report_write_html writes begins: `report --html` replaces an existing file
 * only when it begins so (tools/report.c). */
#define REPORT_HTML_HEAD \
  "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\"><title>tunefarm report</title>"

/* The writers: n ledgers, printed whole; -1 with e only when out of memory or a write fails. */
int report_write_json(FILE *f, report_ledger *l, size_t n, tf_err *e);  /* report_data.c */
int report_write_csv(FILE *f, report_ledger *l, size_t n, tf_err *e);   /* report_data.c */

/* T4 (report_t4.c, docs/reference/report.md "--t4"): the results of one ledger, one result per
 * configuration, as Kernel Tuner's writer shapes them; and its metadata file. */
int report_write_t4(FILE *f, report_ledger *l, size_t n, tf_err *e);
int report_write_t4_metadata(FILE *f, const report_ledger *l, tf_err *e);
/* `--t4-metadata FILE`: refuses (TF_EXIT_INPUT) a ledger's name or one of the ledgers given, a
 * folder, or an existing file that is not a metadata file of tunefarm report; checked before
 * any ledger is read. */
int report_t4_check_file(const char *file, char *const *ledgers, size_t n, tf_err *e);
/* Writes l's metadata to file through a temporary file: never half a file. */
int report_t4_write_metadata_file(const char *file, const report_ledger *l, tf_err *e);
int report_write_html(FILE *f, report_ledger *l, size_t n, tf_err *e);  /* report_html.c */

/* A cJSON tree being built by the JSON and T4 writers: the first failed allocation sets oom,
 * and every later add is skipped. report_tree_add adds item to parent (under key, or to an
 * array when key is NULL) and returns it, or frees it and returns NULL. */
typedef struct report_tree {
  int oom;
} report_tree;
cJSON *report_tree_add(report_tree *t, cJSON *parent, const char *key, cJSON *item);

/* 1 when the file at path begins with the text head (a file tunefarm wrote), else 0. */
int report_file_begins(const char *path, const char *head);

#endif
