/* search: one device's search as a state machine, pure: no MPI, no files, no clock.
 *
 * The farm asks it what to do next (search_next: measure best against a candidate, record a
 * static refusal, begin a restart, end) and tells it what was decided (search_apply: the
 * facts of the record it wrote). Resuming a ledger is the same function fed the records read
 * back (coordinator/replay.h makes a fact of a record), so a resumed search is the search
 * that was interrupted, and report and bench read a search's answer through it too.
 *
 * What it keeps: the best configuration and the configurations tried; the proposer's state;
 * the budget (generations that measured something and were trusted), the rejections in a
 * row (max_stale), noisy re-measurements (decide.max_requeue); restarts from random legal
 * untried configurations, each ending with a duel of its best against the champion when it
 * kept something (a noisy duel is measured again even past the budget); the fixed modes
 * ("aa", "pair": the same pair every generation, best never moves). Whether the measure
 * processes may decide is its trust's (coordinator/trust.h: the canary, fresh processes, the
 * end after too many biased ones): the search hands it every measured generation's facts,
 * asks it for each job's canary and fresh process, measures an untrusted generation again
 * without counting it, and ends when the trust gives up.
 *
 * A candidate whose launch cannot be computed at the problem (spec_launch fails: a division by
 * zero in launch.smem, a grid out of range, a buffer size or argument that cannot be had) is
 * refused as one that breaks a constraint is: a static refusal, no job, and the search goes
 * on. That is the template's verdict on the configuration, so resume reaches it again.
 *
 * search_apply checks that a fact is one the search could have written: generations in
 * order, the record's best the best the facts before it lead to, a measured candidate that
 * passes every constraint and whose launch computes, a refused one that does not, a duel
 * only when one is due, nothing after the end; otherwise it fails with TF_EXIT_INPUT and a
 * message naming the key.
 *
 * Ownership: search_init allocates the tried set; search_release frees it. The template and
 * the dims are borrowed and must outlive the search. */
#ifndef TF_SEARCH_H
#define TF_SEARCH_H

#include "common/campaign.h"
#include "common/decide.h"
#include "common/err.h"
#include "common/msg.h"
#include "coordinator/propose.h"
#include "coordinator/trust.h"

/* What a search needs of its campaign. */
typedef struct search_config {
  const spec *tmpl;          /* the template; NULL: a search read back only (report, bench),
                              * which proposes nothing and checks no constraint */
  const long long *dims;     /* the problem, for the constraints */
  config start;
  search_opts search;
  int max_requeue;           /* decide.max_requeue */
  canary_opts canary;
  const proposer_ops *proposer; /* the campaign's search.proposer (with tmpl) */
  double param[PROPOSE_MAX_PARAMS]; /* its parameters (search.params over its defaults) */
  unsigned long long seed;   /* measure.seed: with the device's ordinal, seeds the proposers */
  int ordinal;
  int loose;                 /* read back only, from a ledger that does not say its search mode
                              * (schema version 1): each record's best is taken as written */
  const struct space_view *space; /* borrowed, or NULL: the space `run` enumerated for this
                              * template and problem, whose table answers the constraints
                              * (check_memo.space) */
} search_config;

/* The search options of campaign c for the device at `ordinal`; TF_EXIT_INPUT when the
 * campaign names a proposer there is none of, or a parameter it does not take or out of its
 * range. */
int search_config_of(const campaign *c, int ordinal, search_config *out, tf_err *e);

typedef enum {
  SEARCH_MEASURE, /* measure best against cand (a job); as a fact: a measured generation */
  SEARCH_REFUSE,  /* cand breaks a constraint, or its launch cannot be computed: a static
                   * refusal, no job */
  SEARCH_RESTART, /* begin restart `restart` at `start` */
  SEARCH_END,     /* the search ends: `reason`, its answer `best` */
  SEARCH_REOPEN,  /* fact only: an ended search goes on (a reopen record, search_would_go_on) */
  SEARCH_DONE     /* next only: nothing more to do, the search has ended */
} search_kind;

