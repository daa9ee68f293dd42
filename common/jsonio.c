#include "common/jsonio.h"

#include <errno.h>
#include <float.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>


const char *jsonio_key(char *buf, size_t len, const char *where, const char *key) {
  if (where && where[0])
    snprintf(buf, len, "%s.%s", where, key);
  else
    snprintf(buf, len, "%s", key);
  return buf;
}

char *jsonio_slurp(const char *path, const char *what, long max_bytes, size_t *len, tf_err *e) {
  FILE *f = fopen(path, "rb");
  if (!f) {
    tf_fail(e, TF_EXIT_INPUT, "%s '%s': cannot open: %s", what, path, strerror(errno));
    return NULL;
  }
  char *buf = NULL;
  size_t n = 0, cap = 0;
  for (;;) {
    if (n + 4096 + 1 > cap) {
      cap = cap ? cap * 2 : 8192;
      char *nb = realloc(buf, cap);
      if (!nb) break;
      buf = nb;
    }
    size_t got = fread(buf + n, 1, cap - n - 1, f);
    n += got;
    if ((long)n > max_bytes) {
      tf_fail(e, TF_EXIT_INPUT, "%s '%s': larger than %ld bytes; is this the right file?", what,
              path, max_bytes);
      goto fail;
    }
    if (got == 0) break;
  }
  if (ferror(f) || !buf) {
    tf_fail(e, TF_EXIT_INPUT, "%s '%s': cannot read: %s", what, path, strerror(errno));
    goto fail;
  }
  fclose(f);
  buf[n] = '\0';
  if (len) *len = n;
  return buf;
fail:
  fclose(f);
  free(buf);
  return NULL;
}

/* Line and column (1-based) of a byte offset, for parse errors. */
static void line_col(const char *text, size_t off, int *line, int *col) {
  *line = 1;
  *col = 1;
  for (size_t i = 0; i < off && text[i]; i++) {
    if (text[i] == '\n') {
      (*line)++;
      *col = 1;
    } else {
      (*col)++;
    }
  }
}

/* Unclosed braces or brackets at the end (outside strings): the file was cut short. */
static int looks_truncated(const char *text, size_t len) {
  int depth = 0, in_str = 0;
  for (size_t i = 0; i < len; i++) {
    char c = text[i];
    if (in_str) {
      if (c == '\\') i++;
      else if (c == '"') in_str = 0;
    } else if (c == '"') {
      in_str = 1;
    } else if (c == '{' || c == '[') {
      depth++;
    } else if (c == '}' || c == ']') {
      depth--;
    }
  }
  return in_str || depth > 0;
}

static int cmp_key(const void *a, const void *b) {
  return strcmp(*(const char *const *)a, *(const char *const *)b);
}

/* The first key of obj's own keys that repeats, or NULL (-1 in *oom when out of memory).
 * Sorted, so a hostile object of a million keys costs n log n, not n^2. */
static const char *repeated_key(const cJSON *obj, int *oom) {
  int n = cJSON_GetArraySize(obj);
  if (n < 2) return NULL;
  const char **keys = malloc((size_t)n * sizeof *keys);
  if (!keys) return *oom = 1, NULL;
  int k = 0;
  const cJSON *it;
  cJSON_ArrayForEach(it, obj) keys[k++] = it->string ? it->string : "";
  qsort(keys, (size_t)k, sizeof *keys, cmp_key);
  const char *dup = NULL;
  for (int i = 1; i < k && !dup; i++)
    if (strcmp(keys[i - 1], keys[i]) == 0) dup = keys[i];
  free(keys);
  return dup;
}

