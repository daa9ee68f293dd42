/* cache: the content-addressed on-disk store of compiled cubins.
 *
 * The directory is $TUNEFARM_CACHE, else $XDG_CACHE_HOME/tunefarm, else
 * ~/.cache/tunefarm (created on first use). An entry is addressed by a 128-bit
 * hash (32 hex digits) of everything that decides the machine code: the
 * program's source text, the name expressions instantiated, the compile
 * options, the NVRTC version and the architecture. Entries are written to a
 * temporary file and renamed into place, so concurrent ranks and a crash never
 * leave a torn entry; a reader never sees half a file.
 *
 * An entry file is its payload followed by a 48-byte trailer: "tfcache1", the payload's length
 * (8 bytes, little-endian) and a seal, the 32 hex digits of cache_key over ("tunefarm cache
 * entry", key, suffix, payload). The seal binds the bytes to the entry's name: an entry cut
 * short, changed, copied to another key or suffix, or written by anything but cache_put does
 * not verify. It is a check against accidents (a full disk, a copy cut short, a file put in
 * the folder by hand), not against someone who can write the folder: such a person can write
 * a sealed entry too, so a shared cache folder must be writable only by those trusted to
 * compile for everyone. A ".cubin" payload must also be plausible machine code: a 64-bit
 * little-endian ELF image for EM_CUDA (190) whose header and program and section header
 * tables lie within it, or the stand-in of a simulated compile (CACHE_SIM_CUBIN). An entry
 * without a trailer is corrupt like any other: removed, compiled again and written sealed.
 *
 * Reading needs only read access: a cache folder on a read-only mount serves its entries, and
 * only cache_put fails there (callers treat that as a cubin not kept).
 *
 * Ownership: cache_read and cache_get return a malloc'd buffer the caller frees. */
#ifndef TF_CACHE_H
#define TF_CACHE_H

#include <stddef.h>

#include "common/err.h"

#define CACHE_KEY_HEX 33 /* 32 hex digits and a NUL */

/* The stand-in cubin of a simulated compile (compile/compile.c) of the program of key: this
 * prefix, the key and a newline, exactly; the only ".cubin" payload that is not ELF. */
#define CACHE_SIM_CUBIN "tunefarm simulated cubin "

/* The size of the trailer after every entry's payload. */
#define CACHE_TRAILER 48

/* Resolve (and create) the cache directory. It must be readable; a directory that cannot be
 * written (a read-only mount) is returned all the same: its entries are read, new ones are
 * not kept. */
int cache_dir(char *out, size_t len, tf_err *e);

/* 128-bit hash of n byte strings, each length-prefixed so that ("ab","c") != ("a","bc"). */
void cache_key(const void *const *parts, const size_t *lens, int n, char out[CACHE_KEY_HEX]);

/* Hex hash of one buffer (used for campaign file hashes too). */
void cache_hash_hex(const void *data, size_t len, char out[CACHE_KEY_HEX]);

/* Whether the size bytes of an entry file's content are a sealed entry of key and suffix with a
 * plausible payload: 0 and *payload_len (the payload is the first *payload_len bytes), or -1
 * and why (a phrase, "no trailer: ..."). No I/O. */
int cache_check(const char *key, const char *suffix, const void *entry, size_t size,
                size_t *payload_len, char *why, size_t whylen);

/* Read an entry: 0 and a malloc'd copy of its payload on a hit; 1 on a miss (no entry); 2 when
 * the entry is corrupt (cache_check refuses it, or it is a symbolic link, a folder, a FIFO, a
 * device, or of a size no entry has): its name is removed (unlink: a link is never followed)
 * unless it is a folder, and report holds "entry 'PATH' is corrupt (WHY); evicted" (or "not
 * evicted (WHY)"); -1 when it cannot be read (a bad key, no permission, an I/O error).
 * Opening never blocks (a FIFO) and never follows a link. `suffix` is ".cubin", ".names"... */
int cache_read(const char *dir, const char *key, const char *suffix, void **data, size_t *len,
               char *report, size_t report_len);

/* cache_read for a caller that compiles on a miss: 0 on a hit, 1 on a miss or a corrupt entry
 * (reported with one line on stderr: "cache: entry 'PATH' is corrupt (WHY); evicted,
 * compiling again"), -1 on a read error. */
int cache_get(const char *dir, const char *key, const char *suffix, void **data, size_t *len);

/* Store atomically (temporary file + rename), sealed. A ".cubin" payload that is not plausible
 * machine code (see above) is refused: the cache never writes what it would not read back. */
int cache_put(const char *dir, const char *key, const char *suffix, const void *data, size_t len,
              tf_err *e);

#endif
