/* run: `tunefarm run [OPTIONS] CAMPAIGN`, the farm: rank 0 coordinates (coordinator/), every
 * other rank measures on one GPU (worker/). Its command line, its help, how it starts itself
 * under mpirun when no MPI launcher started it, and the resume command it prints.
 *
 * `as` is the binary as the user gave it (argv[0] of the process): the resume lines and the
 * self-started mpirun name it. Returns the process's exit status: 0 done, 1 failure, 2 bad
 * input or usage (one message on stderr, from rank 0). Under a launcher it calls MPI_Init
 * and MPI_Finalize itself. */
#ifndef TF_RUN_H
#define TF_RUN_H

int run_main(int argc, char **argv, const char *as);

#endif
