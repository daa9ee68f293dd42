/* doorbell: wake a waiting process of the same node without polling.
 *
 * A rank that waits for an MPI message can only poll: Open MPI's shared-memory transport has
 * no blocking receive, and every poll is a wake-up, a system call and a switch of process.
 * With 64 simulated workers on two cores, idle workers polling for their next job took most
 * of the node's CPU (docs/design.md, "The coordinator's ceiling"). So a sender on the
 * same node rings the receiver's doorbell after each message, and the receiver sleeps until
 * it rings instead of waking on a timer.
 *
 * The doorbell is SIGURG, taken with sigtimedwait while blocked in every thread: its default
 * action is to be ignored, so a ring that reaches a process that does not expect it (a pid
 * reused after the rank died) does nothing. It must be blocked before the process starts any
 * thread (MPI_Init does), or a thread that does not block it would swallow rings.
 * Rings coalesce: several before a wait wake it once. A ring says "look", never what came. */
#ifndef TF_DOORBELL_H
#define TF_DOORBELL_H

#include <stdint.h>
#include <sys/types.h>

/* Block the doorbell's signal in the calling thread (and the threads it starts after). */
void doorbell_block(void);

/* 1 when the calling thread can wait on its doorbell (the signal is blocked), else 0. */
int doorbell_armed(void);

/* Which processes can ring each other: a hash of the host name and the pid namespace. Two
 * processes with the same key see the same pids. */
uint64_t doorbell_space(void);

/* Ring process pid's doorbell. */
void doorbell_ring(pid_t pid);

/* Sleep until the doorbell rings or `seconds` pass: 1 if it rang (the ring is consumed),
 * 0 if the time ran out. Rings before the call count. */
int doorbell_wait(double seconds);

#endif
