/* expr: parser and evaluator of the integer expression language (common/expr.h).
 *
 * expr_parse turns the text into a small tree by recursive descent, one
 * function per precedence level; every node remembers the 1-based column of
 * the token that made it, so evaluation errors can point into the text. The
 * text is limited to EXPR_MAX_TEXT characters and nesting (parentheses,
 * function arguments, prefix operators, ternary branches) to EXPR_MAX_DEPTH
 * levels, so hostile input ends in an error rather than a stack overflow.
 * Evaluation is in long long with every operation checked: overflow, division
 * and modulo by zero and unbound names are errors. && || and ?: short-circuit
 * as in C, so "n > 0 && m / n > 2" is safe; expr_check_names still visits
 * every branch.
 *
 * Ownership: the tree and the names in it belong to the caller (expr_free). */
#include "common/expr.h"

#include <ctype.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define EXPR_MAX_TEXT 4096
#define EXPR_MAX_DEPTH 64

typedef enum {
  T_END, T_INT, T_NAME, T_LP, T_RP, T_COMMA, T_QUEST, T_COLON,
  T_PLUS, T_MINUS, T_STAR, T_SLASH, T_PCT, T_NOT,
  T_EQ, T_NE, T_LT, T_LE, T_GT, T_GE, T_AND, T_OR
} tok_kind;

typedef enum { N_NUM, N_NAME, N_UNARY, N_BINARY, N_COND, N_CALL } node_kind;

typedef enum { F_MIN, F_MAX, F_CEIL_DIV } func_id;

struct expr {
  node_kind kind;
  int op;      /* tok_kind of an operator, func_id of a call */
  int col;     /* 1-based column of the token that made the node */
  long long num;
  char *name;
  int slot;    /* N_NAME: 1 + its index in expr_eval_slots' values; 0 until bound */
  struct expr *a, *b, *c;
};

static const struct {
  const char *name;
  func_id id;
  int arity;
} funcs[] = {{"min", F_MIN, 2}, {"max", F_MAX, 2}, {"ceil_div", F_CEIL_DIV, 2}};

/* ---------------------------------------------------------------- errors */

static void put_err(char *err, size_t errlen, int col, const char *fmt, va_list ap)
    __attribute__((format(printf, 4, 0)));
static void put_err(char *err, size_t errlen, int col, const char *fmt, va_list ap) {
  if (!err || errlen == 0) return;
  int n = snprintf(err, errlen, "column %d: ", col);
  if (n < 0 || (size_t)n >= errlen) return;
  vsnprintf(err + n, errlen - (size_t)n, fmt, ap);
}

