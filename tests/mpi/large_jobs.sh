#!/usr/bin/env bash
# A job larger than MPI's eager limit (one carrying its compile-ahead list) reaches a lone
# worker at once, and so does the next job after a result larger than the limit (run again
# with the limit lowered to 1 KB: every result past it). Without single-copy transfers
# (containers often forbid them, and the GPU machines run so) such a message moves only while
# both sides call MPI: its sender sends blocking, its receiver polls with a short sleep
# (common/mpimsg.h). The gap between one result and the next job is a few milliseconds on the
# simulated device; the test allows 0.1 s.
source "$(dirname "$0")/../lib.sh"
cd "$WORK"
sed -E 's/"budget": [0-9]+/"budget": 16/; s/"max_stale": [0-9]+/"max_stale": 50/' \
  "$SRC/campaigns/matmul-1024.json" >spec.json
export TUNEFARM_ROOT="$SRC" TUNEFARM_SIM_COMPILE=0.05 TUNEFARM_CACHE="$WORK/cache"
export OMPI_MCA_btl_vader_single_copy_mechanism=none
# gap LEDGER: the median time between a result and the next job reaching the worker
gap() {
  jq -s '[.[] | select(.status and .elapsed_s)] | sort_by(.elapsed_s) as $r
    | [range(1; $r | length) | $r[.].elapsed_s - $r[.-1].elapsed_s - $r[.].wall_s] | sort
    | .[length / 2 | floor]' "$@"
}
for limit in default 1024; do
  [ "$limit" = default ] || export OMPI_MCA_btl_vader_eager_limit=$limit
  "${MPIRUN[@]}" -np 2 "$TF" run --backend sim --fresh --ledgers "$WORK/l" --compile-jobs 2 \
    spec.json 2>run.err || { cat run.err; fail "the run failed (eager limit $limit)"; }
  g=$(gap l/spec/*.jsonl)
  echo "eager limit $limit: median gap between a result and the next job: $g s"
  awk -v g="$g" 'BEGIN { exit !(g < 0.1) }' ||
    fail "jobs waited $g s (median) to reach the worker (eager limit $limit)"
done
echo "ok: large jobs and results move at once"
