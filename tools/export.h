/* export: the result of a search as code a user can take away (`tunefarm export`).
 *
 * From one GPU's ledger: NAME.h and NAME.cu, which compile with plain nvcc (-std=c++17) and
 * need nothing of tunefarm. NAME.cu holds the template's source as the farm measured it and
 * the winning configuration's instantiation; NAME.h declares two functions:
 *   const char *NAME_check(dims...)   NULL when the configuration accepts these problem
 *                                     sizes, else the reason (a template constraint, or a
 *                                     size out of the template's range); host code only;
 *   cudaError_t NAME_launch(buffers..., dims..., cudaStream_t)
 *                                     checks, then computes the grid, block, dynamic shared
 *                                     memory and integer arguments from the template's
 *                                     expressions at run time, zeroes what the template
 *                                     clears, opts into large shared memory, and launches.
 * The header's comment says where the configuration came from (campaign, device, ledger,
 * measured time).
 *
 * With an architecture (the ledger's GPU, or --arch), also NAME.cubin: the configuration
 * compiled as the farm compiles it (NVRTC, the farm's options, the job's program, through the
 * cubin cache; on the machine that ran the search, the cubin it measured), and in NAME.h
 *   cudaError_t NAME_use_cubin(const char *path)
 *                                     loads it, so that NAME_launch launches the machine code
 *                                     the farm measured instead of NAME.cu's nvcc build: nvcc
 *                                     and NVRTC can compile one source to code that runs at
 *                                     another speed (docs/results.md, "The farm's build and
 *                                     nvcc's").
 * Ownership: export_render reads the spec and config it is given and writes two files and
 * copies those the template includes;
 * export_cubin compiles the third into memory (export_bin), which `tunefarm export` writes. */
#ifndef TF_EXPORT_H
#define TF_EXPORT_H

#include <stdio.h>

#include "common/campaign.h"
#include "common/err.h"
#include "common/msg.h"

typedef struct export_what {
  const campaign *c;        /* the campaign: template, problem it was tuned on */
  config cfg;               /* the configuration to export */
  const device_record *dev; /* where it was measured; NULL if unknown */
  double us;                /* its measured time per launch (NAN if unknown) */
  const char *ledger;       /* the ledger it came from, for the comment; NULL if none */
  const char *name;         /* C identifier prefix and file base name */
  const char *lowered;      /* the kernel's name in NAME.cubin, or NULL: no cubin, and no
                             * NAME_use_cubin */
  const char *build_arch;   /* -arch of the build command the header states (an sm_XY NVRTC
                             * accepts, or "native"); NULL: "native" */
} export_what;

/* Write DIR/NAME.h and DIR/NAME.cu, and beside them every file the template's source
 * includes. Every string of the ledger, campaign or template stays inert text in them (a
 * comment's text or a string literal, escaped: export.c says how); the user's names reach
 * the code only behind the prefix tf_p_, and the launcher's own names carry tf_l_.
 * TF_EXIT_INPUT, before anything is written, for a NAME or a template kernel name that is no
 * C identifier, a keyword, reserved, or one of the exported code's own names; for a problem
 * size or buffer name that is no C identifier or a keyword; for an included file named like
 * NAME.h, NAME.cu or NAME.cubin. */
int export_render(const export_what *w, const char *dir, tf_err *e);

/* The configuration's cubin: NVRTC's machine code, the kernel's lowered name, and whether the
 * cubin came from the cache. Ownership: bytes is malloc'd; export_bin_release. */
typedef struct export_bin {
  void *bytes;
  size_t size;
  char lowered[512];
  int cached;
} export_bin;

/* Compile w's configuration for arch ("sm_90") as the farm does. TF_EXIT_INPUT for an arch that
 * is not sm_ and digits, or that this NVRTC builds no machine code for. */
int export_cubin(const export_what *w, const char *arch, export_bin *out, tf_err *e);
void export_bin_release(export_bin *b);

/* What `tunefarm export` is asked (its options), and where it says what it wrote (out) and
 * warns or notes a torn ledger line (notes). */
typedef struct export_opts {
  const char *dir, *name, *campaign, *config, *input;
  const char *arch; /* --arch */
  int no_cubin;     /* --no-cubin */
  FILE *out, *notes;
} export_opts;

/* `tunefarm export` after its command line: the files of o->input (a ledger, or with
 * o->config a campaign) in o->dir. */
int export_run(const export_opts *o, tf_err *e);

/* export_run for a ledger of one of the campaigns cs, loaded once by a caller that exports
 * many (tests/fuzz/fuzz_export.c): the one whose identity the ledger's header names;
 * TF_EXIT_INPUT when none. o->campaign is not read. */
int export_ledger_among(const export_opts *o, const campaign *const *cs, int n, tf_err *e);

int export_main(int argc, char **argv);

#endif
