#!/usr/bin/env bash
# `tunefarm run` started without mpirun (a workstation with one GPU, or none) starts the farm
# itself: it says so, prints the mpirun command it runs (this binary, the same arguments,
# --oversubscribe where the node has fewer cores than ranks), and the run finishes with its
# ledger; the command that resumes it is the user's own, without mpirun.
source "$(dirname "$0")/../lib.sh"
cd "$WORK"
python3 - "$SRC/campaigns/layernorm-4096x768.json" ln.json <<'PY'
import json, sys
c = json.load(open(sys.argv[1]))
c["search"].update(budget=4, max_stale=50, restarts=0)
json.dump(c, open(sys.argv[2], "w"))
PY
export TUNEFARM_ROOT="$SRC" TUNEFARM_CACHE="$WORK/cache"
# mpirun's slots are the node's cores: the command must say --oversubscribe itself when needed
unset OMPI_MCA_rmaps_base_oversubscribe
timeout 120 "$TF" run --backend sim --ledgers "$WORK/ledgers" --compile-jobs 0 ln.json >run.out 2>&1 ||
  { cat run.out; fail "run without mpirun failed"; }
grep -q "^tunefarm run: no MPI launcher started it: starting the farm with 1 worker(s) (--backend sim):" run.out ||
  { cat run.out; fail "run did not say it starts the farm itself"; }
grep -Eq "^  mpirun -np 2( --oversubscribe)? [^ ]*/tunefarm run --backend sim --ledgers $WORK/ledgers --compile-jobs 0 ln.json\$" run.out ||
  { cat run.out; fail "run did not print the mpirun command it runs"; }
grep -q "^  $TF run --backend sim --ledgers $WORK/ledgers --compile-jobs 0 ln.json\$" run.out ||
  { cat run.out; fail "the command that resumes is not the user's own"; }
l=$(ls ledgers/ln/*.jsonl)
grep -q '"type":"end","reason":"budget of 4 generations spent"' "$l" || fail "$l did not finish"
check_consecutive "$l"
echo "ok: run without mpirun started the farm itself and finished $l"
