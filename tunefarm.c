/* tunefarm: a tuning farm for GPU kernels. This file only dispatches commands: one table,
 * `commands`, names each command, the function that runs it, the arguments and the line the
 * main help gives it, and whether the main help lists it at all. A hidden command (one that
 * tunefarm starts itself, which no user types) is dispatched like any other. Each command
 * parses its own options and answers its own --help. */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tools/audit.h"              // defines: check_main, audit_main
#include "tools/bench.h"              // defines: bench_main
#include "tools/export.h"             // defines: export_main
#include "tools/report.h"             // defines: report_main
#include "tools/run.h"                // defines: run_main
#include "tools/study.h"              // defines: study_main
#include "tools/study_replay.h"       // defines: study_replay_main
#include "tools/sweep.h"              // defines: sweep_main
#include "tools/verify.h"             // defines: verify_main
#include "worker/child.h"             // defines: child_main
#include "worker/compile_pool.h"      // defines: compile_main
#include "worker/devices.h"           // defines: devices_main

#define TUNEFARM_VERSION "0.1.0"

/* Under mpirun (the launcher sets these), audit spreads its compiles over the ranks. */
static int under_mpirun(void) {
  return getenv("OMPI_COMM_WORLD_SIZE") || getenv("PMI_SIZE") || getenv("PMIX_RANK");
}

static int cmd_audit(int argc, char **argv) {
  if (!under_mpirun()) return audit_main(argc, argv);
  MPI_Init(&argc, &argv);
  int rc = audit_main(argc, argv);
  MPI_Finalize();
  return rc;
}

/* `study` measures the rules on simulated streams, or with --ledgers on GPU ledgers. */
static int cmd_study(int argc, char **argv) {
  for (int i = 1; i < argc; i++)
    if (!strcmp(argv[i], "--ledgers")) return study_replay_main(argc, argv);
  return study_main(argc, argv);
}

/* One command. `main` gets the arguments from the command's name on (argv[0] is the name);
 * `main_as`, where set instead, also the binary as the user gave it. */
typedef struct command {
  const char *name;
  int (*main)(int argc, char **argv);
  int (*main_as)(int argc, char **argv, const char *as);
  const char *args;   /* as the main help shows them after the name */
  const char *help;   /* one line; a "\n" continues it under the first */
  int hidden;         /* started by tunefarm itself: dispatched, not listed */
} command;

static const command commands[] = {
    {"run", NULL, run_main, "CAMPAIGN",
     "tune on every GPU of the node (mpirun -np G+1, which run\n"
     "starts itself when no MPI launcher started it)", 0},
    {"audit", cmd_audit, NULL, "CAMPAIGN",
     "compile every reachable configuration (mpirun spreads it)", 0},
    {"check", check_main, NULL, "CAMPAIGN",
     "validate a campaign, its kernels' interfaces and count its space", 0},
    {"report", report_main, NULL, "LEDGER|DIR",
     "per-GPU markdown tables of what the searches kept", 0},
    {"verify", verify_main, NULL, "LEDGER...",
     "recompute every decision from its own recorded rounds", 0},
    {"bench", bench_main, NULL, "CAMPAIGN",
     "farm best, start, committed kernels and library peers side by side", 0},
    {"export", export_main, NULL, "LEDGER",
     "a search's best as a .cu and .h that build with plain nvcc", 0},
    {"devices", devices_main, NULL, "", "the GPUs of this node and their tags", 0},
    /* Each worker starts its measure children; a user starts one to rerun a ledger's job. */
    {"measure", child_main, NULL, "", "the measure child (jobs on stdin, results on stdout)",
     0},
    {"study", cmd_study, NULL, "",
     "the decision rules on simulated streams or GPU ledgers; strategies on theirs", 0},
    {"sweep", sweep_main, NULL, "CAMPAIGN",
     "measure every reachable configuration into a recorded space", 0},
    /* The worker's compile pool starts it for each kernel it compiles ahead. */
    {"compile", compile_main, NULL, "", "compile one program into the cubin cache", 1},
};

#define NCOMMANDS (sizeof commands / sizeof commands[0])

static const command *command_find(const char *name) {
  for (size_t i = 0; i < NCOMMANDS; i++)
    if (strcmp(commands[i].name, name) == 0) return &commands[i];
  return NULL;
}

/* The listed commands, each with its help lines aligned in one column. */
static void usage(FILE *f) {
  fprintf(f, "usage: tunefarm COMMAND [OPTIONS]\n\n");
  for (size_t i = 0; i < NCOMMANDS; i++) {
    const command *c = &commands[i];
    if (c->hidden) continue;
    char head[32];
    snprintf(head, sizeof head, "%s%s%s", c->name, c->args[0] ? " " : "", c->args);
    const char *line = c->help;
    for (int first = 1; *line; first = 0) {
      size_t n = strcspn(line, "\n");
      fprintf(f, "  %-17s  %.*s\n", first ? head : "", (int)n, line);
      line += n + (line[n] == '\n');
    }
  }
  fprintf(f, "\n`tunefarm COMMAND --help` describes each. Exit status: 0 success, 1 failure,\n"
             "2 bad input or usage.\n");
}

static int dispatch(const command *c, int argc, char **argv, const char *as) {
  return c->main_as ? c->main_as(argc, argv, as) : c->main(argc, argv);
}

/* `tunefarm help [COMMAND]`: the main help, or the command's own (its --help). */
static int help(int argc, char **argv, const char *as) {
  if (argc < 2) {
    usage(stdout);
    return 0;
  }
  const command *c = command_find(argv[1]);
  if (!c) {
    fprintf(stderr, "tunefarm help: unknown command '%s' (tunefarm --help lists them)\n",
            argv[1]);
    return 2;
  }
  char *args[] = {argv[1], "--help", NULL};
  return dispatch(c, 2, args, as);
}

int main(int argc, char **argv) {
  if (argc < 2) {
    usage(stderr);
    return 2;
  }
  const char *cmd = argv[1], *as = argv[0];
  argc--;
  argv++;
  const command *c = command_find(cmd);
  if (c) return dispatch(c, argc, argv, as);
  if (!strcmp(cmd, "-h") || !strcmp(cmd, "--help") || !strcmp(cmd, "help"))
    return help(argc, argv, as);
  if (!strcmp(cmd, "--version")) {
    printf("tunefarm %s\n", TUNEFARM_VERSION);
    return 0;
  }
  fprintf(stderr, "tunefarm: unknown command '%s' (tunefarm --help lists them)\n", cmd);
  return 2;
}
