#!/usr/bin/env bash
# A worker sizes its compile pool from its CPU mask (worker/cpus.h). Confined to one core
# (taskset -c 0, as srun -c 1 --cpu-bind=cores would), `--compile-jobs auto` compiles nothing
# ahead and says why: that core is the measure child's. Bound to one core by mpirun itself
# (its default for two ranks), the mask only places the measure child, and the pool takes
# the node's other cores, as many as the node has less one. Short simulated farms.
source "$(dirname "$0")/../lib.sh"
cd "$WORK"
cores=$(getconf _NPROCESSORS_ONLN)
[ "$cores" -ge 2 ] || { echo "SKIP: one online CPU: no core to confine a worker to"; exit 77; }
sed -E 's/"budget": [0-9]+/"budget": 4/; s/"max_stale": [0-9]+/"max_stale": 4/;
        s/"restarts": [0-9]+/"restarts": 0/' "$SRC/campaigns/matmul-1024.json" >aff.json
export TUNEFARM_ROOT="$SRC" TUNEFARM_SIM_COMPILE=0.05 TUNEFARM_SIM_SLEEP=5
pool='compile pool, [0-9]+ at once'

run=("$TF" run --backend sim aff.json)
# --bind-to none: a rank that mpirun bound says so in its environment, whatever taskset does
# after (docs/reference/run.md).
TUNEFARM_CACHE="$WORK/cache-one" "${MPIRUN[@]}" --bind-to none -np 1 "${run[@]}" --ledgers "$WORK/one" \
  : -np 1 taskset -c 0 "${run[@]}" --ledgers "$WORK/one" 2>one.err ||
  { cat one.err; fail "the run with its worker on core 0 failed"; }
grep -E "$pool" one.err && fail "a worker confined to one core compiled ahead beside its measure child"
grep -q "worker rank 1 compiles nothing ahead: its CPU mask holds one CPU" one.err ||
  { cat one.err; fail "the confined worker did not say why it compiles nothing ahead"; }

# mpirun binds two ranks a core each (no --oversubscribe, which turns binding off).
TUNEFARM_CACHE="$WORK/cache-placed" mpirun -np 2 "${run[@]}" --ledgers "$WORK/placed" \
  2>placed.err || { cat placed.err; fail "the run under mpirun's binding failed"; }
want=$((cores - 1))
grep -Eq "compile pool, $want at once" placed.err ||
  { grep -E "$pool|bound" placed.err; fail "under mpirun's binding the pool should run $want at once"; }
echo "ok: one core confined, no pool; mpirun's core, $want at once"
