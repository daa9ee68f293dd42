#!/usr/bin/env bash
# Session 3, device call 3 (nvidia-h200-x2). GPU 0: the side-by-side benchmark of issue 5
# for all four targets in one call: `tunefarm bench` on the farm's bests (this session's
# matmul ledgers with FRAG and repairs; last session's layernorm ledgers, which load through
# the knob defaults), the best configurations measured, the start, the committed kernels and
# cuBLAS; then bench/peers.py (torch, Triton, device copy); then the FFMA operand registers of
# two 1024^3 configurations from their SASS. Meanwhile the correctness sweep of the new code:
# every reachable configuration with FRAG 1 (`audit --run --where 'FRAG == 1'`) at the
# awkward shapes on GPU 1, and at 4096^3 on GPU 0 once its benchmark is done.
# (Its sweep and campaign steps were moved into bench/gpu_env.sh's helpers after it ran;
# the commands are the same.)
set -uo pipefail
source bench/gpu_env.sh
LATE_S=${LATE_S:-480}
gpu_session_start
sweeps1() {
  export CUDA_VISIBLE_DEVICES=1
  OMP_NUM_THREADS=2 sweep matmul-odd campaigns/matmul-1024.json M=4095,N=4097,K=1023 'FRAG == 1' 16 $((LATE_S + 90 - $(date +%s) + T0))
  OMP_NUM_THREADS=2 sweep matmul-1000 campaigns/matmul-1024.json M=1000,N=1000,K=1000 'FRAG == 1' 16 $((LATE_S + 90 - $(date +%s) + T0))
  OMP_NUM_THREADS=2 sweep matmul-thin campaigns/matmul-1024.json M=128,N=8192,K=64 'FRAG == 1 && BK >= 32' 16 $((LATE_S + 90 - $(date +%s) + T0))
}
sweeps1 >"$R/logs/sweeps1.out" 2>&1 &
S1=$!

export CUDA_VISIBLE_DEVICES=0
build/tunefarm devices >"$R/logs/devices.txt" 2>&1
ledgers() { for l in "$1"/*.jsonl; do printf -- '--ledger\n%s\n' "$l"; done; }
C1024=(
  BM=64,BN=128,TM=8,TN=8,VEC=4,STAGING=1,PIPE=2,WARP=1,KSLICE=2,FRAG=1
  BM=64,BN=128,TM=8,TN=8,VEC=4,STAGING=1,PIPE=2,WARP=1,KSLICE=2
  BM=64,BN=128,TM=8,TN=8,VEC=4,STAGING=1,PIPE=2,KSLICE=2,FRAG=1
  BM=64,BN=128,BK=32,TM=8,TN=8,VEC=4,STAGING=1,PIPE=2,WARP=1,KSLICE=2,FRAG=1
)
C4096=(
  BM=64,BN=128,BK=32,TM=8,TN=8,VEC=4,STAGING=1,PIPE=3
  BM=64,BN=128,BK=32,TM=8,TN=8,VEC=4,STAGING=1,PIPE=3,FRAG=1
  BM=64,BN=128,BK=32,TM=8,TN=8,AK=1,VEC=1,STAGING=1,PIPE=3
  BM=64,BN=128,BK=32,TM=8,TN=8,AK=1,VEC=1,STAGING=1,PIPE=3,FRAG=1
  BM=128,BN=128,BK=16,TM=8,TN=8,AK=1,VEC=1,STAGING=1,PIPE=3
  BM=128,BN=128,BK=16,TM=8,TN=8,AK=1,VEC=1,STAGING=1,PIPE=3,FRAG=1
)
mapfile -t a < <(ledgers $L/matmul-1024; configs "${C1024[@]}")
bench_run matmul-1024 120 "${a[@]}" campaigns/matmul-1024.json
mapfile -t a < <(ledgers $L/matmul-4096; configs "${C4096[@]}")
bench_run matmul-4096 200 --rounds 5 --samples 10 "${a[@]}" campaigns/matmul-4096.json
mapfile -t a < <(ledgers $L5/layernorm-4096x768; configs BLOCK=256,VEC=4,CACHE=6 BLOCK=128,VEC=2,CACHE=12)
bench_run layernorm-4096x768 90 "${a[@]}" campaigns/layernorm-4096x768.json
mapfile -t a < <(ledgers $L5/layernorm-16384x4096; configs FORM=2,BLOCK=256,VEC=4,CACHE=4 FORM=2,BLOCK=256,VEC=4,CACHE=4,HINT=1)
bench_run layernorm-16384x4096 120 "${a[@]}" campaigns/layernorm-16384x4096.json
late peers || {
  t0=$(date +%s)
  PYTHONUNBUFFERED=1 timeout 200 python3 bench/peers.py >"$R/logs/peers.txt" 2>&1
  say "python3 bench/peers.py: rc=$? $(( $(date +%s) - t0 )) s"
  grep -E '^\|' "$R/logs/peers.txt" | tee -a "$S"
}
# SASS of the 1024^3 winner with FRAG 0 and 1: how many FFMAs read two registers of one
# bank (register number mod 2 assumed) without an operand-reuse flag.
{
  cat templates/matmul.cu
  for f in 0 1; do
    echo "template __global__ void tf_matmul<64,128,64,8,8,0,4,1,2,1,1,2,$f>(const float*, const float*, float*, int, int, int);"
  done
} >"$R/logs/sass.cu"
nvcc -arch=sm_90 -std=c++17 -cubin -o "$R/logs/sass.cubin" "$R/logs/sass.cu" &&
  cuobjdump -sass "$R/logs/sass.cubin" >"$R/logs/sass.txt" && python3 bench/ffma_banks.py "$R/logs/sass.txt" | tee -a "$S"

OMP_NUM_THREADS=2 sweep matmul-4096 campaigns/matmul-4096.json - 'FRAG == 1' 16 $((LATE_S + 90 - $(date +%s) + T0))
wait "$S1"
grep -h -A2 '^FAILED\|wrong' "$R"/logs/sweep-*.log | head -20 | tee -a "$S"
