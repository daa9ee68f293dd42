#!/usr/bin/env bash
# `report --t4` and `--t4-metadata FILE` as Kernel Tuner writes T4. On a short simulated
# campaign (with a simulated compile, so that compile times are not 0), and on a copy of one
# ledger with a compile error, a failed correctness check and a timeout written in:
# - the results and the metadata are valid against every pinned upstream schema (docs/t4/)
#   and docs/t4.schema.json, by Debian's JSON Schema validator (python3-jsonschema);
# - every result has the keys and value types of Kernel Tuner's (docs/t4/example/T4_output.json),
#   the metadata the structure of its metadata file (T4_metadata.json);
# - one result per configuration evaluated; runtimes are the configuration's medians of every
#   unscreened round of every passed generation with it as best or new, in ms, counted here
#   straight from the ledger's lines; its compile time is the record's;
# - a metadata FILE that is a ledger, a folder or someone else's file is refused.
source "$(dirname "$0")/../lib.sh"
source "$(dirname "$0")/report_lib.bash"
if ! /usr/bin/python3 -c 'import jsonschema' 2>/dev/null; then
  echo "SKIP: T4 validation: Debian's python3-jsonschema is not installed (scripts/setup.sh installs it)"
  exit 77
fi
cd "$WORK"
export TUNEFARM_SIM_COMPILE=0.002
report_farm
T4="$SRC/docs/t4"

# A copy of the first ledger in which three rejected generations failed instead.
python3 - "${LEDGERS[0]}" failed.jsonl <<'PY'
import json, sys
lines = [json.loads(l) for l in open(sys.argv[1])]
rej = [x for x in lines if x["type"] == "generation" and x.get("rounds") and x["decision"] == "reject"]
assert len(rej) >= 3, len(rej)
def failed(x, status, detail):
    x.update(status=status, detail=detail, correct=False, rounds=[], ratios=[],
             median_ratio=None, kernel_median_ratio=None, control_drift=None)
failed(rej[0], "compile_error", "nvrtc: error: identifier undefined")
rej[1]["correct"] = False
failed(rej[2], "fault", "timeout: the kernel ran past its limit")
open(sys.argv[2], "w").writelines(json.dumps(x, separators=(",", ":")) + "\n" for x in lines)
PY

