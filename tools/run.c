/* run: `tunefarm run`, its command line and how it starts (tools/run.h).
 *
 * The options parse into a run_opts (coordinator/coordinator.h) and a worker_opts
 * (worker/worker.h); rank 0 runs the coordinator and every other rank a worker. Without an
 * MPI launcher, run starts mpirun on itself; under one, rank 0 prints how to resume the run
 * as it was launched. */
#define _GNU_SOURCE /* sched_getaffinity, CPU_ISSET */
#include "tools/run.h"

#include <errno.h>
#include <getopt.h>
#include <mpi.h>
#include <sched.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "common/err.h"
#include "common/mpimsg.h"            // defines: mpimsg_init, mpimsg_local_worker_index
#include "coordinator/coordinator.h"  // defines: coordinator_run, run_opts
#include "tools/sweep.h"              // defines: sweep_check_space
#include "worker/backend.h"           // defines: backend_find, backend_recorded_name
#include "worker/cuda_util.h"         // defines: cuda_device_count
#include "worker/worker.h"            // defines: worker_run


static void run_usage(FILE *f) {
  fprintf(f,
          "usage: [mpirun -np G+1] tunefarm run [--backend cuda|sim|replay] [--ledgers DIR] [--fresh]\n"
          "                                     [--quiet] [--compile-jobs N] [--no-run-ahead]\n"
          "                                     [--worker-margin S] [--space FILE] CAMPAIGN\n\n"
          "Rank 0 coordinates; ranks 1..G each measure on one GPU (the node-local worker\n"
          "index picks it) and every GPU runs its own search with its own ledger:\n"
          "DIR/<campaign>/<host>-gpu<N>-<uuid8>.jsonl. Run the same command again to resume:\n"
          "the first lines, and the last after Ctrl-C, print it as launched (mpirun -np <ranks>,\n"
          "the binary as given, the options as used; under Slurm an srun form too).\n"
          "Started without an MPI launcher (no mpirun, srun or PMI in the environment), run\n"
          "starts the farm on this node itself: it prints and runs\n"
          "  mpirun -np G+1 [--oversubscribe] <this binary> run <the same arguments>\n"
          "with G the GPUs this node shows (1 worker without a GPU, and with --backend sim),\n"
          "and --oversubscribe when the node has fewer cores than ranks.\n\n"
          "  --backend B   cuda, sim or replay; default: cuda where a worker sees a GPU, else\n"
          "                sim (the simulated device), said on the first line\n"
          "  --space FILE  the replay backend: every round drawn from a space recorded by\n"
          "                `tunefarm sweep` (docs/reference/sweep.md), seeded by measure.seed\n"
          "  --ledgers D   ledgers folder (default: ledgers)\n"
          "  --fresh       move existing ledgers aside and start again (needed after the\n"
          "                campaign file changed)\n"
          "  --quiet       no progress lines on stderr; the final summary still comes\n"
          "  --compile-jobs N  compile ahead, N at once per worker on the node's spare cores,\n"
          "                the kernels the search may ask for next; 0: none, every job\n"
          "                compiles its own. Default auto: the node's cores per worker less\n"
          "                one (with run-ahead, several times the decisions per hour of\n"
          "                neither, docs/results.md)\n"
          "  --no-run-ahead  wait for each decision before the next job starts; by default\n"
          "                a job comes with the one that follows it if it is rejected, which\n"
          "                the GPU starts at once and the coordinator confirms or replaces\n"
          "                (the ledgers are the same either way; docs/design.md)\n"
          "  --worker-margin S  seconds a worker may take beyond a job's measure.deadline_s\n"
          "                (which covers its measure child) before it is declared lost: its\n"
          "                job is recorded as a fault, its GPU's search stops, the others go\n"
          "                on, and the run ends with status 1 naming it (default 180)\n"
          "Exit status: 0 done, 1 failure, 2 bad input (campaign, template, ledger).\n");
}

typedef struct run_args {
  run_opts o;
  int help;
  int ledgers_given;       /* --ledgers was given (else the default is not repeated) */
  const char *jobs_arg;    /* --compile-jobs and --worker-margin as given; NULL: not given */
  const char *margin_arg;
  const char *space;       /* --space: the recorded space the replay backend answers from */
  char why[320];           /* what is wrong with the command line */
  char resume[4096];       /* how to resume the run, as it was launched (run_opts.resume) */
} run_args;

