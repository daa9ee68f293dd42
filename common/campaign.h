/* campaign: one tuning campaign (campaigns/NAME.json) loaded and validated.
 *
 * A campaign names a template (templates/NAME.json, found under the project
 * root: $TUNEFARM_ROOT when set, else the first of the campaign file's folder's
 * parent and the install's share/tunefarm that holds the template), may narrow
 * its knobs' domains ("knobs"), and names a problem, the start configuration,
 * a control kernel (a committed kernel from kernels/ by name, or a fixed
 * configuration of the template), the search budget, the measurement protocol
 * and the decision thresholds. docs/SCHEMA.md documents every key with its default.
 *
 * Ownership: campaign_load fills a caller-owned struct (it holds specs with
 * parsed expressions); campaign_release frees them. */
#ifndef TF_CAMPAIGN_H
#define TF_CAMPAIGN_H

#include "common/err.h"
#include "common/spec.h"

typedef struct search_opts {
  int enabled;         /* 0: the campaign has no "search" section: measure start vs control only */
  int budget;          /* generations (decisions that measured something) per device */
  int max_stale;       /* stop after this many rejections in a row */
  int two_knob_after;  /* rejections in a row before two-knob moves are proposed */
  int restarts;        /* searches from random legal points after the first stalls (0: none) */
  int fixed;           /* mode "aa" or "pair": every generation measures start against `pair` */
  int fresh_every;     /* a fresh measure process every this many generations (0: only after faults) */
  char mode[16];       /* "neighbors", "aa" or "pair" (a campaign without "search": "aa") */
  char proposer[32];   /* what proposes the candidates (coordinator/propose.h); the coordinator
                        * refuses a name it does not know */
  config pair;         /* the fixed new arm (aa: start itself), a study of the rule, not a search */
} search_opts;

/* Where each arm's buffers and code sit (docs/DECISIONS.md, "Placement"). Only the defaults
 * are for tuning: the others exist to measure what placement does, and are what the A/A
 * benchmark compares against. */
typedef enum {
  LAYOUT_SHARED = 0, /* every arm reads and writes the same buffers: no arm has a placement */
  LAYOUT_PER_ARM,    /* each arm its own buffers (placement may favour one arm) */
  LAYOUT_SWAP        /* per-arm buffers, best and new exchange them every round */
} measure_layout;
typedef enum {
  CODE_SHARED = 0,   /* the three arms are symbols of one loaded module */
  CODE_PER_ARM       /* new runs from a second load of the same module (its own code addresses) */
} measure_code;
typedef enum {
  ORDER_ROTATE = 0,  /* the arm order cycles through all six permutations */
  ORDER_FIXED        /* best, new, control in every round */
} measure_order;
extern const char *const measure_layout_names[]; /* "shared", "per_arm", "swap", NULL */
extern const char *const measure_code_names[];   /* "shared", "per_arm", NULL */
extern const char *const measure_order_names[];  /* "rotate", "fixed", NULL */

typedef struct measure_opts {
  int burn_in;         /* unrecorded rounds, every arm launched */
  int rounds;          /* recorded rounds (the cap, for sequential rules) */
  int samples;         /* launches per arm per round; the round's value is their median */
  int input_sets;      /* input sets per arm, alternated by round */
  int flush_l2;        /* write 2x L2 before every sample */
  double deadline_s;   /* the worker kills the child past this, for one job */
  unsigned long long seed;
  int layout;          /* measure_layout */
  int code;            /* measure_code */
  int order;           /* measure_order */
} measure_opts;

/* The A/A canary (docs/DECISIONS.md, "The canary"): in the same measure process and with the
 * same placement rules as a generation, best against a second loaded copy of itself in new's
 * place. A process whose canary shows a bias above `threshold` decides nothing: its
 * generation is measured again in a fresh process. */
typedef struct canary_opts {
  int rounds;          /* paired rounds of one canary; 0 turns the canary off */
  int every;           /* a canary every this many generations, besides every fresh process */
  int max_restarts;    /* biased processes in a row before the GPU's search ends */
  double threshold;    /* |median ratio - 1| above this is a bias (default: min_gain / 4) */
} canary_opts;

typedef struct decide_opts {
  char rule[16];          /* "median" (baseline) or "sequential" */
  double min_gain;        /* keep only if new is faster by more than this fraction */
  double drift_tolerance; /* control max/min over rounds above 1 + this: noisy */
  int max_requeue;        /* a noisy generation is measured again at most this often */
  /* sequential rule (issue 6); ignored by "median" */
  double alpha, beta;     /* false-keep and false-reject rates the test is built for */
  int min_rounds;         /* never stop before this many recorded rounds */
  double clock_skew;      /* screen a round whose arms' SM clocks differ by more than this fraction */
  double throttle_mhz;    /* screen a round whose SM clock falls below this (0: off) */
  int max_screened;       /* more screened rounds than this: refused as noisy */
} decide_opts;

/* A fault injected on a matching configuration, for tests: "crash", "hang" or "wrong". */
typedef struct inject_rule {
  config when;           /* knobs that must match; mask says which */
  unsigned mask;
  char fault[8];
} inject_rule;

typedef struct campaign {
  char path[SPEC_PATH];
  char root[SPEC_PATH];
  char name[64];          /* the file's base name without .json */
  char hash[40];          /* identity: the campaign without its resumable keys, and the files it
                           * names (docs/SCHEMA.md, "What resuming needs"), hex */
  char hash_v1[40];       /* the identity before: the campaign file's bytes and those files */
  spec tmpl;
  long long dims[SPEC_MAX_DIMS];
  config start;
  int control_is_kernel;  /* 1: `control` is a committed kernel; 0: a configuration of tmpl */
  spec control_kernel;
  config control_cfg;
  search_opts search;
  measure_opts measure;
  decide_opts decide;
  canary_opts canary;
  int ninject;
  inject_rule inject[8];
} campaign;

int campaign_load(campaign *c, const char *path, tf_err *e);
void campaign_release(campaign *c);

/* Defaults of every optional key (also used by docs and tests). */
void campaign_defaults(campaign *c);

/* The fault injected for this configuration, or NULL. */
const char *campaign_fault_for(const campaign *c, const config *cfg);

#endif
