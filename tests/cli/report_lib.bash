# Shared by the report tests (sourced after tests/lib.sh): one short simulated campaign with
# restarts, fresh measure processes and canaries, run on two simulated GPUs; and what its
# ledgers hold, counted straight from their lines (not through tunefarm).

# report_farm: writes $WORK/ledgers/ln/*.jsonl (about a second on two cores)
report_farm() {
  mkdir -p "$WORK/campaigns"
  python3 - "$SRC/campaigns/layernorm-4096x768.json" "$WORK/campaigns/ln.json" <<'PY'
import json, sys
c = json.load(open(sys.argv[1]))
c["search"].update(budget=16, max_stale=4, two_knob_after=2, restarts=2, fresh_every=6)
c["canary"] = {"every": 4}
json.dump(c, open(sys.argv[2], "w"))
PY
  TUNEFARM_ROOT="$SRC" "${MPIRUN[@]}" -np 3 "$TF" run --backend sim --ledgers "$WORK/ledgers" \
    "$WORK/campaigns/ln.json" 2>"$WORK/run.err" || { cat "$WORK/run.err"; fail "the farm failed"; }
  mapfile -t LEDGERS < <(ls "$WORK"/ledgers/ln/*.jsonl)
  [ "${#LEDGERS[@]}" -eq 2 ] || fail "expected 2 ledgers, got ${#LEDGERS[@]}"
  grep -q '"type":"restart"' "${LEDGERS[@]}" || fail "the campaign did not restart"
}

# ledger_counts LEDGER: "generations keeps restarts ratios controls canaries best" as the
# ledger's lines give them. ratios: unscreened rounds; controls: generations whose unscreened
# rounds timed the control; best: generations from the first one that decided something
# measured (the search's answer has a time from then on).
ledger_counts() {
  python3 - "$1" <<'PY'
import json, sys
gens = keeps = restarts = ratios = controls = canaries = best = 0
timed = False
for line in open(sys.argv[1]):
    r = json.loads(line)
    if r["type"] == "restart":
        restarts += 1
    if r["type"] != "generation":
        continue
    gens += 1
    keeps += r["decision"] == "keep"
    rounds = [x for x in r.get("rounds", []) if not x.get("screened")]
    ratios += sum(1 for x in rounds if x.get("best_us") and x.get("new_us"))
    controls += any(x.get("control_us") for x in rounds)
    canaries += "canary" in r and r["canary"].get("ratio") is not None
    if rounds and not r.get("untrusted") and r["decision"] != "refused":
        timed = True
    best += timed
print(gens, keeps, restarts, ratios, controls, canaries, best)
PY
}