/* path[0..at) names node; children extend it in place. */
static int find_duplicate(const cJSON *node, char *path, size_t len, size_t at) {
  int oom = 0;
  const char *dup = cJSON_IsObject(node) ? repeated_key(node, &oom) : NULL;
  if (oom) return -1;
  if (dup) {
    snprintf(path + at, len - at, "%s%s", at ? "." : "", dup);
    return 1;
  }
  int i = 0;
  const cJSON *it;
  cJSON_ArrayForEach(it, node) {
    const char *name = it->string ? it->string : "";
    int w = cJSON_IsObject(node) ? snprintf(path + at, len - at, "%s%s", at ? "." : "", name)
                                 : snprintf(path + at, len - at, "[%d]", i);
    size_t next = at + (w > 0 ? (size_t)w : 0);
    int rc = find_duplicate(it, path, len, next < len ? next : len - 1);
    if (rc) return rc;
    path[at] = '\0';
    i++;
  }
  return 0;
}

/* Whether obj repeats one of its own keys: 1, 0, or -1 when out of memory. A small object
 * (every message's and record's) is compared pair by pair, without repeated_key's copy and
 * sort. */
static int repeats(const cJSON *obj) {
  int n = 0, oom = 0;
  const cJSON *a, *b;
  cJSON_ArrayForEach(a, obj) if (++n > 16) break;
  if (n > 16) return repeated_key(obj, &oom) ? 1 : -oom;
  for (a = obj->child; a; a = a->next)
    for (b = a->next; b; b = b->next)
      if (strcmp(a->string ? a->string : "", b->string ? b->string : "") == 0) return 1;
  return 0;
}

/* Whether any object of the tree repeats a key: 1, 0, or -1 when out of memory. Every parse
 * asks; only a repeat needs find_duplicate, which writes the path of every node it visits. */
static int any_duplicate(const cJSON *node) {
  int rc = cJSON_IsObject(node) ? repeats(node) : 0;
  const cJSON *it;
  for (it = node->child; it && rc == 0; it = it->next)
    if (cJSON_IsObject(it) || cJSON_IsArray(it)) rc = any_duplicate(it);
  return rc;
}

int jsonio_duplicate_key(const cJSON *root, char *buf, size_t len) {
  if (len == 0) return 0;
  buf[0] = '\0';
  int rc = any_duplicate(root);
  return rc == 1 ? find_duplicate(root, buf, len, 0) : rc;
}

/* The length of the well-formed sequence at s (n > 0 bytes left), or 0. The second byte's
 * range is what rules out overlong forms (E0, F0), surrogates (ED) and code points past
 * U+10FFFF (F4); C0, C1 and F5..FF never start one. */
static size_t utf8_seq(const unsigned char *s, size_t n) {
  unsigned char c = s[0], lo = 0x80, hi = 0xBF;
  size_t len;
  if (c < 0x80) return 1;
  if (c >= 0xC2 && c <= 0xDF) len = 2;
  else if (c >= 0xE0 && c <= 0xEF) len = 3;
  else if (c >= 0xF0 && c <= 0xF4) len = 4;
  else return 0;
  if (c == 0xE0) lo = 0xA0;
  if (c == 0xED) hi = 0x9F;
  if (c == 0xF0) lo = 0x90;
  if (c == 0xF4) hi = 0x8F;
  if (n < len || s[1] < lo || s[1] > hi) return 0;
  for (size_t i = 2; i < len; i++)
    if (s[i] < 0x80 || s[i] > 0xBF) return 0;
  return len;
}

int jsonio_utf8_valid(const char *s, size_t n) {
  const unsigned char *u = (const unsigned char *)s;
  for (size_t i = 0, w; i < n; i += w)
    if (!(w = utf8_seq(u + i, n - i))) return 0;
  return 1;
}

int jsonio_one_line(const char *s) {
  for (const unsigned char *u = (const unsigned char *)s; *u; u++)
    if ((*u < 0x20 && *u != '\t') || *u == 0x7F || (*u == 0xC2 && u[1] >= 0x80 && u[1] <= 0x9F))
      return 0;
  return 1;
}

static int utf8_str(const char *s) { return jsonio_utf8_valid(s, strlen(s)); }

