#!/usr/bin/env bash
# Samples per round follow the launches' spread (worker/protocol.h, protocol_samples): on a
# simulated device whose launches spread by 20%, every measured record says the samples it used
# (capped at measure.max_samples), what the spread wanted and the spread itself, and the run
# warns once per GPU that the rule's false-keep rate is not established there; at the default
# spread (1%) the rounds keep measure.samples and nothing is said.
source "$(dirname "$0")/../lib.sh"
cd "$WORK"
mkdir -p campaigns
python3 - "$SRC/campaigns/decide-aa.json" campaigns/aa.json <<'PY'
import json, sys
c = json.load(open(sys.argv[1]))
c["search"]["budget"] = 3
c["measure"].update(samples=20, max_samples=64)
c.pop("canary", None)
json.dump(c, open(sys.argv[2], "w"))
PY
export TUNEFARM_ROOT="$SRC" TUNEFARM_CACHE="$WORK/cache"
TUNEFARM_SIM_NOISE=jitter=0.2 "${MPIRUN[@]}" -np 2 "$TF" run --backend sim --ledgers wide campaigns/aa.json \
  >wide.out 2>&1 || { cat wide.out; fail "run failed"; }
[ "$(grep -c "warning: this kernel's launches spread" wide.out)" -eq 1 ] ||
  { cat wide.out; fail "no single warning that max_samples capped the rounds"; }
grep -q "raise measure.max_samples to" wide.out || fail "the warning does not say what to do"
python3 - wide/aa/*.jsonl <<'PY' || fail "records do not carry the samples used"
import json, sys
n = 0
for line in open(sys.argv[1]):
    d = json.loads(line)
    if d.get("type") != "generation" or not d.get("rounds"): continue
    n += 1
    assert d["samples"] == 64, d["samples"]
    assert d["samples_wanted"] > 64, d["samples_wanted"]
    assert 0.1 < d["launch_spread"] < 0.3, d["launch_spread"]
assert n > 0
PY
"$TF" verify wide/aa/*.jsonl >/dev/null || fail "verify refused the records"
"${MPIRUN[@]}" -np 2 "$TF" run --backend sim --ledgers narrow campaigns/aa.json >narrow.out 2>&1 ||
  { cat narrow.out; fail "run failed"; }
grep -q "launches spread" narrow.out && { cat narrow.out; fail "a warning at a 1% spread"; }
grep -q '"samples":20,"samples_wanted":20,' narrow/aa/*.jsonl || fail "the default spread changed the samples"
echo "ok: samples follow the launches' spread, capped with one warning"
