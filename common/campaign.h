/* campaign: one tuning campaign (campaigns/NAME.json) loaded and validated.
 *
 * A campaign names a template (templates/NAME.json, found under the project
 * root: $TUNEFARM_ROOT when set, else the first of the campaign file's folder's
 * parent and the install's share/tunefarm that holds the template), may narrow
 * its knobs' domains ("knobs"), and names a problem, the start configuration,
 * a control kernel (a committed kernel from kernels/ by name, or a fixed
 * configuration of the template), the search budget, the measurement protocol
 * and the decision thresholds. docs/reference/campaign.md documents every key with its default.
 *
 * Ownership: campaign_load fills a caller-owned struct (it holds specs with
 * parsed expressions); campaign_release frees them. */
#ifndef TF_CAMPAIGN_H
#define TF_CAMPAIGN_H

#include "common/err.h"
#include "common/opts.h"
#include "common/spec.h"

#define SEARCH_MAX_PARAMS 8

typedef struct search_opts {
  int enabled;         /* 0: the campaign has no "search" section: measure start vs control only */
  int budget;          /* generations (decisions that measured something) per device */
  int max_stale;       /* stop after this many rejections in a row */
  int two_knob_after;  /* rejections in a row before two-knob moves are proposed */
  int restarts;        /* searches from random legal points after the first stalls (0: none) */
  int fixed;           /* mode "aa" or "pair": every generation measures start against `pair` */
  int fresh_every;     /* a fresh measure process every this many generations (0: only after faults) */
  int compile_ahead;   /* programs of the likely next jobs compiled ahead, per path (rejected,
                        * kept: coordinator/search.h, search_peek); 0: none. Time only: it
                        * changes no proposal and no decision */
  char mode[16];       /* "neighbors", "aa" or "pair" (a campaign without "search": "aa") */
  char proposer[32];   /* what proposes the candidates (coordinator/propose.h); the coordinator
                        * refuses a name it does not know */
  int nparams;         /* search.params: the proposer's parameters as written, numbers by name;
                        * the coordinator checks them against the proposer's table */
  char param_key[SEARCH_MAX_PARAMS][32];
  double param_value[SEARCH_MAX_PARAMS];
  config pair;         /* the fixed new arm (aa: start itself), a study of the rule, not a search */
} search_opts;

/* A fault injected on a matching configuration, for tests: "crash", "hang" or "wrong". */
typedef struct inject_rule {
  config when;           /* knobs that must match; mask says which */
  unsigned mask;
  char fault[8];
} inject_rule;

/* A library routine `bench` times beside the template's kernels in the same rounds ("peers":
 * docs/reference/campaign.md): a GEMM C[M][N] = A[M][K] * B, B stored K x N or (b_nk) N x K, over three
 * of the template's buffers and three of its dimensions. The element types are the buffers':
 * A and B f32, f16 or bf16 alike; C f32 or A's type; the sum in FP32. */
typedef struct peer_gemm {
  int a, b, c;            /* buffer indices in tmpl */
  int m, n, k;            /* dimension indices in tmpl */
  int b_nk;               /* 1: B[N][K] (the TN GEMM); 0: B[K][N] */
} peer_gemm;
#define CAMPAIGN_MAX_PEERS 4

typedef struct campaign {
  char path[SPEC_PATH];
  char root[SPEC_PATH];
  char name[64];          /* the file's base name without .json */
  char hash[40];          /* identity: the campaign without its resumable keys, the files it
                           * names and the files their kernels include (docs/reference/campaign.md, "What
                           * resuming needs"), hex */
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
  int npeers;
  peer_gemm peers[CAMPAIGN_MAX_PEERS];
} campaign;

int campaign_load(campaign *c, const char *path, tf_err *e);
void campaign_release(campaign *c);

/* Defaults of every optional key (also used by docs and tests). */
void campaign_defaults(campaign *c);

/* path as the project root sees it: relative to c->root when it lies under it (what jobs and
 * ledgers carry), else as given. */
void campaign_rel_path(const campaign *c, const char *path, char *out, size_t len);

/* The fault injected for this configuration, or NULL. */
const char *campaign_fault_for(const campaign *c, const config *cfg);

#endif
