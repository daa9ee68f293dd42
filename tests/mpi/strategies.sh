#!/usr/bin/env bash
# The search strategies (search.proposer) on the simulated device: a run of each new strategy,
# cut at a record and resumed, ends as the uncut run did (same generations, candidates,
# decisions, numbers and job ids: every strategy is a function of the seed and the ledger);
# a bad strategy name or parameter is one message naming the file and the key, exit 2, before
# anything runs; scripts/compare-strategies.sh prints its table from such runs.
source "$(dirname "$0")/../lib.sh"
cd "$WORK"
export TUNEFARM_ROOT="$SRC"
variant() { # STRATEGY PARAMS -> the campaign text: 40 generations, restarts, the canary off
  sed -E "s/\"search\": \{[^}]*\}/\"search\": {\"budget\": 40, \"max_stale\": 8, \"two_knob_after\": 6, \"restarts\": 2, \"proposer\": \"$1\"$2}/" \
    "$SRC/campaigns/layernorm-4096x768.json" | sed 's/"decide":/"canary": {"rounds": 0},\n  "decide":/'
}
facts() {
  grep -oE '"(type|generation|restart|duel|decision|reason|best_us|new_us|control_us|median_ratio|id|new)":("[^"]*"|\{[^}]*\}|[^,}]*)' "$1"
}
run() { "${MPIRUN[@]}" -np 3 "$TF" run --backend sim --ledgers "$1" --quiet "$2"; }
for sc in annealing:9 model:30; do
  s="${sc%%:*}" cut="${sc#*:}"
  variant "$s" ', "params": {"explore": 0.2}' >"$s.json"
  [ "$s" = model ] || variant "$s" ', "params": {"t0": 0.05}' >"$s.json"
  grep -q "\"proposer\": \"$s\"" "$s.json" || fail "could not write the $s campaign"
  run "$WORK/full" "$s.json" 2>full.err || { cat full.err; fail "the uncut $s run failed"; }
  mapfile -t full < <(ls "$WORK/full/$s"/*.jsonl)
  [ "${#full[@]}" -eq 2 ] || fail "$s: expected two ledgers"
  mkdir -p "$WORK/cut$cut/$s"
  for l in "${full[@]}"; do head -n "$cut" "$l" >"$WORK/cut$cut/$s/$(basename "$l")"; done
  run "$WORK/cut$cut" "$s.json" 2>cut.err || { cat cut.err; fail "$s resumed at line $cut failed"; }
  for l in "${full[@]}"; do
    diff <(facts "$l") <(facts "$WORK/cut$cut/$s/$(basename "$l")") >diff.out ||
      { head -5 diff.out; fail "$s: $(basename "$l") resumed after line $cut differs"; }
  done
done
echo "ok: annealing cut at line 9 and model at line 30 (past a restart), resumed, equal the uncut runs"

# Bad names and parameters: check refuses them (and run, tried on one), one line naming the
# file and the key.
variant anealing '' >bad-name.json
variant annealing ', "params": {"cooling": 3}' >bad-range.json
variant random ', "params": {"t0": 1}' >bad-key.json
variant model ', "params": {"explore": "lots"}' >bad-type.json
for b in bad-name:"key 'search.proposer': no proposer 'anealing'" \
         bad-range:"key 'search.params.cooling' must be a number from 0.5 to 1" \
         bad-key:"key 'search.params.t0': proposer 'random' has no parameter 't0' (it takes none)" \
         bad-type:"key 'search.params.explore' must be a number"; do
  f="${b%%:*}.json" want="${b#*:}"
  cmds=(check)
  [ "$f" = bad-range.json ] && cmds+=(run)
  for cmd in "${cmds[@]}"; do
    args=("$TF" "$cmd" "$f")
    [ "$cmd" = run ] && args=("${MPIRUN[@]}" -np 3 "$TF" run --backend sim --ledgers "$WORK/bad" --quiet "$f")
    expect_exit 2 "${args[@]}"
    grep -qF "$f'" "$WORK/last.err" && grep -qF "$want" "$WORK/last.err" ||
      { cat "$WORK/last.err"; fail "$cmd $f: wanted a message naming '$f' and: $want"; }
  done
  [ ! -e "$WORK/bad/${f%.json}" ] || [ -z "$(ls -A "$WORK/bad/${f%.json}")" ] ||
    fail "run $f wrote a ledger"
done
echo "ok: bad strategy names and parameters are refused by check and run, exit 2"

# The comparison driver: two strategies, one seed, a table with a row each.
bash "$SRC/scripts/compare-strategies.sh" --tunefarm "$TF" --seeds 1 --budget 12 --at 5,12 \
  --out "$WORK/cmp" "$SRC/campaigns/layernorm-4096x768.json" coordinate random >cmp.out 2>cmp.err ||
  { cat cmp.err; fail "compare-strategies failed"; }
grep -qE '^\| coordinate \| 2 \| [01]\.[0-9]{2} \| [01]\.[0-9]{2} \|' cmp.out || { cat cmp.out; fail "no coordinate row"; }
grep -qE '^\| random \| 2 \|' cmp.out || { cat cmp.out; fail "no random row"; }
[ "$(grep -c 'of the optimum' cmp.out)" -eq 2 ] || { cat cmp.out; fail "wanted the 1% and 3% tables"; }
echo "ok: compare-strategies prints a row per strategy for 1% and 3%"
