/* rules: the registry of decision rules and their parameters (common/rule.h).
 *
 * The rows come from rules_list.h, which the build writes from the files of common/rules/
 * (RULES_LIST(X) expands X(name) for each common/rules/<name>.c, in file-name order). */
// defines: rule_count, rule_at, rule_find, rule_names, decide_select, decide_defaults, decide_param,
//          decide_params_load, decide_param_keys, decide_params_to_json,
//          decide_params_from_json, decide_describe
#include "common/rule.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

#include "common/jsonio.h"
#include "rules_list.h" /* RULES_LIST(X), from the build */

#ifndef TF_RULES_EXTRA
#define TF_RULES_EXTRA(X)
#endif

#define RULE_DECLARE(name) extern const decide_rule rule_##name;
#define RULE_ROW(name) &rule_##name,
RULES_LIST(RULE_DECLARE)
TF_RULES_EXTRA(RULE_DECLARE)

/* A build's extra rows (TF_RULES_EXTRA: a test's own rules) come first: nothing may assume
 * that the first row is a particular rule, or that it has no parameters. */
static const decide_rule *const rules[] = {TF_RULES_EXTRA(RULE_ROW) RULES_LIST(RULE_ROW)};
_Static_assert(sizeof rules / sizeof rules[0] <= RULE_MAX, "more rules than RULE_MAX");

int rule_count(void) { return (int)(sizeof rules / sizeof rules[0]); }

const decide_rule *rule_at(int i) { return i >= 0 && i < rule_count() ? rules[i] : NULL; }

const decide_rule *rule_find(const char *name) {
  for (int i = 0; name && i < rule_count(); i++)
    if (strcmp(rules[i]->name, name) == 0) return rules[i];
  return NULL;
}

void rule_names(char *buf, size_t len) {
  size_t used = 0;
  buf[0] = '\0';
  for (int i = 0; i < rule_count() && used < len; i++)
    used += (size_t)snprintf(buf + used, len - used, "%s%s", i ? ", " : "", rules[i]->name);
}

int decide_select(decide_opts *o, const char *name) {
  const decide_rule *r = rule_find(name);
  if (!r || r->nparams > DECIDE_MAX_PARAMS) return -1;
  snprintf(o->rule, sizeof o->rule, "%s", r->name);
  memset(o->param, 0, sizeof o->param);
  for (int i = 0; i < r->nparams; i++) o->param[i] = r->params[i].def;
  return 0;
}

void decide_defaults(decide_opts *o) {
  memset(o, 0, sizeof *o);
  o->min_gain = 0.01;
  o->drift_tolerance = 0.03;
  o->max_requeue = 2;
  o->clock_skew = 0.02;
  o->throttle_mhz = 0.0;
  o->max_screened = 4;
  decide_select(o, "sequential");
}

/* One parameter from a campaign's object, checked against its bounds, into *out. */
static int param_load(const char *path, const char *what, const cJSON *obj, const rule_param *p,
                      double *out, tf_err *e) {
  if (!p->integer) return jsonio_num(path, what, obj, "decide", p->key, 0, p->lo, p->hi, out, e);
  long long v = (long long)*out;
  if (jsonio_int(path, what, obj, "decide", p->key, 0, (long long)p->lo, (long long)p->hi, &v, e))
    return -1;
  *out = (double)v;
  return 0;
}

int decide_params_load(const char *path, const char *what, const cJSON *obj, decide_opts *o,
                       tf_err *e) {
  const decide_rule *mine = rule_find(o->rule);
  for (int i = 0; i < rule_count(); i++) {
    const decide_rule *r = rules[i];
    for (int k = 0; k < r->nparams; k++) {
      double ignored = r->params[k].def;
      double *out = r == mine ? &o->param[k] : &ignored;
      if (param_load(path, what, obj, &r->params[k], out, e)) return -1;
    }
  }
  return 0;
}

void decide_param_keys(const char **keys, int *n, int cap) {
  for (int i = 0; i < rule_count(); i++)
    for (int k = 0; k < rules[i]->nparams && *n < cap - 1; k++) keys[(*n)++] = rules[i]->params[k].key;
  keys[*n] = NULL;
}

void decide_params_to_json(const decide_opts *o, cJSON *obj) {
  const decide_rule *r = rule_find(o->rule);
  for (int k = 0; r && k < r->nparams; k++) cJSON_AddNumberToObject(obj, r->params[k].key, o->param[k]);
}

/* As the job messages read numbers (common/msg.c): a number, null for an infinity (cJSON
 * writes inf and nan as null), otherwise the value stays; a whole number within int range for
 * an integer parameter. */
void decide_params_from_json(const cJSON *obj, decide_opts *o) {
  const decide_rule *r = rule_find(o->rule);
  for (int k = 0; r && k < r->nparams; k++) {
    const cJSON *it = cJSON_GetObjectItemCaseSensitive(obj, r->params[k].key);
    if (cJSON_IsNull(it) && !r->params[k].integer) o->param[k] = INFINITY;
    if (!cJSON_IsNumber(it)) continue;
    double v = it->valuedouble;
    if (r->params[k].integer && !(v == floor(v) && fabs(v) <= 2147483647.0)) continue;
    o->param[k] = v;
  }
}

double *decide_param(decide_opts *o, const char *key) {
  const decide_rule *r = rule_find(o->rule);
  for (int k = 0; r && key && k < r->nparams; k++)
    if (strcmp(r->params[k].key, key) == 0) return &o->param[k];
  return NULL;
}

void decide_describe(const decide_opts *o, char *buf, size_t len) {
  const decide_rule *r = rule_find(o->rule);
  size_t used = strlen(o->rule) < len ? strlen(o->rule) : 0;
  memcpy(buf, o->rule, used);
  buf[used] = '\0';
  for (int k = 0; r && k < r->nparams && used < len; k++)
    used += (size_t)snprintf(buf + used, len - used, "%s%s %g", k ? ", " : " (",
                             r->params[k].key, o->param[k]);
  if (r && r->nparams > 0 && used < len) snprintf(buf + used, len - used, ")");
}
