/* study_strategies: `tunefarm study --strategies`, the search strategies (coordinator/propose.h)
 * compared on ledgers of runs whose true times are known.
 *
 *   tunefarm study --strategies [--truth sim] [--at G,G,...] CAMPAIGN NAME=DIR ...
 *
 * Each NAME=DIR is one strategy's runs: every ledger (*.jsonl) under DIR is one run on one
 * device. A run is followed record by record through the search machine (replay.h,
 * ledger_best): after each measured generation, its answer (the best kept, or the champion
 * once it restarted) is looked up in the truth, and its ratio to the optimum of the
 * campaign's reachable space (coordinator/space.h) is the run's distance at that count of
 * measured generations. The table gives, per strategy, the fraction of runs whose answer is
 * within 1% and within 3% of the optimum after G measured generations (a run that ended
 * before G counts with its final answer), the median generations to reach 1% and 3% (runs that
 * never did: "-"), and the median GPU time to reach them: the recorded rounds' arm medians
 * times the launches per round, summed over the generations (no burn-in, canary or compile).
 *
 * The truth: "sim" (the only one so far) is the simulated device's cost model
 * (worker/simcost.h) under each run's own measure.seed, read from its jobs, so runs of several
 * seeds are several landscapes, each with its own optimum found by enumerating the reachable
 * space. A recorded space (a sweep's file, answered by a replay backend) plugs in as another
 * truth: a lookup of a configuration's recorded time in place of simcost_us (study_strategies.c,
 * `truth`).
 *
 * Bad input (a campaign, a ledger, a missing folder, an unknown truth) is exit 2 naming it. */
#ifndef TF_STUDY_STRATEGIES_H
#define TF_STUDY_STRATEGIES_H

/* argv as study_main's (argv[0] "study", "--strategies" among them); the exit status. */
int study_strategies_main(int argc, char **argv);

#endif
