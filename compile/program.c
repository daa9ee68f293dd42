/* program: a job's program as compile_program needs it (compile/program.h). */
#include "compile/program.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

void program_of_job(const job *j, program_ref *out) {
  memset(out, 0, sizeof *out);
  snprintf(out->root, sizeof out->root, "%s", j->root);
  int at[2] = {-1, -1}; /* job source i is program source at[i] */
  for (int i = 0; i < j->nsources && i < 2; i++) {
    if (!j->sources[i][0]) continue;
    at[i] = out->nsources;
    snprintf(out->sources[out->nsources++], SPEC_PATH, "%s", j->sources[i]);
  }
  /* A library arm (job_arm.library) has no kernel in the program: its place repeats the first
   * kernel arm's expression, compiled but never launched. */
  int first = 0;
  while (first < ARM_COUNT - 1 && j->arm[first].library[0]) first++;
  for (int a = 0; a < ARM_COUNT; a++) {
    const job_arm *arm = &j->arm[j->arm[a].library[0] ? first : a];
    snprintf(out->exprs[a], sizeof out->exprs[a], "%s", arm->name_expr);
    out->from[a] = at[arm->from_template ? 0 : 1]; /* a template's instantiation, or the kernel */
  }
  out->arch_specific = j->arch_specific;
}

cJSON *program_to_json(const program_ref *p) {
  cJSON *o = cJSON_CreateObject();
  cJSON *src = cJSON_AddArrayToObject(o, "sources");
  for (int i = 0; i < p->nsources; i++) cJSON_AddItemToArray(src, cJSON_CreateString(p->sources[i]));
  cJSON *ex = cJSON_AddArrayToObject(o, "exprs");
  cJSON *from = cJSON_CreateArray();
  int all = 0;
  for (int a = 0; a < ARM_COUNT; a++) {
    if (!p->exprs[a][0]) continue;
    cJSON_AddItemToArray(ex, cJSON_CreateString(p->exprs[a]));
    cJSON_AddItemToArray(from, cJSON_CreateNumber(p->from[a]));
    all |= p->from[a] < 0;
  }
  if (all || p->nsources == 1) cJSON_Delete(from); /* every kernel from every source */
  else cJSON_AddItemToObject(o, "from", from);
  if (p->arch_specific) cJSON_AddBoolToObject(o, "arch_specific", 1);
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

/* "from": one source index per expression; absent: every kernel from every source. */
static int from_of_json(const cJSON *arr, program_ref *p, tf_err *e) {
  int n = 0;
  const cJSON *it;
  for (int a = 0; a < ARM_COUNT; a++) p->from[a] = -1;
  if (!arr) return 0;
  if (!cJSON_IsArray(arr)) return tf_fail(e, TF_EXIT_INPUT, "program: 'from' must be an array");
  cJSON_ArrayForEach(it, arr) {
    if (n == ARM_COUNT || !p->exprs[n][0] || !cJSON_IsNumber(it) || it->valuedouble < 0 ||
        it->valuedouble >= p->nsources || it->valuedouble != (int)it->valuedouble)
      return tf_fail(e, TF_EXIT_INPUT, "program: 'from' must give each expression the index "
                     "of its source (0 to %d)", p->nsources - 1);
    p->from[n++] = it->valueint;
  }
  if (n < ARM_COUNT && p->exprs[n][0])
    return tf_fail(e, TF_EXIT_INPUT, "program: 'from' must give each expression its source");
  return 0;
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
  if (nx < 1)
    return tf_fail(e, TF_EXIT_INPUT, "program: 'exprs' must be 1 to %d name expressions",
                   ARM_COUNT);
  p->nsources = ns;
  p->arch_specific = cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(o, "arch_specific"));
  return from_of_json(cJSON_GetObjectItemCaseSensitive(o, "from"), p, e);
}

