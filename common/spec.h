/* spec: a kernel's description (templates/NAME.json, kernels/NAME.json).
 *
 * A spec names a CUDA source file and one __global__ kernel in it. Tunable
 * kernels are `template<int ...>` functions whose template parameters are the
 * knobs, in the order the "knobs" object lists them; committed kernels have no
 * knobs. The spec also states the problem dimensions and their ranges, the
 * static constraints (integer expressions that must be non-zero, each with the
 * reason it exists), the launch geometry, the buffers and the kernel's argument
 * list, all as expressions over knob and dimension names (common/expr.h).
 * docs/reference/template.md documents every key.
 *
 * Ownership: spec_load fills a caller-owned struct and allocates its tables (knobs, dims,
 * constraints with their texts, buffers, args) to exactly what the file declares, and the
 * parsed expressions inside them; spec_release frees them all. A spec is never copied by
 * value: a second holder borrows a pointer to it, and the first must outlive it. A config and
 * a launch_geom are plain values of a fixed size, copied freely (jobs, the search's
 * look-ahead copies, ledger records). */
#ifndef TF_SPEC_H
#define TF_SPEC_H

#include <cjson/cJSON.h>
#include <limits.h>

#include "common/err.h"
#include "common/expr.h"
#include "common/reference.h" /* defines: reference_type, reference_init, reference_check */

/* Bounds on what a spec may declare. spec_load allocates each table to the file's own size;
 * these protect the farm's memory from an absurd one, and size the plain values that carry a
 * spec's tables: a config holds SPEC_MAX_KNOBS values, a job and a launch_geom
 * SPEC_MAX_DIMS dimensions, SPEC_MAX_BUFFERS buffers and SPEC_MAX_ARGS arguments, and the
 * space's table (coordinator/space.h) a constraint's index in one byte. */
#define SPEC_MAX_KNOBS 32
#define SPEC_MAX_VALUES 16
#define SPEC_MAX_DIMS 6
#define SPEC_MAX_CONSTRAINTS 255
#define SPEC_MAX_BUFFERS 8
#define SPEC_MAX_ARGS 16
#define SPEC_MAX_TEXT 512   /* a constraint's expression, bytes with the terminator */
#define SPEC_MAX_REASON 600 /* a constraint's reason, bytes with the terminator */
#define SPEC_NAME 48
#define SPEC_PATH 1024
/* The largest buffer a spec may ask for, in elements (16 GiB of floats): anything more is absurd. */
#define SPEC_MAX_ELEMENTS (1LL << 32)

typedef struct spec_knob {
  char name[SPEC_NAME];
  int nvalues;
  long long values[SPEC_MAX_VALUES];
  char labels[SPEC_MAX_VALUES][32]; /* "" when the spec gives no label */
  int has_default;                  /* a knob added to a template later names the value that */
  long long def;                    /* keeps older campaigns and ledgers meaning what they did */
} spec_knob;

typedef struct spec_constraint {
  char name[SPEC_NAME];
  char *reason;    /* allocated, as long as the spec says (SPEC_MAX_REASON at most) */
  char *text;      /* allocated, as long as the spec says (SPEC_MAX_TEXT at most) */
  expr *e;
  int performance; /* 1: it keeps slow configurations out of the search, and a kernel it
                    * refuses is still correct ("performance": true); export leaves it out */
} spec_constraint;

typedef struct spec_dim {
  char name[SPEC_NAME];
  long long lo, hi; /* allowed range of the problem size */
} spec_dim;

/* What a kernel does with a buffer: reads it (filled from the seed), writes it (checked),
 * both (filled, then checked), or uses it for itself (zeroed once, never checked). */
typedef enum { SPEC_ROLE_INPUT = 0, SPEC_ROLE_OUTPUT, SPEC_ROLE_INOUT, SPEC_ROLE_SCRATCH } spec_role;

/* 1 for the roles whose buffer is filled from the seed, and for those checked. */
#define SPEC_ROLE_FILLED(r) ((r) == SPEC_ROLE_INPUT || (r) == SPEC_ROLE_INOUT)
#define SPEC_ROLE_CHECKED(r) ((r) == SPEC_ROLE_OUTPUT || (r) == SPEC_ROLE_INOUT)

typedef struct spec_buffer {
  char name[SPEC_NAME];
  int output;           /* 1: written by the kernel, checked against the reference (the
                         * roles output and inout) */
  int role;             /* spec_role */
  int type;             /* reference_type: the element type, f32 unless "type" says */
  reference_init init;  /* how it is filled (REFERENCE_INIT_INT: a and b come from
                         * init_lo/init_hi at each problem, spec_launch) */
  char init_text[2][128];
  expr *init_lo, *init_hi;
  reference_check check; /* how it is compared (REFERENCE_CHECK_L2: against "tolerance") */
  char count_text[256]; /* elements, an expression */
  expr *count;
  char clear_text[128]; /* "" or an expression: non-zero means zero the buffer before each launch */
  expr *clear;
} spec_buffer;

typedef enum { SPEC_ARG_BUFFER, SPEC_ARG_INT, SPEC_ARG_FLOAT, SPEC_ARG_TMAP } spec_arg_kind;

