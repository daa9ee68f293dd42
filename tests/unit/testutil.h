/* testutil: helpers shared by the CMocka tests (linked into each one).
 * rm_rf removes a file or a folder tree; fresh_cache_setup/teardown give a test its own
 * cubin cache; count_files counts a folder's files by suffix; write_file writes text to dir/name and fails the
 * running test if it cannot; source_dir is the source tree ($TF_SOURCE_DIR, else the one
 * built from); subst returns text with the single occurrence of `from` replaced by `to`
 * (caller frees) and fails the test unless the edit applies exactly once, so a drifting
 * base text fails the test instead of hiding it; load_spec loads a template or kernel spec
 * of the source tree (path relative to it) or fails the test; test_xorshift64 draws fixed-seed
 * random numbers. */
#ifndef TF_TESTUTIL_H
#define TF_TESTUTIL_H

#include <stdint.h>

void rm_rf(const char *path);
/* CMocka setup and teardown: a fresh folder under /tmp as *state, which is $TUNEFARM_CACHE
 * meanwhile (compiles in the test land there); removed after. */
int fresh_cache_setup(void **state);
int fresh_cache_teardown(void **state);
/* Files in dir whose names end with suffix, hidden ones aside. */
int count_files(const char *dir, const char *suffix);
void write_file(const char *dir, const char *name, const char *text);
const char *source_dir(void);
char *subst(const char *text, const char *from, const char *to);
struct spec;
void load_spec(const char *rel, struct spec *s);
/* The next number of a xorshift64 sequence whose state (never 0) the caller keeps: random
 * test inputs that repeat from a fixed seed, so a failure repeats too. */
uint64_t test_xorshift64(uint64_t *state);

/* Ledger records for the readers' tests, from partial JSON text: what the text leaves out is
 * filled as the coordinator writes it (device, time, rule, "change" from best and new, a
 * measured record's numbers, flags and a minimal job; a round's order and missing arms; a
 * static refusal's constraint), so a test states only what it is about. test_record fails
 * the test when the codec refuses the result (record_free it); test_record_json gives the
 * completed tree (cJSON_Delete it), test_record_line its text (free it). */
#include <cjson/cJSON.h>
struct record;
cJSON *test_record_json(const char *partial);
struct record *test_record(const char *partial);
char *test_record_line(const char *partial);

#endif
