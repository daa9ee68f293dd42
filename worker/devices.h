/* devices: `tunefarm devices`, the GPUs this process sees and their tags.
 *
 * Needs no mpirun and no job: the runtime's device properties, NVML's clocks
 * and driver version when NVML is there. argv[0] is the command name. */
#ifndef TF_DEVICES_H
#define TF_DEVICES_H

/* 0: listed; 1: no CUDA device (the reason on stderr) or a device could not be described;
 * 2: bad usage. */
int devices_main(int argc, char **argv);

#endif