/* path[0..at) names node; children extend it in place. 1 with the path of the first string
 * that is not UTF-8 (*in_key: 1 when it is a key of the object the path names), else 0. */
static int find_bad_text(const cJSON *node, char *path, size_t len, size_t at, int *in_key) {
  if (cJSON_IsString(node) && node->valuestring && !utf8_str(node->valuestring)) return 1;
  int i = 0;
  const cJSON *it;
  cJSON_ArrayForEach(it, node) {
    const char *name = it->string ? it->string : "";
    if (cJSON_IsObject(node) && !utf8_str(name)) return *in_key = 1;
    int w = cJSON_IsObject(node) ? snprintf(path + at, len - at, "%s%s", at ? "." : "", name)
                                 : snprintf(path + at, len - at, "[%d]", i);
    size_t next = at + (w > 0 ? (size_t)w : 0);
    if (find_bad_text(it, path, len, next < len ? next : len - 1, in_key)) return 1;
    path[at] = '\0';
    i++;
  }
  return 0;
}

/* Every string and key of a file's tree is UTF-8: text from templates and campaigns reaches
 * ledgers, reports and terminals, whose readers expect it. */
static int check_text(const cJSON *root, const char *what, const char *path, tf_err *e) {
  char key[256] = "";
  int in_key = 0;
  if (!find_bad_text(root, key, sizeof key, 0, &in_key)) return 0;
  if (!in_key)
    return tf_fail(e, TF_EXIT_INPUT, "%s '%s': key '%s' is not valid UTF-8", what, path, key);
  if (!key[0])
    return tf_fail(e, TF_EXIT_INPUT, "%s '%s': a key of the top level is not valid UTF-8", what,
                   path);
  return tf_fail(e, TF_EXIT_INPUT, "%s '%s': a key of '%s' is not valid UTF-8", what, path, key);
}

int jsonio_whole(double v, long long lo, long long hi, long long *out) {
  /* -2^63 is a double exactly; 2^63 is the first double past LLONG_MAX */
  if (!(v >= -9223372036854775808.0 && v < 9223372036854775808.0) || v != floor(v)) return -1;
  long long x = (long long)v;
  if (x < lo || x > hi) return -1;
  *out = x;
  return 0;
}

/* What names the text in a message: what, with its file's path where it has one. Built only
 * for a failure: every message the coordinator and the workers read is parsed here. */
static const char *who(char *buf, size_t len, const char *what, const char *path) {
  if (!path) return what;
  snprintf(buf, len, "%s '%s'", what, path);
  return buf;
}

static cJSON *parse_object(const char *text, size_t len, const char *what, const char *path,
                           tf_err *e) {
  char w[1200];
  const char *end = NULL;
  /* Callers pass NUL-terminated text; an embedded NUL before len is trailing garbage. */
  cJSON *root = strlen(text) == len ? cJSON_ParseWithOpts(text, &end, 1) : NULL;
  if (!root) {
    size_t off = end ? (size_t)(end - text) : 0;
    int line, col;
    line_col(text, off, &line, &col);
    if (off >= len || looks_truncated(text, len))
      tf_fail(e, TF_EXIT_INPUT, "%s: not valid JSON: ends early (truncated?) at line %d",
              who(w, sizeof w, what, path), line);
    else
      tf_fail(e, TF_EXIT_INPUT, "%s: not valid JSON at line %d, column %d",
              who(w, sizeof w, what, path), line, col);
    return NULL;
  }
  if (!cJSON_IsObject(root)) {
    tf_fail(e, TF_EXIT_INPUT, "%s: the top level must be a JSON object {...}",
            who(w, sizeof w, what, path));
    cJSON_Delete(root);
    return NULL;
  }
  char key[256];
  int dup = jsonio_duplicate_key(root, key, sizeof key);
  if (dup) {
    if (dup > 0)
      tf_fail(e, TF_EXIT_INPUT, "%s: key '%s' appears more than once",
              who(w, sizeof w, what, path), key);
    else
      tf_fail(e, TF_EXIT_FAIL, "%s: out of memory", who(w, sizeof w, what, path));
    cJSON_Delete(root);
    return NULL;
  }
  return root;
}

