#!/usr/bin/env bash
# Set up, then tune CAMPAIGN on every GPU of this node: one coordinator + one worker per GPU.
# Without a GPU the farm runs on the simulated device with two workers, and says so. Ends
# with the report on stdout, the same report as a page, LEDGERS/<campaign>.html, and each
# GPU's best exported as code that builds with plain nvcc (and, from a GPU, the cubin the farm
# measured), LEDGERS/<campaign>-export/.
#   bash scripts/run.sh [CAMPAIGN [tunefarm run options...]]
# It builds in the repository it belongs to and runs from the caller's folder, as `tunefarm run`
# does: a relative CAMPAIGN is the caller's file (a project of one's own: campaigns/, templates/
# and kernels/ side by side), else the repository's (campaigns/matmul-1024.json from anywhere);
# the ledgers, the page and the export land under the caller's folder (LEDGERS: ledgers/, or
# --ledgers DIR).
set -euo pipefail
repo="$(cd "$(dirname "$0")/.." && pwd)"
tf="$repo/build/tunefarm"
campaign="${1:-campaigns/matmul-1024.json}"
shift || true
if [ "${campaign#/}" = "$campaign" ] && [ ! -e "$campaign" ] && [ -e "$repo/$campaign" ]; then
  campaign="$repo/$campaign"
fi
ledgers=ledgers
args=("$@")
# Where the farm writes its ledgers, read as `tunefarm run` reads it (getopt_long: --ledgers DIR,
# --ledgers=DIR, an abbreviation like --led=DIR, -l DIR, -lDIR; the last one given wins). The
# option list is tunefarm run's. Options getopt does not take are left to tunefarm, which
# refuses them with exit 2 before anything runs.
if parsed=$(getopt -q -o b:l:fqh -l backend:,ledgers:,fresh,quiet,compile-jobs:,worker-margin:,no-run-ahead,help -- "$@"); then
  eval set -- "$parsed"
  while [ "$1" != -- ]; do
    case "$1" in
      -l|--ledgers) ledgers=$2; shift 2 ;;
      -b|--backend|--compile-jobs|--worker-margin) shift 2 ;;
      *) shift ;;
    esac
  done
fi

say() { echo "run.sh: $*" >&2; }

# setup is quiet when it works; its whole output is kept, and shown when it does not
say "installing what is missing, configuring and building build/ (a minute the first time)"
log=$(mktemp)
if ! (cd "$repo" && bash scripts/setup.sh) >"$log" 2>&1; then
  cat "$log" >&2
  rm -f "$log"
  say "setup failed (above)"
  exit 1
fi
rm -f "$log"
say "built build/tunefarm"

gpus=$("$tf" devices --json 2>/dev/null | grep -c uuid || true)
mpi=()
if [ "$gpus" -eq 0 ]; then
  gpus=2
  mpi=(--oversubscribe)
  say "no GPU here: the farm runs on the simulated device with two workers"
else
  say "$gpus GPU(s): one worker each"
fi
[ "$(id -u)" -ne 0 ] || export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
# tunefarm announces its own phases: loading, enumerating the space, ledgers, measuring
say "mpirun -np $((gpus + 1)) $tf run $campaign ${args[*]}"
mpirun -np $((gpus + 1)) "${mpi[@]}" "$tf" run "$campaign" "${args[@]}"
name="$(basename "$campaign" .json)"
"$tf" report --html "$ledgers/$name.html" "$ledgers/$name"
"$tf" report "$ledgers/$name"
for l in "$ledgers/$name"/*.jsonl; do
  id=$(basename "$l" .jsonl | tr -c 'A-Za-z0-9_\n' _)
  "$tf" export -o "$ledgers/$name-export" --name "tf_$id" "$l" >&2
done
say "the report as a page: $ledgers/$name.html (open it in a browser)"
say "each GPU's best as a kernel to build with the nvcc command export printed above (from a GPU, with the cubin the farm measured): $ledgers/$name-export/"
