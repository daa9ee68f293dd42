/* program: a job's program as compile_program needs it (common/program.h). */
#include "common/program.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

void program_of_job(const job *j, program_ref *out) {
  memset(out, 0, sizeof *out);
  snprintf(out->root, sizeof out->root, "%s", j->root);
  for (int i = 0; i < j->nsources && i < 2; i++) {
    if (!j->sources[i][0]) continue;
    snprintf(out->sources[out->nsources++], SPEC_PATH, "%s", j->sources[i]);
  }
  /* A library arm (job_arm.library) has no kernel in the program: its place repeats the first
   * kernel arm's expression, compiled but never launched. */
  int first = 0;
  while (first < ARM_COUNT - 1 && j->arm[first].library[0]) first++;
  for (int a = 0; a < ARM_COUNT; a++)
    snprintf(out->exprs[a], sizeof out->exprs[a], "%s",
             j->arm[j->arm[a].library[0] ? first : a].name_expr);
}

cJSON *program_to_json(const program_ref *p) {
  cJSON *o = cJSON_CreateObject();
  cJSON *src = cJSON_AddArrayToObject(o, "sources");
  for (int i = 0; i < p->nsources; i++) cJSON_AddItemToArray(src, cJSON_CreateString(p->sources[i]));
  cJSON *ex = cJSON_AddArrayToObject(o, "exprs");
  for (int a = 0; a < ARM_COUNT; a++) cJSON_AddItemToArray(ex, cJSON_CreateString(p->exprs[a]));
  return o;
}

/* Up to max strings of arr into a row of `width`-byte strings; the count, or -1. */
static int strings_into(const cJSON *arr, char *out, size_t width, int max) {
  int n = 0;
  const cJSON *it;
  if (!cJSON_IsArray(arr)) return -1;
  cJSON_ArrayForEach(it, arr) {
    if (n == max || !cJSON_IsString(it) || !it->valuestring[0] ||
        strlen(it->valuestring) >= width)
      return -1;
    memcpy(out + (size_t)n * width, it->valuestring, strlen(it->valuestring) + 1);
    n++;
  }
  return n;
}

int program_from_json(const cJSON *o, const char *root, program_ref *p, tf_err *e) {
  memset(p, 0, sizeof *p);
  snprintf(p->root, sizeof p->root, "%s", root ? root : "");
  int ns = strings_into(cJSON_GetObjectItemCaseSensitive(o, "sources"), p->sources[0],
                        sizeof p->sources[0], 2);
  if (ns < 1)
    return tf_fail(e, TF_EXIT_INPUT, "program: 'sources' must be 1 or 2 file names");
  int nx = strings_into(cJSON_GetObjectItemCaseSensitive(o, "exprs"), p->exprs[0],
                        sizeof p->exprs[0], ARM_COUNT);
  if (nx != ARM_COUNT)
    return tf_fail(e, TF_EXIT_INPUT, "program: 'exprs' must be %d name expressions", ARM_COUNT);
  p->nsources = ns;
  return 0;
}

int program_equal(const program_ref *a, const program_ref *b) {
  if (a->nsources != b->nsources || strcmp(a->root, b->root) != 0) return 0;
  for (int i = 0; i < a->nsources; i++)
    if (strcmp(a->sources[i], b->sources[i]) != 0) return 0;
  for (int k = 0; k < ARM_COUNT; k++)
    if (strcmp(a->exprs[k], b->exprs[k]) != 0) return 0;
  return 1;
}

void program_source_path(const char *root, const char *path, char *out, size_t len) {
  const char *env = getenv("TUNEFARM_ROOT");
  const char *base = path[0] == '/' ? NULL : root && root[0] ? root : env && env[0] ? env : NULL;
  if (base)
    snprintf(out, len, "%s/%s", base, path);
  else
    snprintf(out, len, "%s", path);
}

void program_request(const program_ref *p, const char *arch, double simulate_s, program_req *out) {
  memset(out, 0, sizeof *out);
  for (int i = 0; i < p->nsources; i++) {
    program_source_path(p->root, p->sources[i], out->paths[i], sizeof out->paths[i]);
    out->srcs[i] = out->paths[i];
  }
  for (int a = 0; a < ARM_COUNT; a++) out->exprs[a] = p->exprs[a];
  out->req = (compile_req){.source_paths = out->srcs, .nsources = p->nsources,
                           .name_exprs = out->exprs, .nexprs = ARM_COUNT, .arch = arch,
                           .simulate_s = simulate_s};
}

double program_sim_seconds(const program_ref *p, const sim_compile *m) {
  if (!(m->short_s > 0)) return 0.0;
  if (!(m->long_frac > 0)) return m->short_s;
  const void *parts[ARM_COUNT];
  size_t lens[ARM_COUNT];
  for (int a = 0; a < ARM_COUNT; a++) {
    parts[a] = p->exprs[a];
    lens[a] = strlen(p->exprs[a]);
  }
  char key[CACHE_KEY_HEX];
  cache_key(parts, lens, ARM_COUNT, key);
  char head[9];
  memcpy(head, key, 8);
  head[8] = '\0';
  double u = (double)strtoul(head, NULL, 16) / 4294967296.0; /* uniform in [0, 1) */
  return u < m->long_frac ? m->long_s : m->short_s;
}
