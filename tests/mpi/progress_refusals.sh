#!/usr/bin/env bash
# Static refusals are generations (recorded, no compile) that spend none of search.budget, so
# the generation number runs past the budget. Each decision line says the measured
# generations of the budget and the static refusals apart, and they add up to the generation
# number; the summary gives each GPU's generations as that sum, and says once what a
# generation is.
source "$(dirname "$0")/../lib.sh"
cd "$WORK"
python3 - "$SRC/campaigns/matmul-1024.json" mm.json <<'PY'
import json, sys
c = json.load(open(sys.argv[1]))
c["search"].update(budget=12, max_stale=50, restarts=0)
json.dump(c, open(sys.argv[2], "w"))
PY
export TUNEFARM_ROOT="$SRC" TUNEFARM_CACHE="$WORK/cache"
"${MPIRUN[@]}" -np 2 "$TF" run --backend sim --ledgers "$WORK/ledgers" mm.json >run.out 2>&1 ||
  { cat run.out; fail "the run failed"; }
l=$(ls ledgers/mm/*.jsonl)
statics=$(grep '"type":"generation"' "$l" | grep -c '"constraint":' || true)
gens=$(grep -c '"type":"generation"' "$l")
[ "$statics" -gt 0 ] || fail "the campaign refused nothing statically: no test"
grep -E '\] gen [0-9]+ \(' run.out >lines.txt || { cat run.out; fail "no decision lines"; }
# every line: gen G (measured M of 12, R refused statically[, U measured again][, ETA ...]) with G = M + R + U
awk '{
  if (!match($0, /gen [0-9]+ \(measured [0-9]+ of 12, [0-9]+ refused statically(, [0-9]+ measured again)?(, ETA [0-9hms]+)?\) /)) {
    print "bad line: " $0; bad = 1; next }
  split(substr($0, RSTART, RLENGTH), w, /[ (,]+/)
  again = (w[8] ~ /^[0-9]+$/ && w[10] == "again") ? w[8] : 0
  if (w[2] != w[4] + w[7] + again) { print "does not add up: " $0; bad = 1 }
} END { exit bad }' lines.txt || fail "a decision line does not say its measured and refused generations"
tail -1 lines.txt | grep -q "gen $gens (measured 12 of 12, $statics refused statically" ||
  { tail -1 lines.txt; fail "the last line is not gen $gens (measured 12 of 12, $statics refused statically"; }
[ "$gens" -gt 12 ] || fail "no generation number past the budget: no test"
grep -q ": $gens generations = 12 measured + $statics refused statically; " run.out ||
  { cat run.out; fail "the summary does not give $gens generations as 12 measured + $statics refused"; }
[ "$(grep -c "^  a generation is a candidate recorded: measured (only those count toward search.budget 12)" run.out)" -eq 1 ] ||
  { cat run.out; fail "the summary does not say once what a generation is"; }
echo "ok: gen $gens = 12 measured + $statics refused statically, on every line and in the summary"
