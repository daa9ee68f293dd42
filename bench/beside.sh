#!/usr/bin/env bash
# What the work beside a GPU does to its measure child: the A/A campaign (one program, so
# every generation only loads, checks and measures) runs on GPU 0 alone, then again beside
# each background load in turn, each load started in the scheduler's idle class (as the
# compile pool's processes run) on any core; then, per run, the medians of each generation's
# load, check and measure times and of the time between generations, from the ledger.
#
#   bash bench/beside.sh TUNEFARM [--jobs N] [--backend cuda|sim] [--out DIR] [CAMPAIGN]
#
# Loads: none; N busy loops (CPU only); N memory copies (python3 with numpy: memory
# bandwidth); N loops of `tunefarm compile` of one matmul program into an empty cache each
# time (NVRTC, as the pool runs it). N defaults to the node's cores less one. Default
# campaign campaigns/matmul-1024-aa.json; ledgers and logs under DIR (default beside-<time>).
# --backend sim checks the script itself on a machine without a GPU.
set -euo pipefail
[ $# -ge 1 ] && [ "${1:0:1}" != - ] || { sed -n 2,14p "$0"; exit 2; }
tf=$(realpath "$1")
shift
jobs=$(($(nproc) - 1)) out="" backend=cuda campaign=campaigns/matmul-1024-aa.json
while [ $# -gt 0 ]; do
  case "$1" in
    --jobs) jobs=$2; shift 2 ;;
    --out) out=$2; shift 2 ;;
    --backend) backend=$2; shift 2 ;;
    -h|--help) sed -n 2,14p "$0"; exit 0 ;;
    -*) echo "beside.sh: unknown option '$1'" >&2; exit 2 ;;
    *) campaign=$1; shift ;;
  esac
done
cd "$(dirname "$0")/.."
out=${out:-beside-$(date -u +%Y%m%dT%H%M%SZ)}
mkdir -p "$out"
out=$(realpath "$out")
export OMPI_ALLOW_RUN_AS_ROOT=${OMPI_ALLOW_RUN_AS_ROOT:-1} OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=${OMPI_ALLOW_RUN_AS_ROOT_CONFIRM:-1}
export TUNEFARM_CACHE="$out/cache"
cat >"$out/program.json" <<J
{"root": "$PWD", "sources": ["templates/matmul.cu", "kernels/matmul_regtile.cu"],
 "exprs": ["tf_matmul<64, 64, 64, 4, 8, 0, 1, 2, 0, 1, 0, 1, 0>",
           "tf_matmul<64, 64, 64, 4, 8, 1, 1, 2, 0, 1, 0, 1, 0>", "tf_matmul_regtile"]}
J

load() { # kind: runs until killed
  case $1 in
    spin) exec chrt -i 0 sh -c 'while :; do :; done' ;;
    mem) exec chrt -i 0 python3 -c 'import numpy as np
a = np.ones(1 << 25); b = np.empty_like(a)
while True: np.copyto(b, a)' ;;
    compile) while :; do
               d=$(mktemp -d)
               TUNEFARM_CACHE=$d chrt -i 0 "$tf" compile --arch sm_90 <"$out/program.json" >/dev/null 2>&1 || true
               rm -rf "$d"
             done ;;
  esac
}

medians() { # label ledger
  python3 - "$1" "$2" <<'PY'
import json, statistics as st, sys
recs = [d for d in map(json.loads, open(sys.argv[2])) if d.get('type') == 'generation' and d.get('times')]
recs.sort(key=lambda d: d['elapsed_s'])
m = lambda k: st.median(d['times'][k] * 1e3 for d in recs)
gaps = [(b['elapsed_s'] - a['elapsed_s'] - b['wall_s']) * 1e3 for a, b in zip(recs, recs[1:])]
wall = recs[-1]['elapsed_s'] - recs[0]['elapsed_s'] + recs[0]['wall_s']
print(f"| {sys.argv[1]} | {len(recs)} | {wall:.1f} | {m('load_s'):.1f} | {m('check_s'):.1f} | "
      f"{m('measure_s'):.1f} | {st.median(gaps):.1f} |")
PY
}

run() { # label
  rm -rf "$out/$1"
  mpirun --oversubscribe -np 2 "$tf" run --backend "$backend" --quiet --ledgers "$out/$1" "$campaign" >"$out/$1.log" 2>&1
  medians "$1" "$(ls "$out/$1"/*/*.jsonl | head -1)"
}

run warm-up >/dev/null # compiles the campaign's one program
echo "# beside.sh $(date -u +%Y-%m-%dT%H:%MZ): $campaign, $jobs at once, $tf"
echo "| load | generations | wall s | load ms | check ms | measure ms | between generations ms |"
echo "|---|---:|---:|---:|---:|---:|---:|"
run none
kinds=(spin mem compile)
python3 -c 'import numpy' 2>/dev/null || { kinds=(spin compile); echo "(no numpy for python3: no memory load)"; }
for kind in "${kinds[@]}"; do
  pids=()
  for _ in $(seq "$jobs"); do load $kind & pids+=($!); done
  sleep 2
  run "$kind-$jobs" || true
  kill "${pids[@]}" 2>/dev/null || true
  wait 2>/dev/null || true
done
echo "(ledgers and logs: $out)"