/* -1, with why the command line is refused in a->why. */
__attribute__((format(printf, 2, 3))) static int run_refuse(run_args *a, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(a->why, sizeof a->why, fmt, ap);
  va_end(ap);
  return -1;
}

/* An option getopt_long did not take: `arg` is the argument it read last. A long option given
 * a value it takes none of ("--fresh=1") leaves optopt at its letter; an unknown long one
 * leaves 0; an unknown short one is optopt, and may sit inside a group (-fz) that optind has
 * not yet passed, so `arg` would name the one before. */
static int refuse_option(run_args *a, const char *arg, const struct option *longs) {
  if (strncmp(arg, "--", 2) == 0 && strchr(arg, '=') && optopt != 0)
    for (const struct option *o = longs; o->name; o++) { /* "--fre=1" abbreviates --fresh */
      size_t n = strcspn(arg + 2, "=");
      if (o->val == optopt && n > 0 && strncmp(o->name, arg + 2, n) == 0)
        return run_refuse(a, "option '--%s' takes no value", o->name);
    }
  if (optopt == 0) return run_refuse(a, "unknown option '%s'", arg);
  if (optopt > ' ' && optopt < 127) return run_refuse(a, "unknown option '-%c'", optopt);
  return run_refuse(a, "unknown option character 0x%02x", (unsigned char)optopt);
}

static int parse_run(int argc, char **argv, run_args *a) {
  static const struct option longs[] = {{"backend", required_argument, 0, 'b'},
                                         {"ledgers", required_argument, 0, 'l'},
                                         {"fresh", no_argument, 0, 'f'},
                                         {"quiet", no_argument, 0, 'q'},
                                         {"compile-jobs", required_argument, 0, 'j'},
                                         {"worker-margin", required_argument, 0, 'm'},
                                         {"no-run-ahead", no_argument, 0, 'A'},
                                         {"space", required_argument, 0, 's'},
                                         {"help", no_argument, 0, 'h'},
                                         {0, 0, 0, 0}};
  int c;
  optind = 1;
  opterr = 0;
  while ((c = getopt_long(argc, argv, ":b:l:fqh", longs, NULL)) != -1) {
    switch (c) {
      case 's': a->space = optarg; break;
      case 'b': a->o.backend = optarg; break;
      case 'l': a->o.ledgers = optarg, a->ledgers_given = 1; break;
      case 'f': a->o.fresh = 1; break;
      case 'q': a->o.quiet = 1; break;
      case 'A': a->o.run_ahead = 0; break;
      case 'j': {
        a->jobs_arg = optarg;
        if (strcmp(optarg, "auto") == 0) {
          a->o.compile_jobs = -1;
          break;
        }
        char *end = NULL;
        long n = strtol(optarg, &end, 10);
        if (end == optarg || *end || n < 0 || n > 1024)
          return run_refuse(a, "--compile-jobs wants auto or a whole number 0..1024, not '%s'",
                            optarg);
        a->o.compile_jobs = (int)n;
        break;
      }
      case 'm': {
        char *end = NULL;
        double s = strtod(optarg, &end);
        if (end == optarg || *end || !(s >= 0 && s <= 86400))
          return run_refuse(a, "--worker-margin wants seconds in [0, 86400], not '%s'", optarg);
        a->o.worker_margin_s = s;
        a->margin_arg = optarg;
        break;
      }
      case 'h': a->help = 1; return 0;
      /* A long option is the argument just read. A short one is optopt: it may sit inside a
       * group like -fz, where optind has not moved on. (For a long option without its value,
       * optopt holds the option's short letter, so the argument decides.) */
      case ':':
        if (strncmp(argv[optind - 1], "--", 2) == 0)
          return run_refuse(a, "option '%s' needs a value", argv[optind - 1]);
        return run_refuse(a, "option '-%c' needs a value", optopt);
      default: return refuse_option(a, argv[optind - 1], longs);
    }
  }
  if (optind == argc) return run_refuse(a, "no campaign file given");
  if (optind < argc - 1)
    return run_refuse(a, "one campaign file, not also '%s' (options go before it)", argv[optind + 1]);
  if (a->o.backend && !backend_find(a->o.backend)) {
    char names[128];
    backend_names(names, sizeof names);
    return run_refuse(a, "unknown backend '%s' (%s)", a->o.backend, names);
  }
  if (a->space && !a->o.backend) a->o.backend = backend_recorded_name();
  const backend_ops *b = a->o.backend ? backend_find(a->o.backend) : NULL;
  if ((a->space != NULL) != (b && b->recorded))
    return run_refuse(a, "--backend %s and --space FILE go together", backend_recorded_name());
  a->o.campaign = argv[optind];
  return 0;
}

