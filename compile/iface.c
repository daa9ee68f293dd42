#include "compile/iface.h"

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---------------------------------------------------------------- the demangler */

#define IFACE_MAX_SUBS 64
#define IFACE_MAX_TARGS 32

typedef struct dm {
  const char *s, *p;         /* the mangled name and the place being read */
  iface_type subs[IFACE_MAX_SUBS];
  int nsubs;
  iface_type targs[IFACE_MAX_TARGS]; /* the function's template arguments, for T_ */
  int ntargs;
  char *err;
  size_t errlen;
} dm;

static int dm_fail(dm *d, const char *why) {
  snprintf(d->err, d->errlen, "%s at offset %d of '%s'", why, (int)(d->p - d->s), d->s);
  return -1;
}

static void add_sub(dm *d, const iface_type *t) {
  if (d->nsubs < IFACE_MAX_SUBS) d->subs[d->nsubs++] = *t;
}

static int append(dm *d, char *dst, const char *src, size_t n) {
  size_t have = strlen(dst);
  if (have + n >= IFACE_TYPE) return dm_fail(d, "a name too long");
  memcpy(dst + have, src, n);
  dst[have + n] = '\0';
  return 0;
}

static const char *builtin(char c) {
  switch (c) {
    case 'v': return "void";
    case 'b': return "bool";
    case 'c': return "char";
    case 'a': return "signed char";
    case 'h': return "unsigned char";
    case 's': return "short";
    case 't': return "unsigned short";
    case 'i': return "int";
    case 'j': return "unsigned int";
    case 'l': return "long";
    case 'm': return "unsigned long";
    case 'x': return "long long";
    case 'y': return "unsigned long long";
    case 'n': return "__int128";
    case 'o': return "unsigned __int128";
    case 'f': return "float";
    case 'd': return "double";
    case 'e': return "long double";
    case 'w': return "wchar_t";
    default: return NULL;
  }
}

/* <number>, or <seq-id> (base 36, digits and capitals) when base36. */
static int number(dm *d, int base36, long *out) {
  long v = 0;
  int any = 0;
  for (;; d->p++, any = 1) {
    int c = (unsigned char)*d->p, digit;
    if (isdigit(c)) digit = c - '0';
    else if (base36 && isupper(c)) digit = c - 'A' + 10;
    else break;
    if (v > 100000) return dm_fail(d, "a number too large");
    v = v * (base36 ? 36 : 10) + digit;
  }
  if (!any) return dm_fail(d, "a number expected");
  *out = v;
  return 0;
}

/* <source-name> ::= <length> <identifier>, appended to dst. */
static int source_name(dm *d, char *dst) {
  long n;
  if (number(d, 0, &n)) return -1;
  if (n <= 0 || (long)strnlen(d->p, (size_t)n) < n) return dm_fail(d, "a name runs past the end");
  if (append(d, dst, d->p, (size_t)n)) return -1;
  d->p += n;
  return 0;
}

/* S_, S<seq-id>_, St (std::): the substitution's type into t. */
static int substitution(dm *d, iface_type *t) {
  d->p++; /* S */
  long i = 0;
  if (*d->p == 't') {
    d->p++;
    memset(t, 0, sizeof *t);
    strcpy(t->base, "std::");
    return source_name(d, t->base);
  }
  if (*d->p != '_') {
    if (number(d, 1, &i)) return dm_fail(d, "a substitution this parser does not read");
    i++;
  }
  if (*d->p != '_') return dm_fail(d, "a substitution without its '_'");
  d->p++;
  if (i >= d->nsubs) return dm_fail(d, "a substitution of nothing seen");
  *t = d->subs[i];
  return 0;
}

/* T_, T<n>_: the function's template argument. */
static int template_param(dm *d, iface_type *t) {
  d->p++; /* T */
  long i = 0;
  if (*d->p != '_') {
    if (number(d, 0, &i)) return -1;
    i++;
  }
  if (*d->p != '_') return dm_fail(d, "a template parameter without its '_'");
  d->p++;
  if (i >= d->ntargs) return dm_fail(d, "a template parameter of no argument");
  *t = d->targs[i];
  add_sub(d, t);
  return 0;
}

