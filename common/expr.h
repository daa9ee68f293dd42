/* expr: the small integer expression language of templates and campaigns.
 *
 * Grammar (C precedence and associativity; all arithmetic in long long):
 *   expr    := cond
 *   cond    := or ('?' expr ':' cond)?
 *   or      := and ('||' and)*        and := eq ('&&' eq)*
 *   eq      := rel (('=='|'!=') rel)* rel := add (('<'|'<='|'>'|'>=') add)*
 *   add     := mul (('+'|'-') mul)*   mul := unary (('*'|'/'|'%') unary)*
 *   unary   := ('-'|'!'|'+') unary | primary
 *   primary := INT | NAME | NAME '(' expr (',' expr)* ')' | '(' expr ')'
 * Functions: min(a,b), max(a,b), ceil_div(a,b). Names are [A-Za-z_][A-Za-z0-9_]*
 * and are bound at evaluation time by a lookup callback (knobs, problem sizes).
 * Comparisons and logic yield 0 or 1. Division or modulo by zero, overflow
 * and unknown names are evaluation errors, never undefined behaviour.
 *
 * Errors are written into `err` (at most `errlen` bytes) as
 * "column N: what went wrong" (1-based column into the text); the caller adds
 * the file and the key. The parsed tree is owned by the caller: expr_free. */
#ifndef TF_EXPR_H
#define TF_EXPR_H

#include <stddef.h>

typedef struct expr expr;

/* Bind `name` to a value: return 0 and set *out, or -1 if the name is unknown. */
typedef int (*expr_lookup_fn)(void *ctx, const char *name, long long *out);

/* Parse `text` into a tree; returns NULL and fills err on a syntax error. */
expr *expr_parse(const char *text, char *err, size_t errlen);

/* Evaluate; returns 0 and sets *out, or -1 with err filled ("column N: unknown name 'X'",
 * "column N: division by zero", "column N: overflow"). */
int expr_eval(const expr *e, expr_lookup_fn lookup, void *ctx, long long *out, char *err,
              size_t errlen);

/* Check that every name in the tree is bound by `lookup` (values are ignored);
 * returns 0, or -1 naming the first unbound name and its column. Lets loaders
 * reject a misspelt knob before anything is enumerated. */
int expr_check_names(const expr *e, expr_lookup_fn lookup, void *ctx, char *err, size_t errlen);

/* Nodes in the tree: the most work one evaluation can do, for limits on enumerations. */
long long expr_nodes(const expr *e);

/* Mark used[i] for every slot i (0 <= i < nslots) that a name of the tree is bound to by
 * expr_bind_slots: what its value can depend on. Returns 0, or -1 when a name is not bound
 * to such a slot (its value may then depend on anything). */
int expr_slots(const expr *e, unsigned char *used, int nslots);

/* Bind every name of the tree to a slot once: slot(ctx, name) returns its index in the values
 * expr_eval_slots will be given, or -1 for an unknown name (returns -1 naming it, as
 * expr_check_names does). Evaluating then reads values[slot] where expr_eval would call a
 * lookup that compares names: an enumeration of 2^24 configurations evaluates names
 * billions of times. */
int expr_bind_slots(expr *e, int (*slot)(void *ctx, const char *name), void *ctx, char *err,
                    size_t errlen);

/* expr_eval where the names bound by expr_bind_slots read values[slot]; any other name
 * goes through lookup as in expr_eval. */
int expr_eval_slots(const expr *e, const long long *values, expr_lookup_fn lookup, void *ctx,
                    long long *out, char *err, size_t errlen);

/* The expression as C source, fully parenthesised, for code that evaluates it without this
 * library (`tunefarm export`): `name` writes the C text of each name into buf (a constant for
 * a knob, a variable for a problem size) or returns -1 for an unknown one. Division, modulo
 * and ceil_div become calls tf_div(ev, a, b), tf_mod(ev, a, b), tf_ceil_div(ev, a, b) and
 * min/max become tf_min(a, b), tf_max(a, b): the generated code defines them, with `ev`
 * recording a zero divisor so that the caller refuses what expr_eval would. Returns 0, or -1
 * for an unknown name or when out (len bytes) is too small. */
int expr_to_c(const expr *e, int (*name)(void *ctx, const char *name, char *buf, size_t len),
              void *ctx, char *out, size_t len);

void expr_free(expr *e);

#endif
