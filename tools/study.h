/* study: `tunefarm study`, the decision rules measured against known truth, on simulated
 * streams of rounds (tools/study.c says how); `tunefarm study --ledgers` replays them on
 * GPU ledgers instead (tools/study_replay.h). */
#ifndef TF_STUDY_H
#define TF_STUDY_H

/* argv[0] is "study"; returns the exit status (0, or 2 for bad input or usage). */
int study_main(int argc, char **argv);

/* The 95% Wilson score interval of the rate k/n: its upper end (upper = 1) or
 * its lower end (upper = 0); NAN when n is 0. */
double study_wilson(long k, long n, int upper);

#endif