static int type(dm *d, iface_type *t);

/* <template-args> ::= I <template-arg>+ E; each type argument kept in keep (may be NULL) and
 * counted in *n. The text appended to dst as "<...>". */
static int template_args(dm *d, iface_type *keep, int *n, char *dst) {
  d->p++; /* I */
  *n = 0;
  if (dst && append(d, dst, "<", 1)) return -1;
  while (*d->p != 'E') {
    iface_type a = {0};
    if (*d->p == '\0') return dm_fail(d, "template arguments without their 'E'");
    if (*d->p == 'L') { /* L <type> <value> E */
      d->p++;
      if (*d->p == '_') return dm_fail(d, "a template argument naming an entity");
      if (type(d, &a)) return -1;
      const char *v = d->p;
      while (*d->p && *d->p != 'E') d->p++;
      if (*d->p != 'E') return dm_fail(d, "a literal without its 'E'");
      snprintf(a.base, sizeof a.base, "%.*s", (int)(d->p - v), v);
      if (a.base[0] == 'n') a.base[0] = '-';
      d->p++;
    } else if (*d->p == 'X' || *d->p == 'J') {
      return dm_fail(d, "a template argument expression or pack");
    } else if (type(d, &a)) {
      return -1;
    }
    if (keep && *n < IFACE_MAX_TARGS) keep[*n] = a;
    if (dst && ((*n && append(d, dst, ", ", 2)) || append(d, dst, a.base, strlen(a.base))))
      return -1;
    ++*n;
  }
  d->p++;
  return dst ? append(d, dst, ">", 1) : 0;
}

/* N [<CV-qualifiers>] <prefix> <unqualified-name> [<template-args>] E, qualified into t->base.
 * Each prefix is a substitution candidate; of the whole name, only a type's (is_type). With
 * targs (the function's name), its template arguments go there and *ntargs counts them. */
static int nested_name(dm *d, iface_type *t, int is_type, int *ntargs) {
  d->p++; /* N */
  while (*d->p == 'r' || *d->p == 'V' || *d->p == 'K') d->p++; /* a member function's cv */
  memset(t, 0, sizeof *t);
  int parts = 0, subst = 0; /* subst: the prefix so far is a substitution, a candidate already */
  while (*d->p != 'E') {
    int was_subst = subst;
    subst = *d->p == 'S';
    if (parts && *d->p != 'I' && !was_subst) add_sub(d, t); /* the prefix so far */
    if (*d->p == 'S') {
      if (parts) return dm_fail(d, "a substitution inside a nested name");
      if (substitution(d, t)) return -1;
    } else if (isdigit((unsigned char)*d->p)) {
      if ((parts && append(d, t->base, "::", 2)) || source_name(d, t->base)) return -1;
    } else if (*d->p == 'I') {
      if (!parts) return dm_fail(d, "template arguments of nothing");
      if (!was_subst) add_sub(d, t); /* the template's name */
      int n, fn = !is_type && ntargs; /* the function's own: the last part's */
      if (template_args(d, fn ? d->targs : NULL, &n, t->base)) return -1;
      if (fn) *ntargs = n, d->ntargs = n < IFACE_MAX_TARGS ? n : IFACE_MAX_TARGS;
    } else {
      return dm_fail(d, "a nested name part this parser does not read");
    }
    parts++;
  }
  d->p++;
  if (!parts) return dm_fail(d, "an empty nested name");
  if (is_type) add_sub(d, t);
  return 0;
}

/* A class type: <source-name> [<template-args>] (e.g. 6__half, 6float4). */
static int class_type(dm *d, iface_type *t) {
  memset(t, 0, sizeof *t);
  if (source_name(d, t->base)) return -1;
  if (*d->p == 'I') {
    add_sub(d, t);
    int n;
    if (template_args(d, NULL, &n, t->base)) return -1;
  }
  add_sub(d, t);
  return 0;
}

