#!/usr/bin/env bash
# Reproduces the figures of docs/results.md on a GPU machine: builds tunefarm with cmake, runs
# `tunefarm run`, `bench`, `audit --run` and bench/peers.py as each figure
# needs, keeps every raw output under the output folder and prints a short table last.
# `bash bench/reproduce.sh --help` lists the figures; it needs no GPU.
set -uo pipefail
cd "$(dirname "$0")/.."

usage() {
  cat <<'EOF'
usage: bash bench/reproduce.sh [--out DIR] [--build DIR] [--repeats N] [--ledgers DIR] FIGURE...

Reproduces the figures of docs/results.md (the section of each figure names its FIGURE).
Raw output (logs, ledgers, bench and peer tables) goes under --out DIR (default: $OUT, else
reproduce-out/DATE); the last thing printed is a short table, also in DIR/summary.md.

FIGURE
  targets       the four targets side by side on one GPU: `tunefarm bench` (the farm's bests,
                the committed kernels, cuBLAS) and bench/peers.py (torch, Triton, copies),
                --repeats times (default 3)
  campaigns     the four tuning campaigns on every GPU (mpirun -np G+1), report and verify;
                `targets --ledgers DIR/ledgers` then benches what they found
  seed          layernorm-4096x768 searched again with measure.seed 7 on every GPU, its
                finals benched twice beside the best known forms and Triton
  limits        ncu on the 1024^3 matmul best: issue rate and stall reasons per instruction
  correctness   `tunefarm audit --run`: every reachable configuration launched and checked
                against the templates' references at the sweep shapes of matmul and layernorm
  faults        campaigns/faulty.json on every GPU: faults recorded, the farm goes on
  aa            the standing A/A benchmark (bench/aa.sh): campaigns/aa-layernorm-4096x768,
                aa-layernorm-4096x128 and aa-matmul-1024 on every GPU, each over 8 fresh
                measure processes; per process its bias, per GPU the false keeps
  placement     the placement diagnosis (docs/design.md): the 4096x768 A/A with per-arm
                buffers, with buffers swapped between phases, with new's code from a second
                module and with a fixed launch order (canary off), then bench/aa_parity.py
  gain          a known 2.8% gain on the 4096x768 layernorm (campaigns/gain-layernorm-
                4096x768.json) on every GPU over 8 fresh processes: keeps and rounds
  study         the decision rules on the GPU (docs/results.md): decide-aa and decide-gain3
                on every GPU, then `tunefarm study` replays both rules on their rounds
  scaling       decide-aa and matmul-1024-aa on one GPU and on two (needs two GPUs)
  sim-scaling   the coordinator with 1, 2, 8 and 64 simulated workers (no GPU)
  examples      the examples (examples/*): every configuration checked (audit --run),
                each campaign tuned on GPU 0, its best benched (beside cublasGemmEx for BF16),
                bench/peers.py for their peers and copies, and bench/mma_ceiling.cu
  floor         the copy of the softmax example's bytes (examples/copy): every configuration
                swept, the fastest benched twice beside the softmax's best (and at the
                transpose's bytes, beside its best), then bench/peers.py for Triton's and
                torch's softmax
  gpu-tests     ctest -L gpu on GPU 0
  all           every figure above that needs a GPU, in that order

OPTIONS
  --out DIR       where raw output goes (default $OUT or reproduce-out/DATE)
  --build DIR     cmake build folder (default build-reproduce)
  --repeats N     repeats of `targets` (default 3)
  --ledgers DIR   `targets`: also bench the final bests of the ledgers under DIR/CAMPAIGN/
  -h, --help      this text

On a machine without a package registry, put the cJSON and CMocka .deb files in .gpu-deps/:
this script then sources bench/gpu_env.sh, which unpacks them under /opt/deps.
EOF
}

OUTDIR=${OUT:-}
BUILD=build-reproduce
REPEATS=3
LEDGERS=
FIGURES=()
while [ $# -gt 0 ]; do
  case $1 in
    -h | --help) usage; exit 0 ;;
    --out) OUTDIR=$2; shift 2 ;;
    --build) BUILD=$2; shift 2 ;;
    --repeats) REPEATS=$2; shift 2 ;;
    --ledgers) LEDGERS=$2; shift 2 ;;
    -*) echo "reproduce.sh: unknown option '$1'" >&2; usage >&2; exit 2 ;;
    *) FIGURES+=("$1"); shift ;;
  esac
done
[ ${#FIGURES[@]} -gt 0 ] || { usage >&2; exit 2; }
ALL=(targets campaigns seed limits correctness faults aa placement gain study scaling examples floor gpu-tests)
for f in "${FIGURES[@]}"; do
  case " ${ALL[*]} sim-scaling all " in *" $f "*) ;; *) echo "reproduce.sh: unknown figure '$f'" >&2; exit 2 ;; esac
done
case " ${FIGURES[*]} " in *" all "*) FIGURES=("${ALL[@]}") ;; esac

OUTDIR=${OUTDIR:-reproduce-out/$(date -u +%Y-%m-%dT%H%M%SZ)}
mkdir -p "$OUTDIR"
OUTDIR=$(cd "$OUTDIR" && pwd)
SUMMARY=$OUTDIR/summary.md
TF=$BUILD/tunefarm
case $TF in /*) ;; *) TF=$PWD/$TF ;; esac
export TUNEFARM=$TF # bench/aa.sh runs this build too
MPI=(mpirun --oversubscribe --bind-to none)
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
export TUNEFARM_CACHE=${TUNEFARM_CACHE:-$PWD/$BUILD/cache}

say() { echo "$*" | tee -a "$SUMMARY"; }
# Markdown rows of a table file into the summary.
rows() { grep -E '^\|' "$1" | tee -a "$SUMMARY"; }
# --config lines for `tunefarm bench`, from K=V,... arguments; --ledger lines for ledger files.
configs() { for c in "$@"; do printf -- '--config\n%s\n' "$c"; done; }
ledgers() { for l in "$@"; do [ -f "$l" ] && printf -- '--ledger\n%s\n' "$l"; done; }
gpus() { "$TF" devices --json 2>/dev/null | grep -c '"uuid"'; }
# campaign_copy NAME CAMPAIGN EDIT: $OUTDIR/campaigns/NAME.json, campaigns/CAMPAIGN.json with
# one edit (a Python statement over the campaign c); prints its path.
campaign_copy() {
  mkdir -p "$OUTDIR/campaigns"
  python3 - "campaigns/$2.json" "$3" >"$OUTDIR/campaigns/$1.json" <<'PY'
import json, sys
c = json.load(open(sys.argv[1]))
exec(sys.argv[2])
print(json.dumps(c, indent=1))
PY
  echo "$OUTDIR/campaigns/$1.json"
}

build() {
  if [ -d .gpu-deps ] && ! pkg-config --exists libcjson 2>/dev/null; then source bench/gpu_env.sh; fi
  {
    date -u
    nvidia-smi --query-gpu=index,name,uuid,driver_version,clocks.sm,clocks.max.sm --format=csv
    cmake -S . -B "$BUILD" -DCMAKE_BUILD_TYPE=RelWithDebInfo && cmake --build "$BUILD" -j "$(nproc)"
  } >"$OUTDIR/build.log" 2>&1 || { tail -30 "$OUTDIR/build.log"; echo "reproduce.sh: build failed" >&2; exit 1; }
  say "# bench/reproduce.sh ${FIGURES[*]}: $(git rev-parse --short HEAD 2>/dev/null), $(date -u '+%Y-%m-%d %H:%M UTC')"
  say "$(nvidia-smi --query-gpu=name,uuid,driver_version --format=csv,noheader 2>/dev/null | sed 's/^/GPU: /')"
}

# bench NAME ARGS... CAMPAIGN: one `tunefarm bench` on GPU 0, its table to bench-NAME.md.
bench() {
  local name=$1; shift
  CUDA_VISIBLE_DEVICES=${CUDA_VISIBLE_DEVICES:-0} "$TF" bench --backend cuda "$@" >"$OUTDIR/bench-$name.md" 2>"$OUTDIR/bench-$name.err"
  say "tunefarm bench ($name): rc=$?"
  rows "$OUTDIR/bench-$name.md" >/dev/null
}
# peers WHAT TAG: bench/peers.py --only WHAT on GPU 0, its table to peers-TAG.md.
peers() {
  CUDA_VISIBLE_DEVICES=${CUDA_VISIBLE_DEVICES:-0} PYTHONUNBUFFERED=1 python3 bench/peers.py --only "$1" \
    >"$OUTDIR/peers-$2.md" 2>&1
  say "bench/peers.py --only $1 ($2): rc=$?"
}
# campaign FILE [DIR]: the farm on every GPU, then report and verify; ledgers under
# $OUTDIR/DIR/NAME (DIR: ledgers).
campaign() {
  local name dir=$OUTDIR/${2:-ledgers} g t0=$(date +%s)
  name=$(basename "$1" .json)
  g=$(gpus)
  "${MPI[@]}" -np $((g + 1)) "$TF" run --backend cuda --ledgers "$dir" "$1" >"$OUTDIR/run-$name.log" 2>&1
  say "mpirun -np $((g + 1)) tunefarm run --backend cuda $1: rc=$? $(($(date +%s) - t0)) s"
  "$TF" report "$dir/$name" >"$OUTDIR/report-$name.md" 2>&1
  say "$("$TF" verify "$dir/$name"/*.jsonl 2>&1 | tail -1)"
  grep -E 'final best|^- (restarts|ended)' "$OUTDIR/report-$name.md" | cut -c1-200 | tee -a "$SUMMARY"
}

# The farm's bests as docs/results.md benches them (the configurations its ledgers ended at).
BEST_1024=BM=64,BN=128,BK=64,TM=8,TN=8,AK=0,VEC=4,STAGING=1,PIPE=2,SPLITK=1,WARP=1,KSLICE=2,FRAG=1
BEST_1024_B=BM=64,BN=64,BK=64,TM=8,TN=8,AK=0,VEC=4,STAGING=0,PIPE=2,SPLITK=1,WARP=1,KSLICE=2,FRAG=1
BEST_4096=BM=64,BN=128,BK=32,TM=8,TN=8,AK=0,VEC=4,STAGING=2,PIPE=3,SPLITK=1,WARP=0,KSLICE=1,FRAG=0
BEST_4096_B=BM=64,BN=128,BK=32,TM=8,TN=8,AK=0,VEC=4,STAGING=2,PIPE=3,SPLITK=1,WARP=1,KSLICE=1,FRAG=0
BEST_768=FORM=0,BLOCK=64,VEC=4,CACHE=6,RSQRT=1,HINT=0,ROWS=2
EARLIER_768=FORM=0,BLOCK=128,VEC=2,CACHE=12,RSQRT=1,HINT=0,ROWS=2
BEST_16384=FORM=2,BLOCK=256,VEC=2,CACHE=8,RSQRT=1,HINT=0,ROWS=1

fig_targets() {
  local i a
  for i in $(seq "$REPEATS"); do
    mapfile -t a < <(ledgers "$LEDGERS"/matmul-1024/*.jsonl; configs "$BEST_1024" "$BEST_1024_B")
    bench "matmul-1024-$i" "${a[@]}" campaigns/matmul-1024.json
    mapfile -t a < <(ledgers "$LEDGERS"/matmul-4096/*.jsonl; configs "$BEST_4096" "$BEST_4096_B")
    bench "matmul-4096-$i" --rounds 5 --samples 10 "${a[@]}" campaigns/matmul-4096.json
    mapfile -t a < <(ledgers "$LEDGERS"/layernorm-4096x768/*.jsonl; configs "$BEST_768")
    bench "layernorm-4096x768-$i" "${a[@]}" campaigns/layernorm-4096x768.json
    mapfile -t a < <(ledgers "$LEDGERS"/layernorm-16384x4096/*.jsonl; configs "$BEST_16384")
    bench "layernorm-16384x4096-$i" "${a[@]}" campaigns/layernorm-16384x4096.json
    peers layernorm "layernorm-$i"
    peers copy "copy-$i"
    peers matmul "matmul-$i"
  done
  targets_table
}

# The short table of `targets`: per repeat, our fastest template arm against the target's peer.
targets_table() {
  local i
  say ""
  say "| repeat | target | ours µs | peer µs | ours / peer |"
  say "|---|---|---:|---:|---:|"
  for i in $(seq "$REPEATS"); do
    awk -v i="$i" -F'|' '
      function num(s) { gsub(/[^0-9.]/, "", s); return s + 0 }
      # Our arms: the farm bests and the configurations (template instantiations).
      FILENAME ~ /bench-/ && ($2 ~ /farm best|config/) && num($4) > 0 {
        t = FILENAME; sub(/.*bench-/, "", t); sub(/-[0-9]+\.md$/, "", t)
        if (!(t in ours) || num($4) < ours[t]) ours[t] = num($4)
      }
      FILENAME ~ /bench-matmul/ && $2 ~ /cuBLAS/ { t = FILENAME; sub(/.*bench-/, "", t); sub(/-[0-9]+\.md$/, "", t); cublas[t] = num($4) }
      FILENAME ~ /peers-/ && $2 ~ /Triton matmul/ && $3 ~ /1024x1024/ { triton1024 = num($4) }
      FILENAME ~ /peers-/ && $2 ~ /torch.mm/ && $3 ~ /1024x1024/ { torch1024 = num($4) }
      FILENAME ~ /peers-/ && $2 ~ /Triton layernorm/ && $3 ~ /4096x768/ { triton768 = num($4) }
      FILENAME ~ /peers-/ && $2 ~ /device copy/ && $3 ~ /1 GiB/ { copygbs = num($7) }
      END {
        p = cublas["matmul-1024"]
        if (triton1024 > 0 && (p == 0 || triton1024 < p)) p = triton1024
        if (torch1024 > 0 && (p == 0 || torch1024 < p)) p = torch1024
        row("matmul 1024^3 (<= 0.90x the faster peer)", ours["matmul-1024"], p)
        row("matmul 4096^3 (<= 1.0x cuBLAS)", ours["matmul-4096"], cublas["matmul-4096"])
        row("layernorm 4096x768 (<= 0.90x Triton)", ours["layernorm-4096x768"], triton768)
        # 16384x4096: bytes read and written over the time, against the 1 GiB copy.
        us = ours["layernorm-16384x4096"]
        gbs = (us > 0 ? 2 * 16384 * 4096 * 4 / (us * 1e3) : 0)
        printf "| %s | layernorm 16384x4096 (>= 97%% of the 1 GiB copy) | %.2f (%.0f GB/s) | copy %.0f GB/s | %.1f%% |\n", i, us, gbs, copygbs, (copygbs > 0 ? 100 * gbs / copygbs : 0)
      }
      function row(name, a, b) { printf "| %s | %s | %.2f | %.2f | %.3fx |\n", i, name, a, b, (b > 0 ? a / b : 0) }
    ' "$OUTDIR"/bench-*-"$i".md "$OUTDIR"/peers-*-"$i".md 2>/dev/null | tee -a "$SUMMARY"
  done
}

fig_campaigns() {
  local c
  for c in matmul-1024 matmul-4096 layernorm-4096x768 layernorm-16384x4096; do
    campaign "campaigns/$c.json"
  done
}

fig_seed() {
  local f i a
  f=$(campaign_copy layernorm-4096x768 layernorm-4096x768 'c["measure"]["seed"] = 7')
  TUNEFARM_ROOT=$PWD campaign "$f" ledgers-seed7
  for i in 1 2; do
    mapfile -t a < <(ledgers "$OUTDIR"/ledgers-seed7/layernorm-4096x768/*.jsonl; configs "$BEST_768" "$EARLIER_768")
    TUNEFARM_ROOT=$PWD bench "seed7-layernorm-4096x768-$i" "${a[@]}" "$f"
    peers layernorm "seed7-layernorm-$i"
  done
}

fig_limits() {
  command -v ncu >/dev/null || { say "limits: ncu is not on PATH"; return; }
  local regex='tf_matmul<\(int\)64, \(int\)128, \(int\)64, \(int\)8, \(int\)8, \(int\)0, \(int\)4, \(int\)1, \(int\)2, \(int\)1, \(int\)1, \(int\)2, \(int\)1>'
  CUDA_VISIBLE_DEVICES=0 ncu --kernel-name-base demangled -k "regex:$regex" --launch-skip 2 --launch-count 1 \
    --section SchedulerStats --section WarpStateStats --section LaunchStats \
    --metrics 'regex:smsp__average_warps_issue_stalled_.*_per_issue_active\.ratio' \
    "$TF" bench --backend cuda --rounds 1 --samples 1 --no-cublas --config "$BEST_1024" campaigns/matmul-1024.json \
    >"$OUTDIR/ncu-matmul-1024.txt" 2>&1
  say "ncu of $BEST_1024 at 1024^3: rc=$?"
  grep -E "Issued Warp Per Scheduler|No Eligible|Registers Per|stalled_(dispatch|short|long|barrier)" \
    "$OUTDIR/ncu-matmul-1024.txt" | tee -a "$SUMMARY"
}

# sweep NAME BASE 'DIMS' [WHERE]: every reachable configuration of BASE at DIMS launched on
# every core's rank (GPU 0) and checked against the template's reference.
sweep() {
  local f t0=$(date +%s)
  f=$(campaign_copy "$1" "$2" "c['problem'].update({$3})")
  OMP_NUM_THREADS=${OMP_NUM_THREADS:-1} TUNEFARM_ROOT=$PWD CUDA_VISIBLE_DEVICES=0 \
    "${MPI[@]}" -np "$(nproc)" "$TF" audit --run ${4:+--where "$4"} "$f" \
    >"$OUTDIR/sweep-$1.log" 2>&1
  say "| $1 | ${4:-all} | $(grep -E '^audit:' "$OUTDIR/sweep-$1.log" | sed 's/^audit: //') | $(grep -c '^FAILED' "$OUTDIR/sweep-$1.log") wrong or failed | $(($(date +%s) - t0)) s |"
}

fig_correctness() {
  say "| sweep | where | audit | result | wall |"
  say "|---|---|---|---|---:|"
  sweep matmul-4096 matmul-4096 "'M': 4096, 'N': 4096, 'K': 4096"
  sweep matmul-1024 matmul-1024 "'M': 1024, 'N': 1024, 'K': 1024" 'KSLICE > 1 || SPLITK > 1'
  sweep matmul-1000 matmul-1024 "'M': 1000, 'N': 1000, 'K': 1000"
  sweep matmul-4095x4097x1023 matmul-1024 "'M': 4095, 'N': 4097, 'K': 1023"
  sweep matmul-128x8192x64 matmul-1024 "'M': 128, 'N': 8192, 'K': 64" 'FRAG == 0 || BK >= 32'
  local d
  for d in 100 128 1000 4097; do
    sweep "layernorm-1001x$d" layernorm-4096x768 "'R': 1001, 'D': $d"
  done
  sweep layernorm-4096x768 layernorm-4096x768 "'R': 4096, 'D': 768" 'ROWS > 1'
}

fig_faults() { campaign campaigns/faulty.json; }

fig_aa() {
  bash bench/aa.sh --out "$OUTDIR/aa" | tee "$OUTDIR/aa.md" | grep -E 'A/A false keeps|^## ' | tee -a "$SUMMARY"
}

fig_placement() {
  local c=campaigns/aa-layernorm-4096x768.json t
  local s=(--set search.budget=160 --set search.fresh_every=20 --set canary.rounds=0)
  for t in layout=per_arm layout=swap code=per_arm order=fixed; do
    bash bench/aa.sh --out "$OUTDIR/placement" "${s[@]}" --set "measure.$t" --tag "${t//=/-}" "$c" \
      >"$OUTDIR/placement-${t//=/-}.md"
    python3 bench/aa_parity.py "$OUTDIR"/placement/ledgers/*-"${t//=/-}"/*.jsonl |
      tee "$OUTDIR/placement-${t//=/-}-phases.md" | tee -a "$SUMMARY"
  done
}

fig_gain() {
  campaign campaigns/gain-layernorm-4096x768.json
  say "keeps per ledger: $(grep -c '"decision":"keep"' "$OUTDIR"/ledgers/gain-layernorm-4096x768/*.jsonl | tr '\n' ' ')"
}

fig_study() {
  campaign campaigns/decide-aa.json
  campaign campaigns/decide-gain3.json
  "$TF" study --ledgers "$OUTDIR/ledgers/decide-aa" "$OUTDIR/ledgers/decide-gain3" >"$OUTDIR/study-gpu.md" 2>&1
  say "tunefarm study --ledgers decide-aa decide-gain3: rc=$?"
  rows "$OUTDIR/study-gpu.md"
}

fig_scaling() {
  local c g vis
  [ "$(gpus)" -ge 2 ] || { say "scaling: needs two GPUs"; return; }
  for c in decide-aa matmul-1024-aa; do
    for g in 1 2; do
      vis=0; [ "$g" -eq 2 ] && vis=0,1
      CUDA_VISIBLE_DEVICES=$vis "${MPI[@]}" -np $((g + 1)) "$TF" run --backend cuda \
        --ledgers "$OUTDIR/ledgers-scaling-$g" "campaigns/$c.json" >"$OUTDIR/run-$c-$g.log" 2>&1
      say "$c on $g GPU(s): rc=$? $(grep -E 'coordinator:|rate:' "$OUTDIR/run-$c-$g.log" | tr -s ' ' | tr '\n' ';')"
    done
  done
}

fig_sim_scaling() { bash bench/sim_scaling.sh 20 1 2 8 64 | tee "$OUTDIR/sim-scaling.md" | tee -a "$SUMMARY"; }

fig_examples() {
  local ex d n
  for ex in softmax/softmax-4096x1000 transpose/transpose-4096x3000 histogram/histogram-16m-256 \
    matmul_bf16/matmul-bf16-4096 matmul_bf16/matmul-bf16-wgmma-4096; do
    d=examples/${ex%%/*} n=${ex##*/}
    CUDA_VISIBLE_DEVICES=0 "${MPI[@]}" -np 8 "$TF" audit --run "$d/campaigns/$n.json" >"$OUTDIR/audit-$n.log" 2>&1
    say "audit --run $n: rc=$? $(grep -h 'audit:' "$OUTDIR/audit-$n.log" | tail -1)"
    CUDA_VISIBLE_DEVICES=0 campaign "$d/campaigns/$n.json" examples
    bench "$n" --ledger "$OUTDIR/examples/$n/"*.jsonl "$d/campaigns/$n.json"
  done
  peers softmax softmax
  peers transpose transpose
  peers bf16 bf16
  for t in softmax transpose bf16; do rows "$OUTDIR/peers-$t.md" >/dev/null; done
  nvcc -O3 -arch=sm_90a -o "$BUILD/mma_ceiling" bench/mma_ceiling.cu >"$OUTDIR/mma-build.log" 2>&1 &&
    CUDA_VISIBLE_DEVICES=0 "$BUILD/mma_ceiling" | tee "$OUTDIR/mma-ceiling.md" | tee -a "$SUMMARY"
}

