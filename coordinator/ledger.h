/* ledger: one append-only JSON-lines file per device and campaign; the only
 * files the farm writes while it runs (the coordinator is the sole writer).
 *
 * Path: <dir>/<campaign>/<host>-gpu<ordinal>-<uuid8>.jsonl, the ordinal the launch gave the
 * worker. A ledger is the device's whatever its name: one of the same GPU (the UUID and the
 * host of its device record) under another ordinal's name is resumed (see ledger_open).
 * Line 1 is the device record, then generation, restart and end records; every line goes
 * through the record codec (coordinator/record.h, docs/reference/ledger.md), which this module is the
 * only user of for files: whatever reads a ledger reads it here, decoded and checked.
 * Every append is written whole with one write(2) and fsync'd before the
 * function returns, so a kill leaves at most a torn last line (one without
 * its newline), which ledger_open reports and cuts off (the file is truncated
 * to the last complete line) before appending. A line that has its newline
 * and does not read is corruption, never cut.
 *
 * While a ledger is open, its run holds an exclusive flock on .NAME.jsonl.lock beside it
 * (a file that is never moved or removed); a second run on the same ledger, --fresh or not,
 * is refused before it reads, cuts or moves anything.
 *
 * Ownership: ledger_open allocates the handle; ledger_close frees it. The
 * records handed to a callback belong to the ledger module and are valid only
 * during the call. */
#ifndef TF_LEDGER_H
#define TF_LEDGER_H

#include <cjson/cJSON.h>
#include <stdio.h>

#include "common/campaign.h"
#include "common/err.h"
#include "common/msg.h"
#include "coordinator/record.h"

typedef struct ledger ledger;

typedef struct ledger_opts {
  const char *dir;   /* the ledgers folder ("ledgers" unless --ledgers) */
  int fresh;         /* 1: an existing ledger is moved aside to NAME.jsonl.<UTC time>.old, not
                      * resumed (only by the run that holds its lock) */
  FILE *log;         /* where notes go ("torn last line skipped"); NULL: stderr */
} ledger_opts;

/* Open or create the device's ledger, its lock taken first: a ledger another run holds is
 * TF_EXIT_INPUT naming it, with nothing read, cut or moved aside. The device's ledger is the
 * file of this launch's name, or else the one file of the folder named for d's host and UUID
 * under another ordinal whose device record has d's UUID and host (said on the log); two such
 * files, this launch's name among them or not, are TF_EXIT_INPUT naming both. --fresh moves
 * every one of them aside and starts the file of this launch's name. An existing ledger must be
 * for the same device UUID and the same campaign hash, else TF_EXIT_INPUT with a message that
 * says to pass --fresh; when d's driver, CUDA runtime or NVRTC version differs from the
 * ledger's in force, a versions record is due (see ledger_replay).
 * A new one begins with the device record (schema RECORD_SCHEMA_VERSION). */
int ledger_open(ledger **out, const ledger_opts *o, const campaign *c, const device_record *d,
                tf_err *e);

/* What a reader is handed: each record decoded, with its 1-based line number. fn returns 0
 * to go on, >0 to stop early (the reader returns 0), <0 to fail (fn fills e; a message
 * without a place gets the file and the line in front from the caller, as it wishes). */
typedef int (*ledger_fn)(void *ctx, long line, const record *rec, tf_err *e);

/* Every complete record after the header, in order (resume), checked as ledger_scan checks.
 * When fn has taken every record (none failed or stopped early) and ledger_open found the
 * versions changed, the change is written: a warning naming the old and the new versions on
 * the log, and a versions record appended. A resume that refuses a record leaves the ledger
 * as it was. */
int ledger_replay(ledger *l, ledger_fn fn, void *ctx, tf_err *e);

/* Append one record as one line, fsync'd: ledger_write, then ledger_sync. */
int ledger_append(ledger *l, const record *rec, tf_err *e);

/* Group commit. ledger_write appends one record as one line (one write(2)) and leaves it
 * unsynced; ledger_sync_all makes every line written to any of the ledgers durable, with one
 * sync of their file system when many have lines waiting (syncfs(2): the cost of one fsync
 * for all of them) and an fsync each when few do. The
 * coordinator writes the records of every result that arrived together, syncs once, and only
 * then acts on them (sends the next jobs): every line is durable before the decision it
 * records is acted on. A crash in between loses lines nobody acted on; resume redoes them. */
int ledger_write(ledger *l, const record *rec, tf_err *e);
int ledger_sync_all(ledger *const *ls, int n, tf_err *e);

const char *ledger_path(const ledger *l);
/* The ordinal of the ledger's device record: the launch's that started it, which seeds its
 * search (search_config_of), so that a resume under another launch proposes as it would have. */
int ledger_ordinal(const ledger *l);
void ledger_close(ledger *l);

/* The file name for a device: "<host>-gpu<ordinal>-<uuid8>.jsonl" (characters of the host
 * outside [A-Za-z0-9._-] become '_'). */
void ledger_file_name(const device_record *d, char *buf, size_t len);

/* Read a ledger without opening it for writing (reports, outside tools): fn sees every
 * complete line, header included, decoded. Every line is checked on the way: line 1 a device
 * record, no NUL byte, no key twice, generations 1, 2, 3, ... and restarts 1, 2, ... in order,
 * nothing after an end record, and whatever the codec refuses. A torn last line (the last
 * line, without its newline) is noted on log (NULL: stderr) and skipped; any other bad line,
 * a complete last line too, is TF_EXIT_INPUT naming the file and the line. The file is never
 * modified. */
int ledger_scan(const char *path, FILE *log, ledger_fn fn, void *ctx, tf_err *e);

#endif
