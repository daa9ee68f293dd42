#!/usr/bin/env bash
# A finished search goes on when its campaign lets it. search.budget, max_stale,
# restarts, fresh_every and canary are not the campaign's identity: raising the budget (or
# max_stale) of a finished search appends a reopen record after its end record and the
# search continues where it stood; the same campaign again changes nothing; any other key
# changed is refused, naming the keys that may change.
source "$(dirname "$0")/../lib.sh"
cd "$WORK"
mkdir -p campaigns
export TUNEFARM_ROOT="$SRC"
# campaign BUDGET MAX_STALE [SEED]
campaign() {
  python3 - "$SRC/campaigns/layernorm-4096x768.json" campaigns/ln.json "$@" <<'PY'
import json, sys
c = json.load(open(sys.argv[1]))
c["search"].update(budget=int(sys.argv[3]), max_stale=int(sys.argv[4]), restarts=0)
if len(sys.argv) > 5:
    c["measure"]["seed"] = int(sys.argv[5])
json.dump(c, open(sys.argv[2], "w"), indent=1)
PY
}
farm() { "${MPIRUN[@]}" -np 2 "$TF" run --backend sim --ledgers "$WORK/ledgers" campaigns/ln.json; }

campaign 5 50
farm 2>run1.err || { cat run1.err; fail "first run failed"; }
l=$(ls ledgers/ln/*.jsonl)
tail -1 "$l" | grep -q '"type":"end","reason":"budget of 5 generations spent"' || fail "did not end at the budget"
lines=$(wc -l <"$l")
farm 2>run2.err || { cat run2.err; fail "second run failed"; }
[ "$(wc -l <"$l")" -eq "$lines" ] || fail "the same campaign changed a finished ledger"
grep -q "search already ended" run2.err || fail "no word that the search had ended"

campaign 9 50
farm 2>run3.err || { cat run3.err; fail "the larger budget did not resume"; }
grep -q "it had ended (budget of 5 generations spent); the campaign now has search.budget 9" run3.err ||
  { cat run3.err; fail "no word of the search going on"; }
python3 - "$l" <<'PY' || fail "the ledger does not read end, reopen, more generations, end"
import json, sys
r = [json.loads(x) for x in open(sys.argv[1])]
kinds = [x["type"] for x in r]
i = kinds.index("end")
assert kinds[i + 1] == "reopen", kinds
assert r[i + 1]["generation"] == r[i]["generation"]
assert kinds[-1] == "end" and r[-1]["reason"] == "budget of 9 generations spent", r[-1]
gens = [x["generation"] for x in r if x["type"] == "generation"]
assert gens == list(range(1, len(gens) + 1)), gens
measured = sum(1 for x in r if x["type"] == "generation" and "rounds" in x and not x.get("untrusted"))
assert measured >= 9, measured
PY
check_consecutive "$l"
"$TF" verify "$l" >verify.out || { cat verify.out; fail "verify refused the reopened ledger"; }
"$TF" report "$l" >report.md || fail "report refused the reopened ledger"
grep -q "^- reopened: 1 time " report.md || fail "the report does not say it was reopened"
grep -q "^- ended: budget of 9 generations spent" report.md || fail "the report does not end at 9"
echo "ok: budget 5 -> 9 went on past the end record, and every reader reads it"

# a stalled search goes on under a larger max_stale
rm -rf ledgers
campaign 40 2
farm 2>run4.err || { cat run4.err; fail "run with max_stale 2 failed"; }
tail -1 "$l" | grep -q 'without a keep (max_stale)' || fail "did not stall at max_stale 2"
before=$(grep -c '"type":"generation"' "$l")
campaign 40 4
farm 2>run5.err || { cat run5.err; fail "max_stale 4 did not resume"; }
grep -q '"type":"reopen"' "$l" || fail "no reopen record after max_stale grew"
[ "$(grep -c '"type":"generation"' "$l")" -gt "$before" ] || fail "no generation after the reopen"
check_consecutive "$l"
echo "ok: max_stale 2 -> 4 went on after the stall"

# what the search measures is the campaign's identity
campaign 40 4 7
expect_exit 2 farm
grep -q "only search.budget, search.max_stale, search.restarts, search.fresh_every and canary may change" last.err ||
  { cat last.err; fail "a changed seed was not refused with the keys that may change"; }
echo "ok: a changed measure.seed is refused, naming the keys that may change"