/* What to do next. */
typedef struct search_step {
  search_kind kind;
  long long generation;  /* MEASURE, REFUSE: the generation the record will be */
  int segment;           /* MEASURE, REFUSE: the record's "restart" (0: the first search) */
  int duel;              /* MEASURE: the restarted search's best (cand) against the champion */
  config best, cand;     /* MEASURE, REFUSE; END: best is the answer */
  int constraint;        /* REFUSE: the first constraint cand breaks (template order), or
                          * SEARCH_NO_LAUNCH: it breaks none but its launch cannot be computed,
                          * `key` the template's key that fails and `reason` the failure */
  char key[SPEC_NAME];   /* REFUSE with SEARCH_NO_LAUNCH: "launch.smem", "buffers[1].count" */
  int canary;            /* MEASURE: run the A/A canary first */
  int fresh;             /* MEASURE: in a fresh measure process */
  long long job_id;      /* MEASURE: the job's id, the one after the last job recorded */
  int restart;           /* RESTART: its number k = segment + 1 */
  config champion;       /* RESTART */
  double champion_us;    /* RESTART */
  config start;          /* RESTART */
  char reason[512];      /* RESTART (the record's reason), END; REFUSE with SEARCH_NO_LAUNCH:
                          * "key 'launch.smem': ...: division by zero (at ITERS=1000)" */
  char why[200];         /* RESTART: why the search before it ended */
} search_step;

/* search_step.constraint of a candidate refused because its launch cannot be computed. */
#define SEARCH_NO_LAUNCH (-1)

/* What a record says, as the search needs it. */
typedef struct search_fact {
  search_kind kind;      /* MEASURE, REFUSE, RESTART or END */
  long long generation;  /* MEASURE, REFUSE: the record's; RESTART, END: the last generation */
  int segment, duel;     /* MEASURE, REFUSE */
  config best, cand;     /* MEASURE, REFUSE; END: best is the answer */
  /* MEASURE */
  decision_kind decision;
  result_status status;
  int correct;
  double ratio;          /* median ratio new/best; NAN when none */
  double best_us, new_us; /* medians over the rounds the live run used; NAN when none */
  int child;             /* the measure process; 0: unknown */
  trust_canary canary;   /* the canary its job ran, and its verdict */
  int untrusted;         /* the process was not trusted: not decided */
  int asked_canary;      /* the job asked for the canary */
  int asked_fresh;       /* the job asked for a fresh process */
  long long job_id;      /* the job's id */
  /* RESTART */
  int restart;
  config champion, start;
  double champion_us;
  char reason[512];      /* END */
} search_fact;

typedef struct search {
  search_config cfg;
  config best;           /* in a duel: the champion */
  config cand;           /* the candidate last measured (a requeue or an untrusted one again) */
  tried_set tried;
  check_memo *memo;      /* the constraints' verdicts so far: owned by the search that
                          * search_init made, shared with its copies (search_peek's) */
  tried_set *launches;   /* the configurations whose launch computes (launch_fails), so far:
                          * owned and shared as memo is; those that fail are rare, and their
                          * refusal's text is computed again */
  proposer prop;
  long long generation;  /* the last generation recorded */
  long long last_job;    /* the id of the last job recorded (0: none): a device's job ids count
                          * on from its ledger, so a resumed run sends the ids, and the
                          * simulated device draws the noise, the interrupted run would have */
  int measured;          /* trusted measured generations: the budget's count */
  int stale;             /* non-keeps in a row */
  int requeues;          /* noisy refusals of the candidate in a row */
  int again;             /* measure the candidate again: its process was not trusted */
  int done;
  int keeps, rejects, refused, ambiguous, faults;
  int near_rejects;      /* rejects with a ratio under PROPOSE_NEAR_MISS */
  int ran;               /* measured generations whose job ran (status ok), trusted or not */
  double best_us;        /* best's median in the latest decided generation (0 before one) */
  double start_us;       /* the first such median: the start configuration's */
  long long best_gen;    /* the generation best_us comes from; -1 before one */
  int segment;           /* 0: the first search; k: the one restart k began */
  int seg_keeps;         /* keeps in this segment */
  int duel, dueled;      /* the segment's duel is in flight; has been decided */
  config champion;       /* the best of the segments before this one */
  double champion_us;
  long long champion_gen;
  char seg_why[160];     /* why the segment stalled, for the restart after its duel */
  char end_reason[512];
  config ended_best;     /* at the end of a restarted search, its own best (the answer became */
  double ended_best_us;  /* the champion): a reopened search goes on from it */
  long long ended_best_gen;
  trust trust;           /* whether its measure processes may decide */
} search;

