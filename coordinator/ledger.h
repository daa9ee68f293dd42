/* ledger: one append-only JSON-lines file per device and campaign; the only
 * files the farm writes while it runs (the coordinator is the sole writer).
 *
 * Path: <dir>/<campaign>/<host>-gpu<ordinal>-<uuid8>.jsonl
 * Line 1: {"type": "device", "device": {device record}, "campaign": NAME,
 *          "campaign_path": PATH, "campaign_hash": HEX, "backend": "cuda"|"sim",
 *          "created": ISO-8601 UTC, "tunefarm": VERSION}
 * Then one {"type": "generation", ...} line per generation (fields in
 * DESIGN.md: generation, device, rule, best, new, change, rounds, ratios,
 * median_ratio, control_drift, min_gain, drift_tolerance, correct, decision,
 * reason, job, ...), and at the end of a search {"type": "end", "reason": ...}.
 * Every append is written whole with one write(2) and fsync'd before the
 * function returns, so a kill leaves at most a torn last line, which
 * ledger_open reports and cuts off (the file is truncated to the last
 * complete line) before appending.
 *
 * Ownership: ledger_open allocates the handle; ledger_close frees it. The
 * records handed to the replay callback belong to the ledger module and are
 * valid only during the call. */
#ifndef TF_LEDGER_H
#define TF_LEDGER_H

#include <cjson/cJSON.h>
#include <stdio.h>

#include "common/campaign.h"
#include "common/err.h"
#include "common/msg.h"

typedef struct ledger ledger;

typedef struct ledger_opts {
  const char *dir;   /* the ledgers folder ("ledgers" unless --ledgers) */
  int fresh;         /* 1: an existing ledger is moved aside to NAME.jsonl.<UTC time>.old, not resumed */
  FILE *log;         /* where notes go ("torn last line skipped"); NULL: stderr */
} ledger_opts;

/* Open or create the device's ledger. An existing ledger must be for the same device UUID
 * and the same campaign hash, else TF_EXIT_INPUT with a message that says to pass --fresh. */
int ledger_open(ledger **out, const ledger_opts *o, const campaign *c, const device_record *d,
                tf_err *e);

/* Call fn for every complete record after the header, in order (resume). fn returns 0 to go
 * on, >0 to stop early (replay returns 0), <0 to fail (replay returns -1 naming the line). */
int ledger_replay(ledger *l, int (*fn)(void *ctx, const cJSON *record), void *ctx, tf_err *e);

/* Append one record as one line, fsync'd. */
int ledger_append(ledger *l, const cJSON *record, tf_err *e);

const char *ledger_path(const ledger *l);
void ledger_close(ledger *l);

/* The file name for a device: "<host>-gpu<ordinal>-<uuid8>.jsonl" (characters of the host
 * outside [A-Za-z0-9._-] become '_'). */
void ledger_file_name(const device_record *d, char *buf, size_t len);

/* Read a ledger without opening it for writing (reports, outside tools): the header (line 1)
 * is checked as ledger_open checks it, then fn sees every complete line, header included, with
 * its 1-based line number. A torn last line is noted on log (NULL: stderr) and skipped; a bad
 * line anywhere else is TF_EXIT_INPUT naming the file and the line. fn returns 0 to go on, >0
 * to stop early, <0 to fail (fn fills e). The file is never modified. */
int ledger_scan(const char *path, FILE *log,
                int (*fn)(void *ctx, long line, const cJSON *record, tf_err *e), void *ctx,
                tf_err *e);

/* The best configuration of a search as its ledger shows it; report and bench read it the
 * same way. Fed every generation record in file order: after each, the best is the record's
 * "new" when the decision was "keep", else its "best" (a static refusal counts too: its
 * "best" is what the search held). Its time is the latest median over a measured record's
 * rounds of whatever was best then ("new_us" of a keep, else "best_us").
 * With restarts (search.restarts) the answer is the champion: from a "restart" record on, the
 * generations of the new segment do not move it, until the segment's duel (a generation
 * with "duel": true, the segment's best against the champion) decides it again.
 * Ownership: cfg is a copy the struct owns; ledger_best_release frees it. */
typedef struct ledger_best {
  cJSON *cfg;      /* {"BM": 64, ...}; NULL until a generation record was seen */
  char from[8];    /* the key cfg was copied from: "new" or "best" */
  double us;       /* NAN until a record measured it */
  long long gen;   /* the generation that measured us; -1 until then */
  int frozen;      /* in a restarted segment before its duel: the champion stands */
} ledger_best;

void ledger_best_init(ledger_best *b);
/* Take one generation or restart record (other types are ignored); gen is its "generation".
 * -1 only when out of memory. */
int ledger_best_add(ledger_best *b, long long gen, const cJSON *record);
void ledger_best_release(ledger_best *b);

/* Median of the finite numbers under `key` in the objects of a record's "rounds" array
 * ("best_us", "new_kernel_us", ...), leaving out rounds marked "screened" as the live run
 * does; NAN when there is none. */
double ledger_rounds_median(const cJSON *rounds, const char *key);

#endif
