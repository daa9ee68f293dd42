/* record: the ledger line codec, the only code that writes or reads one.
 *
 * A ledger (coordinator/ledger.h) is one JSON object per line: a device record first, then
 * generation records, restart records when a search begins again, and an end record (and a
 * reopen record after it when a resumed search goes on past its end); a versions record
 * wherever a resumed run found another driver, CUDA runtime or NVRTC than the ledger's.
 * docs/reference/ledger.md lists every key of every kind; tests/unit/test_record.c checks that list
 * against record_keys in both directions.
 *
 * Reading is strict: a record whose type, keys, or values are not what the writer writes
 * (an unknown key, a missing required one, "decision": "maybe", "rounds": "x", a "change"
 * that is not the difference of "best" and "new") is refused with a message naming the key;
 * the ledger's reader adds the file and the line. A device record without "schema_version"
 * is version 1 (written before the key existed) and still reads.
 *
 * Configurations are kept as the ledger writes them, knob names with values
 * (record_cfg), so that readers without the campaign (report, verify) read them too;
 * record_cfg_config turns one into a config of a template.
 *
 * Ownership: a record is large (the rounds of a generation): record_new allocates one,
 * record_free frees it. record_release frees what a record owns (its "stats" and "job" trees)
 * and leaves it empty for reuse; record_from_json releases first. record_to_json returns a new
 * tree the caller deletes, for printing: it refers to the record's "stats" and "job" rather
 * than copying them, so it must go before the record is released or changed. */
#ifndef TF_RECORD_H
#define TF_RECORD_H

#include <cjson/cJSON.h>

#include "common/decide.h"
#include "common/err.h"
#include "common/msg.h"

/* The schema this code writes (a device record's "schema_version"). */
#define RECORD_SCHEMA_VERSION 2

typedef enum {
  RECORD_DEVICE,
  RECORD_GENERATION,
  RECORD_RESTART,
  RECORD_END,
  RECORD_REOPEN, /* an ended search goes on: the campaign now allows more (docs/reference/ledger.md) */
  RECORD_VERSIONS, /* a resumed run's driver, runtime or NVRTC differs from the last run's */
  RECORD_KINDS
} record_kind;
extern const char *const record_kind_names[RECORD_KINDS]; /* "device", "generation", ... */

/* A configuration as a ledger holds it: {"BM": 64, ...}, knob names and values in order. */
typedef struct record_cfg {
  int n;
  char name[SPEC_MAX_KNOBS][SPEC_NAME];
  long long v[SPEC_MAX_KNOBS];
} record_cfg;

/* Line 1. */
typedef struct record_device {
  int schema_version;      /* 1 when the line has none */
  device_record dev;
  char campaign[64];
  char campaign_path[SPEC_PATH];
  char root[SPEC_PATH];    /* the project root campaign_path is relative to, absolute; "" when
                            * the ledger has none (older ledgers) */
  char campaign_hash[72];
  char backend[8];
  char created[32];
  char tunefarm[16];
  char mode[16];           /* the campaign's search.mode; "" in version 1 */
} record_device;

/* One generation: a static refusal (measured 0: no rounds, names its constraint) or a
 * measurement and its decision. */
typedef struct record_gen {
  long long generation;
  char device[64];
  char backend[8];
  int simulated;
  char time[32];
  char rule[16];
  int restart;                   /* 0: the first search; k: the search begun by restart k */
  int duel;                      /* the restart's best (new) against the champion (best) */
  record_cfg best, new_cfg;
  decision_kind decision;
  char reason[1024];
  char constraint[SPEC_NAME];    /* a static refusal's constraint */
  int measured;
  /* measured only: */
  result res;                    /* status, detail, correct, rel_err, rounds, burn_in,
                                  * compile_ms, cache_hit, wall_s, times, child, the canary's
                                  * rounds */
  int nratios;
  double ratios[MSG_MAX_ROUNDS];
  double median_ratio, kernel_median_ratio, control_drift; /* NAN where the line has null */
  double min_gain, drift_tolerance;
  cJSON *stats;                  /* the rule's statistics; owned, may be NULL */
  int screened;
  char run[32];                  /* when the run began ("" when the record has no child) */
  double elapsed_s;              /* seconds from this run's first job on the device to this
                                  * record (0: not written; busy fraction's wall time) */
  int has_canary;
  canary_verdict canary;         /* its rounds are res.canary */
  int untrusted;
  cJSON *job;                    /* the job as sent; owned */
} record_gen;

typedef struct record_restart {
  int restart;
  long long generation;          /* the last generation before it */
  record_cfg champion, start;
  double champion_us;            /* NAN where the line has null */
  char reason[512];
} record_restart;

typedef struct record_end {
  char reason[512];
  long long generation;
  record_cfg best;
} record_end;

/* After an end record: the search goes on, since a resumable key of the campaign changed
 * (search.budget, max_stale, restarts) so that it would not have ended. */
typedef struct record_reopen {
  long long generation;          /* the last generation, the end record's */
  char reason[512];
} record_reopen;

/* A run resumed the ledger with another driver, CUDA runtime or NVRTC than the versions in force
 * (line 1's, or the last versions record's): the versions from this record on. */
typedef struct record_versions {
  long long generation;          /* the last generation before it */
  char time[32];
  int driver_version, runtime_version;
  int nvrtc_major, nvrtc_minor;
  char reason[512];              /* which changed, from what to what */
} record_versions;

typedef struct record {
  record_kind kind;
  record_device device;
  record_gen gen;
  record_restart restart;
  record_end end;
  record_reopen reopen;
  record_versions versions;
} record;

record *record_new(void);
void record_release(record *r);
void record_free(record *r);

/* NULL only when out of memory. */
cJSON *record_to_json(const record *r);
/* Strict; on failure e says which key ("key 'decision' must be one of ..."), TF_EXIT_INPUT. */
int record_from_json(const cJSON *o, record *r, tf_err *e);

/* The top-level keys of a kind, NULL-terminated: every key the writer may write and the
 * reader accepts. */
const char *const *record_keys(record_kind kind);

/* c as the ledger writes it, in the template's knob order. */
void record_cfg_of(const spec *s, const config *c, record_cfg *out);
cJSON *record_cfg_to_json(const record_cfg *c);
/* rc as a configuration of template s (a knob it omits takes the knob's default), checked as
 * a campaign's start is (spec_config_from_json); `file` and `where` name the place. */
int record_cfg_config(const spec *s, const record_cfg *rc, const char *file, const char *where,
                      config *out, tf_err *e);
int record_cfg_equal(const record_cfg *a, const record_cfg *b);
/* "BM=64, BN=128, ..." */
void record_cfg_text(const record_cfg *c, char *buf, size_t len);

/* The median over a measured generation's rounds, leaving out screened ones (the live run's
 * medians skip them too), of arm's event span (kernel 0) or kernel time (kernel 1); NAN
 * when there is none. */
double record_rounds_median(const record_gen *g, int arm, int kernel);

/* The record's job decoded (its decide options, arms); -1 with e when it does not read. */
int record_job(const record_gen *g, job *out, tf_err *e);

#endif
