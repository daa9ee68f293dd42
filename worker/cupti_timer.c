/* cupti_timer: CUPTI activity records of kernels; see cupti_timer.h. */
#include "worker/cupti_timer.h"

#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

/* CUPTI wants buffers aligned to 8 bytes; 256 KiB holds about a thousand kernel records. */
#define TIMER_BUFFER_BYTES (256u * 1024u)
#define TIMER_ALIGN 8

/* The one state of this process (see the header for why it is not a struct the caller owns). */
static struct {
  pthread_mutex_t mu;
  int open;
  double *ns;         /* durations of the kernel records since the last begin */
  size_t n, cap;
  size_t incomplete;  /* kernel records without both timestamps */
  size_t dropped;     /* records CUPTI reported as dropped */
  int oom;            /* a duration could not be stored */
} timer = {.mu = PTHREAD_MUTEX_INITIALIZER};

int cupti_check(CUptiResult r, const char *call, const char *file, int line, tf_err *e) {
  if (r == CUPTI_SUCCESS) return 0;
  const char *what = NULL;
  if (cuptiGetResultString(r, &what) != CUPTI_SUCCESS || !what) what = "unknown error";
  return tf_fail(e, TF_EXIT_FAIL, "%s failed: %s (CUptiResult %d) [%s:%d]", call, what, (int)r,
                 file, line);
}

static void CUPTIAPI timer_buffer_requested(uint8_t **buffer, size_t *size, size_t *max_records) {
  void *p = NULL;
  *max_records = 0; /* as many as fit */
  if (posix_memalign(&p, TIMER_ALIGN, TIMER_BUFFER_BYTES) != 0) p = NULL;
  *buffer = p; /* NULL: CUPTI drops records, which collect then reports */
  *size = p ? TIMER_BUFFER_BYTES : 0;
}

/* Called with timer.mu held. */
static void timer_push(double ns) {
  if (timer.n == timer.cap) {
    size_t cap = timer.cap ? 2 * timer.cap : 1024;
    double *p = realloc(timer.ns, cap * sizeof *p);
    if (!p) {
      timer.oom = 1;
      return;
    }
    timer.ns = p;
    timer.cap = cap;
  }
  timer.ns[timer.n++] = ns;
}

static void CUPTIAPI timer_buffer_completed(CUcontext ctx, uint32_t stream, uint8_t *buffer,
                                            size_t size, size_t valid) {
  (void)size;
  CUpti_Activity *rec = NULL;
  pthread_mutex_lock(&timer.mu);
  while (valid > 0 && cuptiActivityGetNextRecord(buffer, valid, &rec) == CUPTI_SUCCESS) {
    if (rec->kind != CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL && rec->kind != CUPTI_ACTIVITY_KIND_KERNEL)
      continue;
    /* start and end sit at the same place in every kernel record version since CUDA 9. */
    const CUpti_ActivityKernel10 *k = (const CUpti_ActivityKernel10 *)rec;
    if (k->start == 0 || k->end <= k->start)
      timer.incomplete++;
    else
      timer_push((double)(k->end - k->start));
  }
  size_t dropped = 0;
  if (cuptiActivityGetNumDroppedRecords(ctx, stream, &dropped) == CUPTI_SUCCESS)
    timer.dropped += dropped;
  pthread_mutex_unlock(&timer.mu);
  free(buffer);
}

static void timer_reset(void) {
  pthread_mutex_lock(&timer.mu);
  timer.n = 0;
  timer.incomplete = 0;
  timer.dropped = 0;
  timer.oom = 0;
  pthread_mutex_unlock(&timer.mu);
}

int cupti_timer_open(tf_err *e) {
  if (timer.open) return 0;
  if (CUPTI_CHECK(cuptiActivityRegisterCallbacks(timer_buffer_requested, timer_buffer_completed), e))
    return -1;
  if (CUPTI_CHECK(cuptiActivityEnable(CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL), e)) return -1;
  timer.open = 1;
  timer_reset();
  return 0;
}

void cupti_timer_close(void) {
  if (!timer.open) return;
  /* Hand every outstanding buffer back (and free it) before kernel records stop. */
  (void)cuptiActivityFlushAll(CUPTI_ACTIVITY_FLAG_FLUSH_FORCED);
  (void)cuptiActivityDisable(CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL);
  (void)cuptiActivityFlushAll(CUPTI_ACTIVITY_FLAG_FLUSH_FORCED);
  pthread_mutex_lock(&timer.mu);
  free(timer.ns);
  timer.ns = NULL;
  timer.n = timer.cap = 0;
  timer.open = 0;
  pthread_mutex_unlock(&timer.mu);
}

int cupti_timer_begin(tf_err *e) {
  if (!timer.open) return tf_fail(e, TF_EXIT_FAIL, "cupti timer is not open");
  if (CUPTI_CHECK(cuptiActivityFlushAll(CUPTI_ACTIVITY_FLAG_FLUSH_FORCED), e)) return -1;
  timer_reset();
  return 0;
}

int cupti_timer_collect(double *ns, int max, tf_err *e) {
  if (!timer.open) return tf_fail(e, TF_EXIT_FAIL, "cupti timer is not open");
  /* Blocking: every buffer is handed to timer_buffer_completed before this returns. The
   * caller synchronized, so the records of the batch are complete. */
  if (CUPTI_CHECK(cuptiActivityFlushAll(CUPTI_ACTIVITY_FLAG_FLUSH_FORCED), e)) return -1;
  pthread_mutex_lock(&timer.mu);
  size_t n = timer.n, incomplete = timer.incomplete, dropped = timer.dropped;
  int oom = timer.oom;
  size_t copy = n < (size_t)(max > 0 ? max : 0) ? n : (size_t)(max > 0 ? max : 0);
  if (copy) memcpy(ns, timer.ns, copy * sizeof *ns);
  pthread_mutex_unlock(&timer.mu);
  if (incomplete || dropped || oom)
    return tf_fail(e, TF_EXIT_FAIL,
                   "cupti kernel records unusable: %zu incomplete, %zu dropped%s", incomplete,
                   dropped, oom ? ", out of memory" : "");
  return n > (size_t)0x7fffffff ? 0x7fffffff : (int)n;
}