/* A tensor map ({"name": n, "tensormap": {...}}): the kernel takes a CUtensorMap of a buffer
 * by value, for TMA: `rank` dimensions of the buffer densely laid out, innermost first, a box
 * per copy, a swizzle (bytes). A reference takes the other arguments, in order. */
#define SPEC_MAX_TMAPS 4 /* tensor-map arguments in one spec */
#define SPEC_TMAP_RANK 5 /* dimensions of one, at most (TMA's own limit) */
#define SPEC_TMAP_BYTES 128 /* sizeof(CUtensorMap) */

typedef struct spec_arg {
  spec_arg_kind kind;
  int type;        /* the scalar's reference_type, or -1: untyped ({"float": x} and plain
                    * expressions), passed as the kernel's parameter size says */
  char name[SPEC_NAME]; /* a typed scalar's name, for messages; "" otherwise */
  int buffer;      /* SPEC_ARG_BUFFER: index into buffers */
  char text[128];  /* SPEC_ARG_INT: expression text */
  expr *e;         /* SPEC_ARG_INT */
  double f;        /* SPEC_ARG_FLOAT */
  /* SPEC_ARG_TMAP: the buffer (`buffer`), its slot in launch_geom.tmap_dim and tmap_box, the
   * rank, the swizzle in bytes, and per dimension its extent and the box's, expressions */
  int tmap, rank, swizzle;
  char dim_text[SPEC_TMAP_RANK][64], box_text[SPEC_TMAP_RANK][64];
  expr *dim[SPEC_TMAP_RANK], *box[SPEC_TMAP_RANK];
} spec_arg;

typedef struct spec {
  char path[SPEC_PATH];        /* the .json file as given */
  char source_path[SPEC_PATH]; /* the .cu file, resolved beside the .json */
  char name[64];
  /* The reference kernel ("reference"): a kernel beside the spec taking the same arguments,
   * run once per input set into outputs of its own. ref_kernel "" when there is none. */
  char ref_kernel[64];
  char ref_source_path[SPEC_PATH];
  char ref_grid_text[3][128], ref_block_text[3][128], ref_smem_text[128];
  expr *ref_grid[3], *ref_block[3], *ref_smem;
  /* Or the CPU reference library ("reference": {"library": path}, include/tunefarm_ref.h):
   * the path as the spec gives it and resolved beside the spec; "" when there is none. */
  char ref_library[SPEC_PATH];
  char ref_library_path[SPEC_PATH];
  char kernel[64];
  /* "arch_specific": compile for the GPU's arch-specific target (compile_arch_specific:
   * "sm_90a" on an H200, for wgmma) rather than its portable one. */
  int arch_specific;
  /* The tables, each allocated to the size the file declares (spec_load, spec_release). */
  int nknobs;
  spec_knob *knobs;
  int ndims;
  spec_dim *dims;
  int nconstraints;
  spec_constraint *cons;
  char grid_text[3][128], block_text[3][128], smem_text[128];
  expr *grid[3], *block[3], *smem;
  int nbuffers;
  spec_buffer *bufs;
  int nargs;
  spec_arg *args;
  int ntmaps;               /* the SPEC_ARG_TMAP arguments among them */
  double tolerance;         /* relative L2 error allowed against the double reference */
  char flops_text[128], bytes_text[128];
  expr *flops, *bytes;      /* work and minimum traffic, for reports and the simulated device */
} spec;

/* One point of the knob space: values (not indices), in knob order. */
typedef struct config {
  int n;
  long long v[SPEC_MAX_KNOBS];
} config;

/* Concrete launch of one configuration on one problem. */
typedef struct launch_geom {
  unsigned grid[3], block[3];
  unsigned smem;                       /* dynamic shared memory, bytes */
  long long count[SPEC_MAX_BUFFERS];   /* elements per buffer */
  int clear[SPEC_MAX_BUFFERS];
  long long iarg[SPEC_MAX_ARGS];       /* values of SPEC_ARG_INT arguments */
  long long tmap_dim[SPEC_MAX_TMAPS][SPEC_TMAP_RANK]; /* tensor maps by slot: extents, boxes */
  long long tmap_box[SPEC_MAX_TMAPS][SPEC_TMAP_RANK];
  long long init_lo[SPEC_MAX_BUFFERS], init_hi[SPEC_MAX_BUFFERS]; /* REFERENCE_INIT_INT ranges */
} launch_geom;

/* Load path into s (its previous contents are not freed). A table beyond its bound above is
 * refused as bad input naming the file and the key, before anything is allocated for it. */
int spec_load(spec *s, const char *path, tf_err *e);
/* Frees the tables and expressions; s->path stays, the rest is zeroed. */
void spec_release(spec *s);

int spec_knob_index(const spec *s, const char *name);
int spec_dim_index(const spec *s, const char *name);
/* Index of value v in knob k's domain, or -1. */
int spec_value_index(const spec *s, int k, long long v);

