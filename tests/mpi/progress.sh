#!/usr/bin/env bash
# `run` says what it is doing. It announces its phases (loading, enumerating the
# space, opening the ledgers, measuring), every decision line says "measured n of budget",
# the static refusals and an ETA, and Ctrl-C (mpirun turns it into SIGTERM for every rank)
# ends with a line saying how to resume: the command as launched (the binary as given, the
# options as used), which run verbatim resumes the ledgers and finishes.
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
  "tunefarm: the ledgers in $WORK/ledgers/ hold every generation recorded. Resume with the same command"; do
  grep -qF -- "$want" run1.out || { cat run1.out; fail "the run did not say '$want'"; }
done
# how to resume: the binary as given and the options as used, at the start and on the signal;
# --oversubscribe where the ranks outnumber mpirun's slots (this node's cores)
resume="^  mpirun -np 3( --oversubscribe)? $TF run --backend sim --ledgers $WORK/ledgers --compile-jobs 0 campaigns/ln.json\$"
[ "$(grep -Ec -- "$resume" run1.out)" -eq 2 ] || { cat run1.out; fail "no resume command '$resume' at the start and on the signal"; }
line=$(grep -E -m1 -- "$resume" run1.out)
[ "$(nproc)" -ge 3 ] || [[ "$line" == *" --oversubscribe "* ]] || fail "3 ranks on $(nproc) cores without --oversubscribe: $line"
grep -q "srun" run1.out && fail "an srun form outside Slurm"
grep -Eq '\] gen [0-9]+ \(measured [0-9]+ of 12, [0-9]+ refused statically, ETA [0-9]+m[0-9]{2}s\) ' run1.out ||
  { cat run1.out; fail "no measured n of budget with the static refusals and an ETA"; }
# what stopped comes first, a line of its own: mpirun may pass on nothing after it
grep -A1 -x "tunefarm: stopped by SIGTERM" run1.out | tail -1 | grep -q "^tunefarm: the ledgers in" ||
  { cat run1.out; fail "'stopped by' is not a line of its own before how to resume"; }
grep -q '"type":"end"' ledgers/ln/*.jsonl && fail "the interrupted run ended a search"
echo "ok: phases, n of budget with an ETA, and how to resume, on SIGINT"

# the command as printed, run verbatim (mpirun's slots as they come: the line says what it needs)
env -u OMPI_MCA_rmaps_base_oversubscribe bash -c "$line" >run2.out 2>&1 ||
  { cat run2.out; fail "the printed command did not resume: $line"; }
grep -q "resuming .* at generation" run2.out || { cat run2.out; fail "it did not resume"; }
for l in ledgers/ln/*.jsonl; do
  grep -q '"type":"end","reason":"budget of 12 generations spent"' "$l" || fail "$l did not finish"
done
check_consecutive ledgers/ln/*.jsonl
echo "ok: the printed command resumed both ledgers and finished"

# under Slurm the ranks see SLURM_JOB_ID: an srun form comes too, with the same options
"${MPIRUN[@]}" -np 3 -x SLURM_JOB_ID=4242 "$TF" run --backend sim --ledgers "$WORK/ledgers" \
  --worker-margin 90 campaigns/ln.json >run3.out 2>&1 || { cat run3.out; fail "the Slurm-looking run failed"; }
grep -q "^  srun --ntasks=3 $TF run --backend sim --ledgers $WORK/ledgers --worker-margin 90 campaigns/ln.json " run3.out ||
  { cat run3.out; fail "no srun form under Slurm"; }
echo "ok: the srun form under Slurm"
