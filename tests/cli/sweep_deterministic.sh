#!/usr/bin/env bash
# `tunefarm sweep --backend sim` records a space that is a function of the campaign (its seed)
# alone: two sweeps are the same file but for the date, with the job times synthetic (no load
# or check time; measure_s the launches' time at the recorded medians), so that a replay's
# wall_s on a simulated space is device time, not this machine's (the CI space of the strategy
# comparison is that sweep of campaigns/replay-layernorm.json, made where it is needed).
source "$(dirname "$0")/../lib.sh"
cd "$WORK"
camp="$SRC/campaigns/replay-layernorm.json"
for s in a b; do
  TUNEFARM_ROOT="$SRC" "$TF" sweep --backend sim --quiet -o "$s.tfspace" "$camp" || fail "sweep $s failed"
done
undated() { zcat "$1" | sed -E 's/"date":"[^"]*"//'; }
diff <(undated a.tfspace) <(undated b.tfspace) >diff.out || { head -4 diff.out; fail "two sweeps of one campaign differ"; }
zcat a.tfspace | grep '"check":"pass"' | grep -vq '"load_s":0,"check_s":0,"measure_s":[0-9]' &&
  fail "simulated job times are not synthetic"
# measure_s: (burn_in 4 + rounds 8) x 20 samples x the mean of the three arms' rounds.
zcat a.tfspace | python3 -c '
import json, sys
for l in map(json.loads, sys.stdin):
    if l.get("check") == "pass":
        n = len(l["us"])
        mean = sum(l["us"][k] + l["ref_us"][k] + l["control_us"][k] for k in range(n)) / n
        want = (l["burn_in"] + 8) * l["samples"] * mean * 1e-6
        assert abs(l["measure_s"] - want) <= 1e-6 * want, (l["values"], l["measure_s"], want)
' || fail "measure_s is not the launches' synthetic time"
echo ok