static int type(dm *d, iface_type *t) {
  const char *b = builtin(*d->p);
  if (b) {
    memset(t, 0, sizeof *t);
    snprintf(t->base, sizeof t->base, "%s", b);
    d->p++;
    return 0;
  }
  switch (*d->p) {
    case 'P': {
      d->p++;
      if (type(d, t)) return -1;
      t->pointers++;
      add_sub(d, t);
      return 0;
    }
    case 'r':
    case 'V':
    case 'K': {
      int is_const = 0;
      for (; *d->p == 'r' || *d->p == 'V' || *d->p == 'K'; d->p++) is_const |= *d->p == 'K';
      if (type(d, t)) return -1;
      if (t->pointers == 0) t->is_const |= is_const; /* a const pointer's constness is its own */
      add_sub(d, t);
      return 0;
    }
    case 'S': {
      int std = d->p[1] == 't', n;
      if (substitution(d, t)) return -1;
      if (*d->p == 'I') { /* a template named by a substitution, with its arguments */
        if (template_args(d, NULL, &n, t->base)) return -1;
        std = 1;
      }
      if (std) add_sub(d, t);
      return 0;
    }
    case 'T': return template_param(d, t);
    case 'N': return nested_name(d, t, 1, NULL);
    default:
      if (isdigit((unsigned char)*d->p)) return class_type(d, t);
      return dm_fail(d, "a type this parser does not read");
  }
}

int iface_demangle(const char *mangled, iface_sig *out, char *err, size_t errlen) {
  dm *d = calloc(1, sizeof *d);
  if (!d) return snprintf(err, errlen, "out of memory"), -1;
  d->s = d->p = mangled;
  d->err = err, d->errlen = errlen;
  memset(out, 0, sizeof *out);
  out->ntargs = -1;
  int rc = 0;
  iface_type name = {0};
  if (strncmp(mangled, "_Z", 2) != 0) {
    rc = dm_fail(d, "not an Itanium-mangled name");
  } else {
    d->p += 2;
    if (*d->p == 'N') {
      rc = nested_name(d, &name, 0, &out->ntargs);
    } else if (isdigit((unsigned char)*d->p)) {
      rc = source_name(d, name.base);
      if (rc == 0 && *d->p == 'I') {
        add_sub(d, &name); /* an unscoped template's name */
        rc = template_args(d, d->targs, &out->ntargs, NULL);
        d->ntargs = out->ntargs < IFACE_MAX_TARGS ? out->ntargs : IFACE_MAX_TARGS;
      }
    } else {
      rc = dm_fail(d, "a function name this parser does not read");
    }
  }
  snprintf(out->name, sizeof out->name, "%s", name.base);
  iface_type ret;
  if (rc == 0 && out->ntargs >= 0) rc = type(d, &ret); /* a template's return type */
  if (rc == 0 && *d->p == '\0') rc = dm_fail(d, "no parameter types");
  if (rc == 0 && d->p[0] == 'v' && d->p[1] == '\0') d->p++; /* (void) */
  while (rc == 0 && *d->p) {
    if (out->nparams == IFACE_MAX_PARAMS) rc = dm_fail(d, "too many parameters");
    else rc = type(d, &out->params[out->nparams++]);
  }
  free(d);
  return rc;
}

void iface_type_str(const iface_type *t, char *buf, size_t len) {
  int n = snprintf(buf, len, "%s%s%s", t->is_const ? "const " : "", t->base, t->pointers ? " " : "");
  for (int i = 0; i < t->pointers && n >= 0 && (size_t)n + 1 < len; i++) buf[n++] = '*', buf[n] = '\0';
}

/* ---------------------------------------------------------------- the comparison */

/* What a buffer or typed scalar of reference_type t may be in C, "" ending each list: its
 * element type, then (for buffers only, after the first "") the CUDA vectors of it. */
static const char *const *type_names(int t) {
  static const char *const names[REFERENCE_NTYPES][8] = {
      [REFERENCE_F32] = {"float", "", "float1", "float2", "float3", "float4", ""},
      [REFERENCE_F64] = {"double", "", "double1", "double2", "double3", "double4", ""},
      [REFERENCE_F16] = {"__half", "", "__half2", ""},
      [REFERENCE_BF16] = {"__nv_bfloat16", "", "__nv_bfloat162", ""},
      [REFERENCE_I8] = {"signed char", "char", "", "char2", "char4", ""},
      [REFERENCE_U8] = {"unsigned char", "char", "", "uchar2", "uchar4", ""},
      [REFERENCE_I32] = {"int", "", "int2", "int4", ""},
      [REFERENCE_U32] = {"unsigned int", "", "uint2", "uint4", ""},
      [REFERENCE_I64] = {"long long", "long", "", "longlong2", "long2", ""},
  };
  return names[t];
}

