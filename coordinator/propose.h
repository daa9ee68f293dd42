/* propose: the next configuration to try on one device.
 *
 * The proposers are a table (proposer_ops, at the end): "coordinate" (below, the default),
 * "random", "annealing" and "model" (coordinator/strategy_*.c; docs/reference/strategies.md).
 * Every proposer proposes only configurations never tried on this device, as a function of
 * its seed, the tried set and the feedback it was given, so a search replays from its ledger.
 * The coordinate proposer makes moves from `best`, in this order:
 * 1. single-knob moves: every other value of one knob, nearest first, knobs ordered by how
 *    much they have paid off on this device (keeps count, rejections cost a little), ties
 *    broken by a per-device seeded order;
 * 2. informed moves (mostly of several knobs), first once single moves stall for
 *    `two_knob_after` rejections (prefer_two):
 *    a. combinations of near misses (moves from best rejected with a median ratio below
 *       PROPOSE_NEAR_MISS), two at a time, closest pair first; a keep forgets them, since
 *       their ratios were against the previous best;
 *    b. one step of one knob from a near miss whose ratio is below PROPOSE_STEP_FROM;
 *    c. with the problem's dimensions (proposer_repairs), a near miss together with a
 *       one-knob move that breaks a static constraint alone and is legal with it;
 *    d. repairs: a one-knob move (one or two values away) that breaks a constraint, together
 *       with the nearest move of another knob that makes it legal;
 * 3. repairs of refused moves at any distance;
 * 4. blind pairs: two knobs one or two steps each, only after every single move from best
 *    was tried.
 * Exhausted when none of these finds an untried point. Why this order: docs/design.md,
 * "The proposer".
 * Restarts (propose_restart): a search that stalls can begin again from a random legal
 * configuration never tried on this device; the coordinator keeps the best of the searches
 * (coordinator/coordinator.c).
 * Ownership: tried_set owns its array (tried_release). */
#ifndef TF_PROPOSE_H
#define TF_PROPOSE_H

#include "common/spec.h"

/* The configurations a search has tried, in the order it tried them (v[0..n)), with a hash
 * index over them: a proposal asks "tried?" of hundreds of moves, and a guess ahead
 * (search_peek) of thousands, so a lookup must not scan the list. A zeroed set is empty.
 * A set may lie over another (tried_over): it then holds that one's configurations too, and
 * v[0..n) are only those added to it. */
typedef struct tried_set {
  config *v;
  int n, cap;
  int *slot;   /* open addressing: an index into v, or -1; nslots is a power of two */
  int nslots;
  const struct tried_set *under; /* NULL, or the set this one lies over */
} tried_set;

int tried_has(const tried_set *t, const config *c);
int tried_add(tried_set *t, const config *c); /* 0, or -1 out of memory */
/* *dst becomes an empty set over `under`: it holds under's configurations and those added to
 * it, and stores only the latter. `under` must stay as it is while dst lives: the guesses
 * walk copies of a search that add a few configurations each to a set of thousands, which
 * must not copy the set. */
void tried_over(tried_set *dst, const tried_set *under);
void tried_release(tried_set *t); /* frees dst's own storage only */

/* The constraints' verdicts on configurations already checked: spec_check interprets every
 * constraint's expression, and a search asks it of the same configurations again and again
 * (the proposer's repairs, the search's refusals, and search_peek's walks ahead, which repeat
 * the search's own steps). Verdicts are keyed by configuration alone, so one memo serves one
 * template at one problem; so do the repair lists, which follow from the verdicts, and live
 * here because the memo is what a search and its copies share. A zeroed memo is empty;
 * verdicts that could not be evaluated are not kept. */
typedef struct repair_list repair_list; /* propose.c: the repairs from one best, so far */
struct space_view;                      /* coordinator/space.h */
typedef struct check_memo {
  /* Borrowed, or NULL: every point's verdict, tabled when `run` enumerated the space. A point
   * of the space is answered from it; the hash below keeps what it cannot answer. */
  const struct space_view *space;
  config *key;
  int *bad;    /* spec_check's *violated for key[i] */
  int n, cap;
  int *slot;   /* as tried_set's */
  int nslots;
  /* The repairs found from recent bests, in the order the proposer scans them: they follow
   * from the constraints alone, so the first one not tried answers any tried set, and a
   * search's walks ahead ask for them from the same best again and again. */
  repair_list *repairs; /* PROPOSE_REPAIR_LISTS of them, allocated on first use */
  int next_repairs;     /* the one to reuse next */
} check_memo;

