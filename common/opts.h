/* opts: the options a job carries, as the campaign states them: the measurement protocol,
 * the decision rule's thresholds and the A/A canary (docs/reference/campaign.md documents every key with
 * its default). Plain values, shared by the campaign loader (common/campaign.h), the messages
 * (common/msg.h) and the decision rules (common/decide.h), which depend on nothing else here. */
#ifndef TF_OPTS_H
#define TF_OPTS_H

/* Where each arm's buffers and code sit (docs/design.md, "Placement"). Only the defaults
 * are for tuning: the others exist to measure what placement does, and are what the A/A
 * benchmark compares against. */
typedef enum {
  LAYOUT_SHARED = 0, /* every arm reads and writes the same buffers: no arm has a placement */
  LAYOUT_PER_ARM,    /* each arm its own buffers (placement may favour one arm) */
  LAYOUT_SWAP        /* per-arm buffers, best and new exchange them every round */
} measure_layout;
typedef enum {
  CODE_SHARED = 0,   /* the three arms are symbols of one loaded module */
  CODE_PER_ARM       /* new runs from a second load of the job's cubins (its own code addresses) */
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
  int max_samples;     /* the child may raise samples up to this when launches spread widely
                        * (worker/protocol.h, protocol_samples); == samples: fixed */
  int input_sets;      /* input sets per arm, alternated by round */
  int flush_l2;        /* write 2x L2 before every sample */
  double deadline_s;   /* the worker kills the child past this, for one job */
  unsigned long long seed;
  int layout;          /* measure_layout */
  int code;            /* measure_code */
  int order;           /* measure_order */
} measure_opts;

/* The A/A canary (docs/design.md, "The canary"): in the same measure process and with the
 * same placement rules as a generation, best against a second loaded copy of itself in new's
 * place. A process whose canary shows a bias above `threshold` decides nothing: its
 * generation is measured again in a fresh process. */
typedef struct canary_opts {
  int rounds;          /* paired rounds of one canary; 0 turns the canary off */
  int every;           /* a canary every this many generations, besides every fresh process */
  int max_restarts;    /* biased processes in a row before the GPU's search ends */
  double threshold;    /* |median ratio - 1| above this is a bias (default: min_gain / 4) */
} canary_opts;

/* Room for one rule's own parameters (common/rule.h). */
#define DECIDE_MAX_PARAMS 8

typedef struct decide_opts {
  char rule[16];          /* a rule of the registry (common/rule.h), e.g. "median", "sequential" */
  double min_gain;        /* keep only if new is faster by more than this fraction */
  double drift_tolerance; /* control max/min over rounds above 1 + this: noisy */
  int max_requeue;        /* a noisy generation is measured again at most this often */
  /* the clock screen, for rules that screen rounds (decide_rule.screens) */
  double clock_skew;      /* screen a round whose arms' SM clocks differ by more than this fraction */
  double throttle_mhz;    /* screen a round whose SM clock falls below this (0: off) */
  int max_screened;       /* more screened rounds than this: refused as noisy */
  /* The rule's own parameters, in the order of its table; only its file names them. */
  double param[DECIDE_MAX_PARAMS];
} decide_opts;

/* The documented defaults of every decide option (docs/design.md says why
 * each value): rule "sequential" with its parameters' defaults, min_gain 0.01,
 * drift_tolerance 0.03, max_requeue 2, clock_skew 0.02, throttle_mhz 0 (off),
 * max_screened 4. Defined with the rule registry (common/rules.c). */
void decide_defaults(decide_opts *o);

#endif