/* 1 when base is one of t's names (buffer: the vectors too). */
static int type_fits(int t, const char *base, int buffer) {
  const char *const *n = type_names(t);
  int i = 0;
  for (; n[i][0]; i++)
    if (!strcmp(n[i], base)) return 1;
  for (i++; buffer && n[i][0]; i++)
    if (!strcmp(n[i], base)) return 1;
  return 0;
}

static int one_of(const char *base, const char *const *names) {
  for (; *names; names++)
    if (!strcmp(*names, base)) return 1;
  return 0;
}

static const char *role_name(int role) {
  static const char *const r[] = {"input", "output", "inout", "scratch"};
  return role >= 0 && role < 4 ? r[role] : "?";
}

/* What the spec passes as argument a, for messages. */
static void arg_str(const spec *s, const spec_arg *a, char *buf, size_t len) {
  if (a->kind == SPEC_ARG_TMAP) {
    snprintf(buf, len, "tensor map '%s' of buffer '%s' (a CUtensorMap by value)", a->name,
             s->bufs[a->buffer].name);
  } else if (a->kind == SPEC_ARG_BUFFER) {
    const spec_buffer *b = &s->bufs[a->buffer];
    snprintf(buf, len, "buffer '%s' of type %s (role %s)", b->name, reference_type_name(b->type),
             role_name(b->role));
  } else if (a->type >= 0) {
    snprintf(buf, len, "scalar '%s' of type %s", a->name, reference_type_name(a->type));
  } else if (a->kind == SPEC_ARG_FLOAT) {
    snprintf(buf, len, "{\"float\": %g} (a float or double)", a->f);
  } else {
    snprintf(buf, len, "the integer '%s' (an int or long long)", a->text);
  }
}

/* Whether parameter p takes argument a; *why says what else is wrong where it does not. */
static int arg_fits(const spec *s, const spec_arg *a, const iface_type *p, const char **why) {
  static const char *const ints[] = {"int", "unsigned int", "long", "unsigned long",
                                     "long long", "unsigned long long", NULL};
  static const char *const floats[] = {"float", "double", NULL};
  *why = "";
  if (a->kind == SPEC_ARG_BUFFER) {
    const spec_buffer *b = &s->bufs[a->buffer];
    if (p->pointers != 1) return 0;
    if (p->is_const && b->role != SPEC_ROLE_INPUT) {
      *why = ", which the kernel writes: a const pointer is for an input";
      return 0;
    }
    return !strcmp(p->base, "void") || type_fits(b->type, p->base, 1);
  }
  if (p->pointers) return 0;
  if (a->kind == SPEC_ARG_TMAP) /* a struct by value: CUtensorMap, or the template's own */
    return !one_of(p->base, ints) && !one_of(p->base, floats) && strcmp(p->base, "void") &&
           !type_fits(REFERENCE_F16, p->base, 0) && !type_fits(REFERENCE_BF16, p->base, 0) &&
           strcmp(p->base, "char") && strcmp(p->base, "bool");
  if (a->type >= 0) return type_fits(a->type, p->base, 0);
  return one_of(p->base, a->kind == SPEC_ARG_FLOAT ? floats : ints);
}

static void params_str(const iface_sig *sig, char *buf, size_t len) {
  size_t n = 0;
  buf[0] = '\0';
  for (int i = 0; i < sig->nparams && n + 1 < len; i++) {
    char t[IFACE_TYPE + 40];
    iface_type_str(&sig->params[i], t, sizeof t);
    n += (size_t)snprintf(buf + n, len - n, "%s%s", i ? ", " : "", t);
  }
}

static void knobs_str(const spec *s, char *buf, size_t len) {
  size_t n = 0;
  buf[0] = '\0';
  for (int k = 0; k < s->nknobs && n + 1 < len; k++)
    n += (size_t)snprintf(buf + n, len - n, "%s%s", k ? ", " : "", s->knobs[k].name);
}