cJSON *jsonio_load(const char *path, const char *what, tf_err *e) {
  size_t len = 0;
  char *text = jsonio_slurp(path, what, JSONIO_MAX_BYTES, &len, e);
  if (!text) return NULL;
  if (len == 0) {
    tf_fail(e, TF_EXIT_INPUT, "%s '%s': the file is empty", what, path);
    free(text);
    return NULL;
  }
  cJSON *root = parse_object(text, len, what, path, e);
  free(text);
  if (root && check_text(root, what, path, e)) {
    cJSON_Delete(root);
    return NULL;
  }
  return root;
}

cJSON *jsonio_parse(const char *text, const char *what, tf_err *e) {
  return parse_object(text, strlen(text), what, NULL, e);
}

static const cJSON *lookup(const cJSON *obj, const char *key) {
  return cJSON_GetObjectItemCaseSensitive(obj, key);
}

/* "campaign 'x.json': " before a key's message, or nothing when what is NULL (a ledger line's
 * reader names the file and the line itself). */
static const char *lead(char *buf, size_t len, const char *what, const char *file) {
  if (!what) return buf[0] = '\0', buf;
  snprintf(buf, len, "%s '%s': ", what, file);
  return buf;
}

/* The key's full name (where.key) is built only for a message: these run for every number of
 * every message the coordinator reads. */
static int missing(const char *file, const char *what, const char *where, const char *key,
                   int req, tf_err *e) {
  char at[1200], k[256];
  if (!req) return 0;
  return tf_fail(e, TF_EXIT_INPUT, "%skey '%s' is missing", lead(at, sizeof at, what, file),
                 jsonio_key(k, sizeof k, where, key));
}

int jsonio_int(const char *file, const char *what, const cJSON *obj, const char *where,
               const char *key, int req, long long lo, long long hi, long long *out, tf_err *e) {
  char k[256], at[1200];
  const cJSON *it = lookup(obj, key);
  if (!it) return missing(file, what, where, key, req, e);
  if (!cJSON_IsNumber(it) || jsonio_whole(it->valuedouble, lo, hi, out))
    return tf_fail(e, TF_EXIT_INPUT, "%skey '%s' must be an integer in [%lld, %lld]",
                   lead(at, sizeof at, what, file), jsonio_key(k, sizeof k, where, key), lo, hi);
  return 0;
}

int jsonio_num(const char *file, const char *what, const cJSON *obj, const char *where,
               const char *key, int req, double lo, double hi, double *out, tf_err *e) {
  char k[256], at[1200];
  const cJSON *it = lookup(obj, key);
  if (!it) return missing(file, what, where, key, req, e);
  if (!cJSON_IsNumber(it) || !isfinite(it->valuedouble) || it->valuedouble < lo ||
      it->valuedouble > hi)
    return tf_fail(e, TF_EXIT_INPUT, "%skey '%s' must be a number in [%g, %g]",
                   lead(at, sizeof at, what, file), jsonio_key(k, sizeof k, where, key), lo, hi);
  *out = it->valuedouble;
  return 0;
}

int jsonio_bool(const char *file, const char *what, const cJSON *obj, const char *where,
                const char *key, int req, int *out, tf_err *e) {
  char k[256], at[1200];
  const cJSON *it = lookup(obj, key);
  if (!it) return missing(file, what, where, key, req, e);
  if (!cJSON_IsBool(it))
    return tf_fail(e, TF_EXIT_INPUT, "%skey '%s' must be true or false",
                   lead(at, sizeof at, what, file), jsonio_key(k, sizeof k, where, key));
  *out = cJSON_IsTrue(it);
  return 0;
}

