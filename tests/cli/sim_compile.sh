#!/usr/bin/env bash
# The simulated device compiles every kernel it times with NVRTC through the cubin cache, as the
# GPU does: a template that does not compile ends its jobs as compile_error with NVRTC's log,
# not as measured kernels; TUNEFARM_SIM_COMPILE=0 (the tests of the farm's machinery) compiles
# nothing. Every run on it says that its times are synthetic and that no output is checked.
source "$(dirname "$0")/../lib.sh"
cd "$WORK"
unset TUNEFARM_ROOT TUNEFARM_SIM_COMPILE
export TUNEFARM_CACHE="$WORK/cache"
mkdir -p good/templates good/campaigns bad/templates bad/campaigns
cp "$SRC/templates/chain.json" "$SRC/templates/chain.cu" "$SRC/templates/ref_scale2.cu" good/templates/
cp "$SRC/templates/chain.json" "$SRC/templates/ref_scale2.cu" bad/templates/
sed 's/^}$/}}} this is not CUDA/' "$SRC/templates/chain.cu" >bad/templates/chain.cu
grep -q 'this is not CUDA' bad/templates/chain.cu || fail "the broken template is not broken"
for p in good bad; do
  cat >$p/campaigns/chain.json <<'JSON'
{"template": "chain", "problem": {"N": 4096}, "start": {"ITERS": 110}, "control": {"ITERS": 100},
 "search": {"budget": 2, "max_stale": 50},
 "measure": {"burn_in": 1, "rounds": 3, "samples": 5, "input_sets": 1, "deadline_s": 60, "seed": 7}}
JSON
done

# A template that compiles: measured, from real cubins (NVRTC's ELF files in the cache).
(cd good && "${MPIRUN[@]}" -np 2 "$TF" run --backend sim --compile-jobs 0 campaigns/chain.json) \
  2>good.err || { cat good.err; fail "the run of a template that compiles failed"; }
grep -q '"status":"ok"' good/ledgers/chain/*.jsonl || fail "nothing measured"
cubin=$(ls cache/*.cubin | head -1)
[ "$(head -c 4 "$cubin" | od -An -c | tr -d ' ')" = '177ELF' ] || fail "no NVRTC cubin in the cache"
grep -q '^tunefarm: campaign chain on 1 device(s), backend sim, rule .* (simulated device: its times are synthetic, from a cost model, and no kernel.s output is checked)$' good.err ||
  { cat good.err; fail "the run's first line does not say the times are synthetic and unchecked"; }
grep -q '^tunefarm: campaign chain finished (simulated device: its times are synthetic' good.err ||
  fail "the summary does not say the times are synthetic"
"$TF" report good/ledgers/chain >report.md || fail "report failed"
grep -q '^\*\*simulated device\*\*: every time below is synthetic .*no kernel.s output was checked' \
  report.md || fail "the report of a simulated ledger does not say what it is not"

# A template that does not compile: compile errors with NVRTC's log, as on the GPU.
expect_exit 1 bash -c "cd bad && ${MPIRUN[*]} -np 2 '$TF' run --backend sim --compile-jobs 0 campaigns/chain.json"
l=$(ls bad/ledgers/chain/*.jsonl)
[ "$(grep -c '"status":"compile_error"' "$l")" -eq 2 ] || fail "the generations are not compile errors"
grep -q '"status":"ok"' "$l" && fail "a kernel that does not compile was measured"
grep -q '"detail":"nvrtc refused the program for sm_90 (tf_chain_kernel<110>): [^"]*chain.cu(19): error' "$l" ||
  fail "the compile error does not carry NVRTC's log"
grep -q 'compile error: nvrtc refused the program' last.err || fail "the run does not say so"
grep -q ' 0 faults; best' last.err && fail "the summary reports a best of kernels that do not compile"

# TUNEFARM_SIM_COMPILE=0: the simulated device compiles nothing, and measures the broken one.
(cd bad && TUNEFARM_SIM_COMPILE=0 "${MPIRUN[@]}" -np 2 "$TF" run --backend sim --fresh \
  --compile-jobs 0 campaigns/chain.json) 2>off.err || { cat off.err; fail "TUNEFARM_SIM_COMPILE=0 run failed"; }
grep -q '"status":"compile_error"' bad/ledgers/chain/*.jsonl && fail "TUNEFARM_SIM_COMPILE=0 compiled"
echo "ok: NVRTC compiles on the simulated device, a broken template is a compile error, and the output says synthetic"
