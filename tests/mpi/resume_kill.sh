#!/usr/bin/env bash
# kill -9 the whole farm mid-campaign; the same command finishes it with consecutive
# generations: nothing lost, nothing twice.
source "$(dirname "$0")/../lib.sh"
cd "$WORK"
cmd=("${MPIRUN[@]}" -np 3 "$TF" run --backend sim --ledgers "$WORK/ledgers" --quiet
     "$SRC/campaigns/matmul-1024.json")
# Slow the simulated device down so the kill lands mid-campaign.
TUNEFARM_SIM_SLEEP=50 "${cmd[@]}" >first.out 2>&1 &
pid=$!
for _ in $(seq 1 600); do
  n=$(cat "$WORK"/ledgers/matmul-1024/*.jsonl 2>/dev/null | grep -c '"type":"generation"' || true)
  [ "$n" -ge 6 ] && break
  sleep 0.1
done
[ "$n" -ge 6 ] || { cat first.out; fail "the first run never got going"; }
# The whole farm dies at once, as in a node crash: mpirun and every rank (Open MPI puts each
# rank in its own process group, so the group of mpirun is not enough).
pkill -9 -f -- "--ledgers $WORK/ledgers" || true
wait "$pid" 2>/dev/null || true
for _ in $(seq 1 100); do pgrep -f -- "--ledgers $WORK/ledgers" >/dev/null || break; sleep 0.1; done
pgrep -f -- "--ledgers $WORK/ledgers" >/dev/null && fail "processes of the killed run survive"

before=$(cat "$WORK"/ledgers/matmul-1024/*.jsonl | grep -c '"type":"generation"')
grep -q '"type":"end"' "$WORK"/ledgers/matmul-1024/*.jsonl && fail "killed too late: a search had ended"
"${cmd[@]}" 2>second.err || { cat second.err; fail "the resumed run failed"; }
mapfile -t ledgers < <(ls "$WORK"/ledgers/matmul-1024/*.jsonl)
[ "${#ledgers[@]}" -eq 2 ] || fail "expected 2 ledgers"
check_consecutive "${ledgers[@]}"
after=$(cat "${ledgers[@]}" | grep -c '"type":"generation"')
[ "$after" -gt "$before" ] || fail "the resumed run added nothing ($before -> $after)"
for l in "${ledgers[@]}"; do grep -q '"type":"end"' "$l" || fail "$l did not finish"; done
"$TF" verify "${ledgers[@]}" >/dev/null || fail "decisions do not recompute"
echo "ok: $before generations before the kill, $after after resuming"