/* spec_check through the memo m (NULL: none): the same return and *violated. */
int check_memo_check(check_memo *m, const spec *s, const long long *dims, const config *c,
                     int *violated, tf_err *e);
void check_memo_release(check_memo *m);

/* A rejected move is a near miss when its median ratio new/best is below this: within 3%,
 * the size of a knob interaction that a second knob can turn around (docs/design.md,
 * "The proposer"). */
#define PROPOSE_NEAR_MISS 1.03
#define PROPOSE_MAX_NEAR 16
/* Repair lists a memo keeps (check_memo.repairs): a search asks from one best at a time, its
 * walks ahead from the bests a keep would give; the oldest list is reused. */
#define PROPOSE_REPAIR_LISTS 32
/* A near miss is stepped from (near_step) when its median showed at least the 1% gain a keep
 * needs by default, and the decision still did not keep it (ambiguous, or the sign test not
 * passed); a looser threshold spends the stale budget on the neighbours of noise
 * (docs/design.md, "The proposer"). */
#define PROPOSE_STEP_FROM 0.99

typedef struct near_move {
  config c;     /* the rejected candidate */
  double ratio; /* its median ratio new/best */
} near_move;

/* What a decision tells a proposer (propose_obs): whether cand was kept, its median ratio
 * new/best when the decision trusts it (reject, ambiguous; NAN otherwise, a keep included), and
 * the two arms' medians in microseconds when the generation was decided on them (keep, reject,
 * ambiguous; NAN otherwise). All of it is in the record, so a resumed search learns the same. */
typedef struct propose_obs {
  int kept;
  double ratio;
  double best_us, new_us;
} propose_obs;

/* A strategy's own state, held by value in the proposer: a search is copied by value to walk
 * ahead (search_peek), so a state must hold no pointer that a copy's feedback could change
 * under the original. Each strategy casts it to its own struct (checked to fit at compile
 * time). */
#define PROPOSE_STATE_BYTES 17408 /* the model strategy's, at SPEC_MAX_KNOBS knobs */
#define PROPOSE_MAX_PARAMS 8

typedef struct proposer {
  const spec *s;
  /* the coordinate proposer's state */
  near_move near[PROPOSE_MAX_NEAR]; /* near misses from the current best, closest first */
  int nnear;
  double payoff[SPEC_MAX_KNOBS];
  int tiebreak[SPEC_MAX_KNOBS]; /* seeded order for knobs of equal payoff */
  const long long *dims;        /* the problem, for repairs; NULL: no repairs */
  check_memo *memo;             /* borrowed from the search (may be NULL): the constraints'
                                 * verdicts at dims, and the space `run` enumerated */
  /* every strategy's */
  unsigned long long seed;          /* the segment's seed: all of a strategy's randomness */
  double param[PROPOSE_MAX_PARAMS]; /* its parameters, in its table's order */
  union {
    unsigned char bytes[PROPOSE_STATE_BYTES];
    double align_d;
    long long align_ll;
  } state;
} proposer;

void proposer_init(proposer *p, const spec *s, unsigned long long seed);
/* A row's init from nothing: p zeroed, then its spec, problem, seed and parameters (the
 * strategies that keep no state of coordinate's). */
void proposer_start(proposer *p, const spec *s, const long long *dims, unsigned long long seed,
                    const double *param);

/* Let the proposer repair refused one-knob moves (alone, or with a near miss), checked against
 * the constraints at `dims` (borrowed: it must outlive the proposer). */
void proposer_repairs(proposer *p, const long long *dims);

/* 1 and *out (and *nchanged: how many knobs it changes; a combination of near misses that
 * were combinations themselves changes several) when a candidate exists, 0 when exhausted. */
int propose_next(const proposer *p, const config *best, const tried_set *tried, int prefer_two,
                 config *out, int *nchanged);