fig_floor() {
  local c=examples/copy/campaigns/copy-4096x1000.json best i
  CUDA_VISIBLE_DEVICES=0 "$TF" sweep --quiet -o "$OUTDIR/copy.tfspace" "$c" >"$OUTDIR/sweep-copy.log" 2>&1
  say "tunefarm sweep $c: rc=$?"
  best=$(python3 - "$OUTDIR/copy.tfspace" <<'PY'
import gzip, json, sys
lines = [json.loads(l) for l in gzip.open(sys.argv[1], "rt")]
ok = [c for c in lines[1:] if c.get("check") == "pass"]
print(",".join(f"{k}={v}" for k, v in zip(lines[0]["knobs"], min(ok, key=lambda c: c["ratio"])["values"])))
PY
  )
  say "fastest copy of the sweep: $best"
  for i in 1 2; do
    bench "copy-$i" --rounds 20 --config "$best" "$c"
    bench "softmax-$i" --rounds 20 --config BLOCK=32,VEC=4,ROWS=8,HOLD=8,LOAD=1 \
      examples/softmax/campaigns/softmax-4096x1000.json
  done
  bench copy-transpose --rounds 20 --dims N=12288000 --config "$best" "$c"
  bench transpose --rounds 20 --config TILE=64,ROWS=4,PAD=1,VEC=2 examples/transpose/campaigns/transpose-4096x3000.json
  peers softmax floor
  rows "$OUTDIR/peers-floor.md" >/dev/null
}

fig_gpu_tests() {
  (cd "$BUILD" && CUDA_VISIBLE_DEVICES=0 ctest -L gpu --output-on-failure) >"$OUTDIR/ctest-gpu.log" 2>&1
  say "ctest -L gpu: rc=$? $(grep -E 'tests passed|tests failed' "$OUTDIR/ctest-gpu.log")"
}

build
for f in "${FIGURES[@]}"; do
  say ""
  say "## $f"
  "fig_${f//-/_}"
done
echo
echo "raw output: $OUTDIR"
