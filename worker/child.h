/* child: `tunefarm measure`, the process that owns one device.
 *
 * Reads one JSON object per line on stdin and answers one per line on stdout:
 *   {"type":"hello"}      -> {"type":"hello","device":{device record}}
 *                            or {"type":"error","message":"..."}
 *   {"type":"job", ...}   -> {"type":"result", ...} (common/msg.h)
 * It exits 0 at end of input (so it ends on its own when its worker dies) and
 * 3 right after answering a job that left the device unusable (sticky CUDA
 * error): its worker starts a fresh child for the next job. Diagnostics go to
 * stderr. Standalone: `tunefarm measure --backend sim < job.jsonl`.
 * CHILD_DROP_SIGNAL ends the job being measured at its next round, with an
 * error answer: the worker drops a job it ran ahead that the coordinator did
 * not want (worker/worker.h). One sent after its job ended is forgotten. */
#ifndef TF_CHILD_H
#define TF_CHILD_H

#include <signal.h>
#include <stddef.h>

#define CHILD_DROP_SIGNAL SIGUSR2

int child_main(int argc, char **argv);

#endif
