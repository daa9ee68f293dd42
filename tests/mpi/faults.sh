#!/usr/bin/env bash
# A crashing and a hanging configuration are recorded as faults; the campaign goes on.
source "$(dirname "$0")/../lib.sh"
cd "$WORK"
mkdir -p camp
sed -e 's/"measure": {/"inject": [{"when": {"BK": 32}, "fault": "crash"}, {"when": {"PIPE": 2}, "fault": "hang"}],\n  "measure": {/' \
  -e 's/"deadline_s": 120/"deadline_s": 3/' "$SRC/campaigns/matmul-1024.json" >camp/faulty.json
export TUNEFARM_ROOT="$SRC"
"$TF" check camp/faulty.json >/dev/null || fail "the fault campaign does not load"
"${MPIRUN[@]}" -np 2 "$TF" run --backend sim --ledgers "$WORK/ledgers" camp/faulty.json \
  >run.out 2>run.err || { cat run.err; fail "run failed"; }
l=$(ls "$WORK"/ledgers/faulty/*.jsonl)
grep -q 'killed by signal 11' "$l" || fail "no crash fault recorded"
grep -q 'timeout' "$l" || fail "no timeout fault recorded"
grep -q '"type":"end"' "$l" || fail "the campaign did not go on to its end"
n=$(grep -c '"decision":"keep"\|"decision":"reject"' "$l")
[ "$n" -ge 3 ] || fail "too few decisions after the faults ($n)"
"$TF" verify "$l" >/dev/null || fail "decisions do not recompute"
# The same command again resumes the ended search from its ledger: the same counts.
"${MPIRUN[@]}" -np 2 "$TF" run --backend sim --ledgers "$WORK/ledgers" camp/faulty.json \
  >again.out 2>again.err || { cat again.err; fail "the resumed run failed"; }
counts() { grep -o '[0-9]* generations = .* faults' "$1" || true; }  # the summary, on stderr
[ -n "$(counts run.err)" ] || { cat run.err; fail "no summary line with the counts"; }
[ "$(counts run.err)" = "$(counts again.err)" ] ||
  fail "a resumed run counts otherwise: '$(counts run.err)' then '$(counts again.err)'"
grep -q ' [1-9][0-9]* faults' run.err || fail "the summary counts no faults"
echo "ok: faults recorded, $n decisions"
