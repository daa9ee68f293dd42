#!/usr/bin/env bash
# A 3-rank farm on the simulated device: two workers, two ledgers, every decision
# recomputes from its own rounds, and the report shows both devices side by side.
source "$(dirname "$0")/../lib.sh"
cd "$WORK"
"${MPIRUN[@]}" -np 3 "$TF" run --backend sim --ledgers "$WORK/ledgers" \
  "$SRC/campaigns/matmul-1024.json" 2>"$WORK/run.err" || { cat run.err; fail "run failed"; }
mapfile -t ledgers < <(ls "$WORK"/ledgers/matmul-1024/*.jsonl)
[ "${#ledgers[@]}" -eq 2 ] || fail "expected 2 ledgers, got ${#ledgers[@]}"
[ "$(head -c 300 "${ledgers[0]}" | grep -c '"type":"device"')" -eq 1 ] || fail "no device header"
u0=$(head -1 "${ledgers[0]}" | sed -E 's/.*"uuid":"([^"]+)".*/\1/')
u1=$(head -1 "${ledgers[1]}" | sed -E 's/.*"uuid":"([^"]+)".*/\1/')
[ "$u0" != "$u1" ] || fail "both workers report device $u0"
check_consecutive "${ledgers[@]}"
grep -q '"type":"end"' "${ledgers[0]}" || fail "search 0 did not end"
grep -q '"simulated":true' "${ledgers[0]}" || fail "sim records do not say so"
"$TF" verify "${ledgers[@]}" | tee verify.out
grep -q ' 0 differ' verify.out || fail "decisions do not recompute"
"$TF" report "$WORK/ledgers" >report.md
[ "$(grep -c '^## .* gpu[0-9]' report.md)" -eq 2 ] || fail "report does not show two devices"
grep -q "search ends" run.err || fail "no progress lines"
# Every record carries its job: `tunefarm measure` reruns it alone, and on the seeded
# simulated device it reproduces the recorded rounds exactly.
rec=$(grep -m1 '"status":"ok"' "${ledgers[0]}")
# Its files are named relative to the project root: it reruns from there.
echo "$rec" | sed 's/.*"job"://; s/}$//' | (cd "$SRC" && "$TF" measure --backend sim --device 0) >rerun.json
[ "$(grep -o '"best_us":[0-9.]*' rerun.json)" = "$(echo "$rec" | grep -o '"best_us":[0-9.]*')" ] ||
  fail "a ledger record's job does not reproduce its rounds"
echo "ok: ${ledgers[*]}"
