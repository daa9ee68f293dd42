#!/usr/bin/env bash
# Compiling ahead and running ahead change time only: the same campaign and seed on the
# simulated device, with a simulated compile time, once with the workers compiling ahead and
# running the next job ahead of its decision and once with neither, give ledgers whose every
# record is the same (configurations, generations, restarts, rounds, ratios, decisions and
# reasons, the jobs as sent), times and clocks aside; and both did happen (more jobs found
# their cubin, the pools started compiles, jobs run ahead were taken). The seconds spent
# compiling are printed, not compared: on a loaded machine the pool's processes start slowly,
# and what compiling ahead saves is measured by bench/busy.sh (docs/results.md). Last, the first
# job's kernels compile at once: its three simulated compiles end sooner than one after another
# could (a bound that proves they overlapped, not a speed).
source "$(dirname "$0")/../lib.sh"
cd "$WORK"
sed -E 's/"budget": [0-9]+/"budget": 24/; s/"max_stale": [0-9]+/"max_stale": 5/;
        s/"restarts": [0-9]+/"restarts": 1/' "$SRC/campaigns/matmul-1024.json" >spec.json
grep -q '"restarts": 1' spec.json || fail "the campaign's search section changed: edit this test"
export TUNEFARM_ROOT="$SRC" TUNEFARM_SIM_COMPILE=0.2 TUNEFARM_SIM_SLEEP=5
for mode in on off; do
  flags=(--compile-jobs 2)
  [ "$mode" = off ] && flags=(--compile-jobs 0 --no-run-ahead)
  TUNEFARM_CACHE="$WORK/cache-$mode" "${MPIRUN[@]}" -np 3 "$TF" run --backend sim \
    --ledgers "$WORK/$mode" "${flags[@]}" spec.json 2>"$mode.err" ||
    { cat "$mode.err"; fail "run with compiles ahead $mode failed"; }
done
# What a record says, without the keys that say when and how long (and which run), and
# which checks its process had done before (a job run ahead and dropped checked its candidate).
strip() {
  jq -c 'del(.time, .created, .compile_ms, .cache_hit, .wall_s, .times, .elapsed_s, .run,
             .checked)' "$1"
}
n=0
for l in on/spec/*.jsonl; do
  other="off/spec/$(basename "$l")"
  [ -f "$other" ] || fail "no ledger $other to compare $l with"
  diff <(strip "$l") <(strip "$other") >diff.out ||
    { head -c 3000 diff.out; fail "$l: the search differs with compiles ahead"; }
  n=$((n + 1))
done
[ "$n" -eq 2 ] || fail "expected 2 ledgers, compared $n"
# A comparison that means something: keeps, rejections, a restart.
all=$(cat on/spec/*.jsonl)
for want in '"decision":"keep"' '"decision":"reject"' '"type":"restart"'; do
  grep -q "$want" <<<"$all" || fail "the runs have no $want: the comparison proves little"
done
hits() { jq -s '[.[] | select(.status) | select(.cache_hit)] | length' "$1"/spec/*.jsonl; }
compiling() { jq -s '[.[] | select(.status) | .times.compile_s] | add' "$1"/spec/*.jsonl; }
echo "cache hits: on $(hits on), off $(hits off); seconds compiling: on $(compiling on), off $(compiling off)"
[ "$(hits on)" -gt "$(hits off)" ] || fail "compiling ahead found no more cubins in the cache"
grep -q "busy:" on.err || fail "the summary gives no busy fraction"
grep "run ahead:" on.err
grep -Eq "run ahead: [0-9]+ jobs started before their decision, [1-9][0-9]* of them taken" on.err ||
  fail "no job run ahead was taken"
grep -q "run ahead:" off.err && fail "--no-run-ahead ran jobs ahead"
# Each worker compiling ahead says what its pool did; one that compiles nothing says nothing.
pool='compile pool, 2 at once for [0-9.]+ s: [0-9]+ compiles ended \([0-9.]+ CPU s\), [0-9]+ stopped'
[ "$(grep -Ec "$pool" on.err)" -eq 2 ] || { grep "compile pool" on.err; fail "not one compile pool line per worker"; }
# Started, at least: in so short a run on a loaded machine every compile a pool starts may be
# stopped by the next list before it ends.
grep -Eo "$pool" on.err | awk '{ n += $(NF - 7) + $(NF - 1) } END { exit !(n > 0) }' ||
  fail "no pool started a compile"
grep -q "compile pool" off.err && fail "a worker without a pool printed a pool line"
# A job that needs several kernels (a campaign's first: best, new and control) waits for the
# slowest, not their sum: the child compiles the first, the pool the others. Three simulated
# compiles of 2 s each take 6 s one after another, however loaded the machine.
sed -E 's/"budget": [0-9]+/"budget": 2/' spec.json >first.json
TUNEFARM_SIM_COMPILE=2 TUNEFARM_CACHE="$WORK/cache-first" "${MPIRUN[@]}" -np 2 "$TF" run --backend sim \
  --ledgers "$WORK/first" --compile-jobs 2 first.json 2>first.err || { cat first.err; fail "first job"; }
first=$(jq -s '[.[] | select(.times)][0].times.compile_s' first/first/*.jsonl)
echo "the first job compiled its three kernels in $first s"
awk -v s="$first" 'BEGIN { exit !(s < 5.5) }' || fail "the first job compiled its kernels one after another"
echo "ok: the same ledgers with and without compiling ahead; the first job's kernels at once"
