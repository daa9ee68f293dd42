#!/usr/bin/env bash
# A file the template's kernel includes is part of the campaign's identity: after a run, an
# edit of an included header makes `run` refuse to resume (exit 2, "pass --fresh"), and the
# ledger is left as it was; a resume with the header as it was goes on.
source "$(dirname "$0")/../lib.sh"
cd "$WORK"
mkdir -p root/campaigns root/templates root/kernels
cp "$SRC"/templates/* root/templates/
cp "$SRC"/kernels/*.json "$SRC"/kernels/*.cu root/kernels/
export TUNEFARM_ROOT="$WORK/root"
echo '#define TF_HELPER 1' >root/templates/helpers.cuh
{ echo '#include "helpers.cuh"'; cat "$SRC/templates/matmul.cu"; } >root/templates/matmul.cu
sed -E 's/"budget": [0-9]+/"budget": 3/; s/, "restarts": [0-9]+//' \
  "$SRC/campaigns/matmul-1024.json" >root/campaigns/mm.json
run() { "${MPIRUN[@]}" -np 2 "$TF" run --backend sim --ledgers "$WORK/led" --quiet root/campaigns/mm.json; }
expect_exit 0 run
ledger=$(ls "$WORK"/led/mm/*.jsonl)

sed -i 's/"budget": 3/"budget": 4/' root/campaigns/mm.json # room for the resume to go on
echo '#define TF_HELPER 2' >root/templates/helpers.cuh
before=$(cksum <"$ledger")
expect_exit 2 run
grep -qF "ledger '$ledger': campaign 'root/campaigns/mm.json'" last.err &&
  grep -qF "pass --fresh" last.err || { cat last.err; fail "no refusal naming the ledger and --fresh"; }
[ "$(cksum <"$ledger")" = "$before" ] || fail "the refused ledger was changed"
echo "ok: an edited header refused: $(cut -c1-160 last.err)"

echo '#define TF_HELPER 1' >root/templates/helpers.cuh
expect_exit 0 run
[ "$(cksum <"$ledger")" != "$before" ] || fail "the header as it was did not resume"
echo "ok: the header as it was resumed"
