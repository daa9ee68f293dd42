/* job: building a generation's job from its campaign (coordinator/job.h). */
#include "coordinator/job.h"

#include <stdio.h>
#include <string.h>

static int build_arm(job_arm *a, const campaign *c, const spec *s, const config *cfg,
                     tf_err *e) {
  static const config none = {0, {0}};
  const config *use = cfg ? cfg : &none;
  a->from_template = cfg != NULL;
  a->cfg = *use;
  if (spec_name_expr(s, use, a->name_expr, sizeof a->name_expr))
    return tf_fail(e, TF_EXIT_FAIL, "name expression too long for '%s'", s->name);
  if (spec_launch(s, c->dims, use, &a->geom, e)) return -1;
  const char *fault = cfg ? campaign_fault_for(c, cfg) : NULL;
  snprintf(a->fault, sizeof a->fault, "%s", fault ? fault : "");
  return 0;
}

/* The committed kernel's source (sources[1]) is compiled only while some arm is that kernel. */
static void update_nsources(job *j) {
  j->nsources = 1;
  for (int a = 0; a < ARM_COUNT; a++)
    if (!j->arm[a].from_template && !j->arm[a].library[0] && j->arm[a].name_expr[0])
      j->nsources = 2;
  if (j->nsources == 1) j->sources[1][0] = j->specs[1][0] = '\0';
}

/* What the template's expressions give at the job's problem whatever the arms: the int
 * ranges of the inputs' fills and the reference kernel's launch, or the reference library's
 * arguments. Every job carries them, one of committed kernels and library calls alone too:
 * the template's reference checks every arm. */
static int set_problem_values(job *j, const campaign *c, tf_err *e) {
  const spec *s = &c->tmpl;
  if (spec_reference_launch(s, c->dims, &j->ref_geom, e)) return -1;
  for (int b = 0; b < s->nbuffers; b++)
    if (s->bufs[b].init.kind == REFERENCE_INIT_INT)
      j->buf_init[b] = (reference_init){REFERENCE_INIT_INT, (double)j->ref_geom.init_lo[b],
                                        (double)j->ref_geom.init_hi[b]};
  if (s->ref_library[0]) {
    campaign_rel_path(c, s->ref_library_path, j->ref_library, SPEC_PATH);
    for (int a = 0; a < s->nargs; a++) snprintf(j->arg_names[a], SPEC_NAME, "%s", s->args[a].name);
    return 0;
  }
  snprintf(j->ref_kernel, sizeof j->ref_kernel, "%s", s->ref_kernel);
  campaign_rel_path(c, s->ref_source_path, j->ref_source, SPEC_PATH);
  return 0;
}

int job_set_template_arm(job *j, const campaign *c, int arm, const config *cfg, tf_err *e) {
  if (!cfg) return tf_fail(e, TF_EXIT_FAIL, "job %lld: arm '%s' has no configuration", j->id,
                           arm_names[arm]);
  if (build_arm(&j->arm[arm], c, &c->tmpl, cfg, e)) return -1;
  update_nsources(j);
  return 0;
}

static void build_layout(job *j, const campaign *c) {
  const spec *s = &c->tmpl;
  j->arch_specific = s->arch_specific;
  j->ndims = s->ndims;
  for (int d = 0; d < s->ndims; d++) {
    snprintf(j->dim_names[d], SPEC_NAME, "%s", s->dims[d].name);
    j->dims[d] = c->dims[d];
  }
  j->nbuffers = s->nbuffers;
  for (int b = 0; b < s->nbuffers; b++) {
    snprintf(j->buf_names[b], SPEC_NAME, "%s", s->bufs[b].name);
    j->buf_output[b] = s->bufs[b].output;
    j->buf_role[b] = s->bufs[b].role;
    j->buf_type[b] = s->bufs[b].type;
    j->buf_init[b] = s->bufs[b].init; /* an int range's ends: job_set_template_arm */
    j->buf_check[b] = s->bufs[b].check;
  }
  j->nargs = s->nargs;
  for (int a = 0; a < s->nargs; a++) {
    j->arg_kind[a] = s->args[a].kind;
    j->arg_buffer[a] = s->args[a].buffer;
    j->arg_float[a] = s->args[a].f;
    j->arg_type[a] = s->args[a].type + 1;
    j->arg_tmap[a] = s->args[a].tmap;
    j->arg_rank[a] = s->args[a].rank;
    j->arg_swizzle[a] = s->args[a].swizzle;
  }
  j->ntmaps = s->ntmaps;
}

