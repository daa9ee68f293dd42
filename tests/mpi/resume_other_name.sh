#!/usr/bin/env bash
# A ledger is its GPU's whatever a launch named it: the gpu<N> of a ledger's name is the
# ordinal the launch gave the worker (gpu0 under srun --gpus-per-task=1, gpuN under mpirun), so
# a ledger of the same GPU (UUID and host) under another ordinal's name is resumed, not
# started over beside it; its search goes on seeded as it began, so it proposes what the
# launch that began it would have. Two ledgers of one GPU are refused naming both, and
# --fresh moves both aside.
source "$(dirname "$0")/../lib.sh"
cd "$WORK"
U=SIM-51de0fa1000000000000000000000001 # a ledger name's uuid8: 51de0fa1
OTHER=SIM-0de1a2ee000000000000000000000002
budget() {
  python3 - "$SRC/campaigns/layernorm-4096x768.json" ln.json "$1" <<'PY'
import json, sys
c = json.load(open(sys.argv[1]))
c["search"].update(budget=int(sys.argv[3]), max_stale=50, restarts=0)
json.dump(c, open(sys.argv[2], "w"))
PY
}
export TUNEFARM_ROOT="$SRC" TUNEFARM_CACHE="$WORK/cache"
host=$(hostname | sed 's/[^A-Za-z0-9._-]/_/g; s/^\./_/')
# one worker, ordinal 0, on the GPU U
run1() { TUNEFARM_SIM_UUID=$U "${MPIRUN[@]}" -np 2 "$TF" run --backend sim "$@" ln.json; }
ended8() { grep -q '"type":"end","reason":"budget of 8 generations spent"' "$1" || fail "$1 did not go on to the budget of 8"; }
new_of() { grep "\"generation\":$2," "$1" | grep -o '"new":{[^}]*}' | head -1; }

budget 1
run1 --ledgers A >run.out 2>&1 || { cat run.out; fail "the first run failed"; }
[ -f "A/ln/$host-gpu0-51de0fa1.jsonl" ] || { ls -R A; fail "no ledger A/ln/$host-gpu0-51de0fa1.jsonl"; }
cp -r A B
cp -r A C
budget 8
run1 --ledgers A >ref.out 2>&1 || { cat ref.out; fail "the reference resume failed"; }

# --- the same GPU as ordinal 1 (rank 1 is another GPU): its launch names it gpu1
TUNEFARM_SIM_UUID=$U "${MPIRUN[@]}" -np 1 "$TF" run --backend sim --ledgers B ln.json \
  : -np 1 -x TUNEFARM_SIM_UUID=$OTHER "$TF" run --backend sim --ledgers B ln.json \
  : -np 1 -x TUNEFARM_SIM_UUID=$U "$TF" run --backend sim --ledgers B ln.json >b.out 2>&1 ||
  { cat b.out; fail "the run under another launch failed"; }
[ ! -e "B/ln/$host-gpu1-51de0fa1.jsonl" ] || { cat b.out; fail "a second ledger of GPU $U was started as gpu1"; }
l="B/ln/$host-gpu0-51de0fa1.jsonl"
grep -q "ledger '.*$host-gpu0-51de0fa1.jsonl' is this GPU's ($U): resuming it" b.out ||
  { cat b.out; fail "the run did not say it resumes the ledger of another name"; }
grep -q "resuming .*$host-gpu0-51de0fa1.jsonl at generation 2" b.out || { cat b.out; fail "not resumed at generation 2"; }
check_consecutive "$l"
ended8 "$l"
# the first proposal after the resume is the one the launch that began the ledger made
[ "$(new_of "$l" 2)" = "$(new_of A/ln/$host-gpu0-51de0fa1.jsonl 2)" ] ||
  fail "generation 2 proposes $(new_of "$l" 2), the first launch $(new_of A/ln/$host-gpu0-51de0fa1.jsonl 2)"
echo "ok: a launch that names the GPU gpu1 resumed its gpu0 ledger, seeded as it began"

# --- renamed to another ordinal's name: the gpu0 launch resumes it
mv "C/ln/$host-gpu0-51de0fa1.jsonl" "C/ln/$host-gpu3-51de0fa1.jsonl"
run1 --ledgers C >c.out 2>&1 || { cat c.out; fail "the run on the renamed ledger failed"; }
[ "$(ls C/ln/*.jsonl)" = "C/ln/$host-gpu3-51de0fa1.jsonl" ] || { ls C/ln; fail "the renamed ledger was not the only one resumed"; }
check_consecutive "C/ln/$host-gpu3-51de0fa1.jsonl"
ended8 "C/ln/$host-gpu3-51de0fa1.jsonl"
echo "ok: a ledger renamed to gpu3 is resumed by the gpu0 launch"

# --- two ledgers of one GPU: refused naming both, nothing written; --fresh moves both aside
cp "C/ln/$host-gpu3-51de0fa1.jsonl" "C/ln/$host-gpu0-51de0fa1.jsonl"
sum=$(cat C/ln/*.jsonl | md5sum)
expect_exit 2 run1 --ledgers C
grep -q "ledgers '.*/ln/$host-gpu0-51de0fa1.jsonl' and '.*/ln/$host-gpu3-51de0fa1.jsonl' are both for device '$U'" last.err ||
  { cat last.err; fail "the conflict does not name both ledgers"; }
[ "$(cat C/ln/*.jsonl | md5sum)" = "$sum" ] || fail "a refused run changed a ledger"
expect_exit 0 run1 --fresh --ledgers C
[ "$(ls C/ln/*.jsonl)" = "C/ln/$host-gpu0-51de0fa1.jsonl" ] || { ls C/ln; fail "--fresh left another ledger of the GPU"; }
[ "$(ls C/ln/*.old | wc -l)" -eq 2 ] || { ls C/ln; fail "--fresh did not move both aside"; }
[ "$(generations "C/ln/$host-gpu0-51de0fa1.jsonl" | head -1)" -eq 1 ] || fail "--fresh did not start again"
echo "ok: two ledgers of one GPU refused naming both; --fresh moves both aside"
