/* escape: one rule per output language for text that comes from a file.
 *
 * A ledger's strings (a device's name, a host, a campaign, a reason, a knob's name, a path)
 * are whatever the file holds: any bytes but NUL. Every writer of a language prints such text
 * through that language's rule here, so the rule is written, reviewed and tested once.
 *
 * Common to every rule: the output is valid UTF-8 whatever the input (a byte that starts no
 * valid sequence, an overlong form, a surrogate or a value past U+10FFFF is written as U+FFFD,
 * one per byte), and no control character (C0, DEL, C1) is written raw, so nothing read from
 * a file can end a line, a row or a cell early or reach the terminal that shows the output.
 * A NULL text is written as the empty text. Each rule writes to f and reports nothing: the
 * caller checks ferror(f) once, where it checks the rest of its output. */
#ifndef TF_ESCAPE_H
#define TF_ESCAPE_H

#include <stdio.h>

/* HTML text and quoted attribute values: & < > " ' as character references, so nothing can
 * open a tag, a comment or end a quote; a newline and a tab as &#10; and &#9;, any other
 * control character as &#65533; (HTML has no reference for them). */
void escape_html(FILE *f, const char *s);

/* Markdown text outside code spans, in a paragraph, a list item, a heading or a table cell:
 * what could start markup is disarmed and renders as itself. '|' (a cell's end), '`', '*',
 * '\' and '~' get a backslash; '_' too unless between letters or digits (no emphasis can
 * start there); ']' before '(', '[', ':' (a link) or at the end too; '<' as &lt; unless a
 * space, '=' or a digit follows it (a comparison or a template argument, never a tag, a
 * comment or an autolink), '>' as &gt; unless a space, '=' or a digit precedes it; '&' as
 * &amp; before a letter, a digit, '#' (a character reference) or at the end. A control character
 * is written as a C escape ("\n", "\t", "\x1b", "\u009b"): the line, and so the row, goes on
 * and shows what was there. */
void escape_markdown(FILE *f, const char *s);

/* One CSV field (RFC 4180) that a spreadsheet must show as text: a field whose text starts
 * with '=', '+', '-', '@', a tab or a carriage return gets a leading '\'' (a spreadsheet
 * would run it as a formula); a field holding a comma or a double quote is quoted, its
 * double quotes doubled. Control characters are written as C escapes (as escape_markdown's),
 * so a field never holds a line break and a row is one line. Numbers are not text: the
 * writer prints them as numbers, never through this rule. */
void escape_csv_cell(FILE *f, const char *s);

/* JSON text as cJSON prints it, made valid UTF-8: invalid bytes as U+FFFD; DEL, the C1
 * controls and U+2028, U+2029 (which end a line in JavaScript) as \u escapes. Only a
 * string can hold any of them in printed JSON, and there each escape means the character,
 * so the JSON keeps its meaning. cJSON itself escapes quotes, backslashes and C0. */
void escape_json(FILE *f, const char *json);

#endif
