/* testutil: helpers shared by the CMocka tests (linked into each one).
 * rm_rf removes a file or a folder tree; write_file writes text to dir/name and fails the
 * running test if it cannot; source_dir is the source tree ($TF_SOURCE_DIR, else the one
 * built from); subst returns text with the single occurrence of `from` replaced by `to`
 * (caller frees) and fails the test unless the edit applies exactly once, so a drifting
 * base text fails the test instead of hiding it; load_spec loads a template or kernel spec
 * of the source tree (path relative to it) or fails the test. */
#ifndef TF_TESTUTIL_H
#define TF_TESTUTIL_H

void rm_rf(const char *path);
void write_file(const char *dir, const char *name, const char *text);
const char *source_dir(void);
char *subst(const char *text, const char *from, const char *to);
struct spec;
void load_spec(const char *rel, struct spec *s);

#endif
