/* report: `tunefarm report LEDGER|DIR ...` turns ledgers into Markdown on stdout.
 *
 * One section per ledger (one ledger = one device in one campaign): the
 * generations that kept a change, counts of the other decisions with their
 * commonest reasons, the final best and how the search ended. With several
 * ledgers, a side-by-side table follows, one row per ledger: devices are
 * compared, never pooled into one statistic. Ledgers of the same device are
 * listed separately too. Folders are searched recursively for *.jsonl, in
 * sorted order. Bad input (a missing file, not a ledger, a corrupt line) is one
 * message on stderr naming the file and the line, and exit status 2; a torn
 * last line is skipped with a note on stderr. */
#ifndef TF_REPORT_H
#define TF_REPORT_H

/* argv[0] is the command's name ("report"); the arguments follow. Returns the exit status. */
int report_main(int argc, char **argv);

#endif
