/* study: `tunefarm study`, the decision rules measured against known truth.
 *
 * For each generation of each scenario (A/A: new is best; new truly 3% and 5%
 * faster) one stream of rounds is drawn from the simulated device's noise
 * model (worker/sim_noise.h, the very code the `sim` backend runs), through
 * the protocol's steps: burn-in rounds unrecorded, then recorded rounds with
 * the arm order rotated, until the rule's decide_enough says stop. Every rule
 * sees the same stream (the same seed per generation and attempt), so the
 * rules differ only in how they read it. A generation refused as noisy is
 * measured again, with a fresh stream, up to max_requeue times, as the
 * coordinator does; its rounds all count.
 *
 * Rules compared: every rule of the registry (common/rule.h), and each rule
 * that screens rounds by clock once more with the clock readings withheld (a
 * device whose boosts the clock does not show: the robust statistics alone
 * must carry it).
 *
 * Output: markdown on stdout; the time taken on stderr.
 *
 * `--ledgers` replays the rules on GPU ledgers instead (tools/study_replay.h; tunefarm.c
 * dispatches). */
// defines: study_main, study_wilson
// uses, through common/decide.h: decide, decide_enough, decide_screen_round, decide_defaults,
//           decision_names
#include "tools/study.h"
#include "tools/study_strategies.h" /* defines: study_strategies_main */

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "common/decide.h" /* defines: decide, decide_enough, decide_screen_round, ... */
#include "common/rule.h"   /* defines: rule_count, rule_at, decide_select */

// defines: sim_noise_*, SIM_NOISE_ARMS
#include "worker/sim_noise.h"

#define STUDY_SCENARIOS 3
#define STUDY_RULES (2 * RULE_MAX) /* each rule, and each screening rule without clocks */
static const double scenario_gain[STUDY_SCENARIOS] = {0.0, 0.03, 0.05};
static const char *const scenario_names[STUDY_SCENARIOS] = {"A/A", "3% gain", "5% gain"};

typedef struct study_rule {
  char label[64];
  const char *rule;
  int clocks; /* 0: the clock readings are withheld from the rule */
} study_rule;

/* The rows compared, from the registry: "median (baseline)", "sequential",
 * "sequential, clocks withheld". Returns their count. */
static int study_rules_of(study_rule rows[STUDY_RULES]) {
  int n = 0;
  for (int i = 0; i < rule_count() && n < STUDY_RULES; i++) {
    const decide_rule *r = rule_at(i);
    rows[n] = (study_rule){.rule = r->name, .clocks = 1};
    snprintf(rows[n++].label, sizeof rows[0].label, "%s%s", r->name,
             r->baseline ? " (baseline)" : "");
    if (!r->screens) continue;
    rows[n] = (study_rule){.rule = r->name, .clocks = 0};
    snprintf(rows[n++].label, sizeof rows[0].label, "%s, clocks withheld", r->name);
  }
  return n;
}

typedef struct study_opts {
  int generations;
  unsigned long long seed;
  int rounds, burn_in, samples;
  double best_us, control_us;
  sim_noise_params noise;
} study_opts;

typedef struct tally {
  long kinds[4];    /* by decision_kind, final outcome per generation */
  long rounds;      /* recorded rounds, screened ones and re-measurements included */
  long measurements;
  long screened;
} tally;

static void usage(FILE *f) {
  fprintf(f,
          "usage: tunefarm study [--generations N] [--seed S] [--rounds R] [--burn-in B]\n"
          "                      [--samples K] [--noise key=value,...]\n"
          "       tunefarm study --ledgers LEDGER|DIR ...\n"
          "       tunefarm study --strategies CAMPAIGN NAME=DIR ...\n"
          "\n"
          "Runs every decision rule (and each clock-screening rule without clock readings)\n"
          "on the same simulated streams of rounds: A/A pairs and pairs where new is truly\n"
          "3%% and 5%% faster, N generations each, and prints a markdown table of keep\n"
          "rates, recorded rounds per decision, refused and ambiguous rates.\n"
          "\n"
          "  --generations N  generations per scenario (default 5000)\n"
          "  --seed S         seed of every stream (default 1)\n"
          "  --rounds R       recorded rounds: the median rule's count, the sequential cap (8)\n"
          "  --burn-in B      unrecorded rounds before them (4)\n"
          "  --samples K      launches per arm per round (10)\n"
          "  --noise SPEC     noise parameters over the defaults (and TUNEFARM_SIM_NOISE),\n"
          "                   keys jitter, round, boost_p, boost, drift, cold, cold_tau, kjitter\n"
          "\n"
          "With --ledgers, both rules are replayed on the rounds recorded by GPU runs of\n"
          "campaigns/decide-aa.json and decide-gain3.json instead (`tunefarm study --ledgers\n"
          "--help` says how). With --strategies, each search strategy's ledgers are scored\n"
          "against the space's optimum (`tunefarm study --strategies --help`).\n");
}

