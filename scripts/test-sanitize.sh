#!/usr/bin/env bash
# Sanitizers and fuzzing, after scripts/test.sh (CI runs both):
#  1. build the project with clang and -fsanitize=address,undefined into build-san/, with the
#     libFuzzer harnesses of tests/fuzz (-DTF_FUZZ=ON);
#  2. run the unit and cli tests there (any AddressSanitizer or UBSan report fails them);
#  3. run every fuzzer on its seeds (scripts/fuzz-seeds.sh: a copy of tests/fuzz/corpus/TARGET,
#     and the tree's specs for fuzz_template) for FUZZ_SECONDS (default 12), two at a time; a
#     crash, leak, hang or UB is a finding, saved under build-san/fuzz/findings/ and failing
#     the script.
# About 3 minutes on two cores. docs/results.md has the long runs' figures.
set -euo pipefail
cd "$(dirname "$0")/.."
secs="${FUZZ_SECONDS:-12}"
t0=$(date +%s)
if ! command -v clang >/dev/null || ! dpkg -s libomp-dev libclang-rt-dev >/dev/null 2>&1; then
  apt-get update -qq && apt-get install -y -qq clang libclang-rt-dev libomp-dev >/dev/null
fi

mkdir -p build-san
san="-fsanitize=address,undefined -fno-sanitize-recover=undefined -fno-omit-frame-pointer"
# --as-needed: clang, unlike Debian's gcc, would otherwise record CUPTI's libcuda.so.1 as needed,
# and the binaries would not start where there is no driver.
CC=clang cmake -S . -B build-san -DCMAKE_BUILD_TYPE=Debug -DCMAKE_C_FLAGS_DEBUG="-O2 -g" \
  -DCMAKE_C_FLAGS="$san" -DCMAKE_EXE_LINKER_FLAGS="$san -Wl,--as-needed" \
  -DTF_FUZZ=ON >build-san/configure.log
cmake --build build-san -j2 >build-san/build.log
echo "test-sanitize: built in $(($(date +%s) - t0)) s"

export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
export TUNEFARM_CACHE="$PWD/build-san/test-cache"
export UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1
# Leaks are checked in the unit tests and the fuzzers; the cli tests start ranks under mpirun,
# which end with Open MPI's own allocations (in unloaded components, so no suppression can name
# them). cli_big_space measures a time limit meant for optimized builds; cli_install,
# cli_report_html and cli_run_script test CMake, a browser and a shell script, whose C the
# other cli tests run already (CI has 10 minutes).
(cd build-san && ASAN_OPTIONS=detect_leaks=1 ctest -j2 -L unit --output-on-failure)
(cd build-san && ASAN_OPTIONS=detect_leaks=0 ctest -j2 -L cli \
  -E 'cli_big_space|cli_install|cli_report_html|cli_run_script' --output-on-failure)
echo "test-sanitize: unit and cli tests passed at $(($(date +%s) - t0)) s"

# fuzz TARGET: run one fuzzer for $secs on a scratch copy of its seeds; prints its figures
fuzz() {
  local t="$1" dir="build-san/fuzz"
  mkdir -p "$dir/corpus" "$dir/findings"
  bash scripts/fuzz-seeds.sh "$t" "$dir/corpus/$t"
  local rc=0
  "build-san/tests/fuzz_$t" -max_total_time="$secs" -timeout=10 -print_final_stats=1 \
    -artifact_prefix="$dir/findings/$t-" "$dir/corpus/$t" >"$dir/$t.log" 2>&1 || rc=$?
  echo "fuzz_$t: $(grep -o 'stat::number_of_executed_units: [0-9]*' "$dir/$t.log" | grep -o '[0-9]*$') runs," \
    "$(grep -oE 'cov: [0-9]+' "$dir/$t.log" | tail -1), exit $rc"
  [ "$rc" -eq 0 ] || { tail -40 "$dir/$t.log"; return 1; }
}
fail=0
for pair in "campaign template" "ledger protocol" "expr includes" "cache export" "spacefile"; do
  set -- $pair
  fuzz "$1" & a=$!
  b=
  if [ $# -gt 1 ]; then fuzz "$2" & b=$!; fi
  wait "$a" || fail=1
  [ -z "$b" ] || wait "$b" || fail=1
done
[ "$fail" -eq 0 ] || { echo "test-sanitize: a fuzzer found something (build-san/fuzz/findings/)"; exit 1; }
echo "test-sanitize: done in $(($(date +%s) - t0)) s"
