#!/usr/bin/env bash
# issue 19: `run` says what it is doing. It announces its phases (loading, enumerating the
# space, opening the ledgers, measuring), every decision line says "measured n of budget",
# the static refusals and an ETA, and Ctrl-C (mpirun turns it into SIGTERM for every rank)
# ends with a line saying how to resume: the same command, which then resumes the ledgers and
# finishes.
source "$(dirname "$0")/../lib.sh"
cd "$WORK"
mkdir -p campaigns
python3 - "$SRC/campaigns/layernorm-4096x768.json" campaigns/ln.json <<'PY'
import json, sys
c = json.load(open(sys.argv[1]))
c["search"].update(budget=12, max_stale=50, restarts=0)
json.dump(c, open(sys.argv[2], "w"))
PY
export TUNEFARM_ROOT="$SRC"
# a simulated compile of 0.3 s a job (cached after) keeps the run going long enough to stop it;
# compiled in the job, not ahead, which on a node of many cores would hide it
export TUNEFARM_SIM_COMPILE=0.3 TUNEFARM_CACHE="$WORK/cache"
cmd=("${MPIRUN[@]}" -np 3 "$TF" run --backend sim --ledgers "$WORK/ledgers" --compile-jobs 0
  campaigns/ln.json)
"${cmd[@]}" >run1.out 2>&1 &
pid=$!
for _ in $(seq 100); do
  grep -q '\] gen [0-9]* (' run1.out && break
  sleep 0.1
done
kill -INT "$pid"
wait "$pid" && fail "the interrupted run exited 0"
for want in "tunefarm: loading campaign campaigns/ln.json" \
  "tunefarm: enumerating its space: 19440 configurations against 10 constraints" \
  "tunefarm: opening the ledgers in $WORK/ledgers/ln/" "tunefarm: measuring, 12 generations per device" \
  "tunefarm: stopped by SIGTERM" \
  "tunefarm: the ledgers in $WORK/ledgers/ hold every generation recorded. Resume with the same command" \
  "mpirun -np 3 tunefarm run --backend sim --ledgers $WORK/ledgers --compile-jobs 0 campaigns/ln.json"; do
  grep -qF -- "$want" run1.out || { cat run1.out; fail "the run did not say '$want'"; }
done
grep -Eq '\] gen [0-9]+ \(measured [0-9]+ of 12, [0-9]+ refused statically, ETA [0-9]+m[0-9]{2}s\) ' run1.out ||
  { cat run1.out; fail "no measured n of budget with the static refusals and an ETA"; }
# what stopped comes first, a line of its own: mpirun may pass on nothing after it
grep -A1 -x "tunefarm: stopped by SIGTERM" run1.out | tail -1 | grep -q "^tunefarm: the ledgers in" ||
  { cat run1.out; fail "'stopped by' is not a line of its own before how to resume"; }
grep -q '"type":"end"' ledgers/ln/*.jsonl && fail "the interrupted run ended a search"
echo "ok: phases, n of budget with an ETA, and how to resume, on SIGINT"

"${cmd[@]}" >run2.out 2>&1 || { cat run2.out; fail "the same command did not resume"; }
grep -q "resuming .* at generation" run2.out || { cat run2.out; fail "it did not resume"; }
for l in ledgers/ln/*.jsonl; do
  grep -q '"type":"end","reason":"budget of 12 generations spent"' "$l" || fail "$l did not finish"
done
check_consecutive ledgers/ln/*.jsonl
echo "ok: the same command resumed both ledgers and finished"
