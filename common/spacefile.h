/* spacefile: a recorded space, every reachable configuration of a campaign measured on one
 * device (`tunefarm sweep`, tools/sweep.h), and the one codec that writes and reads it; the
 * replay backend (worker/replay_backend.c) answers jobs from it.
 *
 * The file is gzip-compressed JSON lines (zlib): a header ("type": "tfspace", with its format
 * version, the campaign's identity, the device record, the reference configuration and the
 * date), one "config" line per configuration (knob values in the header's knob order, the
 * check's outcome, the compile time, the median and spread of its rounds and every round's
 * time of it, of the reference and of the control, measured side by side), and an "end" line
 * that counts them, so that a file cut short is refused rather than read as a smaller space.
 * docs/reference/sweep.md describes every key.
 *
 * Ownership: spacefile_load fills a caller-owned struct whose arrays it allocates;
 * spacefile_release frees them. spacefile_entry_to_json returns a new tree. */
#ifndef TF_SPACEFILE_H
#define TF_SPACEFILE_H

#include <cjson/cJSON.h>

#include "common/err.h"
#include "common/msg.h"
#include "common/spec.h"

#define SPACEFILE_FORMAT 1
#define SPACEFILE_MAX_ROUNDS MSG_MAX_ROUNDS
#define SPACEFILE_MAX_LINE (1L << 20) /* bytes of one line, newline included */

/* What became of a configuration: measured after passing its check, or why it was not. */
typedef enum {
  SPACE_PASS = 0,      /* checked against the reference on every input set, then timed */
  SPACE_FAIL,          /* its outputs differ from the reference's beyond the tolerance */
  SPACE_COMPILE_ERROR, /* NVRTC refused it */
  SPACE_ERROR,         /* the launch or the job failed otherwise */
  SPACE_FAULT,         /* its measure process crashed or overran the deadline */
  SPACE_CHECKS
} space_check;
extern const char *const space_check_names[SPACE_CHECKS]; /* "pass", "fail", ... */

typedef struct space_entry {
  config cfg;
  int check;           /* space_check */
  char detail[512];    /* why it failed ("" when it passed) */
  double compile_ms;   /* its kernel's NVRTC compile alone; NAN when not known (cached) */
  double rel_err;      /* the worst relative error of its check; NAN when not checked */
  int nrounds;         /* recorded rounds (0 unless it passed) */
  double *us;          /* its median time per round, microseconds */
  double *ref_us;      /* the reference's, in the same rounds */
  double *control_us;  /* the control's, in the same rounds */
  double median_us, mad_us, q1_us, q3_us; /* over us[] */
  double ratio;        /* median over rounds of us / ref_us: drift cancels */
  double ref_median_us; /* median of ref_us */
  int samples, burn_in; /* launches per arm and round; unrecorded rounds before them */
  double launch_spread; /* the launches' relative spread in burn-in; NAN unknown */
  double load_s, check_s, measure_s; /* where its job's time went (common/msg.h) */
} space_entry;

typedef struct space_file {
  char path[SPEC_PATH];
  int format;
  char campaign[64], campaign_hash[40], tmpl[64], date[32];
  int nknobs;
  char knobs[SPEC_MAX_KNOBS][SPEC_NAME];
  int ndims;
  char dim_names[SPEC_MAX_DIMS][SPEC_NAME];
  long long dims[SPEC_MAX_DIMS];
  device_record dev;
  int simulated;
  config reference;
  char control[SPEC_NAME * 2]; /* a committed kernel's name, or "K=V,..." */
  double reference_us; /* the reference's median over every round of the sweep */
  int n;
  space_entry *e;      /* sorted by configuration (spacefile_find) */
} space_file;

/* Read and check a whole file: TF_EXIT_INPUT with one message naming the file (and the line
 * and key) for a file that is missing, not gzip or not a space, of another format version,
 * cut short (no "end" line, or a count that differs) or with a configuration twice. */
int spacefile_load(space_file *sf, const char *path, tf_err *e);
void spacefile_release(space_file *sf);
/* The entry of configuration c, or NULL. */
const space_entry *spacefile_find(const space_file *sf, const config *c);
/* "K=V,K=V" in the header's knob order. */
void spacefile_config_text(const space_file *sf, const config *c, char *buf, size_t len);
/* Round r of entry x at the level the reference sets for the whole sweep: its own round
 * scaled so that its median is x->ratio * sf->reference_us (the drift the reference saw
 * beside it taken out, the round-to-round noise its own); the control's round r scaled by
 * sf->reference_us / x->ref_median_us. */
double spacefile_round_us(const space_file *sf, const space_entry *x, int r);
double spacefile_control_us(const space_file *sf, const space_entry *x, int r);

/* The header line of sf (its entries aside), and one "config" line, and back: an entry read
 * owns its rounds (us, ref_us and control_us share one block at us: free(x->us)). file and
 * line name the place in messages. */
cJSON *spacefile_header_to_json(const space_file *sf);
int spacefile_header_from_json(const cJSON *o, space_file *sf, tf_err *e);
cJSON *spacefile_entry_to_json(const space_entry *x);
int spacefile_entry_from_json(const cJSON *o, int nknobs, space_entry *x, const char *file,
                              long line, tf_err *e);
/* Median, MAD and quartiles of x->us, and its ratio to ref_us. */
void spacefile_entry_stats(space_entry *x);

#endif
