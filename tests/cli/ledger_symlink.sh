#!/usr/bin/env bash
# `run` never writes through a symbolic link inside the ledgers folder: a
# ledger file or a campaign folder that is a link (dangling or not) is refused with exit 2
# and nothing is written where it points.
source "$(dirname "$0")/../lib.sh"
cd "$WORK"
sed -E 's/"budget": 120/"budget": 2/' "$SRC/campaigns/decide-aa.json" >aa.json
run() { TUNEFARM_ROOT="$SRC" "${MPIRUN[@]}" -np 2 "$TF" run --backend sim --ledgers "$WORK/led" aa.json; }
expect_exit 0 run
ledger=$(ls "$WORK"/led/aa/*.jsonl)

# the ledger file a dangling link out of the folder
mv "$ledger" "$WORK/saved.jsonl"
ln -s "$WORK/outside.jsonl" "$ledger"
expect_exit 2 run
grep -qF "ledger '$ledger' is a symbolic link" last.err || { cat last.err; fail "no clear message"; }
[ ! -e "$WORK/outside.jsonl" ] || fail "run wrote through a dangling link"
# ... and a link to a real ledger elsewhere
cp "$WORK/saved.jsonl" "$WORK/outside.jsonl"
ln -sf "$WORK/outside.jsonl" "$ledger"
expect_exit 2 run
cmp -s "$WORK/saved.jsonl" "$WORK/outside.jsonl" || fail "run appended through a link"
rm -f "$ledger" "$WORK/outside.jsonl"

# the campaign folder a link to another folder
mkdir "$WORK/elsewhere"
rm -rf "$WORK/led/aa"
ln -s "$WORK/elsewhere" "$WORK/led/aa"
expect_exit 2 run
grep -qF "ledgers folder '$WORK/led/aa' is a symbolic link" last.err || { cat last.err; fail "folder: no clear message"; }
[ -z "$(ls "$WORK/elsewhere")" ] || fail "run wrote into a linked campaign folder"

# the ledgers folder itself may be a link (a larger disk): that is the user's choice
rm "$WORK/led/aa"
mv "$WORK/led" "$WORK/disk"
ln -s "$WORK/disk" "$WORK/led"
expect_exit 0 run
[ -n "$(ls "$WORK"/disk/aa/*.jsonl)" ] || fail "no ledger under a linked ledgers folder"
echo "ok: links to ledgers and campaign folders refused"