/* A random configuration (uniform over each knob's values, drawn from `seed`) that passes every
 * constraint at the proposer's dims and was never tried: 1 and *out, or 0 when none was found
 * in PROPOSE_RESTART_DRAWS draws (the legal untried part of the space is tiny or empty). */
#define PROPOSE_RESTART_DRAWS 100000
int propose_restart(const proposer *p, const tried_set *tried, unsigned long long seed,
                    config *out);

/* Learn from a decision: the knobs that differ between best and cand gain or lose payoff; a
 * rejected cand whose median ratio (NAN when none was measured) is below PROPOSE_NEAR_MISS
 * is remembered as a near miss until the next keep. */
void propose_feedback(proposer *p, const config *best, const config *cand, int kept,
                      double ratio);

/* ---------------------------------------------------------------- the table
 *
 * The proposers a campaign can name (search.proposer), one row each: its name, its parameters
 * (search.params, by name, each with a default and a range), and the calls a search makes. A
 * proposer is a pure function of its seed, its parameters and what the search tells it (the
 * best, the tried set, the decisions fed back), never of the clock or the process: a resumed
 * search replays its ledger through the same calls and proposes what the interrupted one
 * would have. Adding one is a file with its functions and a row in propose.c. */
typedef struct proposer_param {
  const char *name;
  double def, lo, hi; /* default, and the closed range a campaign may set */
  const char *what;   /* for docs and messages */
} proposer_param;

typedef struct proposer_ops {
  const char *name;
  const proposer_param *params;
  int nparams;
  /* A fresh proposer for a search on s at dims (borrowed: they outlive it), seeded, with its
   * parameters (param[i] for params[i]). p->memo is set by the caller after it. */
  void (*init)(proposer *p, const spec *s, const long long *dims, unsigned long long seed,
               const double *param);
  /* A restart begins with a new seed: NULL, a fresh proposer (init); else what it learned may
   * carry over (a model of the device's times). */
  void (*segment)(proposer *p, unsigned long long seed);
  /* The next candidate from best that `tried` lacks: 1 and *out, *nchanged (how many knobs it
   * changes from best); 0 when the strategy has none (the segment is exhausted). prefer_two:
   * the segment has gone search.two_knob_after generations without a keep. */
  int (*next)(const proposer *p, const config *best, const tried_set *tried, int prefer_two,
              config *out, int *nchanged);
  /* The start of a restart: a legal configuration `tried` lacks, drawn from seed. */
  int (*restart)(const proposer *p, const tried_set *tried, unsigned long long seed,
                 config *out);
  /* A decided generation: cand measured against best (o says how). */
  void (*feedback)(proposer *p, const config *best, const config *cand, const propose_obs *o);
} proposer_ops;

#define PROPOSER_DEFAULT "coordinate"
/* The proposer of that name, or NULL; *known (may be NULL) lists the names for a message. */
const proposer_ops *proposer_find(const char *name, const char **known);

/* The parameters of proposer `ops` from a campaign's search.params (keys[i] = values[i]):
 * param[] gets each one's default, then the values given. TF_EXIT_INPUT naming
 * 'search.params.KEY' (file: the campaign, for the message) when a key is not one of the
 * proposer's or its value is out of its range. */
int proposer_params(const proposer_ops *ops, const char *file, int n, const char (*keys)[32],
                    const double *values, double *param, tf_err *e);

/* Helpers the strategies share (propose.c). */
unsigned long long propose_mix(unsigned long long x);          /* one splitmix64 step */
double propose_uniform(unsigned long long x);                  /* [0, 1) from a hash */
int propose_legal(const proposer *p, const config *c);          /* passes every constraint at
                                                                 * dims (1 without dims) */
int propose_changed(const spec *s, const config *a, const config *b); /* knobs that differ */
/* A configuration of the space the search may reach that `tried` lacks, drawn from x: from
 * the reachable list of the space `run` enumerated (p->memo->space) when there is one, else
 * uniform over each knob's values and legal at dims; 1 and *out, 0 when none was found. */
int propose_draw_reachable(const proposer *p, const tried_set *tried, unsigned long long x,
                           config *out);

#endif
