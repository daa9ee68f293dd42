#!/usr/bin/env bash
# Set up, then tune CAMPAIGN on every GPU of this node: one coordinator + one worker per GPU.
# Without a GPU the farm runs on the simulated device with two workers, and says so.
set -euo pipefail
cd "$(dirname "$0")/.."
campaign="${1:-campaigns/matmul-1024.json}"
shift || true
bash scripts/setup.sh >/dev/null
gpus=$(build/tunefarm devices --json 2>/dev/null | grep -c uuid || true)
args=()
if [ "$gpus" -eq 0 ]; then
  gpus=2
  args=(--oversubscribe)
fi
[ "$(id -u)" -ne 0 ] || export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
mpirun -np $((gpus + 1)) "${args[@]}" build/tunefarm run "$campaign" "$@"
build/tunefarm report ledgers/"$(basename "$campaign" .json)"
