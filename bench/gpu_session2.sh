#!/usr/bin/env bash
# Device call 2 (nvidia-h200-x2): GPU tests, the fault campaign, the real 3-rank campaigns
# matmul-1024 and layernorm-4096x768 with their reports, and the correctness sweep of the
# matmul template on its four shapes. Results in $OUT (logs.tgz, ledgers.tgz, summary.txt).
set -uo pipefail
source bench/gpu_env.sh
LATE_S=500
gpu_session_start
(cd build && timeout 150 ctest -L gpu --output-on-failure) >"$R/logs/ctest-gpu.log" 2>&1
say "ctest gpu: $(grep -E 'tests passed|tests failed' "$R/logs/ctest-gpu.log")"
G=$(build/tunefarm devices --json 2>/dev/null | grep -c uuid)
mpi=(mpirun --oversubscribe --bind-to none)
for c in faulty matmul-1024 layernorm-4096x768; do
  late "run $c" && continue
  t0=$(date +%s)
  timeout 200 "${mpi[@]}" -np $((G + 1)) build/tunefarm run --backend cuda --ledgers "$R/ledgers" \
    "campaigns/$c.json" >"$R/logs/run-$c.log" 2>&1
  say "run $c: rc=$? $(( $(date +%s) - t0 )) s"
  build/tunefarm report "$R/ledgers/$c" >"$R/logs/report-$c.md" 2>&1
  build/tunefarm verify "$R"/ledgers/$c/*.jsonl | tail -1 | tee -a "$S"
  tail -8 "$R/logs/run-$c.log" | tee -a "$S"
done
mkdir -p sweep/campaigns
for spec in "matmul-1024:M=1024,N=1024,K=1024" "matmul-1000:M=1000,N=1000,K=1000" \
            "matmul-thin:M=128,N=8192,K=64" "matmul-odd:M=4095,N=4097,K=1023"; do
  name=${spec%%:*}; dims=${spec#*:}
  late "sweep $name" && continue
  python3 - campaigns/matmul-1024.json "$dims" >"sweep/campaigns/$name.json" <<'PY'
import json, sys
c = json.load(open(sys.argv[1]))
for kv in sys.argv[2].split(","):
    k, v = kv.split("="); c["problem"][k] = int(v)
print(json.dumps(c))
PY
  t0=$(date +%s)
  TUNEFARM_ROOT=$PWD timeout 150 "${mpi[@]}" -np "$(nproc)" build/tunefarm audit --run \
    "sweep/campaigns/$name.json" >"$R/logs/sweep-$name.log" 2>&1
  say "sweep $name: rc=$? $(( $(date +%s) - t0 )) s; $(grep -E '^audit:|^run:' "$R/logs/sweep-$name.log" | tr '\n' ' ')"
done
grep -h -A1 '^FAILED' "$R"/logs/sweep-*.log | head -20 | tee -a "$S"
