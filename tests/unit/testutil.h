/* testutil: scratch-directory helpers shared by the CMocka tests (linked into each one).
 * rm_rf removes a file or a folder tree; write_file writes text to dir/name and fails the
 * running test if it cannot. */
#ifndef TF_TESTUTIL_H
#define TF_TESTUTIL_H

void rm_rf(const char *path);
void write_file(const char *dir, const char *name, const char *text);

#endif