for l in "${LEDGERS[@]}" failed.jsonl; do
  rm -f meta.json
  "$TF" report --t4 --t4-metadata meta.json "$l" >t4.json || fail "report --t4 $l failed"
  /usr/bin/python3 - t4.json "$SRC/docs/t4.schema.json" "$T4"/*results*.schema.json \
    "$T4"/autotuning_methodology-*.schema.json -- meta.json "$T4"/*metadata*.schema.json <<'PY' ||
import json, sys, jsonschema
args = sys.argv[1:]
for group in (args[:args.index("--")], args[args.index("--") + 1:]):
    doc = json.load(open(group[0]))
    for schema in group[1:]:
        jsonschema.validate(doc, json.load(open(schema)), cls=jsonschema.Draft202012Validator)
PY
    fail "the T4 files of $l are not valid against every schema"
  /usr/bin/python3 - t4.json meta.json "$l" "$T4/example" <<'PY' || fail "--t4 of $l is not Kernel Tuner's shape or not the ledger's"
import json, math, statistics, sys
t4, meta = json.load(open(sys.argv[1])), json.load(open(sys.argv[2]))
lines = [json.loads(l) for l in open(sys.argv[3])]
kt = json.load(open(sys.argv[4] + "/T4_output.json"))
ktm = json.load(open(sys.argv[4] + "/T4_metadata.json"))

def kind(v):
    return {bool: "bool", int: "number", float: "number", str: "string", list: "array",
            dict: "object"}[type(v)]

def shape(a, b, where):  # b has a's keys, each with a's value type
    assert set(a) == set(b), (where, sorted(a), sorted(b))
    for k in a:
        assert kind(a[k]) == kind(b[k]), (where, k, a[k], b[k])

# Kernel Tuner's shape, key for key
assert set(t4) == set(kt) | {"metadata"}, sorted(t4)
assert t4["schema_version"] == kt["schema_version"]
assert t4["metadata"]["timeunit"] == "milliseconds"
ref = kt["results"][0]
for r in t4["results"]:
    shape(ref, r, "result")
    shape(ref["times"], r["times"], "times")
    assert all(kind(v) == "number" for v in r["times"]["runtimes"])
    assert all(kind(v) == "number" for v in r["configuration"].values())
    for m in r["measurements"]:
        shape(ref["measurements"][0], m, "measurement")
    assert r["objectives"] == ref["objectives"]
shape(ktm, meta, "metadata file")
shape(ktm["metadata"], meta["metadata"], "metadata")
for k in ("hardware", "environment"):
    shape(ktm["metadata"][k], meta["metadata"][k], k)
assert meta["metadata"]["environment"]["device_query"]["tunefarm"]["uuid"] == lines[0]["device"]["uuid"]

# the ledger's evaluations, counted from its lines
key = lambda c: json.dumps(c, sort_keys=True)
# cJSON prints a double to within one unit in the last place
close = lambda a, b: all(math.isclose(x, y, rel_tol=1e-14) for x, y in zip(a, b)) and len(a) == len(b)
runs, first, failed = {}, {}, {}
for g in (x for x in lines if x["type"] == "generation"):
    rounds = [x for x in g.get("rounds", []) if not x.get("screened")]
    if "rounds" not in g or g["status"] != "ok" or not g["correct"]:
        why = "constraints" if "rounds" not in g else {"compile_error": "compile"}.get(g["status"])
        why = why or ("correctness" if g["status"] == "ok" else
                      "timeout" if g.get("detail", "").startswith("timeout") else "runtime")
        failed.setdefault(key(g["new"]), why)
        first.setdefault(key(g["new"]), g)
        continue
    for arm in ("best", "new"):
        runs.setdefault(key(g[arm]), []).extend(x[arm + "_us"] / 1000 for x in rounds)
        if rounds:
            first.setdefault(key(g[arm]), g)
res = {key(r["configuration"]): r for r in t4["results"]}
assert len(res) == len(t4["results"]), "a configuration has two results"
assert set(res) == set(first), (len(res), len(first))
for k, r in res.items():
    g = first[k]
    assert r["timestamp"] == g["time"]
    assert close([r["times"]["compilation"]], [g.get("compile_ms", 0)])
    assert close([r["times"]["benchmark"]], [1000 * g["times"]["measure_s"] if "times" in g else 0])
    if k in failed:
        assert r["invalidity"] == failed[k] and r["times"]["runtimes"] == [] and r["measurements"] == []
        assert r["correctness"] == (0 if failed[k] == "correctness" else 1)
        continue
    assert r["invalidity"] == "correct" and r["correctness"] == 1
    assert close(sorted(r["times"]["runtimes"]), sorted(runs[k])), k
    m = r["measurements"]
    assert [(x["name"], x["unit"]) for x in m] == [("time", "ms")], m
    assert close([m[0]["value"]], [statistics.median(runs[k])])
seen = {r["invalidity"] for r in t4["results"]}
if sys.argv[3].endswith("failed.jsonl"):
    assert {"compile", "correctness", "timeout", "constraints", "correct"} <= seen, seen
assert any(r["times"]["compilation"] > 0 for r in t4["results"]), "every compile time is 0"
print("ok: %s: %d results for %d generations, Kernel Tuner's keys, the ledger's rounds"
      % (sys.argv[3].split("/")[-1], len(res), sum(x["type"] == "generation" for x in lines)))
PY
done
echo "ok: results and metadata valid against every pinned schema (docs/t4/) and docs/t4.schema.json"

# The fixture is Kernel Tuner's shape: valid against docs/t4.schema.json and the later schema;
# the first one refuses its string value for a failed configuration, which tunefarm never writes.
/usr/bin/python3 -m jsonschema -i "$T4/example/T4_output.json" "$SRC/docs/t4.schema.json" ||
  fail "docs/t4.schema.json refuses Kernel Tuner's shape"
/usr/bin/python3 -m jsonschema -i "$T4/example/T4_output.json" "$T4/kernel_tuner-results-1.0.0-d845b33.schema.json" \
  2>/dev/null && fail "the first results schema accepts a string value"
sed 's/"compilation":/"compilation_time":/' t4.json >broken.json
/usr/bin/python3 -m jsonschema -i broken.json "$SRC/docs/t4.schema.json" 2>/dev/null &&
  fail "docs/t4.schema.json accepts a key Kernel Tuner's writer does not write"
echo "ok: the fixture is Kernel Tuner's shape; docs/t4.schema.json refuses another key"

# --t4-metadata alone writes the file and nothing on stdout; it replaces its own file only.
"$TF" report --t4-metadata=meta.json "${LEDGERS[0]}" >out 2>err || { cat err; fail "--t4-metadata alone failed"; }
[ ! -s out ] || fail "--t4-metadata alone printed on stdout"
grep -q "wrote meta.json" err || fail "--t4-metadata alone did not say what it wrote"
expect_exit 2 "$TF" report --t4-metadata "${LEDGERS[0]}" "${LEDGERS[1]}"
grep -q "a ledger's name" last.err || fail "a ledger as the metadata file was not refused"
echo '{"mine": 1}' >other.json
expect_exit 2 "$TF" report --t4-metadata other.json "${LEDGERS[0]}"
grep -q "not a T4 metadata file of tunefarm report" last.err || fail "someone else's file was not refused"
[ "$(cat other.json)" = '{"mine": 1}' ] || fail "someone else's file was changed"
expect_exit 2 "$TF" report --t4-metadata ledgers "${LEDGERS[0]}"
grep -q "a folder" last.err || fail "a folder was not refused"
expect_exit 2 "$TF" report --t4 --t4-metadata m2.json ledgers/ln
grep -q "one --t4 per ledger" last.err || fail "--t4 of two GPUs was not refused"
[ ! -e m2.json ] || fail "a metadata file was written for a refused command"
echo "ok: --t4-metadata writes its file alone; a ledger, a folder, someone's file, two GPUs refused"
