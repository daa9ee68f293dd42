#!/usr/bin/env bash
# Registers and spills of every reachable configuration of a campaign, from ptxas itself:
# the configurations come from `tunefarm audit --list`, are instantiated 64 to a file and
# compiled with `nvcc -cubin -Xptxas -v` for sm_90, two files at a time. No GPU needed.
#
#   bash bench/spills.sh campaigns/matmul-1024.json [JOBS] [WHERE]
#
# WHERE, an expression as in `tunefarm audit --where`, keeps part of the space (e.g. 'FRAG == 1').
# Prints one line per configuration that spills (or has a stack frame), then a summary:
# configurations, spilling ones, the register range. Exit status 1 when any spills.
set -euo pipefail
cd "$(dirname "$0")/.."
campaign=${1:?usage: bash bench/spills.sh CAMPAIGN [JOBS] [WHERE]}
jobs=${2:-2}
where=${3:-1}
tf=${TF:-build/tunefarm}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
"$tf" audit --list --where "$where" "$campaign" >"$work/names"
case $(head -1 "$work/names") in
  tf_matmul*) src=templates/matmul.cu; sig='(const float*, const float*, float*, int, int, int)' ;;
  tf_layernorm*) src=templates/layernorm.cu
    sig='(const float*, const float*, const float*, float*, int, int, float)' ;;
  *) echo "spills.sh: no signature known for $(head -1 "$work/names")" >&2; exit 2 ;;
esac
split -l 64 -d -a 4 "$work/names" "$work/part."
for p in "$work"/part.*; do
  { cat "$src"; sed "s/.*/template __global__ void &$sig;/" "$p"; } >"$p.cu"
done
ls "$work"/part.*.cu | xargs -P "$jobs" -I{} sh -c \
  'nvcc -arch=sm_90 -std=c++17 -cubin -Xptxas -v -o /dev/null "$1" >"$1.log" 2>&1 || { cat "$1.log" >&2; exit 255; }' _ {}
# ptxas prints, per function: "Compiling entry function '<mangled>'", then its properties.
cat "$work"/part.*.cu.log | awk '
  /Compiling entry function/ { fn = $0; sub(/.*function .?/, "", fn); sub(/.? for .*/, "", fn) }
  /bytes stack frame/ { stack = $1 + 0; spill = ($5 + 0) + ($9 + 0) }
  /Used [0-9]+ registers/ {
    for (i = 1; i <= NF; i++) if ($i == "Used") r = $(i + 1) + 0
    n++; if (r > max) max = r; if (min == 0 || r < min) min = r
    if (stack > 0 || spill > 0) { bad++; print "spills: " fn " (" r " registers, stack " stack ", spill bytes " spill ")" }
  }
  END { printf "%d configurations compiled, %d spill or use a stack frame, registers %d-%d\n", n, bad, min, max; exit bad > 0 }'