int program_equal(const program_ref *a, const program_ref *b) {
  if (a->nsources != b->nsources || strcmp(a->root, b->root) != 0 ||
      a->arch_specific != b->arch_specific)
    return 0;
  for (int i = 0; i < a->nsources; i++)
    if (strcmp(a->sources[i], b->sources[i]) != 0) return 0;
  for (int k = 0; k < ARM_COUNT; k++)
    if (strcmp(a->exprs[k], b->exprs[k]) != 0 || a->from[k] != b->from[k]) return 0;
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

/* Arm a's kernel is kernel k of out, or a new one. */
static int kernel_index(const program_ref *p, int a, program_req *out) {
  for (int k = 0; k < out->nkernels; k++)
    for (int b = 0; b < a; b++)
      if (out->kernel_of[b] == k && p->from[b] == p->from[a] &&
          strcmp(p->exprs[b], p->exprs[a]) == 0)
        return k;
  return out->nkernels++;
}

void program_request(const program_ref *p, const program_target *t, program_req *out) {
  memset(out, 0, sizeof *out);
  if (t->arch && p->arch_specific) compile_arch_specific(t->arch, out->arch, sizeof out->arch);
  else if (t->arch) snprintf(out->arch, sizeof out->arch, "%s", t->arch);
  for (int i = 0; i < p->nsources; i++)
    program_source_path(p->root, p->sources[i], out->paths[i], sizeof out->paths[i]);
  for (int a = 0; a < ARM_COUNT; a++) {
    out->kernel_of[a] = -1;
    if (!p->exprs[a][0]) continue;
    int k = out->kernel_of[a] = kernel_index(p, a, out);
    if (out->exprs[k]) continue;
    int one = p->from[a] >= 0 && p->from[a] < p->nsources;
    for (int i = 0; i < (one ? 1 : p->nsources); i++)
      out->srcs[k][i] = out->paths[one ? p->from[a] : i];
    out->exprs[k] = p->exprs[a];
    out->req[k] = (compile_req){.source_paths = out->srcs[k], .nsources = one ? 1 : p->nsources,
                                .name_exprs = &out->exprs[k], .nexprs = 1, .arch = t->arch ? out->arch : NULL,
                                .cache_dir = t->cache_dir,
                                .simulate_s = program_kernel_sim_seconds(p->exprs[a], t->sim)};
  }
}

int program_kernels(const program_ref *p, program_ref out[ARM_COUNT]) {
  program_req pr;
  const program_target none = {0};
  program_request(p, &none, &pr);
  for (int k = 0; k < pr.nkernels; k++) {
    int a = 0;
    while (pr.kernel_of[a] != k) a++;
    memset(&out[k], 0, sizeof out[k]);
    snprintf(out[k].root, sizeof out[k].root, "%s", p->root);
    int one = p->from[a] >= 0 && p->from[a] < p->nsources;
    out[k].nsources = one ? 1 : p->nsources;
    for (int i = 0; i < out[k].nsources; i++)
      memcpy(out[k].sources[i], p->sources[one ? p->from[a] : i], SPEC_PATH);
    memcpy(out[k].exprs[0], p->exprs[a], sizeof out[k].exprs[0]);
    out[k].arch_specific = p->arch_specific;
    for (int b = 0; b < ARM_COUNT; b++) out[k].from[b] = -1;
  }
  return pr.nkernels;
}

int program_compile(const program_req *pr, program_build *out, tf_err *e) {
  memset(out, 0, sizeof *out);
  out->failed = -1;
  out->cache_hit = 1;
  for (int k = 0; k < pr->nkernels; k++) {
    out->nkernels = k + 1;
    int rc = compile_program(&pr->req[k], &out->kernel[k], e);
    out->ms += out->kernel[k].ms;
    out->wait_ms += out->kernel[k].wait_ms;
    out->cache_hit &= out->kernel[k].cache_hit;
    if (rc) {
      out->failed = k;
      return -1;
    }
  }
  return 0;
}

int program_refused(const program_req *pr, const program_build *pb, const char *arch,
                    tf_err *e) {
  const char *log = pb->failed >= 0 ? pb->kernel[pb->failed].log : NULL;
  const char *name = pb->failed >= 0 ? pr->exprs[pb->failed] : NULL;
  char excerpt[PROGRAM_LOG_EXCERPT + 1];
  snprintf(excerpt, sizeof excerpt, "%s", log ? log : "(no log)");
  return tf_fail(e, TF_COMPILE_REFUSED, "nvrtc refused the program for %s (%s): %s", arch,
                 name ? name : "?", excerpt);
}

void program_build_release(program_build *b) {
  for (int k = 0; k < b->nkernels; k++) compile_release(&b->kernel[k]);
  b->nkernels = 0;
}

double program_kernel_sim_seconds(const char *name_expr, const sim_compile *m) {
  if (!m || !(m->short_s > 0)) return 0.0;
  if (!(m->long_frac > 0)) return m->short_s;
  /* FNV-1a mixes a short name's bits poorly (most digits of its hash are the same for k<0>
   * and k<1>), so both halves of it go through splitmix64's finaliser. */
  char key[CACHE_KEY_HEX], half[17];
  cache_hash_hex(name_expr, strlen(name_expr), key);
  memcpy(half, key, 16);
  half[16] = '\0';
  uint64_t h = strtoull(half, NULL, 16) ^ strtoull(key + 16, NULL, 16);
  h = (h ^ (h >> 30)) * 0xbf58476d1ce4e5b9ULL;
  h = (h ^ (h >> 27)) * 0x94d049bb133111ebULL;
  h ^= h >> 31;
  double u = (double)(h >> 11) / 9007199254740992.0; /* uniform in [0, 1) */
  return u < m->long_frac ? m->long_s : m->short_s;
}