/* A committed kernel stands in for a template arm only where it takes the template's
 * interface (spec_same_interface): the job's layout is the template's. */
static int check_kernel_layout(const campaign *c, const spec *k, tf_err *e) {
  if (spec_same_interface(&c->tmpl, k)) return 0;
  return tf_fail(e, TF_EXIT_INPUT,
                 "campaign '%s': kernel '%s' ('%s') takes other dimensions, buffers or "
                 "arguments than template '%s'",
                 c->path, k->name, k->path, c->tmpl.name);
}

int job_set_kernel_arm(job *j, const campaign *c, int arm, const spec *k, tf_err *e) {
  char source[SPEC_PATH];
  if (check_kernel_layout(c, k, e)) return -1;
  campaign_rel_path(c, k->source_path, source, sizeof source);
  for (int a = 0; a < ARM_COUNT; a++)
    if (a != arm && !j->arm[a].from_template && !j->arm[a].library[0] && j->arm[a].name_expr[0] &&
        strcmp(j->sources[1], source) != 0)
      return tf_fail(e, TF_EXIT_FAIL, "job %lld: arm '%s' already holds committed kernel '%s'; "
                     "a job compiles one committed kernel at most", j->id, arm_names[a],
                     j->arm[a].name_expr);
  if (build_arm(&j->arm[arm], c, k, NULL, e)) return -1;
  snprintf(j->sources[1], SPEC_PATH, "%s", source);
  campaign_rel_path(c, k->path, j->specs[1], SPEC_PATH);
  update_nsources(j);
  return 0;
}

int job_set_gemm_arm(job *j, const campaign *c, int arm, const peer_gemm *p, tf_err *e) {
  if (p->a >= j->nbuffers || p->b >= j->nbuffers || p->c >= j->nbuffers || p->m >= j->ndims ||
      p->n >= j->ndims || p->k >= j->ndims)
    return tf_fail(e, TF_EXIT_INPUT, "campaign '%s': a peer names a buffer or dimension the "
                   "template '%s' lacks", c->path, c->tmpl.name);
  job_arm *x = &j->arm[arm];
  memset(x, 0, sizeof *x);
  snprintf(x->library, sizeof x->library, "%s", ARM_LIBRARY_GEMM);
  snprintf(x->name_expr, sizeof x->name_expr, "cublasGemmEx");
  int g[ARM_GEMM_FIELDS] = {p->a, p->b, p->c, p->m, p->n, p->k, p->b_nk};
  memcpy(x->gemm, g, sizeof g);
  for (int d = 0; d < 3; d++) x->geom.grid[d] = x->geom.block[d] = 1; /* cuBLAS chooses */
  for (int i = 0; i < j->nbuffers; i++) x->geom.count[i] = 1;
  long long m = j->dims[p->m], n = j->dims[p->n], k = j->dims[p->k];
  x->geom.count[p->a] = m * k;
  x->geom.count[p->b] = k * n;
  x->geom.count[p->c] = m * n;
  update_nsources(j);
  return 0;
}

int job_init(job *j, const campaign *c, long long id, int generation, tf_err *e) {
  memset(j, 0, sizeof *j);
  j->id = id;
  j->generation = generation;
  snprintf(j->campaign, sizeof j->campaign, "%s", c->name);
  snprintf(j->root, sizeof j->root, "%s", c->root);
  campaign_rel_path(c, c->tmpl.source_path, j->sources[0], SPEC_PATH);
  campaign_rel_path(c, c->tmpl.path, j->specs[0], SPEC_PATH);
  j->nsources = 1;
  build_layout(j, c);
  j->tolerance = c->tmpl.tolerance;
  j->measure = c->measure;
  j->decide = c->decide;
  return set_problem_values(j, c, e);
}

int job_build(job *j, const campaign *c, long long id, int generation, const config *best,
              const config *new_cfg, tf_err *e) {
  if (job_init(j, c, id, generation, e) || job_set_template_arm(j, c, ARM_BEST, best, e) ||
      job_set_template_arm(j, c, ARM_NEW, new_cfg, e))
    return -1;
  if (c->control_is_kernel) return job_set_kernel_arm(j, c, ARM_CONTROL, &c->control_kernel, e);
  return job_set_template_arm(j, c, ARM_CONTROL, &c->control_cfg, e);
}

