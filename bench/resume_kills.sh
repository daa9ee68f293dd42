#!/usr/bin/env bash
# Resume is exact: a simulated two-GPU campaign is killed with kill -9 (mpirun and every rank
# at once, as in a node crash) at N random moments, each in a run of its own, and resumed
# with the same command; each resumed pair of ledgers must equal an uninterrupted run of the
# same seed in every record's kind, generation, restart, duel, decision, reason, times of the
# three arms, median, per-round ratios and job id (timestamps and wall times aside). The
# canary is off: a resumed run's measure processes are new, and vetting them would measure
# rounds the uninterrupted run did not. tests/mpi/resume_exact.sh checks three cut points in
# CI; this is the long form. Prints a row per kill and the count that matched.
#   bash bench/resume_kills.sh [--build DIR] [--points N] [--seed S]
# Defaults: build, 20 points, seed 1 (of the kill moments). About 30 s a point on two cores.
set -euo pipefail
cd "$(dirname "$0")/.."
build=build points=20 seed=1
while [ $# -gt 0 ]; do
  case "$1" in
    --build) build=$2; shift 2 ;;
    --points) points=$2; shift 2 ;;
    --seed) seed=$2; shift 2 ;;
    -h|--help) sed -n 2,11p "$0"; exit 0 ;;
    *) echo "resume_kills.sh: unknown argument '$1'" >&2; exit 2 ;;
  esac
done
tf=$(realpath "$build/tunefarm")
w=$(mktemp -d)
trap 'pkill -9 -f -- "--ledgers $w/" 2>/dev/null || true; rm -rf "$w"' EXIT
export TUNEFARM_ROOT=$PWD TUNEFARM_CACHE=$w/cache
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMPI_MCA_btl=self,vader
sed -E 's/"budget": [0-9]+/"budget": 60/; s/"restarts": [0-9]+/"restarts": 2/; s/"max_stale": [0-9]+/"max_stale": 8/' \
  campaigns/matmul-1024.json | sed 's/"decide":/"canary": {"rounds": 0},\n  "decide":/' >"$w/exact.json"
run() { mpirun --oversubscribe -np 3 "$tf" run --backend sim --ledgers "$1" --quiet "$w/exact.json"; }
facts() {
  grep -oE '"(type|generation|restart|duel|decision|reason|best_us|new_us|control_us|median_ratio|id)":("[^"]*"|[^,}]*)|"ratios":\[[^]]*\]' "$1"
}
# The simulated device sleeps 20x its simulated time, so a run lasts long enough to be hit.
t0=$(date +%s.%N)
TUNEFARM_SIM_SLEEP=20 run "$w/full" 2>"$w/full.err" || { cat "$w/full.err"; exit 1; }
span=$(echo "$(date +%s.%N) - $t0" | bc)
mapfile -t full < <(cd "$w/full/exact" && ls ./*.jsonl)
echo "# resume_kills.sh $(date -u +%Y-%m-%dT%H:%MZ): uninterrupted run $(printf %.1f "$span") s," \
  "$(cat "$w"/full/exact/*.jsonl | wc -l) records in ${#full[@]} ledgers; $points kills"
echo "| kill | after s | records left | equal to the uninterrupted run |"
echo "|---:|---:|---:|---|"
RANDOM=$seed
same=0
for i in $(seq "$points"); do
  at=$(echo "scale=2; $((RANDOM % 1000)) * $span * 0.9 / 1000 + 0.5" | bc)
  dir="$w/k$i"
  TUNEFARM_SIM_SLEEP=20 run "$dir" >/dev/null 2>&1 &
  pid=$!
  sleep "$at"
  pkill -9 -f -- "--ledgers $dir " || true
  wait "$pid" 2>/dev/null || true
  left=$(cat "$dir"/exact/*.jsonl 2>/dev/null | wc -l || true)
  ok=yes
  run "$dir" 2>"$w/resume.err" || { ok="no: the resume failed: $(tail -1 "$w/resume.err")"; }
  for l in "${full[@]}"; do
    [ "$ok" = yes ] || break
    cmp -s <(facts "$w/full/exact/$l") <(facts "$dir/exact/$l") || ok="no: $l differs"
  done
  [ "$ok" = yes ] && same=$((same + 1))
  echo "| $i | $at | $left | $ok |"
  rm -rf "$dir"
done
echo "$same of $points resumed runs equal the uninterrupted one"
[ "$same" -eq "$points" ]
