#!/usr/bin/env bash
# `report --html FILE` replaces FILE whole, so it never takes a file the page must not replace:
# a shell glob of ledgers right after --html (`--html ledgers/ln/*.jsonl`, the first ledger in
# the page's place), --html=LEDGER, a ledger given to read under another name, a file in a
# ledgers folder given to read, a folder, an existing file that is not a page of tunefarm, an
# option. Each is exit 2 with one message naming the file, every ledger byte-identical, nothing
# left behind. A page of tunefarm's is replaced as before.
source "$(dirname "$0")/../lib.sh"
source "$(dirname "$0")/report_lib.bash"
cd "$WORK"
report_farm
md5sum ledgers/ln/*.jsonl >before.md5
first=ledgers/ln/$(basename "${LEDGERS[0]}") second=ledgers/ln/$(basename "${LEDGERS[1]}")
echo "notes a person wrote" >notes.txt
ln -s "${LEDGERS[1]}" alias.html

refuse() { # refuse WORDS... -- ARGS...: exit 2, WORDS in the message, nothing changed
  local want=()
  while [ "$1" != -- ]; do want+=("$1"); shift; done
  shift
  expect_exit 2 "$TF" report "$@"
  for w in "${want[@]}"; do
    grep -qF -- "$w" last.err || fail "report $*: no '$w' in: $(cat last.err)"
  done
  [ "$(wc -l <last.err)" -eq 1 ] || fail "report $*: not one message: $(cat last.err)"
  [ ! -s last.out ] || fail "report $*: wrote stdout"
  md5sum -c --quiet before.md5 || fail "report $*: a ledger changed"
  [ "$(cat notes.txt)" = "notes a person wrote" ] || fail "report $*: notes.txt changed"
  [ -z "$(find . -name '*.tmp*')" ] || fail "report $*: left $(find . -name '*.tmp*')"
}

refuse "--html '$first'" "a ledger's name (*.jsonl)" -- --html ledgers/ln/*.jsonl
refuse "--html '$first'" "a ledger's name" -- --json --html ledgers/ln/*.jsonl
refuse "--html '$second'" "a ledger's name" -- "--html=$second" ledgers/ln
refuse "--html 'alias.html'" "that is ledger '${LEDGERS[1]}'" -- --html alias.html "${LEDGERS[1]}"
refuse "--html 'notes.txt'" "not a page of tunefarm report" -- --html notes.txt ledgers/ln
refuse "--html 'ledgers/ln/page.html'" "inside ledgers folder 'ledgers'" -- \
  --html ledgers/ln/page.html ledgers
[ ! -e ledgers/ln/page.html ] || fail "a page inside the ledgers folder"
refuse "--html 'ledgers/ln'" "a folder" -- --html ledgers/ln "${LEDGERS[0]}"
refuse "needs a file, not '--json'" -- --html --json ledgers/ln
echo "ok: a ledger, a ledgers folder, another file, a folder or an option after --html: refused, nothing changed"

"$TF" report --html page.html ledgers/ln 2>err || { cat err; fail "report --html page.html failed"; }
"$TF" report --html=page.html "${LEDGERS[0]}" 2>err || { cat err; fail "a page of tunefarm's was not replaced"; }
grep -q "wrote page.html (1 ledger)" err || fail "no note: $(cat err)"
md5sum -c --quiet before.md5 || fail "a ledger changed"
echo "ok: --html FILE and --html=FILE write the page, and replace a page of tunefarm's"
