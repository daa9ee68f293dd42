#!/usr/bin/env bash
# `run --quiet` drops the progress lines, not the run's outcome: the final summary still comes.
source "$(dirname "$0")/../lib.sh"
cd "$WORK"
python3 - "$SRC/campaigns/layernorm-4096x768.json" ln.json <<'PY'
import json, sys
c = json.load(open(sys.argv[1]))
c["search"].update(budget=4, max_stale=50, restarts=0)
json.dump(c, open(sys.argv[2], "w"))
PY
export TUNEFARM_ROOT="$SRC" TUNEFARM_CACHE="$WORK/cache"
"${MPIRUN[@]}" -np 2 "$TF" run --backend sim --quiet --ledgers "$WORK/ledgers" ln.json >run.out 2>run.err ||
  { cat run.err; fail "the run failed"; }
grep -E '\] gen [0-9]|^tunefarm: (loading|measuring)' run.err && fail "--quiet printed progress lines"
grep -q "^tunefarm: campaign ln finished" run.err || { cat run.err; fail "--quiet dropped the summary"; }
grep -Eq "^  gpu0 .*: 4 generations = 4 measured" run.err || { cat run.err; fail "no per-GPU summary"; }
grep -q "^    ledger: $WORK/ledgers/ln/" run.err || { cat run.err; fail "the summary names no ledger"; }
echo "ok: --quiet keeps the final summary and drops the progress lines"
