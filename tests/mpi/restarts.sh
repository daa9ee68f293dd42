#!/usr/bin/env bash
# Restarts end to end on the simulated device. The search itself (restarts from random legal
# untried configurations, duels against the champion, noisy duels past the budget, resume in
# the middle of any of it) is tests/unit/test_search.c; this checks the farm around it: the
# records it writes for them, that they recompute, and that report and the summary name the
# champion the end record names.
source "$(dirname "$0")/../lib.sh"
cd "$WORK"
mkdir -p campaigns
export TUNEFARM_ROOT="$SRC"
cat >campaigns/restarts.json <<'EOF'
{
  "template": "matmul",
  "problem": {"M": 1024, "N": 1024, "K": 1024},
  "start": {"BM": 64, "BN": 64, "BK": 64, "TM": 4, "TN": 8, "AK": 0, "VEC": 1, "STAGING": 2, "PIPE": 0, "SPLITK": 1, "WARP": 0, "KSLICE": 1, "FRAG": 0},
  "control": "matmul_regtile",
  "search": {"budget": 80, "max_stale": 6, "two_knob_after": 3, "restarts": 4},
  "measure": {"burn_in": 4, "rounds": 8, "samples": 10, "input_sets": 2, "flush_l2": true, "deadline_s": 120, "seed": 1},
  "decide": {"rule": "sequential", "min_gain": 0.01, "drift_tolerance": 0.03, "max_requeue": 2}
}
EOF
"${MPIRUN[@]}" -np 2 "$TF" run --backend sim --ledgers "$WORK/ledgers" campaigns/restarts.json \
  2>run.err || { cat run.err; fail "run failed"; }
l=$(ls ledgers/restarts/*.jsonl)
check_consecutive "$l"
n=$(grep -c '"type":"restart"' "$l" || true)
[ "$n" -ge 2 ] || fail "expected at least two restarts with max_stale 6, got $n"
grep -q '"duel":true' "$l" || fail "no duel: no restarted search kept anything"
grep '"type":"end"' "$l" | grep -q 'budget' || fail "the run did not end by its budget"
"$TF" verify "$l" >verify.out || { cat verify.out; fail "verify failed"; }
grep -q ' 0 differ' verify.out || fail "decisions do not recompute"
"$TF" report "$l" >report.md || fail "report failed"
grep -q "^- restarts: $n " report.md || fail "report does not count the restarts"
# The answer is the champion: the end record's best, report's final best and the summary's.
end=$(grep '"type":"end"' "$l")
final=$(grep '^- final best: ' report.md)
summary=$(grep ' generations = .* best ' run.err)
for kv in $(echo "$end" | grep -o '"best":{[^}]*}' | grep -o '"[A-Z]*":[0-9]*' | tr -d '"' | tr : =); do
  echo "$final" | grep -q "\b$kv\b" || fail "report's final best lacks $kv of the end record: $final"
  echo "$summary" | grep -q " $kv\b" || fail "the summary's best lacks $kv of the end record"
done
echo "ok: $n restarts, $(grep -c '"duel":true' "$l") duel measurements, the champion named alike"
