#!/usr/bin/env bash
# issue 19: reports people can use. On a short simulated campaign with restarts: the Markdown
# shows the control, the speed-ups over the start and the control and marks each GPU's
# winner; reasons are whole, numbers never N; --json and --csv hold every generation (--t4:
# report_t4.sh).
source "$(dirname "$0")/../lib.sh"
source "$(dirname "$0")/report_lib.bash"
cd "$WORK"
report_farm

"$TF" report ledgers/ln >report.md || fail "report failed"
for want in "- control: tf_layernorm_twowarp: " " over the start (" " over the control" \
  "- final best: " "**the winner**, the champion of the searches (decided by duels), fastest on its own GPU" "- restarts: " ", **winner** |" "winner (fastest on its own GPU)" \
  "| duel 1 |"; do
  grep -qF -- "$want" report.md || { cat report.md; fail "the report lacks '$want'"; }
done
grep -q ' "new is [0-9.]*% slower than best (sequential test: LLR -[0-9.]* <= -[0-9.]* after [0-9]* rounds)"' report.md ||
  fail "no whole reason with its numbers"
grep -q '[^A-Za-z]N%' report.md && fail "a number was replaced by N"
echo "ok: markdown: control, speed-ups, winners, whole reasons"

"$TF" report --json ledgers/ln >report.json || fail "report --json failed"
"$TF" report --csv ledgers/ln >report.csv || fail "report --csv failed"
python3 - report.json report.csv "${LEDGERS[@]}" <<'PY' || fail "--json or --csv does not match the ledgers"
import csv, json, sys
rep = json.load(open(sys.argv[1]))
rows = list(csv.DictReader(open(sys.argv[2])))
assert rep["format"] == "tunefarm-report"
for led, path in zip(rep["ledgers"], sys.argv[3:]):
    lines = [json.loads(l) for l in open(path)]
    gens = [r for r in lines if r["type"] == "generation"]
    assert led["ledger"].endswith(path.split("/")[-1]), led["ledger"]
    assert len(led["generations"]) == len(gens)
    assert led["keeps"] == [g["generation"] for g in gens if g["decision"] == "keep"]
    assert [g["decision"] for g in led["generations"]] == [g["decision"] for g in gens]
    assert led["device"]["uuid"] == lines[0]["device"]["uuid"]
    assert len(led["restarts"]) == sum(r["type"] == "restart" for r in lines)
    fb = led["final_best"]
    assert fb["config"] == [r for r in lines if r["type"] == "end"][0]["best"], fb
    assert abs(fb["speedup_over_start"] - fb["start_us"] / fb["us"]) < 1e-9
    assert abs(fb["speedup_over_control"] - led["control"]["us"] / fb["us"]) < 1e-9
    mine = [r for r in rows if r["uuid"] == led["device"]["uuid"]]
    assert [int(r["generation"]) for r in mine] == [g["generation"] for g in gens]
print("ok: --json and --csv hold every generation of both ledgers, apart")
PY
