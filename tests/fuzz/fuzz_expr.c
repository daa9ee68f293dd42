/* fuzz_expr: the expression language (common/expr.c) on any text: parse; on a tree, count
 * its nodes, check its names, bind them to slots and evaluate both ways over a binding
 * whose values come from the input too (overflow, division by zero and unknown names must
 * be errors, never undefined behaviour). The two evaluations must agree. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "common/expr.h"
#include "tests/fuzz/fuzzutil.h"

static const char *const names[] = {"BM", "BN", "K", "N", "x_1"};
enum { NNAMES = sizeof names / sizeof names[0] };

static int lookup(void *ctx, const char *name, long long *out) {
  const long long *v = ctx;
  for (int i = 0; i < NNAMES; i++)
    if (strcmp(names[i], name) == 0) return *out = v[i], 0;
  return -1;
}

static int slot(void *ctx, const char *name) {
  (void)ctx;
  for (int i = 0; i < NNAMES; i++)
    if (strcmp(names[i], name) == 0) return i;
  return -1;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  /* the first bytes pick the names' values: small ones, and the extremes */
  static const long long picks[] = {0, 1, -1, 2, 7, 64, 1000, -9223372036854775807LL - 1,
                                    9223372036854775807LL};
  long long v[NNAMES];
  for (int i = 0; i < NNAMES; i++) v[i] = size > (size_t)i ? picks[data[i] % 9] : 1;
  char *text = fuzz_text(data, size);
  char err[256];
  expr *x = expr_parse(text, err, sizeof err);
  if (x) {
    long long a = 0, b = 0;
    (void)expr_nodes(x);
    int checked = expr_check_names(x, lookup, v, err, sizeof err);
    int ra = expr_eval(x, lookup, v, &a, err, sizeof err);
    if (expr_bind_slots(x, slot, NULL, err, sizeof err) == 0) {
      int rb = expr_eval_slots(x, v, NULL, NULL, &b, err, sizeof err);
      if (ra != rb || (ra == 0 && a != b)) abort(); /* two paths, one meaning */
    } else if (checked == 0) {
      abort(); /* both say which names are known */
    }
    expr_free(x);
  }
  free(text);
  return 0;
}