static int parse_long(const char *opt, const char *text, long lo, long hi, long *out) {
  char *end = NULL;
  long v = strtol(text, &end, 10);
  if (!text[0] || *end != '\0' || v < lo || v > hi) {
    fprintf(stderr, "tunefarm study: %s needs an integer in [%ld, %ld], got '%s'\n", opt, lo, hi,
            text);
    return -1;
  }
  *out = v;
  return 0;
}

/* 0, 1 (--help printed) or 2 (usage error). */
static int parse_args(int argc, char **argv, study_opts *so) {
  tf_err e;
  tf_err_clear(&e);
  if (sim_noise_from_env(&so->noise, &e) != 0) {
    fprintf(stderr, "tunefarm study: %s\n", e.msg);
    return 2;
  }
  for (int i = 1; i < argc; i++) {
    const char *a = argv[i];
    if (strcmp(a, "--help") == 0 || strcmp(a, "-h") == 0) {
      usage(stdout);
      return 1;
    }
    if (a[0] != '-' || a[1] != '-') {
      fprintf(stderr, "tunefarm study: unexpected argument '%s' (see --help)\n", a);
      return 2;
    }
    if (i + 1 >= argc) {
      fprintf(stderr, "tunefarm study: %s needs a value (see --help)\n", a);
      return 2;
    }
    const char *v = argv[++i];
    long n = 0;
    if (strcmp(a, "--generations") == 0) {
      if (parse_long(a, v, 1, 10000000, &n) != 0) return 2;
      so->generations = (int)n;
    } else if (strcmp(a, "--seed") == 0) {
      char *end = NULL;
      unsigned long long s = strtoull(v, &end, 0);
      if (!v[0] || *end != '\0' || v[0] == '-') {
        fprintf(stderr, "tunefarm study: --seed needs a non-negative integer, got '%s'\n", v);
        return 2;
      }
      so->seed = s;
    } else if (strcmp(a, "--rounds") == 0) {
      if (parse_long(a, v, 1, MSG_MAX_ROUNDS / 4, &n) != 0) return 2;
      so->rounds = (int)n;
    } else if (strcmp(a, "--burn-in") == 0) {
      if (parse_long(a, v, 0, 1000, &n) != 0) return 2;
      so->burn_in = (int)n;
    } else if (strcmp(a, "--samples") == 0) {
      if (parse_long(a, v, 1, 4096, &n) != 0) return 2;
      so->samples = (int)n;
    } else if (strcmp(a, "--noise") == 0) {
      char err[256];
      if (sim_noise_parse(v, &so->noise, err, sizeof err) != 0) {
        fprintf(stderr, "tunefarm study: --noise '%s': %s\n", v, err);
        return 2;
      }
    } else {
      fprintf(stderr, "tunefarm study: unknown option '%s' (see --help)\n", a);
      return 2;
    }
  }
  return 0;
}

/* One round through the protocol's steps: arms in rotated order, clocks read
 * before, after each arm and after the round. */
static void study_round(sim_noise *nz, const double *sim_us, int index, int samples, int clocks,
                        round_rec *r) {
  memset(r, 0, sizeof *r);
  if (clocks) r->sm_mhz[0] = sim_noise_mhz(nz);
  for (int k = 0; k < ARM_COUNT; k++) {
    int arm = (index + k) % ARM_COUNT;
    r->order[k] = arm;
    r->us[arm] = sim_noise_sample(nz, arm, sim_us[arm], samples, &r->kernel_us[arm]);
    if (clocks) r->arm_mhz[arm] = sim_noise_mhz(nz);
  }
  if (clocks) r->sm_mhz[1] = sim_noise_mhz(nz);
}

