#!/usr/bin/env bash
# Device call 3 (nvidia-h200-x2): the real 3-rank campaigns, one worker per GPU, from their
# start configurations, with the campaigns' default (sequential) rule; reports and verify.
set -uo pipefail
source bench/gpu_env.sh
gpu_session_start
build/tunefarm devices >"$R/logs/devices.txt" 2>&1
G=$(build/tunefarm devices --json 2>/dev/null | grep -c uuid)
(cd build && timeout 120 ctest -L gpu --output-on-failure) >"$R/logs/ctest-gpu.log" 2>&1
say "ctest gpu: $(grep -E 'tests passed|tests failed' "$R/logs/ctest-gpu.log")"
python3 bench/peers.py >"$R/logs/peers.jsonl" 2>&1; say "peers: $(wc -l <"$R/logs/peers.jsonl") lines"
for c in faulty matmul-1024 layernorm-4096x768; do
  t0=$(date +%s)
  timeout 240 mpirun --oversubscribe --bind-to none -np $((G + 1)) build/tunefarm run --backend cuda \
    --ledgers "$R/ledgers" "campaigns/$c.json" >"$R/logs/run-$c.log" 2>&1
  say "mpirun -np $((G + 1)) build/tunefarm run --backend cuda campaigns/$c.json: rc=$? $(( $(date +%s) - t0 )) s"
  build/tunefarm report "$R/ledgers/$c" >"$R/logs/report-$c.md" 2>&1
  build/tunefarm verify "$R"/ledgers/$c/*.jsonl | tail -1 | tee -a "$S"
  grep -A3 '^  gpu' "$R/logs/run-$c.log" | tee -a "$S"
done