/* {"BM": 64, ...} -> config. Every knob must be present with a value from its domain, except
 * a knob with a "default", which takes it when absent;
 * `what`, `file` and `where` name the place for messages ("campaign", "x.json", "start"). */
int spec_config_from_json(const spec *s, const cJSON *obj, const char *what, const char *file,
                          const char *where, config *out, tf_err *e);
cJSON *spec_config_to_json(const spec *s, const config *c);
int config_equal(const config *a, const config *b);

/* Problem sizes {"M": 1024, ...} -> dims[] in spec order; each within its range. */
int spec_dims_from_json(const spec *s, const cJSON *obj, const char *what, const char *file,
                        const char *where, long long *dims, tf_err *e);

/* Static check: *violated = index of the first constraint the config breaks, or -1.
 * Returns -1 only when a constraint cannot be evaluated (division by zero...). */
int spec_check(const spec *s, const long long *dims, const config *c, int *violated, tf_err *e);
/* Every constraint's verdict: broken[i] = 1 if constraint i refuses the config. */
int spec_check_all(const spec *s, const long long *dims, const config *c, unsigned char *broken,
                   tf_err *e);

/* Evaluate geometry, buffer counts and integer arguments; refuses empty or absurd launches. */
int spec_launch(const spec *s, const long long *dims, const config *c, launch_geom *g, tf_err *e);

/* One integer spec_launch computes from the spec's expressions: where it goes, and the range
 * it must fall in. SPEC_VALUE_THREADS is the block's threads, the product of its three
 * dimensions (x NULL): what a kernel can launch with. */
typedef enum {
  SPEC_VALUE_GRID, SPEC_VALUE_BLOCK, SPEC_VALUE_THREADS, SPEC_VALUE_SMEM, SPEC_VALUE_COUNT,
  SPEC_VALUE_CLEAR, SPEC_VALUE_ARG, SPEC_VALUE_TMAP_DIM, SPEC_VALUE_TMAP_BOX
} spec_value_kind;

typedef struct spec_launch_value {
  spec_value_kind kind;
  int index;       /* the dimension, buffer or argument; a tensor map's: argument * 8 + i */
  const expr *x;   /* the spec's: valid while it is loaded */
  long long lo, hi;
} spec_launch_value;

#define SPEC_LAUNCH_VALUES (8 + 2 * SPEC_MAX_BUFFERS + SPEC_MAX_ARGS + 2 * SPEC_MAX_TMAPS * SPEC_TMAP_RANK)

/* 1 when the spec names its reference (a kernel or a library). A campaign's template must;
 * a committed kernel may leave the checking to the template it stands beside. */
int spec_has_reference(const spec *s);

/* 1 when a and b take the same interface: dimensions by name in the same order, buffers by
 * name, type and role, and arguments of the same kinds and types naming the same buffers. A
 * committed kernel stands in for a template's arm only where this holds; the template's
 * reference then decides whether it computes the same thing. */
int spec_same_interface(const spec *a, const spec *b);

/* The reference kernel's launch at a problem: grid, block, dynamic shared memory and the
 * integer arguments (which name only problem sizes when there is a reference kernel); with a
 * reference library, the integer arguments alone. */
int spec_reference_launch(const spec *s, const long long *dims, launch_geom *g, tf_err *e);

/* The values spec_launch computes, in the order it computes them, into out
 * (SPEC_LAUNCH_VALUES at most); returns their number. */
int spec_launch_values(const spec *s, spec_launch_value *out);

/* v's key in messages ("launch.grid[0]", "launch.block", "buffers[1].count", "args[3]"): a
 * constant string or buf (32 bytes are enough). */
const char *spec_launch_value_key(const spec_launch_value *v, char *buf, size_t len);

/* used[k] = 1 for each knob k whose value v reads; -1 when that cannot be told (a name bound
 * to no knob or dimension: then it may read any). */
int spec_launch_value_knobs(const spec *s, const spec_launch_value *v,
                            unsigned char used[SPEC_MAX_KNOBS]);

/* One value at one configuration, checked against its range as spec_launch checks it;
 * TF_EXIT_INPUT naming the file and the key (and the configuration when the expression
 * cannot be evaluated). */
int spec_launch_value_eval(const spec *s, const spec_launch_value *v, const long long *dims,
                           const config *c, long long *out, tf_err *e);

/* Evaluate an expression of this spec (flops, bytes) for one configuration; 0 when absent. */
int spec_eval(const spec *s, const expr *x, const long long *dims, const config *c, long long *out,
              tf_err *e);

/* "tf_matmul<64, 64, 16, ...>" or just "kernel" when there are no knobs. */
int spec_name_expr(const spec *s, const config *c, char *buf, size_t len);

/* start with the knobs of "K=V,K=V" set (a command line's configuration): every K a knob of
 * s and every V one of its values; an empty item or a knob given twice is refused.
 * `option` names the place in messages ("--config"); TF_EXIT_INPUT. */
int spec_config_parse(const spec *s, const config *start, const char *text, const char *option,
                      config *out, tf_err *e);

/* "BM=64 BN=128 ..." for messages and progress lines. */
void spec_config_str(const spec *s, const config *c, char *buf, size_t len);

#endif
