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
