#!/usr/bin/env bash
# On the GPU(s): an identical short kernel (layernorm 4096x128, about 6 microseconds) in the best
# and new slots must measure the same in every fresh measure process. Each generation runs in
# a process of its own (search.fresh_every 1), 48 recorded rounds. A process fails when, on
# either instrument (event span, CUPTI's kernel time), the 95% interval of its median new/best
# lies wholly past 0.5% from 1. The interval, not the median alone: at this kernel a tick of
# either timer is a sizeable part of 0.5%, so that the span's median alone reads past 0.5% in
# a fair share of unbiased processes, evenly on both sides (docs/results.md, "Verdict
# accuracy"). A bias of the size buffer placement causes with per-arm buffers (1-4%) fails on
# both instruments.
source "$(dirname "$0")/../lib.sh"
source "$(dirname "$0")/../lib_gpu.sh"
cd "$WORK"
mkdir -p campaigns
# The canary stays off: it would replace a biased process, and the test is of the layout.
cat >campaigns/aa.json <<'JSON'
{
  "template": "layernorm",
  "problem": {"R": 4096, "D": 128},
  "start": {"FORM": 0, "WARPS": 2, "BLOCK": 256, "VEC": 1, "RSQRT": 0, "CACHE": 0, "HINT": 0, "ROWS": 1},
  "control": "layernorm_twowarp",
  "search": {"mode": "aa", "budget": 2, "fresh_every": 1},
  "measure": {"burn_in": 4, "rounds": 48, "samples": 20, "input_sets": 2, "flush_l2": true, "deadline_s": 120, "seed": 1},
  "decide": {"rule": "median", "min_gain": 0.01, "drift_tolerance": 0.03, "max_requeue": 0},
  "canary": {"rounds": 0}
}
JSON
TUNEFARM_ROOT="$SRC" "${MPIRUN[@]}" -np $((GPUS + 1)) "$TF" run --backend cuda \
  --ledgers "$WORK/ledgers" campaigns/aa.json 2>run.err || { cat run.err; fail "run failed"; }
"$TF" report "$WORK/ledgers/aa" >report.md
# Process rows: | run | child | gens | canary span | canary kernel | verdict | rounds | span | kernel | keeps |
rows=$(grep -E '^\| [0-9]{4}-' report.md) || fail "no measure process in the report"
n=$(echo "$rows" | wc -l)
[ "$n" -ge 2 ] || fail "expected at least 2 fresh measure processes, got $n"
echo "$rows" | awk -F'|' '{
  for (k = 9; k <= 10; k++) {
    # "+0.13% [-0.27%, +0.53%]"; a cell without an interval (no finite median or interval,
    # CUPTI missing) fails too: the test is of both instruments
    if ($k !~ /\[/) { print "process " $3 ": no A/A interval in column " k ": " $k; bad = 1; continue }
    x = $k; gsub(/[][,%]/, " ", x); split(x, w, " ")
    if (w[2] + 0 > 0.5 || w[3] + 0 < -0.5) { print "process " $3 ": A/A bias " $k " (column " k ")"; bad = 1 }
  }
} END { exit bad }' || fail "an identical kernel measured apart in one process: an interval wholly past 0.5%, or none"
echo "$rows"
echo "ok: $n fresh processes, no A/A interval wholly past 0.5%"
