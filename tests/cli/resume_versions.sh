#!/usr/bin/env bash
# A resume with another driver, CUDA runtime or NVRTC than the ledger's warns naming both
# values and records the change in the ledger (a versions record), once; verify and report
# read the ledger. The simulated device reports version 0 for all three, so the ledger's line 1
# is given other versions to stand for the earlier run's.
source "$(dirname "$0")/../lib.sh"
cd "$WORK"
export TUNEFARM_ROOT="$SRC"
campaign() { sed -E "s/\"budget\": 120/\"budget\": $1/" "$SRC/campaigns/decide-aa.json" >aa.json; }
run() { "${MPIRUN[@]}" -np 2 "$TF" run --backend sim --ledgers "$WORK/led" --quiet aa.json; }
campaign 6
run 2>first.err || { cat first.err; fail "the first run failed"; }
l=$(ls "$WORK"/led/aa/*.jsonl)
sed -i -E '1s/"driver_version":0,/"driver_version":12040,/; 1s/"runtime_version":0,/"runtime_version":12040,/; 1s/"nvrtc_version":"0.0"/"nvrtc_version":"12.4"/' "$l"
grep -q '"nvrtc_version":"12.4"' "$l" || fail "line 1 was not edited"

campaign 8 # the search goes on: end, versions, reopen, two generations, end
expect_exit 0 run
want="warning: ledger '$l': driver 12040 -> 0, CUDA runtime 12040 -> 0, NVRTC 12.4 -> 0.0 since the ledger's last run, after generation 6"
grep -qF "$want" last.err || { cat last.err; fail "no warning naming both versions"; }
[ "$(grep -c '"type":"versions"' "$l")" -eq 1 ] || fail "not one versions record"
v=$(grep '"type":"versions"' "$l")
for key in '"generation":6' '"driver_version":0' '"runtime_version":0' '"nvrtc_version":"0.0"' \
  '"reason":"driver 12040 -> 0, CUDA runtime 12040 -> 0, NVRTC 12.4 -> 0.0'; do
  grep -qF "$key" <<<"$v" || fail "the versions record lacks $key: $v"
done
kinds=$(sed -E 's/^\{"type":"([a-z]+)".*/\1/' "$l" | tr '\n' ' ')
[ "$kinds" = "device $(printf 'generation %.0s' 1 2 3 4 5 6)end versions reopen generation generation end " ] ||
  fail "records out of place: $kinds"
expect_exit 0 "$TF" verify "$l"
grep -q '8 decisions recomputed from their rounds, 0 differ' last.out || fail "verify: $(cat last.out)"
expect_exit 0 "$TF" report "$l"
expect_exit 0 "$TF" report --json "$l"

# The same versions again: nothing to say, nothing recorded.
expect_exit 0 run
grep -q "warning" last.err && { cat last.err; fail "a warning with the versions unchanged"; }
[ "$(grep -c '"type":"versions"' "$l")" -eq 1 ] || fail "a second versions record"
echo "ok: the change of versions warned and recorded once"