/* One measurement of one generation for one rule; returns the decision kind. */
static decision_kind study_measure(const study_opts *so, const study_rule *sr,
                                   const decide_opts *o, const measure_opts *m,
                                   const double *sim_us, long long stream, result *res,
                                   tally *t, int *noisy) {
  sim_noise nz;
  sim_noise_start(&nz, &so->noise, so->seed, 0, stream);
  round_rec scratch;
  for (int b = 0; b < so->burn_in; b++) study_round(&nz, sim_us, b, so->samples, 0, &scratch);
  memset(res, 0, sizeof *res);
  res->status = RESULT_OK;
  res->correct = 1;
  res->burn_in = so->burn_in;
  while (res->nrounds < MSG_MAX_ROUNDS && !decide_enough(o, m, res->rounds, res->nrounds)) {
    round_rec *r = &res->rounds[res->nrounds];
    study_round(&nz, sim_us, so->burn_in + res->nrounds, so->samples, sr->clocks, r);
    r->screened = decide_screen_round(o, r);
    res->nrounds++;
  }
  decision d;
  decide(o, res, &d);
  t->rounds += res->nrounds;
  t->measurements++;
  t->screened += d.screened;
  *noisy = d.noisy;
  decision_kind k = d.kind;
  decision_release(&d);
  return k;
}

/* -1 when out of memory. */
static int study_run(const study_opts *so, const study_rule *rows, int nrows,
                     tally tallies[STUDY_RULES][STUDY_SCENARIOS]) {
  result *res = malloc(sizeof *res); /* large: one, reused */
  if (!res) return -1;
  measure_opts m;
  memset(&m, 0, sizeof m);
  m.burn_in = so->burn_in;
  m.rounds = so->rounds;
  m.samples = so->samples;
  m.seed = so->seed;
  for (int sc = 0; sc < STUDY_SCENARIOS; sc++) {
    double sim_us[ARM_COUNT];
    sim_us[ARM_BEST] = so->best_us;
    sim_us[ARM_NEW] = so->best_us * (1.0 - scenario_gain[sc]);
    sim_us[ARM_CONTROL] = so->control_us;
    for (int ru = 0; ru < nrows; ru++) {
      decide_opts o;
      decide_defaults(&o);
      decide_select(&o, rows[ru].rule);
      tally *t = &tallies[ru][sc];
      for (int g = 0; g < so->generations; g++) {
        decision_kind k = DECISION_REFUSED;
        for (int attempt = 0; attempt <= o.max_requeue; attempt++) {
          /* the stream depends on (scenario, generation, attempt), never on the rule */
          long long stream = ((long long)sc << 40) | ((long long)g << 8) | attempt;
          int noisy = 0;
          k = study_measure(so, &rows[ru], &o, &m, sim_us, stream, res, t, &noisy);
          if (!(k == DECISION_REFUSED && noisy)) break;
        }
        t->kinds[k]++;
      }
    }
  }
  free(res);
  return 0;
}

double study_wilson(long k, long n, int upper) {
  if (n <= 0) return NAN;
  double z = 1.959964, p = (double)k / (double)n, nn = (double)n;
  double centre = p + z * z / (2 * nn);
  double half = z * sqrt(p * (1 - p) / nn + z * z / (4 * nn * nn));
  return (centre + (upper ? half : -half)) / (1 + z * z / nn);
}

static double pct(long k, long n) { return n > 0 ? 100.0 * (double)k / (double)n : NAN; }