/* A search at the campaign's start, segment 0. -1 only when out of memory. */
int search_init(search *s, const search_config *cfg, tf_err *e);
void search_release(search *s);

/* A run begins (a first one, or a resumed one after its records were applied): its measure
 * processes are all new (trust_begin_run). */
void search_begin_run(search *s);

/* What to do next, from the state alone; the state does not change until the fact of the
 * step's record is applied. -1 when a constraint cannot be evaluated, or the search was
 * read back only (cfg.tmpl NULL). */
int search_next(const search *s, search_step *out, tf_err *e);

/* May a measured result be decided? trust_allows of f's canary, child, status and correct. */
int search_trusts(const search *s, const search_fact *f);

/* The facts of a record written (live) or read back (resume). -1 (TF_EXIT_INPUT) when the
 * record is not one the search could have written; e names the key. */
int search_apply(search *s, const search_fact *f, tf_err *e);

/* A job the search may ask for: its program is best's, cand's and the control's. */
typedef struct search_guess {
  config best, cand;
} search_guess;

/* What the search would measure next, without changing it, for compiling those jobs'
 * programs ahead (which changes no proposal and no decision: nothing here is applied to s).
 * `pending` (NULL: none) is the step whose job is in flight, its record not yet applied. Up
 * to n guesses assuming pending is rejected, each with the first SEARCH_PEEK_BRANCH guesses
 * of its own kept branch (had that one been kept instead) and of its near-miss branch (had it
 * been rejected as a near miss, which opens informed moves: propose.h), up to n assuming
 * pending is kept, and up to n assuming it is a near miss, each path followed with every later
 * candidate rejected; most likely first, by the chance that each guess is asked for, with
 * search_keep_chance as a generation's chance of a keep and the share of rejects that were
 * near misses (see search.c); pending's own pair and repeats left out.
 * Returns how many were written to out (room for SEARCH_PEEK_PER * n), -1 only when out of
 * memory. */
#define SEARCH_PEEK_BRANCH 2
#define SEARCH_PEEK_PER (2 * SEARCH_PEEK_BRANCH + 3)
double search_keep_chance(const search *s);
int search_peek(const search *s, const search_step *pending, int n, search_guess *out,
                tf_err *e);

/* The job the search would ask for next had `pending` (a MEASURE step in flight) been
 * rejected in a process the canary cleared, past the static refusals in between: 1 with *next
 * that MEASURE step, for running it ahead of the decision (coordinator.h, run-ahead); 0 when
 * the search would do something else first (restart, end) or there is no such job. s does
 * not change. Whether the job ahead is the one sent is up to the caller to compare: the
 * decision may be another. */
int search_next_if_rejected(const search *s, const search_step *pending, search_step *next);

/* Would an ended search go on under its configuration now (a campaign resumed with a larger
 * search.budget or max_stale, or more restarts)? 1 with *st its next step: the caller writes a
 * reopen record, applies its fact (SEARCH_REOPEN, the last generation) and goes on; 0 when it
 * would end again, or has not ended. The search does not change. */
int search_would_go_on(const search *s, search_step *st, tf_err *e);

/* 1 when the search sent jobs and not one of them ran (every result a fault or an error):
 * then it measured nothing, and its answer is the start unmeasured, not a best. */
int search_none_ran(const search *s);

/* The search's answer: the champion once it has restarted, else its best; *us and *gen (may
 * be NULL) the median that measured it and its generation (NAN and -1 before any). */
const config *search_answer(const search *s, double *us, long long *gen);

#endif