static int eval_fail(char *err, size_t errlen, int col, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
static int eval_fail(char *err, size_t errlen, int col, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  put_err(err, errlen, col, fmt, ap);
  va_end(ap);
  return -1;
}

/* ---------------------------------------------------------------- lexer */

typedef struct parser {
  const char *text;
  size_t pos;      /* start of the next token to lex */
  tok_kind tok;    /* current token */
  size_t tok_start, tok_len;
  long long tok_val;
  int depth;
  int failed;      /* only the first error is kept: later ones are consequences */
  char *err;
  size_t errlen;
} parser;

static void *parse_fail(parser *p, int col, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
static void *parse_fail(parser *p, int col, const char *fmt, ...) {
  if (!p->failed) {
    va_list ap;
    va_start(ap, fmt);
    put_err(p->err, p->errlen, col, fmt, ap);
    va_end(ap);
    p->failed = 1;
  }
  return NULL;
}

static int tok_col(const parser *p) { return (int)p->tok_start + 1; }

/* "')'" or "end of text", for "found ..." messages. */
static const char *tok_desc(const parser *p, char *buf, size_t len) {
  if (p->tok == T_END) return "end of text";
  int n = p->tok_len > 32 ? 32 : (int)p->tok_len;
  snprintf(buf, len, "'%.*s'", n, p->text + p->tok_start);
  return buf;
}

static int lex_number(parser *p) {
  const char *s = p->text;
  size_t i = p->pos;
  long long v = 0;
  for (; isdigit((unsigned char)s[i]); i++) {
    if (__builtin_mul_overflow(v, 10, &v) || __builtin_add_overflow(v, s[i] - '0', &v)) {
      parse_fail(p, (int)p->pos + 1, "integer literal too large (the limit is %lld)", LLONG_MAX);
      return -1;
    }
  }
  if (isalpha((unsigned char)s[i]) || s[i] == '_') {
    parse_fail(p, (int)i + 1, "unexpected '%c' in a number", s[i]);
    return -1;
  }
  p->tok = T_INT;
  p->tok_val = v;
  p->tok_len = i - p->pos;
  return 0;
}

/* Operators of one or two characters; 0 when the text does not start with one. */
static int lex_operator(const char *s, tok_kind *kind) {
  static const struct {
    const char *text;
    tok_kind kind;
  } ops[] = {{"==", T_EQ}, {"!=", T_NE}, {"<=", T_LE}, {">=", T_GE}, {"&&", T_AND},
             {"||", T_OR}, {"<", T_LT},  {">", T_GT},  {"!", T_NOT}, {"+", T_PLUS},
             {"-", T_MINUS}, {"*", T_STAR}, {"/", T_SLASH}, {"%", T_PCT}, {"(", T_LP},
             {")", T_RP},  {",", T_COMMA}, {"?", T_QUEST}, {":", T_COLON}};
  for (size_t i = 0; i < sizeof ops / sizeof ops[0]; i++) {
    size_t n = strlen(ops[i].text);
    if (strncmp(s, ops[i].text, n) == 0) {
      *kind = ops[i].kind;
      return (int)n;
    }
  }
  return 0;
}

/* Advance to the next token; -1 on a character that starts none. */
static int next(parser *p) {
  const char *s = p->text;
  while (isspace((unsigned char)s[p->pos])) p->pos++;
  p->tok_start = p->pos;
  char c = s[p->pos];
  if (c == '\0') {
    p->tok = T_END;
    p->tok_len = 0;
    return 0;
  }
  if (isdigit((unsigned char)c)) {
    if (lex_number(p) < 0) return -1;
  } else if (isalpha((unsigned char)c) || c == '_') {
    size_t i = p->pos;
    while (isalnum((unsigned char)s[i]) || s[i] == '_') i++;
    p->tok = T_NAME;
    p->tok_len = i - p->pos;
  } else {
    int n = lex_operator(s + p->pos, &p->tok);
    if (n == 0) {
      const char *hint = c == '&' ? " (did you mean '&&'?)"
                         : c == '|' ? " (did you mean '||'?)"
                         : c == '=' ? " (did you mean '=='?)"
                                    : "";
      parse_fail(p, (int)p->pos + 1, "unexpected character '%c'%s", c, hint);
      return -1;
    }
    p->tok_len = (size_t)n;
  }
  p->pos += p->tok_len;
  return 0;
}

/* ---------------------------------------------------------------- tree */

static expr *node_new(parser *p, node_kind kind, int op, int col) {
  expr *n = calloc(1, sizeof *n);
  if (!n) return parse_fail(p, col, "out of memory");
  n->kind = kind;
  n->op = op;
  n->col = col;
  return n;
}

long long expr_nodes(const expr *e) {
  return e ? 1 + expr_nodes(e->a) + expr_nodes(e->b) + expr_nodes(e->c) : 0;
}

int expr_slots(const expr *e, unsigned char *used, int nslots) {
  if (!e) return 0;
  if (e->kind == N_NAME) {
    if (e->slot <= 0 || e->slot > nslots) return -1;
    used[e->slot - 1] = 1;
  }
  return expr_slots(e->a, used, nslots) || expr_slots(e->b, used, nslots) ||
                 expr_slots(e->c, used, nslots)
             ? -1
             : 0;
}

void expr_free(expr *e) {
  if (!e) return;
  expr_free(e->a);
  expr_free(e->b);
  expr_free(e->c);
  free(e->name);
  free(e);
}

/* ---------------------------------------------------------------- parser */

static expr *parse_cond(parser *p);
static expr *parse_unary(parser *p);

/* Entering a nested construct at column `col`; refuses the 65th level. */
static int enter(parser *p, int col) {
  if (++p->depth > EXPR_MAX_DEPTH) {
    parse_fail(p, col, "nested deeper than %d levels", EXPR_MAX_DEPTH);
    return -1;
  }
  return 0;
}

/* Consume the token that ends a construct opened at `open_col` ("to close '('"). */
static int expect(parser *p, tok_kind kind, const char *what, const char *opener, int open_col) {
  if (p->tok == kind) return next(p);
  char buf[48];
  parse_fail(p, tok_col(p), "expected %s %s at column %d, found %s", what, opener, open_col,
             tok_desc(p, buf, sizeof buf));
  return -1;
}

/* NAME '(' expr (',' expr)* ')' with the current token at '('. */
static expr *parse_call(parser *p, const char *name, int col) {
  size_t f = 0;
  while (f < sizeof funcs / sizeof funcs[0] && strcmp(funcs[f].name, name) != 0) f++;
  if (f == sizeof funcs / sizeof funcs[0])
    return parse_fail(p, col, "unknown function '%s' (known: min, max, ceil_div)", name);
  int open_col = tok_col(p);
  if (enter(p, open_col) < 0 || next(p) < 0) return NULL;
  expr *args[3] = {NULL, NULL, NULL};
  int nargs = 0;
  for (;;) {
    expr *a = parse_cond(p);
    if (!a) goto fail;
    if (nargs < 3) args[nargs] = a;
    else expr_free(a);
    nargs++;
    if (p->tok != T_COMMA) break;
    if (next(p) < 0) goto fail;
  }
  if (expect(p, T_RP, "')' or ','", "to close '('", open_col) < 0) goto fail;
  p->depth--;
  if (nargs != funcs[f].arity) {
    parse_fail(p, col, "function '%s' takes %d arguments, got %d", name, funcs[f].arity, nargs);
    goto fail;
  }
  expr *n = node_new(p, N_CALL, (int)funcs[f].id, col);
  if (!n) goto fail;
  n->a = args[0];
  n->b = args[1];
  return n;
fail:
  for (int i = 0; i < 3; i++) expr_free(args[i]);
  return NULL;
}

static expr *parse_name(parser *p) {
  int col = tok_col(p);
  char *name = strndup(p->text + p->tok_start, p->tok_len);
  if (!name) return parse_fail(p, col, "out of memory");
  expr *n = NULL;
  if (next(p) < 0) goto done;
  if (p->tok == T_LP) {
    n = parse_call(p, name, col);
    goto done;
  }
  n = node_new(p, N_NAME, 0, col);
  if (n) {
    n->name = name;
    name = NULL;
  }
done:
  free(name);
  return n;
}

static expr *parse_primary(parser *p) {
  int col = tok_col(p);
  if (p->tok == T_INT) {
    expr *n = node_new(p, N_NUM, 0, col);
    if (!n) return NULL;
    n->num = p->tok_val;
    if (next(p) < 0) {
      expr_free(n);
      return NULL;
    }
    return n;
  }
  if (p->tok == T_NAME) return parse_name(p);
  if (p->tok == T_LP) {
    if (enter(p, col) < 0 || next(p) < 0) return NULL;
    expr *n = parse_cond(p);
    if (!n || expect(p, T_RP, "')'", "to close '('", col) < 0) {
      expr_free(n);
      return NULL;
    }
    p->depth--;
    return n;
  }
  char buf[48];
  return parse_fail(p, col, "expected a number, a name or '(', found %s",
                    tok_desc(p, buf, sizeof buf));
}

static expr *parse_unary(parser *p) {
  if (p->tok != T_MINUS && p->tok != T_NOT && p->tok != T_PLUS) return parse_primary(p);
  int op = (int)p->tok, col = tok_col(p);
  if (enter(p, col) < 0 || next(p) < 0) return NULL;
  expr *operand = parse_unary(p);
  if (!operand) return NULL;
  p->depth--;
  if (op == T_PLUS) return operand;
  expr *n = node_new(p, N_UNARY, op, col);
  if (!n) {
    expr_free(operand);
    return NULL;
  }
  n->a = operand;
  return n;
}

/* Binary levels from loosest to tightest; each is left-associative. */
static const tok_kind levels[][5] = {
    {T_OR},         {T_AND},           {T_EQ, T_NE},
    {T_LT, T_LE, T_GT, T_GE},          {T_PLUS, T_MINUS},
    {T_STAR, T_SLASH, T_PCT},
};
#define NLEVELS ((int)(sizeof levels / sizeof levels[0]))

static int at_level(tok_kind tok, int level) {
  for (int i = 0; i < 5 && levels[level][i] != T_END; i++)
    if (levels[level][i] == tok) return 1;
  return 0;
}

static expr *parse_operand(parser *p, int level);

static expr *parse_binary(parser *p, int level) {
  expr *lhs = parse_operand(p, level + 1);
  while (lhs && at_level(p->tok, level)) {
    int op = (int)p->tok, col = tok_col(p);
    expr *rhs = next(p) < 0 ? NULL : parse_operand(p, level + 1);
    expr *n = rhs ? node_new(p, N_BINARY, op, col) : NULL;
    if (!n) {
      expr_free(lhs);
      expr_free(rhs);
      return NULL;
    }
    n->a = lhs;
    n->b = rhs;
    lhs = n;
  }
  return lhs;
}

static expr *parse_operand(parser *p, int level) {
  return level < NLEVELS ? parse_binary(p, level) : parse_unary(p);
}

/* cond := or ('?' expr ':' cond)? — right-associative through the recursion. */
static expr *parse_cond(parser *p) {
  expr *c = parse_binary(p, 0);
  if (!c || p->tok != T_QUEST) return c;
  int col = tok_col(p);
  expr *yes = NULL, *no = NULL;
  if (enter(p, col) < 0 || next(p) < 0) goto fail;
  if (!(yes = parse_cond(p))) goto fail;
  if (expect(p, T_COLON, "':'", "to match '?'", col) < 0) goto fail;
  if (!(no = parse_cond(p))) goto fail;
  p->depth--;
  expr *n = node_new(p, N_COND, 0, col);
  if (!n) goto fail;
  n->a = c;
  n->b = yes;
  n->c = no;
  return n;
fail:
  expr_free(c);
  expr_free(yes);
  expr_free(no);
  return NULL;
}

expr *expr_parse(const char *text, char *err, size_t errlen) {
  if (err && errlen) err[0] = '\0';
  parser p = {.text = text ? text : "", .err = err, .errlen = errlen};
  size_t len = strlen(p.text);
  if (len > EXPR_MAX_TEXT)
    return parse_fail(&p, EXPR_MAX_TEXT + 1, "expression longer than %d characters",
                      EXPR_MAX_TEXT);
  if (next(&p) < 0) return NULL;
  if (p.tok == T_END) return parse_fail(&p, tok_col(&p), "empty expression");
  expr *root = parse_cond(&p);
  if (root && p.tok != T_END) {
    char buf[48];
    parse_fail(&p, tok_col(&p), "unexpected %s after the expression", tok_desc(&p, buf, sizeof buf));
    expr_free(root);
    return NULL;
  }
  return root;
}

/* ---------------------------------------------------------------- evaluation */

typedef struct evalctx {
  expr_lookup_fn lookup;
  void *ctx;
  const long long *values; /* expr_eval_slots: names read from here, never looked up */
  char *err;
  size_t errlen;
} evalctx;

static const char *op_text(int op) {
  switch (op) {
  case T_PLUS: return "+";
  case T_MINUS: return "-";
  case T_STAR: return "*";
  case T_SLASH: return "/";
  case T_PCT: return "%";
  default: return "?";
  }
}

static int overflow(const evalctx *c, int col, const char *what) {
  return eval_fail(c->err, c->errlen, col, "overflow in '%s'", what);
}

/* Arithmetic and comparison of two evaluated operands (not && ||: they short-circuit). */
static int apply_binary(const evalctx *c, const expr *n, long long a, long long b, long long *out) {
  switch (n->op) {
  case T_PLUS:
    return __builtin_add_overflow(a, b, out) ? overflow(c, n->col, "+") : 0;
  case T_MINUS:
    return __builtin_sub_overflow(a, b, out) ? overflow(c, n->col, "-") : 0;
  case T_STAR:
    return __builtin_mul_overflow(a, b, out) ? overflow(c, n->col, "*") : 0;
  case T_SLASH:
  case T_PCT:
    if (b == 0)
      return eval_fail(c->err, c->errlen, n->col, "%s by zero",
                       n->op == T_SLASH ? "division" : "modulo");
    if (b == -1) { /* LLONG_MIN / -1 overflows, and C leaves LLONG_MIN % -1 undefined */
      if (n->op == T_PCT) return *out = 0, 0;
      if (a == LLONG_MIN) return overflow(c, n->col, op_text(n->op));
    }
    *out = n->op == T_SLASH ? a / b : a % b;
    return 0;
  case T_EQ: *out = a == b; return 0;
  case T_NE: *out = a != b; return 0;
  case T_LT: *out = a < b; return 0;
  case T_LE: *out = a <= b; return 0;
  case T_GT: *out = a > b; return 0;
  case T_GE: *out = a >= b; return 0;
  default: return eval_fail(c->err, c->errlen, n->col, "internal error: unknown operator");
  }
}

/* ceil(a / b) for any signs: C division truncates toward zero, so round up when the
 * exact quotient is positive and inexact. */
static int ceil_div(const evalctx *c, int col, long long a, long long b, long long *out) {
  if (b == 0) return eval_fail(c->err, c->errlen, col, "division by zero in 'ceil_div'");
  if (a == LLONG_MIN && b == -1) return overflow(c, col, "ceil_div");
  long long q = a / b, r = a % b;
  if (r != 0 && (r < 0) == (b < 0)) q++;
  *out = q;
  return 0;
}

static int eval_node(const expr *n, const evalctx *c, long long *out);

static int eval_call(const expr *n, const evalctx *c, long long *out) {
  long long a, b;
  if (eval_node(n->a, c, &a) < 0 || eval_node(n->b, c, &b) < 0) return -1;
  switch ((func_id)n->op) {
  case F_MIN: *out = a < b ? a : b; return 0;
  case F_MAX: *out = a > b ? a : b; return 0;
  case F_CEIL_DIV: return ceil_div(c, n->col, a, b, out);
  }
  return eval_fail(c->err, c->errlen, n->col, "internal error: unknown function");
}

static int eval_name(const expr *n, const evalctx *c, long long *out) {
  if (c->values && n->slot > 0) return *out = c->values[n->slot - 1], 0;
  if (c->lookup && c->lookup(c->ctx, n->name, out) == 0) return 0;
  return eval_fail(c->err, c->errlen, n->col, "unknown name '%s'", n->name);
}

static int eval_node(const expr *n, const evalctx *c, long long *out) {
  long long a, b;
  switch (n->kind) {
  case N_NUM: *out = n->num; return 0;
  case N_NAME: return eval_name(n, c, out);
  case N_CALL: return eval_call(n, c, out);
  case N_COND:
    if (eval_node(n->a, c, &a) < 0) return -1;
    return eval_node(a ? n->b : n->c, c, out);
  case N_UNARY:
    if (eval_node(n->a, c, &a) < 0) return -1;
    if (n->op == T_NOT) return *out = !a, 0;
    return __builtin_sub_overflow(0LL, a, out) ? overflow(c, n->col, "-") : 0;
  case N_BINARY:
    if (eval_node(n->a, c, &a) < 0) return -1;
    if (n->op == T_AND && !a) return *out = 0, 0;
    if (n->op == T_OR && a) return *out = 1, 0;
    if (eval_node(n->b, c, &b) < 0) return -1;
    if (n->op == T_AND || n->op == T_OR) return *out = b != 0, 0;
    return apply_binary(c, n, a, b, out);
  }
  return eval_fail(c->err, c->errlen, n->col, "internal error: unknown node");
}

int expr_eval(const expr *e, expr_lookup_fn lookup, void *ctx, long long *out, char *err,
              size_t errlen) {
  return expr_eval_slots(e, NULL, lookup, ctx, out, err, errlen);
}

int expr_eval_slots(const expr *e, const long long *values, expr_lookup_fn lookup, void *ctx,
                    long long *out, char *err, size_t errlen) {
  if (err && errlen) err[0] = '\0';
  if (!e) return eval_fail(err, errlen, 1, "no expression");
  evalctx c = {lookup, ctx, values, err, errlen};
  long long v;
  if (eval_node(e, &c, &v) < 0) return -1;
  *out = v;
  return 0;
}

/* Names in text order: children are stored left to right. */
static const expr *first_unbound(const expr *n, const evalctx *c) {
  if (!n) return NULL;
  long long ignored;
  if (n->kind == N_NAME && !(c->lookup && c->lookup(c->ctx, n->name, &ignored) == 0)) return n;
  const expr *hit = first_unbound(n->a, c);
  if (!hit) hit = first_unbound(n->b, c);
  if (!hit) hit = first_unbound(n->c, c);
  return hit;
}

int expr_check_names(const expr *e, expr_lookup_fn lookup, void *ctx, char *err, size_t errlen) {
  if (err && errlen) err[0] = '\0';
  evalctx c = {lookup, ctx, NULL, err, errlen};
  const expr *bad = first_unbound(e, &c);
  if (!bad) return 0;
  return eval_fail(err, errlen, bad->col, "unknown name '%s'", bad->name);
}

/* Every name's slot, children left to right; the first unknown one is returned. */
static const expr *bind(expr *n, int (*slot)(void *ctx, const char *name), void *ctx) {
  if (!n) return NULL;
  if (n->kind == N_NAME) {
    int i = slot(ctx, n->name);
    if (i < 0) return n;
    n->slot = i + 1;
  }
  const expr *bad = bind(n->a, slot, ctx);
  if (!bad) bad = bind(n->b, slot, ctx);
  if (!bad) bad = bind(n->c, slot, ctx);
  return bad;
}

int expr_bind_slots(expr *e, int (*slot)(void *ctx, const char *name), void *ctx, char *err,
                    size_t errlen) {
  if (err && errlen) err[0] = '\0';
  const expr *bad = bind(e, slot, ctx);
  return bad ? eval_fail(err, errlen, bad->col, "unknown name '%s'", bad->name) : 0;
}

/* ---------------------------------------------------------------- C source */

typedef struct cwriter {
  char *out;
  size_t len, used;
  int (*name)(void *ctx, const char *name, char *buf, size_t len);
  void *ctx;
  int bad;
} cwriter;

static void cw(cwriter *w, const char *text) {
  size_t n = strlen(text);
  if (w->bad || w->used + n >= w->len) {
    w->bad = 1;
    return;
  }
  memcpy(w->out + w->used, text, n + 1);
  w->used += n;
}

static const char *c_binary(int op) {
  switch (op) {
  case T_PLUS: return " + ";
  case T_MINUS: return " - ";
  case T_STAR: return " * ";
  case T_EQ: return " == ";
  case T_NE: return " != ";
  case T_LT: return " < ";
  case T_LE: return " <= ";
  case T_GT: return " > ";
  case T_GE: return " >= ";
  case T_AND: return " && ";
  case T_OR: return " || ";
  default: return NULL; /* / and %: calls */
  }
}

static void c_node(cwriter *w, const expr *n);

static void c_call(cwriter *w, const char *fn, int checked, const expr *a, const expr *b) {
  cw(w, fn);
  cw(w, checked ? "(ev, " : "(");
  c_node(w, a);
  cw(w, ", ");
  c_node(w, b);
  cw(w, ")");
}

static void c_node(cwriter *w, const expr *n) {
  char buf[64];
  switch (n->kind) {
  case N_NUM:
    snprintf(buf, sizeof buf, "%lldLL", n->num);
    cw(w, buf);
    return;
  case N_NAME:
    if (w->name(w->ctx, n->name, buf, sizeof buf) != 0) w->bad = 1;
    cw(w, buf);
    return;
  case N_CALL:
    c_call(w, n->op == F_MIN ? "tf_min" : n->op == F_MAX ? "tf_max" : "tf_ceil_div",
           n->op == F_CEIL_DIV, n->a, n->b);
    return;
  case N_COND:
    cw(w, "(");
    c_node(w, n->a);
    cw(w, " ? ");
    c_node(w, n->b);
    cw(w, " : ");
    c_node(w, n->c);
    cw(w, ")");
    return;
  case N_UNARY:
    cw(w, n->op == T_NOT ? "(!" : "(-");
    c_node(w, n->a);
    cw(w, ")");
    return;
  case N_BINARY:
    if (!c_binary(n->op)) {
      c_call(w, n->op == T_SLASH ? "tf_div" : "tf_mod", 1, n->a, n->b);
      return;
    }
    cw(w, "(");
    c_node(w, n->a);
    cw(w, c_binary(n->op));
    c_node(w, n->b);
    cw(w, ")");
    return;
  }
  w->bad = 1;
}

int expr_to_c(const expr *e, int (*name)(void *ctx, const char *name, char *buf, size_t len),
              void *ctx, char *out, size_t len) {
  cwriter w = {.out = out, .len = len, .name = name, .ctx = ctx};
  if (!out || len == 0) return -1;
  out[0] = '\0';
  c_node(&w, e);
  return w.bad ? -1 : 0;
}
