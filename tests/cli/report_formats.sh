#!/usr/bin/env bash
# Reports people can use. On a short simulated campaign with restarts: the Markdown
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

TUNEFARM_ROOT="$SRC" "$TF" report ledgers/ln >report_root.md || fail "report failed"
TUNEFARM_ROOT="$SRC" "$TF" report --json ledgers/ln >report.json || fail "report --json failed"
"$TF" report --csv ledgers/ln >report.csv || fail "report --csv failed"
python3 - report.json report_root.md report.md "$SRC/templates/layernorm.json" report.csv "${LEDGERS[@]}" <<'PY' || fail "throughput, warning or knob columns wrong"
import csv, json, sys
rep, md, md_noroot = json.load(open(sys.argv[1])), open(sys.argv[2]).read(), open(sys.argv[3]).read()
knobs = list(json.load(open(sys.argv[4]))["knobs"])
rows = list(csv.DictReader(open(sys.argv[5])))
assert "| final best | " in md and "FP32 peak 66.9 TFLOP/s = 132 SMs × 128 FP32 lanes × 2 × 1980 MHz" in md
# From here the spec is found through the project root the ledgers record.
assert md_noroot == md
warned = md.count("**warning: the control is faster than the winner**")
assert warned == sum(l["control"]["us"] < l["final_best"]["us"] for l in rep["ledgers"]), warned
header = next(csv.reader(open(sys.argv[5])))
i = header.index("change")
assert header[i + 1:i + 1 + 2 * len(knobs)] == knobs + ["best." + k for k in knobs], header
gens = [json.loads(l) for p in sys.argv[6:] for l in open(p)]
gens = [g for g in gens if g["type"] == "generation"]
for row, g in zip(rows, gens):
    assert [int(row[k]) for k in knobs] == [g["new"][k] for k in knobs]
    assert [int(row["best." + k]) for k in knobs] == [g["best"][k] for k in knobs]
print("ok: throughput with its peak, the control-faster warning, one CSV column per knob")
PY
# A ledger whose recorded root is gone, read from elsewhere: the throughput says why it is unknown.
mkdir -p moved && sed 's|"root":"[^"]*"|"root":"/nonexistent"|' "${LEDGERS[0]}" >moved/a.jsonl
"$TF" report moved/a.jsonl >moved.md || fail "report of a moved ledger failed"
grep -qF "throughput: unknown: cannot read the spec 'templates/layernorm.json'" moved.md ||
  { grep throughput moved.md; fail "a moved ledger's report does not say why the throughput is unknown"; }
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
