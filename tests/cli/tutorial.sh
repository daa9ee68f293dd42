#!/usr/bin/env bash
# docs/guide.md, step by step, in a folder outside the repository: every fenced block tagged
# `file=PATH` is written to PATH, every `sh` block runs in order (check, audit, run, report,
# export, the nvcc build), so the page and this test cannot drift. The page's other commands
# (clusters, Slurm) are in `bash` blocks, which this test leaves alone. On the
# simulated device with NVRTC compiling every kernel (TUNEFARM_SIM_COMPILE unset), the
# reference kernel included.
source "$(dirname "$0")/../lib.sh"
export TUNEFARM_SIM_COMPILE= TUNEFARM_CACHE="$WORK/cache"
doc="$SRC/docs/guide.md"
mkdir -p "$WORK/bin" "$WORK/project"
ln -s "$(cd "$(dirname "$TF")" && pwd)/$(basename "$TF")" "$WORK/bin/tunefarm"
export PATH="$WORK/bin:$PATH"
cd "$WORK/project"

# The files, and the commands as one script.
awk -v cmds="$WORK/steps.sh" '
  /^```[a-z]+ file=/ { out = substr($2, 6); system("mkdir -p \"$(dirname " out ")\""); mode = "file"; next }
  /^```sh$/ { mode = "sh"; next }
  /^```/ { if (mode == "file") close(out); mode = ""; next }
  mode == "file" { print > out }
  mode == "sh" { print >> cmds }
' "$doc"
for f in templates/haxpy.cu templates/haxpy.json templates/ref_haxpy.cu campaigns/haxpy-1m.json; do
  [ -s "$f" ] || fail "the page gives no $f"
done
grep -q '^tunefarm run ' "$WORK/steps.sh" && grep -q '^nvcc ' "$WORK/steps.sh" ||
  { cat "$WORK/steps.sh"; fail "the page's commands lack the run or the build"; }
# Without a working nvcc every other step still runs and is checked; the test is then
# reported skipped, for the page's build alone was not tried.
have_nvcc=1
nvcc --version >/dev/null 2>&1 || { have_nvcc=0; sed -i '/^nvcc /d' "$WORK/steps.sh"; }

bash -eu "$WORK/steps.sh" >"$WORK/steps.out" 2>"$WORK/steps.err" ||
  { tail -30 "$WORK/steps.out" "$WORK/steps.err"; fail "a command of the page failed"; }
grep -q "accepted:   31" "$WORK/steps.out" || fail "check: not the 31 configurations the page shows"
grep -q "compiled 31, failed 0" "$WORK/steps.out" "$WORK/steps.err" || fail "audit: not every kernel compiled"
grep -q "campaign haxpy-1m finished" "$WORK/steps.out" "$WORK/steps.err" || fail "run did not finish"
grep -q "final best: " "$WORK/steps.out" || fail "report: no final best"
grep -q "build with: nvcc -std=c++17 -arch=sm_90 -c export/tf_haxpy_1m.cu" "$WORK/steps.out" ||
  fail "export printed another build command than the page's"
[ "$have_nvcc" = 0 ] || [ -s export/tf_haxpy_1m.o ] || [ -s tf_haxpy_1m.o ] ||
  fail "the build left no object"
# the kernels really compiled: the farm's cache holds their cubins
[ "$(find "$TUNEFARM_CACHE" -name '*.cubin' | wc -l)" -gt 0 ] || fail "no kernel was compiled"
# the reference kernel compiles on its own too
printf '{"root": "%s", "sources": ["templates/ref_haxpy.cu"], "exprs": ["ref_haxpy"]}\n' \
  "$WORK/project" >"$WORK/prog.json"
expect_exit 0 "$TF" compile <"$WORK/prog.json"
# `check` reads the reference kernel's parameters from its compile, so it may be cached already
grep -qE '"status": ?"(compiled|cached)"' "$WORK/last.out" || fail "the reference kernel does not compile"
# the exported header is C, as the page says
printf '#include "tf_haxpy_1m.h"\nint main(void) { return tf_haxpy_1m_launch(0, 0, 0, 1024, 0); }\n' >drv.c
gcc -std=c99 -Wall -Werror -I"${TF_CUDA_INCLUDE:?the build names the CUDA include folder}" -Iexport -fsyntax-only drv.c ||
  fail "the exported header does not include from C"
[ "$have_nvcc" = 1 ] ||
  { echo "SKIP: every step of the page passed but its nvcc build: no working nvcc here"; exit 77; }
echo "ok: the tutorial"
