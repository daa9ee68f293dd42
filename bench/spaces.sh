#!/usr/bin/env bash
# The recorded spaces of the strategy comparison (docs/reference/strategies.md, "Comparing
# strategies"): four campaigns (campaigns/space-*.json: matmul 1024^3 and 2048x1536x1024,
# layernorm 4096x768 and 16384x4096, each narrowed by its "knobs" key, its "doc" says how; on
# an H200 the last three took 3m46s, 4m25s and 1m57s, compiles included) swept on one GPU with
# `tunefarm sweep`, then every strategy replayed on each space under many seeds.
#
#   bash bench/spaces.sh [--out DIR] [record]   on the GPU machine: one step, then it exits
#   bash bench/spaces.sh [--out DIR] status     what is recorded, what is left
#   bash bench/spaces.sh [--out DIR] [--seeds N] compare   on any machine, once all are recorded
#
# record: sweeps the first space not yet recorded, DIR/NAME.tfspace, under `timeout 540` (a
# device command has ten minutes). A sweep cut by the timeout keeps what it measured in
# DIR/NAME.tfspace.part, and the same command resumes it on the same GPU (a part names its
# device; another GPU refuses it). Exit status 0 when that space is complete (run it again
# for the next one; it says "every space is recorded" at the end), 75
# when the step ran out of time (run it again to resume), else the sweep's. Each space compiles
# into its own empty cubin cache (DIR/NAME.cache) and NVRTC's own (DIR/NAME.nvcache, the
# driver's compute cache), so every compile time recorded is a compile.
# compare: scripts/compare-strategies.sh --space for each space, N seeds (default 100) of
# coordinate, random, annealing and model at the campaign's budget (about a tenth of the
# space), the last column one past it: the runs' final answers, since a duel due when the
# budget is spent is measured after it; the tables go to DIR/NAME.md and the ledgers under
# DIR/compare/NAME.
# DIR defaults to spaces-out; TUNEFARM (default build/tunefarm) is the binary; DEVICE (default
# 0) the GPU that record sweeps on; STEP_S (default 540) the seconds of a step; BACKEND=sim
# records on the simulated device instead (a dry run of this script on a machine without a GPU).
set -euo pipefail
cd "$(dirname "$0")/.."
out=spaces-out seeds=100 step=record
names=(space-matmul-1024 space-matmul-2048x1536x1024 space-layernorm-4096x768 space-layernorm-16384x4096)
die() { echo "bench/spaces.sh: $*" >&2; exit 2; }
while [ $# -gt 0 ]; do
  case "$1" in
    --out) out=$2; shift 2 ;;
    --seeds) seeds=$2; shift 2 ;;
    record|status|compare) step=$1; shift ;;
    -h|--help) sed -n '2,24p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) die "unknown argument '$1' (see --help)" ;;
  esac
done
tf=$(realpath -m "${TUNEFARM:-build/tunefarm}")
[ -x "$tf" ] || die "no tunefarm binary at '$tf' (build first, or set TUNEFARM)"
[[ "$seeds" =~ ^[1-9][0-9]*$ ]] || die "--seeds '$seeds' must be a positive integer"
export TUNEFARM_ROOT="${TUNEFARM_ROOT:-$PWD}"
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
mkdir -p "$out"
out=$(realpath "$out")

status() {
  for n in "${names[@]}"; do
    if [ -f "$out/$n.tfspace" ]; then echo "$n: recorded ($out/$n.tfspace)"
    elif [ -f "$out/$n.tfspace.part" ]; then
      echo "$n: $(grep -c '"type":"config"' "$out/$n.tfspace.part" || true) configurations measured so far"
    else echo "$n: not started"; fi
  done
}

record() {
  for n in "${names[@]}"; do
    [ -f "$out/$n.tfspace" ] && continue
    echo "bench/spaces.sh: sweeping $n ($("$tf" check "campaigns/$n.json" | sed -n 's/ *reachable: *\([0-9]*\).*/\1/p') configurations) on GPU ${DEVICE:-0}" >&2
    local rc=0
    CUDA_CACHE_PATH="$out/$n.nvcache" TUNEFARM_CACHE="$out/$n.cache" timeout --kill-after=15 "${STEP_S:-540}" \
      "$tf" sweep --backend "${BACKEND:-cuda}" --device "${DEVICE:-0}" -o "$out/$n.tfspace" "campaigns/$n.json" || rc=$?
    if [ "$rc" -eq 124 ] || [ "$rc" -eq 137 ]; then
      echo "bench/spaces.sh: $n is not finished; the same command resumes it" >&2
      exit 75
    fi
    [ "$rc" -eq 0 ] || exit "$rc"
    echo "bench/spaces.sh: $n recorded: $out/$n.tfspace ($(du -k "$out/$n.tfspace" | cut -f1) KB)" >&2
    exit 0
  done
  echo "bench/spaces.sh: every space is recorded; next: bash bench/spaces.sh compare" >&2
}

compare() {
  for n in "${names[@]}"; do
    [ -f "$out/$n.tfspace" ] || die "space '$out/$n.tfspace' is not recorded yet (bash bench/spaces.sh record)"
  done
  for n in "${names[@]}"; do
    local budget
    budget=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["search"]["budget"])' "campaigns/$n.json")
    echo "bench/spaces.sh: comparing on $n, $seeds seeds, budget $budget" >&2
    bash scripts/compare-strategies.sh --tunefarm "$tf" --space "$out/$n.tfspace" \
      --seeds "$seeds" --at "$((budget / 8)),$((budget / 4)),$((budget / 2)),$budget,$((budget + 1))" \
      --out "$out/compare/$n" "campaigns/$n.json" coordinate random annealing model >"$out/$n.md"
    cat "$out/$n.md"
  done
}

"$step"