static int self_exe(char *buf, size_t len) {
  ssize_t n = readlink("/proc/self/exe", buf, len - 1);
  if (n <= 0) return -1;
  buf[n] = '\0';
  return 0;
}

/* A user's reference library may use OpenMP, which by default starts a thread per core in
 * every measure child; with several workers on a node
 * they would oversubscribe it G times over. Unless the user chose OMP_NUM_THREADS, each
 * worker's children get an equal share of the node's cores (inherited through posix_spawn). */
static void share_reference_threads(int workers_on_node) {
  long cores = sysconf(_SC_NPROCESSORS_ONLN);
  if (getenv("OMP_NUM_THREADS") || cores < 1 || workers_on_node < 1) return;
  char n[32];
  snprintf(n, sizeof n, "%ld", cores / workers_on_node > 0 ? cores / workers_on_node : 1);
  setenv("OMP_NUM_THREADS", n, 0);
}

static int run_farm(int rank, int size, run_args *a) {
  tf_err e = {0}; /* the backend, when not asked for, each worker's measure child chooses */
  int index = -1, on_node = 0;
  if (mpimsg_local_worker_index(MPI_COMM_WORLD, &index, &on_node, &e)) {
    fprintf(stderr, "tunefarm run: rank %d: %s\n", rank, e.msg);
    return 1;
  }
  if (rank == 0) {
    int rc = coordinator_run(MPI_COMM_WORLD, &a->o, &e);
    if (rc == 0) return 0;
    fprintf(stderr, "tunefarm run: %s\n", e.msg);
    fflush(stderr);
    if (rc > 0) { /* the only way past a hung rank; its SIGTERM is ours, not the user's */
      signal(SIGTERM, SIG_DFL);
      MPI_Abort(MPI_COMM_WORLD, TF_EXIT_FAIL);
    }
    return tf_exit_status(&e);
  }
  share_reference_threads(on_node);
  char exe[4096];
  if (self_exe(exe, sizeof exe)) snprintf(exe, sizeof exe, "tunefarm");
  worker_opts w = {.exe = exe, .backend = a->o.backend, .device = index, .hello_s = 120.0,
                   .compile_jobs = a->o.compile_jobs, .workers_on_node = on_node,
                   .quiet = a->o.quiet};
  (void)size;
  if (worker_run(MPI_COMM_WORLD, &w, &e) == 0) return 0;
  fprintf(stderr, "tunefarm run: worker rank %d: %s\n", rank, e.msg);
  return 1;
}

/* ---- the command line as launched: what resumes a run, and what starts one ---- */

/* Text built into a fixed buffer; what does not fit is cut off. */
typedef struct text {
  char *buf;
  size_t len, n;
} text;

__attribute__((format(printf, 2, 3))) static void put(text *t, const char *fmt, ...) {
  if (t->n >= t->len) return;
  va_list ap;
  va_start(ap, fmt);
  int w = vsnprintf(t->buf + t->n, t->len - t->n, fmt, ap);
  va_end(ap);
  if (w > 0) t->n = t->n + (size_t)w < t->len ? t->n + (size_t)w : t->len - 1;
}

/* " ARG", single-quoted for a POSIX shell when it holds anything but plain characters, so that
 * the line runs as printed. */
