#!/usr/bin/env bash
# The run's summary counts the generations refused for the control's drift, and of them those
# whose best and new held within the tolerance over the same rounds (the control alone moved),
# with a hint to choose another control when those are a fifth of the measured generations:
# all three must be what the ledger gives (the simulated A/A campaign uses every round it
# records, so the ledger's rounds are the rounds the rule used), and `report` must say the same.
source "$(dirname "$0")/../lib.sh"
cd "$WORK"
mkdir -p campaigns
python3 - "$SRC/campaigns/matmul-1024-aa.json" campaigns/aa.json <<'PY'
import json, sys
c = json.load(open(sys.argv[1]))
c["search"]["budget"] = 40
json.dump(c, open(sys.argv[2], "w"))
PY
export TUNEFARM_ROOT="$SRC" TUNEFARM_CACHE="$WORK/cache"
"${MPIRUN[@]}" -np 2 "$TF" run --backend sim --ledgers "$WORK/ledgers" campaigns/aa.json \
  >run.out 2>&1 || { cat run.out; fail "run failed"; }
line=$(grep -E '^    control drift: [0-9]+ generations? refused, in [0-9]+ of them best and new held steady' run.out) ||
  { cat run.out; fail "no control drift line (the simulated A/A campaign drifts in about half its generations)"; }
got=$(echo "$line" | sed -E 's/^ *control drift: ([0-9]+) generations? refused, in ([0-9]+) of them.*/\1 \2/')
want=$(python3 - ledgers/aa/*.jsonl <<'PY'
import json, sys
drifted = alone = measured = 0
for line in open(sys.argv[1]):
    d = json.loads(line)
    measured += d.get("type") == "generation" and bool(d.get("rounds"))
    if d.get("type") != "generation" or d.get("decision") != "refused" or not d.get("rounds"):
        continue
    tol = 1.0 + d["drift_tolerance"]
    if not (d.get("control_drift") or 0) > tol:
        continue
    drifted += 1
    def spread(arm):
        v = [r[arm + "_us"] for r in d["rounds"] if not r.get("screened")]
        return max(v) / min(v) if v else 1.0
    alone += spread("best") <= tol and spread("new") <= tol
print(drifted, alone, "hint" if 5 * alone >= measured else "no-hint")
PY
)
hint=no-hint
grep -q "the control itself is unsteady here" <<<"$line" && hint=hint
got="$got $hint"
[ "$got" = "$want" ] ||
  { echo "$line"; fail "summary says '$got' (refused, control alone, hint), the ledger '$want'"; }
[ "${got%% *}" -gt 0 ] || fail "no generation refused for drift: the test checks nothing"
# `report` reads the same from the ledger afterwards.
read -r refused alone _ <<<"$got"
"$TF" report ledgers/aa >report.md || fail "report failed"
grep -Eq "^- control drift: $refused of [0-9]+ measured generations refused, in $alone of them" report.md ||
  { grep "control drift" report.md; fail "report does not say $refused refused, $alone with the control alone"; }
echo "ok: control drift in the summary matches the ledger ($got)"
