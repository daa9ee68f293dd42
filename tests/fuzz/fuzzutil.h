/* fuzzutil: what the libFuzzer harnesses of tests/fuzz share.
 *
 * The loaders under test read files by path, so a harness writes each input into a scratch
 * project made once per process (fuzz_dir) and loads it from there. fuzz_text returns the
 * input as a NUL-terminated copy (the protocol and expression readers take C strings); the
 * caller frees it. Every harness is built with -fsanitize=fuzzer,address,undefined: a crash,
 * a leak or undefined behaviour is a finding. */
#ifndef TF_FUZZUTIL_H
#define TF_FUZZUTIL_H

#include <stddef.h>
#include <stdint.h>

/* A fresh folder under $TMPDIR (or /tmp), made on the first call and kept for the process. */
const char *fuzz_dir(void);

/* Write data to dir/name (folders made as needed); aborts if it cannot, which is no finding. */
void fuzz_write(const char *dir, const char *name, const uint8_t *data, size_t size);

/* Copy a file of the source tree (TF_SOURCE_DIR) into dir under the same relative path. */
void fuzz_copy(const char *dir, const char *rel);

char *fuzz_text(const uint8_t *data, size_t size);

/* libFuzzer's entry points, which every harness defines (the second where it sets up). */
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerInitialize(int *argc, char ***argv);

#endif
