#!/usr/bin/env bash
# Device call 4 (nvidia-h200-x2): decisions per hour per GPU on one GPU and on two, same
# campaigns, same protocol (issue 7's measurement on the GPUs this workplace lends).
set -uo pipefail
source bench/gpu_env.sh
OUT=${OUT:-/tmp/out}
R=$PWD/gpu-results
rm -rf "$R"; mkdir -p "$R/logs" "$OUT"
cmake -B build -DCMAKE_BUILD_TYPE=RelWithDebInfo >"$R/logs/build.log" 2>&1 &&
  cmake --build build -j 32 >>"$R/logs/build.log" 2>&1 || { tail -20 "$R/logs/build.log"; exit 1; }
export TUNEFARM_CACHE=$PWD/build/cache
for c in decide-aa matmul-1024-aa; do
  for g in 1 2; do
    vis=0; [ $g -eq 2 ] && vis=0,1
    CUDA_VISIBLE_DEVICES=$vis timeout 60 mpirun --oversubscribe --bind-to none -np $((g + 1)) \
      build/tunefarm run --backend cuda --ledgers "$R/ledgers-$g" "campaigns/$c.json" \
      >"$R/logs/run-$c-$g.log" 2>&1
    echo "$c on $g GPU(s): rc=$? $(grep -E 'coordinator:|rate:' "$R/logs/run-$c-$g.log" | tr -s ' ' | tr '\n' ';')"
  done
done | tee "$R/summary.txt"
tar czf "$OUT/scaling.tgz" -C "$R" logs summary.txt
