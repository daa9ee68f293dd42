/* numfmt: printing a double as printf's "%.Pg" does, faster.
 *
 * numfmt_g writes exactly the text snprintf(buf, NUMFMT_MAX, "%.*g", precision, v) writes in
 * the C locale, for precisions 1 to 17, and returns its length. glibc's printf works each
 * digit out in multi-precision arithmetic (a few thousand instructions per number); the farm
 * prints every measured value of every round this way, in the measure child, and again in
 * the coordinator's records, so this was a large part of their time per decision
 * (docs/design.md, "The coordinator's ceiling"). For finite values with
 * 1e-6 <= |v| < 1e17, the range of the farm's times and ratios, it rounds v's exact binary
 * value to P significant digits in 128-bit integer arithmetic, ties to even as printf does;
 * anything else (zero, subnormal, tiny, huge, NaN, infinities) goes to snprintf.
 * tests/unit/test_numfmt.c holds it to snprintf on random and tie-breaking values. */
#ifndef TF_NUMFMT_H
#define TF_NUMFMT_H

#define NUMFMT_MAX 32

int numfmt_g(char *buf, double v, int precision);

/* What snprintf(buf, NUMFMT_MAX, "%lld", v) writes, and its length: the coordinator names a
 * kernel by its knobs' values for every guess it lists to compile ahead, dozens of names per
 * decision, and printf's parsing of its format was most of the guesses' instructions. */
int numfmt_lld(char *buf, long long v);

#endif
