/* prefetch: the programs a search may ask for next (coordinator/prefetch.h). */
#include "coordinator/prefetch.h"

#include <stdlib.h>

#include "compile/program.h" /* defines: program_of_job, program_to_json */

cJSON *prefetch_list(const search *s, const search_step *pending, const job *sent, int n,
                     tf_err *e) {
  if (n <= 0 || !s->cfg.tmpl) return NULL;
  search_guess *g = malloc(sizeof *g * (size_t)(SEARCH_PEEK_PER * n));
  if (!g) return tf_fail(e, TF_EXIT_FAIL, "out of memory"), NULL;
  int k = search_peek(s, pending, n, g, e);
  cJSON *list = k > 0 ? cJSON_CreateArray() : NULL;
  program_ref p;
  program_of_job(sent, &p);
  for (int i = 0; list && i < k; i++) {
    if (spec_name_expr(s->cfg.tmpl, &g[i].best, p.exprs[ARM_BEST], sizeof p.exprs[ARM_BEST]) ||
        spec_name_expr(s->cfg.tmpl, &g[i].cand, p.exprs[ARM_NEW], sizeof p.exprs[ARM_NEW]))
      continue; /* too long to name: job_build refuses it too, when it comes */
    cJSON_AddItemToArray(list, program_to_json(&p));
  }
  free(g);
  return list;
}
