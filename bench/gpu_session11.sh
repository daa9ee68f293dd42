#!/usr/bin/env bash
# Session 4, device call 1 (nvidia-h200-x2). The layernorm knob ROWS (rows in turn, the next
# row's cached chunks requested before the current row is reduced), and the GPU tests after
# the sample-pool refactor.
# GPU 0: ctest -L gpu; then `tunefarm bench` of ROWS against ROWS 1 at both layernorm shapes;
#        then bench/peers.py for layernorm and the device copy (same call, same GPU).
# GPU 1: the correctness sweep of the restructured template: every reachable configuration
#        at 1001 rows (not a multiple of any block's rows) of the four awkward widths, and
#        the ROWS > 1 configurations at 4096x768.
set -uo pipefail
source bench/gpu_env.sh
LATE_S=${LATE_S:-500}
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
  OMP_NUM_THREADS=1 TUNEFARM_ROOT=$PWD timeout $((LATE_S + 80 - $(date +%s) + T0)) "${mpi[@]}" -np "$5" \
    build/tunefarm audit --run --where "$4" "sweep/campaigns/$1.json" >"$R/logs/sweep-$1.log" 2>&1
  say "sweep $1 ($3, $4): rc=$? $(( $(date +%s) - t0 )) s; $(grep -E '^audit:|^run:|--where' "$R/logs/sweep-$1.log" | tr '\n' ' ')"
}
sweeps1() {
  export CUDA_VISIBLE_DEVICES=1
  for d in 100 128 4097 1000; do
    sweep ln-1001x$d campaigns/layernorm-4096x768.json R=1001,D=$d 'ROWS >= 1' 16
  done
  sweep ln-4096x768-rows campaigns/layernorm-4096x768.json - 'ROWS > 1' 16
}
sweeps1 >"$R/logs/sweeps1.out" 2>&1 &
S1=$!

export CUDA_VISIBLE_DEVICES=0
build/tunefarm devices >"$R/logs/devices.txt" 2>&1
t0=$(date +%s)
(cd build && timeout 200 ctest -L gpu --output-on-failure) >"$R/logs/ctest-gpu.log" 2>&1
say "ctest -L gpu: rc=$? $(( $(date +%s) - t0 )) s; $(grep -E 'tests passed|tests failed' "$R/logs/ctest-gpu.log")"

C768=(
  FORM=0,BLOCK=512,VEC=2,CACHE=0
  FORM=0,BLOCK=256,VEC=4,CACHE=6,HINT=1
  FORM=0,BLOCK=256,VEC=4,CACHE=6,HINT=1,ROWS=2
  FORM=0,BLOCK=256,VEC=4,CACHE=6,HINT=1,ROWS=4
  FORM=0,BLOCK=256,VEC=4,CACHE=6,ROWS=2
  FORM=0,BLOCK=128,VEC=4,CACHE=6,HINT=1,ROWS=2
  FORM=0,BLOCK=128,VEC=2,CACHE=12,ROWS=2
  FORM=1,WARPS=2,BLOCK=128,VEC=4,CACHE=3,HINT=1
  FORM=1,WARPS=2,BLOCK=128,VEC=4,CACHE=3,HINT=1,ROWS=2
)
mapfile -t a < <(configs "${C768[@]}")
bench_run layernorm-4096x768 100 "${a[@]}" campaigns/layernorm-4096x768.json
C4096=(
  FORM=2,BLOCK=256,VEC=4,CACHE=4
  FORM=2,BLOCK=256,VEC=4,CACHE=4,ROWS=2
  FORM=2,BLOCK=256,VEC=4,CACHE=4,ROWS=4
  FORM=2,BLOCK=256,VEC=4,CACHE=4,ROWS=8
  FORM=2,BLOCK=256,VEC=4,CACHE=4,HINT=1,ROWS=4
  FORM=2,BLOCK=512,VEC=4,CACHE=2
  FORM=2,BLOCK=512,VEC=4,CACHE=2,ROWS=2
  FORM=2,BLOCK=512,VEC=4,CACHE=2,ROWS=4
  FORM=2,BLOCK=1024,VEC=4,CACHE=1,ROWS=4
  FORM=2,BLOCK=128,VEC=4,CACHE=8,ROWS=2
  FORM=1,WARPS=8,BLOCK=512,VEC=4,CACHE=4,ROWS=2
)
mapfile -t a < <(configs "${C4096[@]}")
bench_run layernorm-16384x4096 150 "${a[@]}" campaigns/layernorm-16384x4096.json
for p in layernorm copy; do
  late "peers $p" && continue
  t0=$(date +%s)
  PYTHONUNBUFFERED=1 timeout 120 python3 bench/peers.py --only $p >"$R/logs/peers-$p.txt" 2>&1
  say "python3 bench/peers.py --only $p: rc=$? $(( $(date +%s) - t0 )) s"
  grep -E '^\|' "$R/logs/peers-$p.txt" | tee -a "$S"
done
wait "$S1"
grep -h -B2 -A4 '^FAILED\|wrong' "$R"/logs/sweep-*.log | head -30 | tee -a "$S"
