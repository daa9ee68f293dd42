#!/usr/bin/env bash
# The replay backend: the real coordinator, search and decision rule against the committed
# recorded space (spaces/replay-chain.tfspace). Twice with the same seed, the same ledger
# (decisions, ratios, rounds); the ledger's wall_s is the recorded device's time; a
# configuration recorded as a compile error or as wrong fails as it did on the device.
source "$(dirname "$0")/../lib.sh"
cd "$WORK"
camp="$SRC/campaigns/replay-chain.json"
space="$SRC/spaces/replay-chain.tfspace"
run_replay() { # LEDGERS SPACE
  "${MPIRUN[@]}" -np 2 "$TF" run --quiet --ledgers "$1" --space "$2" "$camp" 2>"$1.err" ||
    { cat "$1.err"; fail "replay run failed"; }
}
# What decides, without the times of day and this machine's process times.
decisions() {
  grep '"type":"generation"' "$1"/replay-chain/*.jsonl |
    sed -E 's/"(time|run|elapsed_s)":[^,]*,?//g'
}
run_replay a "$space"
run_replay b "$space"
[ "$(decisions a | wc -l)" -ge 12 ] || fail "fewer generations than the budget"
diff <(decisions a) <(decisions b) >/dev/null || { diff <(decisions a) <(decisions b) | head; fail "same seed, other ledger"; }
grep -q '"decision":"keep"' a/replay-chain/*.jsonl || fail "the search kept nothing"
grep -q '"backend":"replay"' a/replay-chain/*.jsonl || fail "ledger does not name the replay backend"
grep -q '"simulated":true' a/replay-chain/*.jsonl || fail "replay records do not say they are simulated"
# Another seed draws other rounds.
sed 's/"seed": 3/"seed": 4/' "$camp" >seed4.json
TUNEFARM_ROOT="$SRC" "${MPIRUN[@]}" -np 2 "$TF" run --quiet --ledgers c --space "$space" seed4.json 2>c.err || { cat c.err; fail "seed 4 failed"; }
! diff -q <(grep -o '"ratios":[^]]*' a/replay-chain/*.jsonl) <(grep -o '"ratios":[^]]*' c/seed4/*.jsonl) >/dev/null ||
  fail "another seed drew the same rounds"
# Recorded failures replay as failures.
zcat "$space" | sed -E '/"values":\[1050\]/s/"check":"pass"/"check":"compile_error","detail":"recorded refusal"/' |
  sed -E '/"values":\[1030\]/s/"check":"pass","compile_ms":null,"rel_err":0/"check":"fail","compile_ms":null,"rel_err":0.5/' |
  gzip >bad.tfspace
run_replay d bad.tfspace
grep -q '"status":"compile_error".*recorded refusal' d/replay-chain/*.jsonl || fail "recorded compile error not replayed"
grep '"new":{"ITERS":1030}' d/replay-chain/*.jsonl | grep -q '"correct":false' || fail "recorded wrong result not replayed"
echo ok