int iface_check(const spec *s, const iface_sig *sig, const char *kernel, int reference, tf_err *e) {
  char list[600];
  const char *who = reference ? "reference kernel" : "kernel";
  int want = reference ? 0 : s->nknobs, got = sig->ntargs < 0 ? 0 : sig->ntargs;
  if (got != want) {
    knobs_str(s, list, sizeof list);
    return tf_fail(e, TF_EXIT_INPUT, "spec '%s': key '%s': %s '%s' takes %d template "
                   "parameters, the spec lists %d knobs%s%s%s", s->path,
                   reference ? "reference.kernel" : "knobs", who, kernel, got, want,
                   want ? " (" : "", list, want ? ")" : "");
  }
  /* a reference kernel takes the arguments but the tensor maps: arg[i] is its i-th */
  int arg[SPEC_MAX_ARGS], n = 0;
  for (int a = 0; a < s->nargs; a++)
    if (!reference || s->args[a].kind != SPEC_ARG_TMAP) arg[n++] = a;
  if (sig->nparams != n) {
    params_str(sig, list, sizeof list);
    return tf_fail(e, TF_EXIT_INPUT, "spec '%s': key 'args': %s '%s' takes %d parameters (%s), "
                   "the spec passes %d arguments%s", s->path, who, kernel, sig->nparams, list, n,
                   n < s->nargs ? " (its tensor maps are not a reference's)" : "");
  }
  for (int i = 0; i < n; i++) {
    const char *why;
    const int a = arg[i];
    if (arg_fits(s, &s->args[a], &sig->params[i], &why)) continue;
    char t[IFACE_TYPE + 40], what[200];
    iface_type_str(&sig->params[i], t, sizeof t);
    arg_str(s, &s->args[a], what, sizeof what);
    return tf_fail(e, TF_EXIT_INPUT, "spec '%s': key 'args[%d]': %s '%s' takes '%s', the spec "
                   "passes %s%s", s->path, a, who, kernel, t, what, why);
  }
  return 0;
}

/* ---------------------------------------------------------------- template parameter names */

/* The source with comments, string and character literals and preprocessor lines blanked
 * (spaces), so that only code is searched. */
static void blank_noncode(char *t) {
  int line_start = 1;
  for (char *p = t; *p;) {
    if (line_start && (*p == ' ' || *p == '\t')) { p++; continue; }
    if (line_start && *p == '#') { /* a directive, with its continuation lines */
      for (; *p && !(*p == '\n' && p[-1] != '\\'); p++) *p = ' ';
      continue;
    }
    line_start = *p == '\n';
    if (p[0] == '/' && p[1] == '/') {
      for (; *p && *p != '\n'; p++) *p = ' ';
    } else if (p[0] == '/' && p[1] == '*') {
      char *end = strstr(p + 2, "*/");
      char *stop = end ? end + 2 : p + strlen(p);
      for (; p < stop; p++)
        if (*p != '\n') *p = ' ';
    } else if (*p == '"' || *p == '\'') {
      char q = *p;
      for (*p++ = ' '; *p && *p != q && *p != '\n'; p++) {
        if (*p == '\\' && p[1]) *p++ = ' ';
        *p = ' ';
      }
      if (*p == q) *p++ = ' ';
    } else {
      p++;
    }
  }
}

static int ident_char(char c) { return isalnum((unsigned char)c) || c == '_'; }

/* The last identifier of one template parameter (its text from b to end, without a default),
 * or "" when it names none (`int`, `typename`). */
static void param_name(const char *b, const char *end, char *out, size_t len) {
  static const char *const keywords[] = {"int", "unsigned", "long", "short", "char", "bool",
                                         "typename", "class", "signed", "size_t", NULL};
  const char *eq = memchr(b, '=', (size_t)(end - b));
  if (eq) end = eq;
  while (end > b && !ident_char(end[-1])) end--;
  const char *start = end;
  while (start > b && ident_char(start[-1])) start--;
  out[0] = '\0';
  if (end == start || isdigit((unsigned char)*start) || (size_t)(end - start) >= len) return;
  snprintf(out, len, "%.*s", (int)(end - start), start);
  if (one_of(out, keywords)) out[0] = '\0';
}

