/* cache: the content-addressed on-disk store of compiled cubins.
 *
 * The directory is $TUNEFARM_CACHE, else $XDG_CACHE_HOME/tunefarm, else
 * ~/.cache/tunefarm (created on first use). An entry is addressed by a 128-bit
 * hash (32 hex digits) of everything that decides the machine code: the
 * program's source text, the name expressions instantiated, the compile
 * options, the NVRTC version and the architecture. Entries are written to a
 * temporary file and renamed into place, so concurrent ranks and a crash never
 * leave a torn entry; a reader never sees half a file.
 * Ownership: cache_get returns a malloc'd buffer the caller frees. */
#ifndef TF_CACHE_H
#define TF_CACHE_H

#include <stddef.h>

#include "common/err.h"

#define CACHE_KEY_HEX 33 /* 32 hex digits and a NUL */

/* Resolve (and create) the cache directory. */
int cache_dir(char *out, size_t len, tf_err *e);

/* 128-bit hash of n byte strings, each length-prefixed so that ("ab","c") != ("a","bc"). */
void cache_key(const void *const *parts, const size_t *lens, int n, char out[CACHE_KEY_HEX]);

/* Hex hash of one buffer (used for campaign file hashes too). */
void cache_hash_hex(const void *data, size_t len, char out[CACHE_KEY_HEX]);

/* 0 and a malloc'd copy on a hit, 1 on a miss, -1 on a read error. `suffix` is ".cubin", ".names"... */
int cache_get(const char *dir, const char *key, const char *suffix, void **data, size_t *len);

/* Store atomically (temporary file + rename). */
int cache_put(const char *dir, const char *key, const char *suffix, const void *data, size_t len,
              tf_err *e);

#endif
