#!/usr/bin/env bash
# Session 5, device call 4 (nvidia-h200-x2, GPU 0 only). What call 3 left open: the matmul peers on the same
# GPU as the 1024^3 bench, and the copy of the bytes of each layernorm shape (the span of a
# 1 GiB copy carries the launch after the flush once in 506 us, a 135 us layernorm's once in
# 135 us), beside the 16384x4096 bench, all on one H200.
set -uo pipefail
source bench/gpu_env.sh
LATE_S=${LATE_S:-300}
gpu_session_start
L=docs/results/h200x2-2026-11-30-s5/call2/campaigns
ledgers() { for l in "$L"/$1/*.jsonl; do printf -- '--ledger\n%s\n' "$l"; done; }
mapfile -t a < <(ledgers matmul-1024; configs BM=64,BN=128,TM=8,TN=8,VEC=4,STAGING=1,PIPE=2,WARP=1,KSLICE=2,FRAG=1)
bench_run matmul-1024 90 "${a[@]}" campaigns/matmul-1024.json
peers_run matmul 150
mapfile -t a < <(ledgers layernorm-16384x4096; configs FORM=2,BLOCK=256,VEC=4,CACHE=4)
bench_run layernorm-16384x4096 60 "${a[@]}" campaigns/layernorm-16384x4096.json
peers_run copy 60
peers_run layernorm 100