static void study_print(const study_opts *so, const study_rule *rows, int nrows,
                        tally tallies[STUDY_RULES][STUDY_SCENARIOS]) {
  long n = so->generations;
  const sim_noise_params *p = &so->noise;
  printf("Simulated device, %d generations per scenario, seed %llu; %d burn-in rounds, cap %d "
         "recorded rounds, %d launches per arm per round.\n",
         so->generations, so->seed, so->burn_in, so->rounds, so->samples);
  printf("Noise: jitter=%g,round=%g,boost_p=%g,boost=%g,drift=%g,cold=%g,cold_tau=%g,"
         "kjitter=%g\n\n",
         p->jitter, p->round, p->boost_p, p->boost, p->drift, p->cold, p->cold_tau, p->kjitter);
  printf("| rule | false keeps on A/A (95%% upper) | keeps at 3%% | keeps at 5%% | "
         "recorded rounds per decision | refused | ambiguous |\n");
  printf("|---|---|---|---|---|---|---|\n");
  for (int ru = 0; ru < nrows; ru++) {
    long rounds = 0, refused = 0, ambiguous = 0;
    for (int sc = 0; sc < STUDY_SCENARIOS; sc++) {
      rounds += tallies[ru][sc].rounds;
      refused += tallies[ru][sc].kinds[DECISION_REFUSED];
      ambiguous += tallies[ru][sc].kinds[DECISION_AMBIGUOUS];
    }
    const tally *aa = &tallies[ru][0];
    printf("| %s | %.2f%% (%.2f%%) | %.1f%% | %.1f%% | %.2f | %.2f%% | %.2f%% |\n",
           rows[ru].label, pct(aa->kinds[DECISION_KEEP], n),
           100.0 * study_wilson(aa->kinds[DECISION_KEEP], n, 1),
           pct(tallies[ru][1].kinds[DECISION_KEEP], n), pct(tallies[ru][2].kinds[DECISION_KEEP], n),
           (double)rounds / (double)(STUDY_SCENARIOS * n), pct(refused, STUDY_SCENARIOS * n),
           pct(ambiguous, STUDY_SCENARIOS * n));
  }
  printf("\nPer scenario (outcome after re-measuring refused generations):\n\n");
  printf("| rule | scenario | keep | reject | refused | ambiguous | rounds per decision | "
         "measurements per decision | screened rounds per decision |\n");
  printf("|---|---|---|---|---|---|---|---|---|\n");
  for (int ru = 0; ru < nrows; ru++) {
    for (int sc = 0; sc < STUDY_SCENARIOS; sc++) {
      const tally *t = &tallies[ru][sc];
      printf("| %s | %s | %.2f%% | %.2f%% | %.2f%% | %.2f%% | %.2f | %.3f | %.2f |\n",
             rows[ru].label, scenario_names[sc], pct(t->kinds[DECISION_KEEP], n),
             pct(t->kinds[DECISION_REJECT], n), pct(t->kinds[DECISION_REFUSED], n),
             pct(t->kinds[DECISION_AMBIGUOUS], n), (double)t->rounds / (double)n,
             (double)t->measurements / (double)n, (double)t->screened / (double)n);
    }
  }
}

int study_main(int argc, char **argv) {
  for (int i = 1; i < argc; i++)
    if (!strcmp(argv[i], "--strategies")) return study_strategies_main(argc, argv);
  study_opts so;
  memset(&so, 0, sizeof so);
  so.generations = 5000;
  so.seed = 1;
  so.rounds = 8;
  so.burn_in = 4;
  so.samples = 10;
  so.best_us = 100.0;
  so.control_us = 80.0;
  int rc = parse_args(argc, argv, &so);
  if (rc == 1) return 0;
  if (rc != 0) return rc;
  study_rule rows[STUDY_RULES];
  int nrows = study_rules_of(rows);
  tally tallies[STUDY_RULES][STUDY_SCENARIOS];
  memset(tallies, 0, sizeof tallies);
  struct timespec t0, t1;
  clock_gettime(CLOCK_MONOTONIC, &t0);
  if (study_run(&so, rows, nrows, tallies)) {
    fprintf(stderr, "tunefarm study: out of memory\n");
    return 1;
  }
  clock_gettime(CLOCK_MONOTONIC, &t1);
  study_print(&so, rows, nrows, tallies);
  fprintf(stderr, "tunefarm study: %.1f s\n",
          (double)(t1.tv_sec - t0.tv_sec) + 1e-9 * (double)(t1.tv_nsec - t0.tv_nsec));
  return 0;
}
