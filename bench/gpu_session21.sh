#!/usr/bin/env bash
# Session 5, device call 3 (nvidia-h200-x2). The four targets side by side, from the ledgers of
# call 2 (bench/gpu_session20.sh, copied to docs/results/h200x2-2026-11-30-s5/call2/campaigns).
# GPU 0 benches matmul 1024^3 and both layernorms (the ledgers' bests, the template's best
# configurations, the committed kernels, cuBLAS in the same process) and runs the layernorm
# and copy peers, now with their kernel times; then the 4096x768 bench and peers twice more.
# GPU 1 benches matmul 4096^3 and runs the matmul peers.
set -uo pipefail
source bench/gpu_env.sh
LATE_S=${LATE_S:-420}
gpu_session_start
L=docs/results/h200x2-2026-11-30-s5/call2/campaigns
ledgers() { for l in "$L"/$1/*.jsonl; do printf -- '--ledger\n%s\n' "$l"; done; }
C1024=(
  BM=64,BN=128,TM=8,TN=8,VEC=4,STAGING=1,PIPE=2,WARP=1,KSLICE=2,FRAG=1
  BM=64,BN=128,TM=8,TN=8,VEC=4,STAGING=2,PIPE=2,KSLICE=2
)
C4096=(
  BM=64,BN=128,BK=32,TM=8,TN=8,VEC=4,STAGING=1,PIPE=3
)
C768=(
  FORM=0,BLOCK=128,VEC=2,CACHE=12,ROWS=2
  FORM=0,BLOCK=64,VEC=2,CACHE=12,ROWS=2
  FORM=0,BLOCK=128,VEC=2,CACHE=12,RSQRT=1,ROWS=2
  FORM=0,BLOCK=256,VEC=2,CACHE=12,RSQRT=1,ROWS=2
)
C16K=(
  FORM=2,BLOCK=256,VEC=4,CACHE=4
  FORM=2,BLOCK=256,VEC=2,CACHE=8,RSQRT=1
)
ln768() {
  mapfile -t a < <(ledgers layernorm-4096x768; configs "${C768[@]}")
  bench_run "layernorm-4096x768$1" 60 "${a[@]}" campaigns/layernorm-4096x768.json
}
gpu0() {
  export CUDA_VISIBLE_DEVICES=0
  mapfile -t a < <(ledgers matmul-1024; configs "${C1024[@]}")
  bench_run matmul-1024 90 "${a[@]}" campaigns/matmul-1024.json
  ln768 ""
  mapfile -t a < <(ledgers layernorm-16384x4096; configs "${C16K[@]}")
  bench_run layernorm-16384x4096 60 "${a[@]}" campaigns/layernorm-16384x4096.json
  peers_run layernorm 100
  peers_run copy 60
  for i in 2 3; do
    ln768 "-$i"
    peers_run layernorm 100 "layernorm-$i"
  done
}
gpu1() {
  export CUDA_VISIBLE_DEVICES=1
  mapfile -t a < <(ledgers matmul-4096; configs "${C4096[@]}")
  bench_run matmul-4096 120 --rounds 5 --samples 10 "${a[@]}" campaigns/matmul-4096.json
  peers_run matmul 150
}
gpu1 >"$R/logs/gpu1.out" 2>&1 &
P1=$!
gpu0
wait "$P1"
