/* rule: what a decision rule is, and the registry of them.
 *
 * A rule is one row (decide_rule) in one file of common/rules/: its name, its parameters
 * (key, default, bounds: the table the campaign loader, the job messages and the reports read),
 * how it judges the paired rounds, when the child may stop measuring, and two flags. Its
 * parameters live in decide_opts.param[] in the order of its table, so a job stays a plain
 * value that any process can copy and send; only the rule's own file gives them names.
 * Everything a rule shares with the others (min_gain, drift_tolerance, max_requeue, the clock
 * screen) stays a named field of decide_opts.
 *
 * The registry holds every `const decide_rule rule_<file>` of common/rules/<file>.c: the build
 * lists that folder (CMakeLists.txt writes rules_list.h), so adding a rule is adding its file.
 * A test adds a rule of its own by defining TF_RULES_EXTRA(X) as X(name) before it includes
 * common/rules.c (tests/unit/test_example_rule.c).
 *
 * The helpers below are the shared steps of decide() (common/decide.c) that rules build on:
 * the words of a reason, the ratios over the rounds a rule uses, the drift refusal. */
#ifndef TF_RULE_H
#define TF_RULE_H

#include <stddef.h>

#include <cjson/cJSON.h>

#include "common/decide.h"
#include "common/err.h"

#define RULE_MAX 16 /* rules in one build; rules.c refuses to compile with more */

/* One parameter of a rule: decide.<key> in a campaign, <key> in a job's "decide" object. */
typedef struct rule_param {
  const char *key;
  int integer;        /* 1: a whole number (held as a double, exact to 2^53) */
  double def, lo, hi; /* the default and the inclusive bounds a campaign may set */
  const char *what;   /* one line, for describe and the docs */
} rule_param;

typedef struct decide_rule {
  const char *name;    /* decide.rule; at most 15 bytes */
  const char *summary; /* one line: what keeps a candidate */
  const rule_param *params;
  int nparams;         /* at most DECIDE_MAX_PARAMS */
  /* Fill d->kind and d->reason (with decision_say) from the rounds of a result that passed
   * the gates (ok, correct, every time positive); d->stats is an object to add to. */
  void (*judge)(const decide_opts *o, const result *r, decision *d);
  /* May the child stop after rounds[0..n)? NULL: once measure.rounds rounds are recorded. */
  int (*enough)(const decide_opts *o, const measure_opts *m, const round_rec *rounds, int n);
  int screens;       /* the clock screen (decide_opts.clock_skew, throttle_mhz) sets rounds aside */
  int fixed_rounds;  /* judges exactly measure.rounds rounds (decide_fixed_rounds) */
  int baseline;      /* the rule the others are compared against (tunefarm study) */
} decide_rule;

/* A rule's parameter table and its count, for a row's designated initializers (the registry's
 * test holds every row to DECIDE_MAX_PARAMS). */
#define RULE_PARAMS(table) .params = (table), .nparams = (int)(sizeof(table) / sizeof((table)[0]))

/* ---- the registry (common/rules.c) ---- */

int rule_count(void);
const decide_rule *rule_at(int i);              /* 0 <= i < rule_count(), in file-name order */
const decide_rule *rule_find(const char *name); /* NULL when unknown (or name NULL) */
void rule_names(char *buf, size_t len);         /* "median, sequential" */

/* Select the rule `name` and set its parameters to their defaults; the shared options stay.
 * -1 (and *o untouched) when the rule is unknown. */
int decide_select(decide_opts *o, const char *name);

/* The rule's parameters from a campaign's "decide" object (the rule already selected): each
 * checked against its bounds, errors naming the file and the key, exit 2. A key of another
 * known rule is checked against that rule's bounds and has no effect. */
int decide_params_load(const char *path, const char *what, const cJSON *obj, decide_opts *o,
                       tf_err *e);
/* The keys a campaign's "decide" object may hold besides the shared ones: every known rule's
 * parameters, appended to keys[*n..cap) (NULL-terminated). */
void decide_param_keys(const char **keys, int *n, int cap);
/* The rule's parameters into / from a job's "decide" object; absent keys keep their values. */
void decide_params_to_json(const decide_opts *o, cJSON *obj);
void decide_params_from_json(const cJSON *obj, decide_opts *o);
/* The selected rule's parameter `key` in *o; NULL when the rule has no such parameter. */
double *decide_param(decide_opts *o, const char *key);
/* "sequential (alpha 0.01, beta 0.05, min_rounds 4)": the rule and its parameters. */
void decide_describe(const decide_opts *o, char *buf, size_t len);

/* ---- shared steps for rules (common/decide.c) ---- */

void decision_say(decision *d, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* "new is 1.6% faster than best" / "... slower ..." / "as fast"; returns the decimals that
 * tell the gain from min_gain, for "(needed > ...)". */
int decision_say_change(decision *d, double ratio, double min_gain);
void decision_stat(decision *d, const char *key, double v); /* null when not finite */
/* Ratios, kernel ratios, control drift and the arms' spreads over rounds idx[0..n). */
void decide_fill_ratios(const result *r, const int *idx, int n, decision *d);
/* Refused as noisy when the control drifted over tolerance; 1 if so. */
int decide_drift_refuses(const decide_opts *o, decision *d);
/* Is this round set aside by the clock screen (decide_opts.clock_skew, throttle_mhz)? */
int decide_clock_screened(const decide_opts *o, const round_rec *r);
/* Normal-consistent MAD of x[0..n) about med, with small-sample factors. */
double stats_mad_sigma(const double *x, int n, double med);

#endif
