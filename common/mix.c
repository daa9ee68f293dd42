/* mix: splitmix64's finalizer (common/mix.h). */
// defines: tf_mix64
#include "common/mix.h"

unsigned long long tf_mix64(unsigned long long z) {
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
  return z ^ (z >> 31);
}
