#!/usr/bin/env bash
# `verify` reads a ledger as strictly as `run` does and exits 1 on any
# corruption, naming the file and the line; `report` refuses the same generation errors
# with exit 2. A genuine ledger, and one with a torn last line (no newline: what a kill
# leaves), pass; a complete last line that does not read is corruption like any other.
source "$(dirname "$0")/../lib.sh"
cd "$WORK"
sed -E 's/"budget": 120/"budget": 6/' "$SRC/campaigns/decide-aa.json" >aa.json
TUNEFARM_ROOT="$SRC" "${MPIRUN[@]}" -np 2 "$TF" run --backend sim --ledgers "$WORK/led" aa.json \
  2>run.err || { cat run.err; fail "run failed"; }
good=$(ls "$WORK"/led/aa/*.jsonl)
[ "$(wc -l <"$good")" -eq 8 ] || fail "expected a header, 6 generations and an end"
expect_exit 0 "$TF" verify "$good"
grep -q '6 decisions recomputed from their rounds, 0 differ' last.out || fail "genuine ledger: $(cat last.out)"
# it takes no options: one given is named, not read as a ledger
expect_exit 2 "$TF" verify --bogus "$good"
grep -q "unknown option '--bogus'" last.err || { cat last.err; fail "verify: an option read as a file"; }
expect_exit 0 "$TF" verify -- "$good"
expect_exit 2 "$TF" verify --

n=0
# corrupt NAME WANT-IN-MESSAGE REPORT-TOO: verify exits 1 naming the file and WANT; with
# REPORT-TOO=1 report exits 2 naming them too.
corrupt() {
  local name="$1" want="$2" report="$3" f="$WORK/$1.jsonl"
  expect_exit 1 "$TF" verify "$f"
  grep -qF -- "$f" last.err && grep -qF -- "$want" last.err ||
    { cat last.err; fail "verify $name: message lacks the file or '$want'"; }
  grep -q 'ledger corrupt' last.out || fail "verify $name: the summary does not say so"
  if [ "$report" = 1 ]; then
    expect_exit 2 "$TF" report "$f"
    grep -qF -- "$want" last.err || { cat last.err; fail "report $name: message lacks '$want'"; }
  fi
  n=$((n + 1))
  echo "ok $name: $(head -1 last.err)"
}
lines() { sed -n "$1" "$good"; }

# a ledger with only its device record: nothing measured yet, said in words, not dashes
lines 1p >header_only.jsonl
expect_exit 0 "$TF" report header_only.jsonl
grep -q -- "- control: none measured yet" last.out || { cat last.out; fail "report: an unmeasured control"; }

l3=$(lines 3p)
{ lines 1,2p; printf '%s\0%s\n' "${l3:0:200}" "${l3:200}"; lines '4,$p'; } >nul.jsonl
corrupt nul "line 3 is not a JSON object" 1
: >empty.jsonl
corrupt empty "the file is empty" 1
{ lines 1,2p; echo; lines '3,$p'; } >blank.jsonl
corrupt blank "line 3 is empty" 1
lines '2,$p' >headless.jsonl
corrupt headless "header (line 1)" 1
{ lines 1,3p; lines 3p; lines '4,$p'; } >repeated.jsonl
corrupt repeated "line 4: key 'generation' is 2 where 3 is due" 1
{ lines 1,2p; lines '4,$p'; } >missing.jsonl
corrupt missing "line 3: key 'generation' is 3 where 2 is due" 1
{ lines 1,2p; lines 4p; lines 3p; lines '5,$p'; } >swapped.jsonl
corrupt swapped "line 3: key 'generation' is 3 where 2 is due" 1
{ lines '1,$p'; lines 2p; } >after_end.jsonl
corrupt after_end "line 9: a \"generation\" record after the search's end (line 8)" 1
{ lines 1,2p; lines 3p | sed 's/"decision":"[a-z]*"/"decision":"keep","decision":"reject"/'; lines '4,$p'; } \
  >twice.jsonl
corrupt twice "line 3: key 'decision' appears more than once" 1
sed -E '3s/"generation":2,/"generation":1e300,/' "$good" >huge.jsonl
corrupt huge "line 3: key 'generation' must be a positive integer" 1

# What a kill leaves, a torn last line (no newline), is skipped with a note, as resume skips
# and cuts it. A last line that has its newline was written whole: when it does not read, the
# ledger is corrupt, and resume refuses it naming the line and leaves the file as it was.
l8=$(lines 8p)
{ lines '1,7p'; printf '%s' "${l8:0:20}"; } >torn.jsonl
expect_exit 0 "$TF" verify torn.jsonl
grep -q "torn last line" last.err || fail "torn: no note"
{ lines '1,7p'; printf '%s\n' "${l8:0:20}"; } >last_line.jsonl
corrupt last_line "line 8 is not a JSON object" 1
grep -q "bytes) skipped" last.err && fail "last_line: skipped as torn"
# resume: the torn one is cut and the run finishes; the corrupt one is refused, unchanged
resume() {
  mkdir -p "$WORK/$1/aa"
  cp "$2" "$WORK/$1/aa/$(basename "$good")"
  expect_exit "$3" env TUNEFARM_ROOT="$SRC" "${MPIRUN[@]}" -np 2 "$TF" run --backend sim \
    --ledgers "$WORK/$1" aa.json
}
resume led_torn torn.jsonl 0
grep -q "torn last line (20 bytes) skipped" last.err || { cat last.err; fail "resume torn: no note"; }
expect_exit 0 "$TF" verify "$WORK/led_torn/aa/$(basename "$good")"
resume led_last last_line.jsonl 2
grep -qF "ledger '$WORK/led_last/aa/$(basename "$good")': line 8 is not a JSON object" last.err ||
  { cat last.err; fail "resume last_line: no message naming the line"; }
cmp -s last_line.jsonl "$WORK/led_last/aa/$(basename "$good")" || fail "resume last_line: the ledger changed"
# Several files: a corrupt one does not hide the others' differences, and a missing file is
# bad input.
expect_exit 1 "$TF" verify "$good" swapped.jsonl
grep -q '^verify: 7 decisions' last.out || fail "verify stopped at the corrupt file: $(cat last.out)"
expect_exit 2 "$TF" verify "$good" nosuch.jsonl
echo "ok: $n corrupt ledgers refused by verify, and by report"
