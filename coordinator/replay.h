/* replay: a search read back from its ledger, through the search machine (coordinator/search.h).
 *
 * replay_fact turns a record into the fact the live loop applied when it wrote it; resume
 * applies them to a search of the campaign (every check on), and ledger_best applies them to a
 * search read back only, for the readers that may not have the campaign (report) or not the
 * one the ledger was written with (bench --ledger). */
#ifndef TF_REPLAY_H
#define TF_REPLAY_H

#include "common/err.h"
#include "common/spec.h"
#include "coordinator/record.h"
#include "coordinator/search.h"

/* The fact of a generation, restart or end record; 1 for a device record (no fact). tmpl
 * reads its configurations (a knob a record omits takes its default); NULL takes their values
 * in the record's order. file names the ledger in messages. */
int replay_fact(const record *r, const spec *tmpl, const char *file, search_fact *out, tf_err *e);

/* The final best of a search as report and bench read it: its answer (search_answer) after
 * every record so far. Fed every record in file order, header first: the header says the
 * search's mode (a version-1 ledger does not: each record's best is then taken as written);
 * a record the search could not have written is refused (TF_EXIT_INPUT, naming the key).
 * Ownership: ledger_best_release frees what add allocated. */
typedef struct ledger_best {
  const spec *tmpl;   /* reads configurations, or NULL (see replay_fact) */
  const char *path;   /* the ledger, for messages */
  search_config cfg;
  search *s;          /* NULL until the first generation record */
  record_cfg names;   /* the knob names of the first generation record's best */
  int requeue_known;  /* max_requeue taken from a measured record's job */
} ledger_best;

void ledger_best_init(ledger_best *b, const spec *tmpl, const char *path);
int ledger_best_add(ledger_best *b, const record *rec, tf_err *e);
/* 0 before any generation record; else 1, *cfg the answer, *us its latest median (NAN when
 * never measured) and *gen the generation that measured it (-1). */
int ledger_best_get(const ledger_best *b, record_cfg *cfg, double *us, long long *gen);
void ledger_best_release(ledger_best *b);

#endif