/* The names in the template parameter list that starts at lt ('<'); their number, 0 when one
 * is unnamed or the list does not close. */
static int parse_params(const char *lt, char (*names)[SPEC_NAME], int max) {
  int angles = 0, parens = 0, n = 0;
  const char *b = lt + 1;
  for (const char *p = lt; *p; p++) {
    if (*p == '(') parens++;
    else if (*p == ')') parens--;
    else if (parens == 0 && *p == '<') angles++;
    else if (parens == 0 && *p == '>') angles--;
    if (parens == 0 && ((*p == ',' && angles == 1) || angles == 0)) {
      if (n == max) return 0;
      param_name(b, p, names[n], SPEC_NAME);
      if (!names[n++][0]) return 0;
      b = p + 1;
      if (angles == 0) return n;
    }
  }
  return 0;
}

/* The declaration of `kernel` at name (the start of the name, followed by '('): the template
 * parameter names of its `template <...>` when it is a __global__ template. */
static int params_at(const char *text, const char *name, char (*names)[SPEC_NAME], int max) {
  const char *d = name;
  while (d > text && !strchr(";{}", d[-1])) d--; /* the declaration's start */
  while (isspace((unsigned char)*d)) d++;
  size_t span = (size_t)(name - d);
  char *decl = strndup(d, span);
  if (!decl) return 0;
  int n = 0;
  if (strstr(decl, "__global__") && !strncmp(decl, "template", 8) && !ident_char(decl[8])) {
    const char *lt = strchr(decl, '<');
    if (lt) n = parse_params(lt, names, max);
  }
  free(decl);
  return n;
}

int iface_template_params(const char *path, const char *kernel, char (*names)[SPEC_NAME],
                          int max, tf_err *e) {
  FILE *f = fopen(path, "rb");
  if (!f) return tf_fail(e, TF_EXIT_INPUT, "kernel source '%s' cannot be read", path);
  char *text = NULL;
  size_t len = 0, cap = 0, got;
  char chunk[8192];
  while ((got = fread(chunk, 1, sizeof chunk, f)) > 0) {
    if (len + got + 1 > cap) {
      char *t = realloc(text, cap = 2 * (len + got + 1));
      if (!t) {
        free(text);
        fclose(f);
        return tf_fail(e, TF_EXIT_FAIL, "out of memory reading '%s'", path);
      }
      text = t;
    }
    memcpy(text + len, chunk, got);
    len += got;
  }
  fclose(f);
  if (!text) return 0;
  text[len] = '\0';
  blank_noncode(text);
  const char *base = strrchr(kernel, ':') ? strrchr(kernel, ':') + 1 : kernel;
  size_t bl = strlen(base);
  int n = 0;
  for (const char *p = text; !n && (p = strstr(p, base)) != NULL; p += bl) {
    if ((p > text && ident_char(p[-1])) || ident_char(p[bl])) continue;
    const char *q = p + bl;
    while (isspace((unsigned char)*q)) q++;
    if (*q == '(') n = params_at(text, p, names, max);
  }
  free(text);
  return n;
}

int iface_check_knob_names(const spec *s, char (*names)[SPEC_NAME], int n, tf_err *e) {
  int same = n == s->nknobs;
  for (int k = 0; same && k < n; k++) same = !strcmp(names[k], s->knobs[k].name);
  if (same) return 0;
  char knobs[600], params[600];
  size_t at = 0;
  knobs_str(s, knobs, sizeof knobs);
  params[0] = '\0';
  for (int k = 0; k < n && at + 1 < sizeof params; k++)
    at += (size_t)snprintf(params + at, sizeof params - at, "%s%s", k ? ", " : "", names[k]);
  return tf_fail(e, TF_EXIT_INPUT, "spec '%s': key 'knobs': the kernel '%s' in '%s' declares "
                 "the template parameters (%s), the spec's knobs are (%s): the knobs must be "
                 "the template parameters, in the same order", s->path, s->kernel,
                 s->source_path, params, knobs);
}
