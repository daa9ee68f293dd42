#!/usr/bin/env bash
# How busy speculation keeps the GPUs: each campaign runs for a fixed wall time on every
# GPU of the node, first with the workers compiling ahead (--compile-jobs, `auto` unless
# given) and running the next job ahead of its decision (run's defaults; --run-ahead no
# turns the latter off in this run), and then with neither (--compile-jobs 0
# --no-run-ahead), each from an empty cubin cache and an empty driver compute cache; then, per GPU, the busy fraction (measuring time over wall time) and the decisions per hour
# of both runs, from the ledgers through `tunefarm report` (docs/reference/report.md defines both),
# where the runs compiling ahead still waited (bench/waits.py, with python3), and each worker's
# compile pool line (its CPU time, how busy its cores were). Builds nothing.
#
#   bash bench/busy.sh TUNEFARM [--seconds S] [--gpus G] [--backend cuda|sim]
#                      [--compile-jobs N] [--run-ahead yes|no] [--out DIR] [CAMPAIGN...]
#
# TUNEFARM is the binary; it must find the campaigns' templates (run from the source tree, or
# set TUNEFARM_ROOT). Defaults: 300 s per run, every GPU `tunefarm devices --json` lists (2
# with --backend sim), backend cuda, compiles ahead `auto` (cores per worker less one), a new
# folder busy-<UTC time>, campaigns/matmul-1024.json and campaigns/matmul-2048x1536x1024.json.
# Two runs per campaign: 2 x S seconds, plus start-up. On the simulated device,
# give it a compile and a measuring time first, for example
#   TUNEFARM_SIM_COMPILE=1.2 TUNEFARM_SIM_SLEEP=30 bash bench/busy.sh build/tunefarm \
#     --backend sim --seconds 60 --compile-jobs 8
set -euo pipefail
[ $# -ge 1 ] && [ "${1:0:1}" != - ] || { sed -n 2,20p "$0"; exit 2; }
tf=$(realpath "$1")
shift
seconds=300 gpus="" backend=cuda jobs="" out="" ahead=yes
while [ $# -gt 0 ]; do
  case "$1" in
    --seconds) seconds=$2; shift 2 ;;
    --gpus) gpus=$2; shift 2 ;;
    --backend) backend=$2; shift 2 ;;
    --compile-jobs) jobs=$2; shift 2 ;;
    --run-ahead) ahead=$2; shift 2 ;;
    --out) out=$2; shift 2 ;;
    -h|--help) sed -n 2,20p "$0"; exit 0 ;;
    -*) echo "busy.sh: unknown option '$1'" >&2; exit 2 ;;
    *) break ;;
  esac
done
cd "$(dirname "$0")/.."
campaigns=("$@")
[ ${#campaigns[@]} -gt 0 ] || campaigns=(campaigns/matmul-1024.json campaigns/matmul-2048x1536x1024.json)
if [ -z "$gpus" ]; then
  if [ "$backend" = sim ]; then gpus=2; else gpus=$("$tf" devices --json | grep -c '"uuid"' || true); fi
fi
[ "$gpus" -ge 1 ] || { echo "busy.sh: no GPU found (--gpus G, or --backend sim)" >&2; exit 3; }
out=${out:-busy-$(date -u +%Y%m%dT%H%M%SZ)}
mkdir -p "$out"
out=$(realpath "$out")
export OMPI_ALLOW_RUN_AS_ROOT=${OMPI_ALLOW_RUN_AS_ROOT:-1} OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=${OMPI_ALLOW_RUN_AS_ROOT_CONFIRM:-1}

# One run: the campaign for $seconds (then mpirun is interrupted: the ledgers keep every
# record written), compiling ahead or not, from an empty cache of its own.
run() { # campaign mode
  local name flags=()
  name=$(basename "$1" .json)
  [ "$2" = off ] && flags=(--compile-jobs 0 --no-run-ahead)
  [ "$2" = on ] && flags=(--compile-jobs "${jobs:-auto}")
  [ "$2" = on ] && [ "$ahead" = no ] && flags+=(--no-run-ahead)
  rm -rf "$out/cache-$name-$2" "$out/nvcache-$name-$2"
  echo "busy.sh: $name, speculating $2, $seconds s on $gpus GPU(s)" >&2
  # NVRTC also keeps what it compiles in the driver's compute cache (CUDA_CACHE_PATH, by default
  # ~/.nv/ComputeCache) wherever a driver is installed, across processes and runs: each run
  # gets an empty one of its own, or the second run of a pair finds much of its work done by
  # the first (docs/results.md).
  CUDA_CACHE_PATH="$out/nvcache-$name-$2" TUNEFARM_CACHE="$out/cache-$name-$2" \
    timeout -s INT -k 60 "$seconds" \
    mpirun -np $((gpus + 1)) "$tf" run --backend "$backend" --fresh --ledgers "$out/$2" \
    "${flags[@]}" "$1" >"$out/$name-$2.log" 2>&1 || true
}

# "gpuN<TAB>busy %<TAB>decisions per hour" for every ledger of a run.
figures() { # campaign mode
  "$tf" report "$out/$2/$(basename "$1" .json)" 2>/dev/null | awk '
    /^## / { for (i = 1; i <= NF; i++) if ($i ~ /^gpu[0-9]+$/) gpu = $i }
    /^- time: busy/ { b = $4; sub(/%/, "", b); d = $0; sub(/.*result\), /, "", d); sub(/ decisions.*/, "", d);
                      print gpu "\t" b "\t" d }'
}

for c in "${campaigns[@]}"; do
  run "$c" on
  run "$c" off
done
echo "# busy.sh $(date -u +%Y-%m-%dT%H:%MZ): $seconds s per run, $gpus GPU(s), backend $backend, $tf"
echo "| campaign | GPU | busy, ahead | busy, not | decisions/h, ahead | decisions/h, not | ratio |"
echo "|---|---|---:|---:|---:|---:|---:|"
for c in "${campaigns[@]}"; do
  join -t $'\t' <(figures "$c" on | sort) <(figures "$c" off | sort) |
    awk -F'\t' -v c="$(basename "$c" .json)" '{ printf "| %s | %s | %s%% | %s%% | %s | %s | %.1fx |\n", c, $1, $2, $4, $3, $5, ($5 > 0 ? $3 / $5 : 0) }'
done
if command -v python3 >/dev/null; then
  echo
  echo "Where the runs compiling ahead still waited for compiles (bench/waits.py):"
  echo
  python3 bench/waits.py "$out"/on/*/*.jsonl | sed "s|$out/||"
fi
echo
echo "What each worker's compile pool did in the runs compiling ahead (its line at the end of run):"
echo
for c in "${campaigns[@]}"; do
  name=$(basename "$c" .json)
  grep -h "compile pool" "$out/$name-on.log" 2>/dev/null | sed "s|^|$name: |" ||
    echo "$name: none (a run stopped at --seconds before its search ended prints no such line)"
done
echo "(ledgers and logs: $out)"
