/* jsonio: reading JSON files and typed keys with errors that name the file
 * and the key; writing one JSON object per line.
 *
 * Every getter takes the file's path (for the message), the object, the key
 * and a dotted `where` prefix ("measure", "knobs.BM", may be "") so that a
 * message reads: "campaign 'campaigns/x.json': key 'measure.rounds' must be an
 * integer in [1, 1000]". All bad-input failures use TF_EXIT_INPUT.
 * Returned strings point into the cJSON tree (owned by the caller's tree). */
#ifndef TF_JSONIO_H
#define TF_JSONIO_H

#include <cjson/cJSON.h>
#include <stdio.h>

#include "common/err.h"

/* The limits applied to any file the project reads as JSON. */
#define JSONIO_MAX_BYTES (16L * 1024 * 1024)

/* Read and parse a whole file; `what` is "campaign", "template", ... for the message.
 * Unreadable, empty, too large, not JSON (with line and column), not an object, or a string
 * or key that is not valid UTF-8 (naming its key): error. */
cJSON *jsonio_load(const char *path, const char *what, tf_err *e);

/* Both refuse a key that appears twice in one object, naming it ("key 'search.budget'
 * appears more than once"): lookups see only the first copy, so the second would be
 * silently ignored. */

/* Parse text (a message or ledger line); NULL and an error naming `what` if not an object. */
cJSON *jsonio_parse(const char *text, const char *what, tf_err *e);

/* Read a whole file into a malloc'd NUL-terminated buffer (caller frees). */
char *jsonio_slurp(const char *path, const char *what, long max_bytes, size_t *len, tf_err *e);

/* The dotted path of the first key that appears twice in one object of the tree
 * ("search.budget", "constraints[2].name") into buf: 1 if there is one, 0 if none,
 * -1 when out of memory. */
int jsonio_duplicate_key(const cJSON *root, char *buf, size_t len);

/* v as a whole number in [lo, hi]: 0 and *out, or -1 for NaN, infinities, fractions (1.5
 * is not silently 1) and values beyond long long (casting 1e300 is undefined behaviour).
 * Every conversion of a JSON number to an integer goes through it. */
int jsonio_whole(double v, long long lo, long long hi, long long *out);

/* Typed getters. `req`uired keys missing are errors; optional ones leave *out at its default.
 * With what NULL a message starts at the key ("key 'x' must be ..."): the caller names the place. */
int jsonio_int(const char *file, const char *what, const cJSON *obj, const char *where,
               const char *key, int req, long long lo, long long hi, long long *out, tf_err *e);
int jsonio_num(const char *file, const char *what, const cJSON *obj, const char *where,
               const char *key, int req, double lo, double hi, double *out, tf_err *e);
int jsonio_bool(const char *file, const char *what, const cJSON *obj, const char *where,
                const char *key, int req, int *out, tf_err *e);
/* *out points into the tree; strings longer than maxlen are refused. */
int jsonio_str(const char *file, const char *what, const cJSON *obj, const char *where,
               const char *key, int req, size_t maxlen, const char **out, tf_err *e);
/* An object or array child of the given type (cJSON_Object / cJSON_Array); NULL if absent and optional. */
int jsonio_child(const char *file, const char *what, const cJSON *obj, const char *where,
                 const char *key, int req, int type, const cJSON **out, tf_err *e);

/* Refuse keys not in the NULL-terminated `allowed` list: a misspelt key is a mistake. */
int jsonio_only_keys(const char *file, const char *what, const cJSON *obj, const char *where,
                     const char *const *allowed, tf_err *e);

/* A name used to build a path ("matmul", "layernorm-4096x768"): letters, digits, '-', '_', '.',
 * not starting with '.', at most 63 bytes. Anything else could put files outside their folder. */
int jsonio_safe_name(const char *name);

/* Write `obj` as cJSON_PrintUnformatted prints it, as one line plus '\n'; fflush; returns 0
 * or -1. */
int jsonio_write_line(FILE *f, const cJSON *obj);

/* A measured value as a JSON number that reads back as exactly v: printf's "%.17g", as a raw
 * item; null for NaN and infinities (as cJSON prints them). cJSON's own printing keeps 15
 * digits where they come within a rounding error of v (1.0299999999999998, a near miss below
 * 1.03, would come back as 1.03). The item is for printing: to a reader of the tree in memory
 * a raw item is no number. */
cJSON *jsonio_exact(double v);
/* jsonio_exact(v) added to obj as key. */
void jsonio_add_exact(cJSON *obj, const char *key, double v);

/* The text of a JSON object with `members` ('"rank":3' or '"a":1,"b":2') put first: a new
 * malloc'd string, or NULL when out of memory or when text is not an object's ('{' first,
 * leading white space allowed). For a relay that adds a key to a message it passes on
 * without parsing and printing it again; the caller makes sure the key is not already
 * there (jsonio_parse refuses a key twice). */
char *jsonio_prepend_members(const char *text, const char *members);

/* Whether the n bytes at s are well-formed UTF-8 (RFC 3629): no overlong form, no surrogate
 * (U+D800..U+DFFF), nothing past U+10FFFF, no sequence cut short or broken. */
int jsonio_utf8_valid(const char *s, size_t n);

/* Whether s is one line of text: no control character (C0, DEL or C1, U+0080..U+009F) but
 * the tab. For text a message, a ledger record or a report prints as one line. */
int jsonio_one_line(const char *s);

/* Join where and key into buf ("measure.rounds" or "rounds"). */
const char *jsonio_key(char *buf, size_t len, const char *where, const char *key);

#endif
