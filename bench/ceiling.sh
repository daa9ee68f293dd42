#!/usr/bin/env bash
# The coordinator's ceiling: decisions per second that one coordinator sustains with W
# workers whose jobs take no time (the simulated device, no TUNEFARM_SIM_SLEEP, no simulated
# compile), every ledger line synced before the job it leads to is sent. Each point runs the
# matmul-1024 A/A campaign (a fixed pair: nothing to propose or compile) for about N decisions
# in all, R times; it prints the median and range of "decisions per second from the first job
# to the last result", of the same in the steady state (after every worker's first result:
# no measure child starting) and of the coordinator's CPU per decision in the steady state,
# which `tunefarm run` prints in its summary (docs/reference/run.md).
#   bash bench/ceiling.sh [--build DIR] [--decisions N] [--repeats R] [--no-run-ahead]
#                         [WORKERS...]
# Defaults: build, 19200 decisions, 3 repeats, run-ahead on (run's default), workers 8 64 256.
# Needs mpirun and jq.
set -euo pipefail
cd "$(dirname "$0")/.."
build=build decisions=19200 repeats=3 flags=()
while [ $# -gt 0 ]; do
  case "$1" in
    --build) build=$2; shift 2 ;;
    --decisions) decisions=$2; shift 2 ;;
    --repeats) repeats=$2; shift 2 ;;
    --no-run-ahead) flags=(--no-run-ahead); shift ;;
    -h|--help) sed -n 2,12p "$0"; exit 0 ;;
    *) break ;;
  esac
done
workers=("$@")
[ ${#workers[@]} -gt 0 ] || workers=(8 64 256)
w=$(mktemp -d)
trap 'rm -rf "$w"' EXIT
export TUNEFARM_ROOT=$PWD TUNEFARM_CACHE=$w/cache
unset TUNEFARM_SIM_SLEEP TUNEFARM_SIM_COMPILE
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMPI_MCA_btl=self,vader
echo "# $(date -u +%Y-%m-%dT%H:%MZ), $(nproc) cores ($(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //')), $build/tunefarm"
echo "| workers | decisions | decisions/s, median (min-max) | steady decisions/s | steady coordinator CPU per decision, us |"
echo "|---:|---:|---|---|---|"
median_range() { sort -n | awk '{v[NR]=$1} END {printf "%s (%s-%s)", v[int((NR+1)/2)], v[1], v[NR]}'; }
for g in "${workers[@]}"; do
  budget=$(( (decisions + g - 1) / g ))
  sed -E "s/\"budget\": [0-9]+/\"budget\": $budget/" campaigns/matmul-1024-aa.json >"$w/ceiling.json"
  : >"$w/rates"
  : >"$w/cpus"
  : >"$w/steady"
  for r in $(seq "$repeats"); do
    rm -rf "$w/ledgers"
    # At 256 ranks on two cores mpirun may report a rank's exit as improper after the run has
    # finished; the summary's line is what counts.
    mpirun --oversubscribe -np $((g + 1)) "$build/tunefarm" run --backend sim \
      --ledgers "$w/ledgers" ${flags[@]+"${flags[@]}"} "$w/ceiling.json" 2>"$w/err" >/dev/null ||
      true
    line=$(grep 'decisions: ' "$w/err") || { tail -20 "$w/err"; exit 1; }
    echo "$line" | sed -E 's/.*= ([0-9]+) per second.*/\1/' >>"$w/rates"
    line=$(grep 'steady: ' "$w/err") || { tail -20 "$w/err"; exit 1; }
    echo "$line" | sed -E 's/.*= ([0-9]+) per second.*/\1/' >>"$w/steady"
    echo "$line" | sed -E 's/.*CPU ([0-9]+) us per decision.*/\1/' >>"$w/cpus"
  done
  echo "| $g | $((budget * g)) | $(median_range <"$w/rates") | $(median_range <"$w/steady") | $(median_range <"$w/cpus") |"
done
