#!/usr/bin/env bash
# Resume in the middle of a noisy candidate's re-measurements: the resumed search measures the
# same candidates, the same number of times, as the uninterrupted one (noisy refusals are
# re-measured, not counted as rejections).
source "$(dirname "$0")/../lib.sh"
cd "$WORK"
# A drift tolerance of 0 makes every measurement "too noisy": each candidate is measured
# 1 + max_requeue times, and max_stale candidates end the search (no restarts).
sed -E -e 's/"drift_tolerance": [0-9.]+/"drift_tolerance": 0/' -e 's/"max_stale": [0-9]+/"max_stale": 2/' \
  -e 's/, "restarts": [0-9]+//' \
  "$SRC/campaigns/matmul-1024.json" >noisy.json
export TUNEFARM_ROOT="$SRC"
run() { "${MPIRUN[@]}" -np 2 "$TF" run --backend sim --ledgers "$1" --quiet noisy.json 2>>run.err; }
measured() { grep '"status"' "$1" | sed -E 's/.*"new":(\{[^}]*\}).*/\1/'; }
run "$WORK/full" || { cat run.err; fail "the full run failed"; }
full=$(ls "$WORK"/full/noisy/*.jsonl)
[ "$(measured "$full" | wc -l)" -eq 6 ] || fail "expected 2 candidates x 3 measurements, got $(measured "$full" | wc -l)"
# Cut the ledger right after the second candidate's first measurement, then resume.
mkdir -p "$WORK/cut/noisy"
cut=$WORK/cut/noisy/$(basename "$full")
n=$(grep -n '"status"' "$full" | sed -n 4p | cut -d: -f1)
head -n "$n" "$full" >"$cut"
run "$WORK/cut" || { cat run.err; fail "the resumed run failed"; }
diff <(measured "$full") <(measured "$cut") || fail "the resumed search measured other candidates"
check_consecutive "$cut"
# A ledger whose generation numbers jump is refused (exit 2), not resumed into a muddle.
mkdir -p "$WORK/jump/noisy"
sed -E '3s/"generation":[0-9]+/"generation":77/' "$full" | grep -v '"type":"end"' \
  >"$WORK/jump/noisy/$(basename "$full")"
expect_exit 2 run "$WORK/jump"
grep -q "key 'generation' is 77 where 2 is due" run.err || { tail -3 run.err; fail "no clear message for a jump"; }
echo "ok: the resumed search measured the same $(measured "$cut" | wc -l) generations"