int jsonio_str(const char *file, const char *what, const cJSON *obj, const char *where,
               const char *key, int req, size_t maxlen, const char **out, tf_err *e) {
  char k[256], at[1200];
  const cJSON *it = lookup(obj, key);
  if (!it) return missing(file, what, where, key, req, e);
  if (!cJSON_IsString(it) || !it->valuestring)
    return tf_fail(e, TF_EXIT_INPUT, "%skey '%s' must be a string", lead(at, sizeof at, what, file),
                   jsonio_key(k, sizeof k, where, key));
  if (strlen(it->valuestring) > maxlen)
    return tf_fail(e, TF_EXIT_INPUT, "%skey '%s' is longer than %zu characters",
                   lead(at, sizeof at, what, file), jsonio_key(k, sizeof k, where, key), maxlen);
  *out = it->valuestring;
  return 0;
}

int jsonio_child(const char *file, const char *what, const cJSON *obj, const char *where,
                 const char *key, int req, int type, const cJSON **out, tf_err *e) {
  char k[256], at[1200];
  const cJSON *it = lookup(obj, key);
  *out = NULL;
  if (!it) return missing(file, what, where, key, req, e);
  if ((it->type & 0xFF) != type)
    return tf_fail(e, TF_EXIT_INPUT, "%skey '%s' must be %s", lead(at, sizeof at, what, file),
                   jsonio_key(k, sizeof k, where, key),
                   type == cJSON_Array ? "an array [...]" : "an object {...}");
  *out = it;
  return 0;
}

int jsonio_only_keys(const char *file, const char *what, const cJSON *obj, const char *where,
                     const char *const *allowed, tf_err *e) {
  const cJSON *it;
  cJSON_ArrayForEach(it, obj) {
    int ok = 0;
    for (const char *const *a = allowed; *a; a++)
      if (it->string && strcmp(it->string, *a) == 0) ok = 1;
    if (!ok) {
      char k[256];
      jsonio_key(k, sizeof k, where, it->string ? it->string : "?");
      char list[512] = "";
      for (const char *const *a = allowed; *a; a++) {
        strncat(list, *a, sizeof list - strlen(list) - 1);
        if (a[1]) strncat(list, ", ", sizeof list - strlen(list) - 1);
      }
      char at[1200];
      return tf_fail(e, TF_EXIT_INPUT, "%sunknown key '%s' (known: %s)",
                     lead(at, sizeof at, what, file), k, list);
    }
  }
  return 0;
}

int jsonio_safe_name(const char *name) {
  size_t n = strlen(name);
  if (n == 0 || n > 63 || name[0] == '.') return 0;
  for (size_t i = 0; i < n; i++) {
    char c = name[i];
    int ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
             c == '-' || c == '_' || c == '.';
    if (!ok) return 0;
  }
  return 1;
}

int jsonio_write_line(FILE *f, const cJSON *obj) {
  char *text = cJSON_PrintUnformatted(obj);
  if (!text) return -1;
  int rc = (fputs(text, f) < 0 || fputc('\n', f) == EOF || fflush(f) != 0) ? -1 : 0;
  cJSON_free(text);
  return rc;
}

char *jsonio_prepend_members(const char *text, const char *members) {
  const char *open = text + strspn(text, " \t\r\n");
  if (*open != '{') return NULL;
  const char *rest = open + 1;
  int empty = rest[strspn(rest, " \t\r\n")] == '}';
  size_t n = strlen(members) + strlen(rest) + 3;
  char *out = malloc(n);
  if (out) snprintf(out, n, "{%s%s%s", members, empty || !*members ? "" : ",", rest);
  return out;
}

cJSON *jsonio_exact(double v) {
  char buf[32];
  if (!isfinite(v)) return cJSON_CreateNull();
  snprintf(buf, sizeof buf, "%.17g", v);
  return cJSON_CreateRaw(buf);
}

void jsonio_add_exact(cJSON *obj, const char *key, double v) {
  cJSON_AddItemToObject(obj, key, jsonio_exact(v));
}
