#!/usr/bin/env bash
# Device call 1 (nvidia-h200-x2): build, unit and GPU tests, the GPU correctness sweep of
# both templates on the headline and awkward shapes, and the decision-study campaigns.
# Everything lands in $OUT/logs.tgz and $OUT/ledgers.tgz; a summary is printed last.
set -uo pipefail
source bench/gpu_env.sh
gpu_session_start
(cd build && timeout 200 ctest -L 'unit|gpu' --output-on-failure -j 4) >"$R/logs/ctest.log" 2>&1
say "ctest unit+gpu: $(grep -E 'tests passed|tests failed' "$R/logs/ctest.log")"
grep -E '^\s*[0-9]+/[0-9]+ Test' "$R/logs/ctest.log" | grep -v Passed | tee -a "$S"
build/tunefarm devices >"$R/logs/devices.txt" 2>&1
G=$(build/tunefarm devices --json 2>/dev/null | grep -c uuid)
say "GPUs: $G"
mpi=(mpirun --oversubscribe --bind-to none)
# The decision-study and A/A campaigns: one worker per GPU, all rounds recorded.
for c in decide-aa decide-gain3 matmul-1024-aa; do
  late "run $c" && continue
  t0=$(date +%s)
  timeout 150 "${mpi[@]}" -np $((G + 1)) build/tunefarm run --backend cuda --ledgers "$R/ledgers" \
    "campaigns/$c.json" >"$R/logs/run-$c.log" 2>&1
  say "run $c: rc=$? $(( $(date +%s) - t0 )) s; $(grep -c '"decision":"keep"' "$R"/ledgers/$c/*.jsonl | tr '\n' ' ')"
done
build/tunefarm study --ledgers "$R/ledgers/decide-aa" "$R/ledgers/decide-gain3" >"$R/logs/study-gpu.md" 2>&1
say "study replay rc=$?"
# Correctness sweep: every reachable configuration on the GPU, headline and awkward shapes.
mkdir -p sweep/campaigns
for spec in "matmul-1024:M=1024,N=1024,K=1024" "matmul-1000:M=1000,N=1000,K=1000" \
            "matmul-odd:M=4095,N=4097,K=1023" "matmul-thin:M=128,N=8192,K=64" \
            "layernorm-768:R=4096,D=768" "layernorm-100:R=4096,D=100" "layernorm-128:R=4096,D=128" \
            "layernorm-1000:R=4096,D=1000" "layernorm-4097:R=4096,D=4097"; do
  name=${spec%%:*}; dims=${spec#*:}
  late "sweep $name" && continue
  base=campaigns/matmul-1024.json; [[ $name == layernorm* ]] && base=campaigns/layernorm-4096x768.json
  python3 - "$base" "$dims" >"sweep/campaigns/$name.json" <<'PY'
import json, sys
c = json.load(open(sys.argv[1]))
for kv in sys.argv[2].split(","):
    k, v = kv.split("="); c["problem"][k] = int(v)
print(json.dumps(c))
PY
  t0=$(date +%s)
  TUNEFARM_ROOT=$PWD timeout 120 "${mpi[@]}" -np 16 build/tunefarm audit --run \
    "sweep/campaigns/$name.json" >"$R/logs/sweep-$name.log" 2>&1
  say "sweep $name: rc=$? $(( $(date +%s) - t0 )) s; $(grep -E '^audit:|^run:' "$R/logs/sweep-$name.log" | tr '\n' ' ')"
done
grep -h -A1 '^FAILED' "$R"/logs/sweep-*.log | head -30 | tee -a "$S"
