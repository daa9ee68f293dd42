#!/usr/bin/env bash
# Scaling of the coordinator on the simulated device (what a CPU-only machine can measure):
# 1, 2, 8 and 64 workers, each measuring the matmul-1024 A/A pair for BUDGET generations with
# the simulated device sleeping through its simulated time (TUNEFARM_SIM_SLEEP), so a
# generation takes about as long as on the GPU. Prints decisions per hour per worker and the
# coordinator's share of its core.  Usage: bash bench/sim_scaling.sh [BUDGET] [WORKERS...]
set -euo pipefail
cd "$(dirname "$0")/.."
budget=${1:-20}
shift || true
workers=("${@:-1 2 8 64}")
[ $# -gt 0 ] || workers=(1 2 8 64)
w=$(mktemp -d)
sed -E "s/\"budget\": [0-9]+/\"budget\": $budget/" campaigns/matmul-1024-aa.json >"$w/scaling.json"
export TUNEFARM_ROOT=$PWD TUNEFARM_SIM_SLEEP=${TUNEFARM_SIM_SLEEP:-20}
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMPI_MCA_btl=self,vader
echo "| workers | wall s | coordinator CPU s | coordinator share of a core | decisions/hour per worker: min, median, max |"
echo "|---:|---:|---:|---:|---|"
for g in "${workers[@]}"; do
  rm -rf "$w/ledgers"
  mpirun --oversubscribe -np $((g + 1)) build/tunefarm run --backend sim --ledgers "$w/ledgers" \
    "$w/scaling.json" 2>"$w/run-$g.log" >/dev/null
  coord=$(grep 'coordinator:' "$w/run-$g.log")
  cpu=$(echo "$coord" | sed -E 's/.*: ([0-9.]+) s of CPU in ([0-9.]+) s of wall time \(([0-9.]+)%.*/\1 \2 \3/')
  rates=$(grep -o '= [0-9]* per hour' "$w/run-$g.log" | awk '{print $2}' | sort -n | tr '\n' ' ')
  read -r c wall share <<<"$cpu"
  stats=$(echo "$rates" | awk '{n=NF; printf "%s, %s, %s", $1, $(int((n+1)/2)), $n}')
  echo "| $g | $wall | $c | $share% | $stats |"
done
rm -rf "$w"
