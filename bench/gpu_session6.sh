#!/usr/bin/env bash
# Session 2, device call 4 (nvidia-h200-x2). GPU 0: the side-by-side benchmark of issue 5,
# `tunefarm bench` on the farm's bests (the ledgers of bench/gpu_session5.sh), hand-picked
# configurations, the start, the committed kernels and cuBLAS, then bench/peers.py (torch,
# Triton, device copy). GPU 1 meanwhile: the correctness sweep (every reachable configuration
# launched and checked) at the awkward shapes, then the headline ones, as time allows.
set -uo pipefail
source bench/gpu_env.sh
LATE_S=${LATE_S:-470}
gpu_session_start
L=docs/results/h200x2-2026-11-29-issue5/campaigns
mpi=(mpirun --oversubscribe --bind-to none)

sweep() { # name campaign KEY=V,...
  late "sweep $1" && return
  python3 - "$2" "$3" >"sweep/campaigns/$1.json" <<'PY'
import json, sys
c = json.load(open(sys.argv[1]))
for kv in sys.argv[2].split(","):
    k, v = kv.split("="); c["problem"][k] = int(v)
print(json.dumps(c))
PY
  local t0=$(date +%s)
  TUNEFARM_ROOT=$PWD timeout 200 "${mpi[@]}" -np 16 build/tunefarm audit --run \
    "sweep/campaigns/$1.json" >"$R/logs/sweep-$1.log" 2>&1
  say "sweep $1 ($3): rc=$? $(( $(date +%s) - t0 )) s; $(grep -E '^audit:|^run:' "$R/logs/sweep-$1.log" | tr '\n' ' ')"
}
sweeps() {
  export CUDA_VISIBLE_DEVICES=1
  mkdir -p sweep/campaigns
  sweep matmul-odd campaigns/matmul-1024.json M=4095,N=4097,K=1023
  sweep ln-4097 campaigns/layernorm-4096x768.json D=4097
  sweep ln-100 campaigns/layernorm-4096x768.json D=100
  sweep matmul-1000 campaigns/matmul-1024.json M=1000,N=1000,K=1000
  sweep ln-128 campaigns/layernorm-4096x768.json D=128
  sweep ln-1000 campaigns/layernorm-4096x768.json D=1000
  sweep matmul-thin campaigns/matmul-1024.json M=128,N=8192,K=64
  sweep matmul-1024 campaigns/matmul-1024.json M=1024
  grep -h -A1 '^FAILED' "$R"/logs/sweep-*.log | head -20 | tee -a "$S"
}
sweeps >"$R/logs/sweeps.out" 2>&1 &
SWEEPS=$!

export CUDA_VISIBLE_DEVICES=0
build/tunefarm devices >"$R/logs/devices.txt" 2>&1
bench() { # name args...
  local name=$1; shift
  late "bench $name" && return
  local t0=$(date +%s)
  timeout 240 build/tunefarm bench "$@" >"$R/logs/bench-$name.md" 2>"$R/logs/bench-$name.err"
  say "tunefarm bench $*: rc=$? $(( $(date +%s) - t0 )) s"
  grep -E '^\|' "$R/logs/bench-$name.md" | cut -c1-150 | tee -a "$S"
}
bench matmul-1024 --ledger $L/matmul-1024/vm-gpu0-add5a720.jsonl --ledger $L/matmul-1024/vm-gpu1-a2adcc69.jsonl \
  --config BM=64,BN=128,TM=8,TN=8,VEC=4,STAGING=1,PIPE=2 \
  --config BM=64,BN=128,TM=8,TN=8,VEC=4,STAGING=1,PIPE=2,KSLICE=2 campaigns/matmul-1024.json
bench layernorm-4096x768 --ledger $L/layernorm-4096x768/vm-gpu0-add5a720.jsonl \
  --ledger $L/layernorm-4096x768/vm-gpu1-a2adcc69.jsonl \
  --config BLOCK=256,VEC=4,CACHE=6 --config BLOCK=256,VEC=4,CACHE=6,HINT=1 \
  --config BLOCK=128,VEC=2,CACHE=12 campaigns/layernorm-4096x768.json
bench layernorm-16384x4096 --ledger $L/layernorm-16384x4096/vm-gpu0-add5a720.jsonl \
  --ledger $L/layernorm-16384x4096/vm-gpu1-a2adcc69.jsonl \
  --config FORM=2,BLOCK=256,VEC=4,CACHE=4 --config FORM=2,BLOCK=256,VEC=4,CACHE=4,HINT=1 \
  --config FORM=2,BLOCK=512,VEC=4,CACHE=2,HINT=1 --config FORM=2,BLOCK=1024,VEC=4,CACHE=1,HINT=1 \
  campaigns/layernorm-16384x4096.json
late peers || {
  t0=$(date +%s)
  PYTHONUNBUFFERED=1 timeout 200 python3 bench/peers.py >"$R/logs/peers.txt" 2>&1
  say "python3 bench/peers.py: rc=$? $(( $(date +%s) - t0 )) s"
  grep -E '^\|' "$R/logs/peers.txt" | tee -a "$S"
}
bench matmul-4096 --rounds 5 --samples 10 --ledger $L/matmul-4096/vm-gpu0-add5a720.jsonl \
  --ledger $L/matmul-4096/vm-gpu1-a2adcc69.jsonl \
  --config BM=64,BN=128,BK=32,TM=8,TN=8,VEC=4,STAGING=1,PIPE=3 \
  --config BM=256,BN=128,BK=8,TM=16,TN=8,VEC=4,STAGING=1,PIPE=3,WARP=1 campaigns/matmul-4096.json
wait "$SWEEPS"