static void put_arg(text *t, const char *arg) {
  int plain = arg[0] != '\0';
  for (const char *p = arg; *p; p++)
    plain = plain && (strchr("_./=:,+@%-", *p) || (*p >= '0' && *p <= '9') ||
                      (*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z'));
  if (plain) {
    put(t, " %s", arg);
    return;
  }
  put(t, " '");
  for (const char *p = arg; *p; p++) put(t, *p == '\'' ? "'\\''" : "%c", *p);
  put(t, "'");
}

/* Cores of this node that this process may run on: the distinct (package, core) pairs of the
 * CPUs of its affinity, as Open MPI counts slots (cores, not hardware threads). */
static int node_cores(void) {
  cpu_set_t set;
  if (sched_getaffinity(0, sizeof set, &set) != 0) return (int)sysconf(_SC_NPROCESSORS_ONLN);
  enum { MAX_CORES = 4096 };
  static long seen[MAX_CORES];
  int n = 0;
  for (int cpu = 0; cpu < CPU_SETSIZE; cpu++) {
    if (!CPU_ISSET(cpu, &set)) continue;
    long id[2] = {-1, cpu}; /* without topology, each CPU is a core of its own */
    const char *leaf[2] = {"physical_package_id", "core_id"};
    for (int k = 0; k < 2; k++) {
      char path[128];
      snprintf(path, sizeof path, "/sys/devices/system/cpu/cpu%d/topology/%s", cpu, leaf[k]);
      FILE *f = fopen(path, "r");
      long v;
      if (f && fscanf(f, "%ld", &v) == 1) id[k] = v;
      if (f) fclose(f);
    }
    long key = id[0] * 1000003L + id[1];
    int i = 0;
    while (i < n && seen[i] != key) i++;
    if (i == n && n < MAX_CORES) seen[n++] = key;
  }
  return n > 0 ? n : 1;
}

/* The options of `run` as given, in one order, without --fresh (a resume keeps the ledgers),
 * and the campaign. */
static void put_run(text *t, const char *exe, const run_args *a) {
  put_arg(t, exe);
  put(t, " run");
  if (a->o.backend) put(t, " --backend"), put_arg(t, a->o.backend);
  if (a->ledgers_given) put(t, " --ledgers"), put_arg(t, a->o.ledgers);
  if (a->o.quiet) put(t, " --quiet");
  if (a->jobs_arg) put(t, " --compile-jobs"), put_arg(t, a->jobs_arg);
  if (!a->o.run_ahead) put(t, " --no-run-ahead");
  if (a->margin_arg) put(t, " --worker-margin"), put_arg(t, a->margin_arg);
  if (a->space) put(t, " --space"), put_arg(t, a->space);
  put_arg(t, a->o.campaign);
}

/* The variable a farm that `run` started itself finds its user's command in (argv[0]). */
#define RUN_AS_ENV "TUNEFARM_RUN_AS"

/* How to resume this run, as it was launched, one command a line: the user's own command when
 * run started the farm itself; else mpirun with this world's size (and --oversubscribe when
 * that exceeds the slots mpirun saw, or this node's cores), and under Slurm an srun form. A
 * launcher's own command line is not visible to its ranks; argv[0] is the binary as given. */
static void resume_text(const run_args *a, const char *exe, int world, char *buf, size_t len) {
  text t = {buf, len, 0};
  const char *as = getenv(RUN_AS_ENV);
  if (as && *as) {
    put(&t, " ");
    put_run(&t, as, a);
    put(&t, "\n");
    return;
  }
  const char *universe = getenv("OMPI_UNIVERSE_SIZE");
  int slots = universe && atoi(universe) > 0 ? atoi(universe) : node_cores();
  put(&t, "  mpirun -np %d%s", world, world > slots ? " --oversubscribe" : "");
  put_run(&t, exe, a);
  put(&t, "\n");
  if (getenv("SLURM_JOB_ID") || getenv("SLURM_STEP_ID")) {
    put(&t, "  srun --ntasks=%d", world);
    put_run(&t, exe, a);
    put(&t, "   (under Slurm; scripts/slurm.sbatch for GPU nodes)\n");
  }
}

/* Whether an MPI launcher started this process: mpirun (Open MPI), a PMI or PMIx server, or
 * srun. Without one, MPI_Init would make a world of one. */
static int launched(void) {
  const char *vars[] = {"OMPI_COMM_WORLD_SIZE", "PMI_SIZE", "PMI_RANK", "PMIX_RANK",
                        "SLURM_PROCID", NULL};
  for (const char **v = vars; *v; v++)
    if (getenv(*v)) return 1;
  return 0;
}

/* `run` without a launcher: the farm on this node, through mpirun, with one worker per GPU the
 * node shows (one on the simulated device), the same arguments and this very binary. Returns
 * only when mpirun cannot be started. */
static int self_launch(int argc, char **argv, const char *as, const run_args *a) {
  const backend_ops *b = backend_find(a->o.backend);
  int gpus = 0, sim = b && b->simulated;
  tf_err e = {0};
  if (!sim && cuda_device_count(&gpus, &e))
    gpus = 0; /* no GPU: the worker falls back to the simulated device, or says why not */
  int ranks = (gpus > 0 ? gpus : 1) + 1;
  char why[64];
  if (sim)
    snprintf(why, sizeof why, "--backend %s", b->name);
  else if (gpus > 0)
    snprintf(why, sizeof why, "one per GPU of this node");
  else
    snprintf(why, sizeof why, "no GPU here");
  char exe[4096], np[16];
  if (self_exe(exe, sizeof exe)) snprintf(exe, sizeof exe, "%s", as);
  snprintf(np, sizeof np, "%d", ranks);
  char **args = calloc((size_t)argc + 8, sizeof *args);
  if (!args) {
    fprintf(stderr, "tunefarm run: out of memory\n");
    return TF_EXIT_FAIL;
  }
  int n = 0;
  args[n++] = "mpirun", args[n++] = "-np", args[n++] = np;
  if (ranks > node_cores()) args[n++] = "--oversubscribe";
  args[n++] = exe;
  for (int i = 0; i < argc; i++) args[n++] = argv[i];
  args[n] = NULL;
  char line[8192];
  text t = {line, sizeof line, 0};
  for (int i = 0; i < n; i++) put_arg(&t, args[i]);
  fprintf(stderr, "tunefarm run: no MPI launcher started it: starting the farm with %d "
          "worker(s) (%s):\n %s\n", ranks - 1, why, line);
  fflush(stderr);
  setenv(RUN_AS_ENV, as, 1);
  execvp(args[0], args);
  fprintf(stderr, "tunefarm run: cannot start mpirun: %s; start the farm yourself: mpirun -np "
          "G+1 tunefarm run CAMPAIGN (G = GPUs on the node)\n", strerror(errno));
  free(args);
  return TF_EXIT_FAIL;
}

/* The replay backend's space, checked against the campaign before any rank starts, and named
 * to the measure children (TUNEFARM_SPACE, inherited through mpirun and posix_spawn). */
static int replay_space(const run_args *a, tf_err *e) {
  char abs[4096];
  if (sweep_check_space(a->o.campaign, a->space, e)) return -1;
  if (!realpath(a->space, abs)) snprintf(abs, sizeof abs, "%s", a->space);
  setenv("TUNEFARM_SPACE", abs, 1);
  return 0;
}

int run_main(int argc, char **argv, const char *as) {
  /* The margin covers what the job's deadline does not: starting a measure child (its hello
   * may take up to the worker's hello_s, 120 s), stopping an old one, the messages. */
  run_args a = {.o = {.ledgers = "ledgers", .progress = stderr, .compile_jobs = -1,
                      .run_ahead = 1, .worker_margin_s = 180.0}};
  int bad = parse_run(argc, argv, &a);
  if (a.help) {
    run_usage(stdout);
    return 0;
  }
  tf_err space_err = {0};
  if (!bad && a.space && replay_space(&a, &space_err)) {
    const char *rank = getenv("OMPI_COMM_WORLD_RANK");
    if (!launched() || !rank || strcmp(rank, "0") == 0)
      fprintf(stderr, "tunefarm run: %s\n", space_err.msg);
    return tf_exit_status(&space_err);
  }
  if (!bad && !launched()) return self_launch(argc, argv, as, &a);
  MPI_Init(&argc, &argv);
  mpimsg_init(MPI_COMM_WORLD);
  int rank, size, rc;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  if (bad || size < 2) {
    if (rank == 0) {
      if (bad)
        fprintf(stderr, "tunefarm run: %s (see --help)\n", a.why);
      else
        fprintf(stderr, "tunefarm run: needs a coordinator and at least one worker: "
                        "mpirun -np G+1 tunefarm run CAMPAIGN (G = GPUs on the node)\n");
    }
    MPI_Finalize();
    return 2;
  }
  if (rank == 0) {
    resume_text(&a, as, size, a.resume, sizeof a.resume);
    a.o.resume = a.resume;
  }
  rc = run_farm(rank, size, &a);
  MPI_Finalize();
  return rc;
}
