/* How long the double CPU reference of one matmul input set takes (kernels/reference.c), on
 * the inputs a campaign's jobs fill; OMP_NUM_THREADS threads, as a measure child uses.
 *
 *   gcc -O2 -fopenmp -I. -o reference_time bench/reference_time.c kernels/reference.c \
 *     common/err.c -lm
 *   OMP_NUM_THREADS=16 ./reference_time 4096 3072 6144
 *
 * Prints the seconds and the rate in billions of multiply-adds per second. Exit status 0, or 2
 * for bad arguments, 1 when the reference fails. */
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "kernels/reference.h"

static double now_s(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

int main(int argc, char **argv) {
  long long mnk[3];
  for (int i = 0; i < 3 && argc == 4; i++) mnk[i] = atoll(argv[i + 1]);
  if (argc != 4 || mnk[0] < 1 || mnk[1] < 1 || mnk[2] < 1 || mnk[0] > 65536 || mnk[1] > 65536 ||
      mnk[2] > 65536) {
    fprintf(stderr, "usage: reference_time M N K (sizes from 1 to 65536)\n");
    return 2;
  }
  const long long M = mnk[0], N = mnk[1], K = mnk[2];
  float *A = malloc(sizeof(float) * (size_t)(M * K)), *B = malloc(sizeof(float) * (size_t)(K * N));
  double *C = malloc(sizeof(double) * (size_t)(M * N));
  if (!A || !B || !C) {
    fprintf(stderr, "reference_time: out of memory\n");
    return 1;
  }
  reference_fill(A, (size_t)(M * K), reference_input_seed(1, 0, 0));
  reference_fill(B, (size_t)(K * N), reference_input_seed(1, 0, 1));
  const char *const dims[] = {"M", "N", "K"}, *const bufs[] = {"A", "B", "C"};
  const float *data[] = {A, B, NULL};
  const long long counts[] = {M * K, K * N, M * N};
  reference_io io = {.family = "matmul", .ndims = 3, .dim_names = dims, .dims = mnk,
                     .nbuffers = 3, .buf_names = bufs, .bufs = data, .counts = counts};
  tf_err e = {0};
  double t0 = now_s();
  if (reference_compute(&io, C, &e)) {
    fprintf(stderr, "reference_time: %s\n", e.msg);
    return 1;
  }
  double s = now_s() - t0;
  printf("%lldx%lldx%lld: %.3f s, %.2f G multiply-adds/s\n", M, N, K, s, (double)M * N * K / s / 1e9);
  free(A);
  free(B);
  free(C);
  return 0;
}
