/* job: the job of one generation, built from its campaign: the template's layout, the arms'
 * name expressions and launch geometry, the protocol and the decision parameters, every
 * expression evaluated, so that the job alone reruns it (`tunefarm measure`, common/msg.h).
 * Its files (sources, specs) are named relative to the project root, which it carries apart.
 * The coordinator builds each generation's job here; bench and audit build theirs the same
 * way. The caller owns the job (a large value: keep it off the stack). */
#ifndef TF_JOB_H
#define TF_JOB_H

#include "common/campaign.h"
#include "common/err.h"
#include "common/msg.h"

/* The job for one generation of campaign c: job_init, then best and new from the template,
 * then the campaign's control. */
int job_build(job *j, const campaign *c, long long id, int generation, const config *best,
              const config *new_cfg, tf_err *e);
/* A job for campaign c (its dims, layout, reference, protocol and decision parameters) whose
 * arms are still empty: fill all three with the setters below before using it. -1 with e
 * when the template's reference launch does not evaluate at the campaign's problem. */
int job_init(job *j, const campaign *c, long long id, int generation, tf_err *e);
/* Set one arm to a configuration of the template (the audit's correctness sweep, the bench). */
int job_set_template_arm(job *j, const campaign *c, int arm, const config *cfg, tf_err *e);
/* Set one arm to committed kernel k (kernels/NAME.json), which must take the template's
 * interface (spec_same_interface; TF_EXIT_INPUT naming both files otherwise); the template's
 * reference checks it. A job compiles at most one committed kernel: several arms may hold the
 * same one, never two different ones. k's source becomes sources[1]. */
int job_set_kernel_arm(job *j, const campaign *c, int arm, const spec *k, tf_err *e);
/* Set one arm to the campaign's GEMM peer p (ARM_LIBRARY_GEMM, cublasGemmEx) on the job's
 * own buffers, sized as p's dimensions say. Only the cuda backend runs such an arm
 * (`tunefarm bench`'s peer rows); TF_EXIT_INPUT when p does not fit the job's layout. */
int job_set_gemm_arm(job *j, const campaign *c, int arm, const peer_gemm *p, tf_err *e);

#endif
