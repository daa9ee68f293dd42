#!/usr/bin/env bash
# Session 4, device call 6 (nvidia-h200-x2). The layernorm knob STAGE (rows in turn through
# two shared-memory buffers filled by cp.async, so the prefetched row holds no registers).
# GPU 1: correctness sweep of every STAGE 1 configuration at 1001 rows of widths 100, 128,
#        1000, 4096 and at both headline shapes.
# GPU 0: `tunefarm bench` of STAGE 1 against the best register forms at both shapes, then
#        Triton and the device copy. Then, both GPUs, the two layernorm campaigns again.
set -uo pipefail
source bench/gpu_env.sh
LATE_S=${LATE_S:-420}
gpu_session_start
mpi=(mpirun --oversubscribe --bind-to none)
mkdir -p sweep/campaigns
sweep() { # name campaign R=..,D=.. (or -) WHERE ranks
  late "sweep $1" && return
  python3 - "$2" "$3" >"sweep/campaigns/$1.json" <<'PY'
import json, sys
c = json.load(open(sys.argv[1]))
for kv in sys.argv[2].split(",") if sys.argv[2] != "-" else []:
    k, v = kv.split("="); c["problem"][k] = int(v)
print(json.dumps(c))
PY
  local t0=$(date +%s)
  OMP_NUM_THREADS=1 TUNEFARM_ROOT=$PWD timeout 120 "${mpi[@]}" -np "$5" \
    build/tunefarm audit --run --where "$4" "sweep/campaigns/$1.json" >"$R/logs/sweep-$1.log" 2>&1
  say "sweep $1 ($3, $4): rc=$? $(( $(date +%s) - t0 )) s; $(grep -E '^audit:|^run:|--where' "$R/logs/sweep-$1.log" | tr '\n' ' ')"
}
sweeps1() {
  export CUDA_VISIBLE_DEVICES=1
  for d in 100 128 1000 4096; do
    sweep ln-1001x$d campaigns/layernorm-4096x768.json R=1001,D=$d 'STAGE == 1' 16
  done
  sweep ln-4096x768-stage campaigns/layernorm-4096x768.json - 'STAGE == 1' 16
  sweep ln-16384x4096-stage campaigns/layernorm-16384x4096.json - 'STAGE == 1' 8
}
sweeps1 >"$R/logs/sweeps1.out" 2>&1 &
S1=$!
export CUDA_VISIBLE_DEVICES=0
build/tunefarm devices >"$R/logs/devices.txt" 2>&1
C16K=(
  FORM=2,BLOCK=256,VEC=4,CACHE=4
  FORM=2,BLOCK=256,VEC=4,STAGE=1,ROWS=2
  FORM=2,BLOCK=256,VEC=4,STAGE=1,ROWS=4
  FORM=2,BLOCK=256,VEC=4,STAGE=1,ROWS=8
  FORM=2,BLOCK=256,VEC=4,STAGE=1,ROWS=4,HINT=1
  FORM=2,BLOCK=128,VEC=4,STAGE=1,ROWS=4
  FORM=2,BLOCK=512,VEC=4,STAGE=1,ROWS=4
  FORM=2,BLOCK=1024,VEC=4,STAGE=1,ROWS=4
  FORM=1,WARPS=4,BLOCK=256,VEC=4,STAGE=1,ROWS=4
  FORM=0,BLOCK=128,VEC=4,STAGE=1,ROWS=4
)
mapfile -t a < <(configs "${C16K[@]}")
bench_run layernorm-16384x4096 90 "${a[@]}" campaigns/layernorm-16384x4096.json
C768=(
  FORM=0,BLOCK=64,VEC=2,CACHE=12,RSQRT=1,ROWS=2
  FORM=0,BLOCK=64,VEC=4,STAGE=1,ROWS=2
  FORM=0,BLOCK=128,VEC=4,STAGE=1,ROWS=2
  FORM=0,BLOCK=256,VEC=4,STAGE=1,ROWS=2
  FORM=0,BLOCK=128,VEC=4,STAGE=1,ROWS=4
  FORM=0,BLOCK=128,VEC=4,STAGE=1,ROWS=2,RSQRT=1
  FORM=1,WARPS=2,BLOCK=128,VEC=4,STAGE=1,ROWS=2
)
mapfile -t a < <(configs "${C768[@]}")
bench_run layernorm-4096x768 60 "${a[@]}" campaigns/layernorm-4096x768.json
for p in layernorm copy; do
  late "peers $p" && continue
  t0=$(date +%s)
  PYTHONUNBUFFERED=1 timeout 60 python3 bench/peers.py --only $p >"$R/logs/peers-$p.txt" 2>&1
  say "python3 bench/peers.py --only $p: rc=$? $(( $(date +%s) - t0 )) s"
  grep -E '^\|' "$R/logs/peers-$p.txt" | tee -a "$S"
done
wait "$S1"
grep -h -B2 -A4 '^FAILED\|wrong' "$R"/logs/sweep-*.log | head -30 | tee -a "$S"
unset CUDA_VISIBLE_DEVICES
G=$(build/tunefarm devices --json 2>/dev/null | grep -c uuid)
for c in layernorm-4096x768 layernorm-16384x4096; do
  late "run $c" && continue
  t0=$(date +%s)
  timeout 120 "${mpi[@]}" -np $((G + 1)) build/tunefarm run --backend cuda --ledgers "$R/ledgers" \
    "campaigns/$c.json" >"$R/logs/run-$c.log" 2>&1
  say "mpirun -np $((G + 1)) build/tunefarm run --backend cuda campaigns/$c.json: rc=$? $(( $(date +%s) - t0 )) s"
  build/tunefarm report "$R/ledgers/$c" >"$R/logs/report-$c.md" 2>&1
  build/tunefarm verify "$R"/ledgers/$c/*.jsonl | tail -1 | tee -a "$S"
  grep -E 'final best' "$R/logs/report-$c.md" | head -4 | cut -c1-220 | tee -a "$S"
done
