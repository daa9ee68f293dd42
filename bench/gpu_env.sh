# Sourced on the GPU machines, which have no cJSON or CMocka: unpack the Debian packages
# carried in .gpu-deps/ (copies of ../shared/debs) under /opt/deps and point pkg-config
# and the loader there. Then build with cmake as usual.
for f in .gpu-deps/*.deb; do dpkg -x "$f" /opt/deps; done
export PKG_CONFIG_SYSROOT_DIR=/opt/deps
export PKG_CONFIG_LIBDIR=/opt/deps/usr/lib/x86_64-linux-gnu/pkgconfig
export LD_LIBRARY_PATH=/opt/deps/usr/lib/x86_64-linux-gnu${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1

# The session scripts' common start: results folder, summary, a time guard, the tarballs
# that come back in $OUT, and the build.
gpu_session_start() {
  OUT=${OUT:-/tmp/out}
  R=$PWD/gpu-results
  rm -rf "$R"; mkdir -p "$R/logs" "$R/ledgers" "$OUT"
  S="$R/summary.txt"
  T0=$(date +%s)
  trap gpu_session_finish EXIT
  {
    date -u
    nvidia-smi --query-gpu=index,name,uuid,driver_version,clocks.sm,clocks.max.sm --format=csv
    cmake -B build -DCMAKE_BUILD_TYPE=RelWithDebInfo && cmake --build build -j "$(nproc)"
  } >"$R/logs/build.log" 2>&1 || { tail -40 "$R/logs/build.log"; exit 1; }
  say "$(date -u) built"
  export TUNEFARM_CACHE=$PWD/build/cache
}
say() { echo "$*" | tee -a "$S"; }
# The call has 600 s: skip a step that would start after $1 s, so the results still come back.
late() { [ $(( $(date +%s) - T0 )) -gt "${LATE_S:-480}" ] && { say "skipped (out of time): $*"; return 0; }; return 1; }
gpu_session_finish() {
  tar czf "$OUT/logs.tgz" -C "$R" logs summary.txt 2>/dev/null
  tar czf "$OUT/ledgers.tgz" -C "$R" ledgers 2>/dev/null
  cp "$S" "$OUT/summary.txt"
}

# `tunefarm bench` options from lists: configs K=V,... -> --config lines; mapfile them.
configs() { for c in "$@"; do printf -- '--config\n%s\n' "$c"; done; }
# One `tunefarm bench` under a time limit, its table into the logs and the summary:
#   bench_run NAME TIMEOUT_S ARGS... CAMPAIGN
bench_run() {
  local name=$1 limit=$2; shift 2
  late "bench $name" && return
  local t0=$(date +%s)
  timeout "$limit" build/tunefarm bench "$@" >"$R/logs/bench-$name.md" 2>"$R/logs/bench-$name.err"
  say "bench $name: rc=$? $(( $(date +%s) - t0 )) s"
  grep -E '^\|' "$R/logs/bench-$name.md" | cut -c1-170 | tee -a "$S"
}

# A correctness sweep: `tunefarm audit --run --where WHERE` of CAMPAIGN with its problem dims
# set from "K=V,..." (or - for the campaign's own), on RANKS ranks, under LIMIT s (the CPU
# reference gets OMP_NUM_THREADS threads per rank, 1 unless the caller sets it):
#   sweep NAME CAMPAIGN DIMS WHERE RANKS LIMIT
sweep() {
  late "sweep $1" && return
  mkdir -p sweep/campaigns
  python3 - "$2" "$3" >"sweep/campaigns/$1.json" <<'PY'
import json, sys
c = json.load(open(sys.argv[1]))
for kv in sys.argv[2].split(",") if sys.argv[2] != "-" else []:
    k, v = kv.split("="); c["problem"][k] = int(v)
print(json.dumps(c))
PY
  local t0=$(date +%s)
  OMP_NUM_THREADS=${OMP_NUM_THREADS:-1} TUNEFARM_ROOT=$PWD timeout "$6" mpirun --oversubscribe --bind-to none -np "$5" \
    build/tunefarm audit --run --where "$4" "sweep/campaigns/$1.json" >"$R/logs/sweep-$1.log" 2>&1
  say "sweep $1 ($3, $4): rc=$? $(( $(date +%s) - t0 )) s; $(grep -E '^audit:|^run:|--where' "$R/logs/sweep-$1.log" | tr '\n' ' ')"
}
# A campaign on every visible GPU (3 ranks on two GPUs), its ledgers under $R/ledgers, then
# report and verify:  campaign_run CAMPAIGN LIMIT
campaign_run() {
  late "run $1" && return
  local g t0=$(date +%s)
  g=$(build/tunefarm devices --json 2>/dev/null | grep -c uuid)
  timeout "$2" mpirun --oversubscribe --bind-to none -np $((g + 1)) build/tunefarm run --backend cuda \
    --ledgers "$R/ledgers" "campaigns/$1.json" >"$R/logs/run-$1.log" 2>&1
  say "mpirun -np $((g + 1)) build/tunefarm run --backend cuda campaigns/$1.json: rc=$? $(( $(date +%s) - t0 )) s"
  build/tunefarm report "$R/ledgers/$1" >"$R/logs/report-$1.md" 2>&1
  build/tunefarm verify "$R"/ledgers/$1/*.jsonl | tail -1 | tee -a "$S"
  grep -E 'final best' "$R/logs/report-$1.md" | head -4 | cut -c1-220 | tee -a "$S"
}
# bench/peers.py --only WHAT under LIMIT s, its table into the summary:  peers_run WHAT LIMIT [TAG]
peers_run() {
  local tag=${3:-$1} t0=$(date +%s)
  late "peers $tag" && return
  PYTHONUNBUFFERED=1 timeout "$2" python3 bench/peers.py --only "$1" >"$R/logs/peers-$tag.txt" 2>&1
  say "python3 bench/peers.py --only $1 ($tag): rc=$? $(( $(date +%s) - t0 )) s"
  grep -E '^\|' "$R/logs/peers-$tag.txt" | tee -a "$S"
}
# The GPU tests on GPU 0 under LIMIT s, their verdicts into the summary:  ctest_gpu LIMIT
ctest_gpu() {
  late "ctest -L gpu" && return
  (cd build && CUDA_VISIBLE_DEVICES=0 timeout "$1" ctest -L gpu --output-on-failure) >"$R/logs/ctest-gpu.log" 2>&1
  say "ctest -L gpu: rc=$?"
  grep -E 'tests passed|Passed|Failed' "$R/logs/ctest-gpu.log" | tee -a "$S"
}
