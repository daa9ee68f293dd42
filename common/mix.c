/* mix: splitmix64's finalizer and FNV-1a (common/mix.h). */
// defines: tf_mix64, tf_fnv64
#include "common/mix.h"

unsigned long long tf_mix64(unsigned long long z) {
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
  return z ^ (z >> 31);
}

unsigned long long tf_fnv64(unsigned long long h, const void *p, size_t n) {
  const unsigned char *b = p;
  for (size_t i = 0; i < n; i++) h = (h ^ b[i]) * 1099511628211ULL;
  return h;
}
