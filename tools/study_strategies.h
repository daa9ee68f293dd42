/* study_strategies: `tunefarm study --strategies`, the search strategies (coordinator/propose.h)
 * compared on ledgers of runs whose true times are known.
 *
 *   tunefarm study --strategies [--truth sim|SPACE_FILE] [--at G,G,...] [--html FILE]
 *                               CAMPAIGN [NAME=DIR ...]
 *
 * Without NAME=DIR it only checks the truth and prints it (a space's optimum), which lets a
 * driver refuse a bad space before it runs anything.
 * Each NAME=DIR is one strategy's runs: every ledger (*.jsonl) under DIR is one run on one
 * device. A run is followed record by record through the search machine (replay.h,
 * ledger_best): after each measured generation, its answer (the best kept, or the champion
 * once it restarted) is looked up in the truth, and its ratio to the optimum of the
 * campaign's reachable space (coordinator/space.h) is the run's distance at that count of
 * measured generations. The table gives, per strategy, the fraction of runs whose answer is
 * within 1% and within 3% of the optimum after G measured generations (a run that ended
 * before G counts with its final answer), the median generations to reach 1% and 3% (runs that
 * never did: "-"), the median time to reach them, and the fraction of runs that measured (as
 * best or new, at any time) a configuration within each threshold. --html FILE also writes
 * them as a page (tools/svgplot.h): per threshold a plot of the fraction against G, a line per
 * strategy, and its table; the page replaces only a page of its own (never a ledger, a folder
 * or another file) and is written whole (beside the file, then renamed).
 *
 * The truth: "sim" is the simulated device's cost model (worker/simcost.h) under each run's
 * own measure.seed, read from its jobs, so runs of several seeds are several landscapes, each
 * with its own optimum found by enumerating the reachable space; the time is GPU time, the
 * recorded rounds' arm medians times the launches per round, summed over the generations (no
 * burn-in, canary or compile). A SPACE_FILE (a sweep's, common/spacefile.h, which the runs
 * replayed) is one landscape for every run: a configuration's time is its recorded level
 * (ratio x reference_us) when it passed its check, the optimum is the fastest such reachable
 * one, and the time is the sum of the records' wall_s, the recorded device's time that the
 * replay backend reports (compile, load, check and rounds).
 *
 * Bad input (a campaign, a ledger, a missing folder, an unknown truth; a space file that is
 * cut short, of another template, problem or knobs, or without a configuration the campaign
 * can reach: tools/sweep.h, sweep_load_space) is exit 2 naming it. */
#ifndef TF_STUDY_STRATEGIES_H
#define TF_STUDY_STRATEGIES_H

/* argv as study_main's (argv[0] "study", "--strategies" among them); the exit status. */
int study_strategies_main(int argc, char **argv);

#endif
