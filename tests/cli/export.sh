#!/usr/bin/env bash
# `tunefarm export`: a search's final best (or a configuration given) as NAME.h and NAME.cu
# that build with plain nvcc; NAME_check accepts the tuned sizes and refuses what a template
# constraint or range refuses (host code: this runs without a GPU); bad input exits 2.
source "$(dirname "$0")/../lib.sh"
cd "$WORK"
mkdir -p campaigns
export TUNEFARM_ROOT="$SRC" TUNEFARM_CACHE="$WORK/cache" # a cubin is compiled, then found
sed -E 's/"budget": [0-9]+/"budget": 6/' "$SRC/campaigns/layernorm-4096x768.json" \
  >campaigns/layernorm-4096x768.json
"${MPIRUN[@]}" -np 2 "$TF" run --backend sim --quiet --ledgers ledgers \
  campaigns/layernorm-4096x768.json || fail "run failed"
ln=$(ls ledgers/layernorm-4096x768/*.jsonl)
"$TF" export -o out --name tf_ln "$ln" >out.txt || fail "export failed"
grep -q 'out/tf_ln.cu' out.txt || fail "no word of what was written"
# The build command it prints names the architecture the farm compiled for (the simulated
# device's sm_90 here), as the header does: nvcc's own default is older than any GPU tuned on.
build_ln=$(sed -n 's/^tunefarm export: build with: //p' out.txt)
[ "$build_ln" = "nvcc -std=c++17 -arch=sm_90 -c out/tf_ln.cu" ] || { cat out.txt; fail "build command '$build_ln'"; }
grep -qF ' * Build: nvcc -std=c++17 -arch=sm_90 -c tf_ln.cu' out/tf_ln.h || fail "the header states another build"
grep -q "Ledger: $ln" out/tf_ln.h || fail "the header does not say where the configuration came from"
grep -q "no cubin: the ledger's device is simulated" out.txt ||
  fail "an export without a cubin does not say why"
[ ! -e out/tf_ln.cubin ] || fail "a cubin for a simulated device"
! grep -q use_cubin out/tf_ln.h || fail "NAME_use_cubin without a cubin"
"$TF" export -o out --name tf_mm --arch sm_90 --config VEC=4 "$SRC/campaigns/matmul-1024.json" \
  >out.txt || fail "export of a configuration given failed"
grep -q 'VEC=4' out/tf_mm.h || fail "the header does not name the configuration given"
# tf_mm_check refuses sizes the kernel cannot run, not sizes at which the search would have
# preferred another configuration ("performance": true in the template)
grep -q '"vector_alignment: ' out/tf_mm.cu || fail "tf_mm_check lost a constraint a launch needs"
! grep -q '"splitk_fill: \|"stream_for_partial_waves: \|"slices_for_small_grids: ' out/tf_mm.cu ||
  fail "tf_mm_check refuses sizes for speed alone"
# The cubin: NVRTC's build as a generation's job compiles it (an ELF file), loaded by name.
grep -q 'out/tf_mm.cubin (NVRTC, sm_90: compiled now' out.txt || fail "no word of the cubin"
# --arch sets the build command's architecture too; this configuration uses cp.async, which
# nvcc's default architecture cannot assemble.
"$TF" export -o out --name tf_pipe --arch sm_80 --config PIPE=2,VEC=4 "$SRC/campaigns/matmul-1024.json" \
  >out.txt || fail "export of a cp.async configuration failed"
build_pipe=$(sed -n 's/^tunefarm export: build with: //p' out.txt)
[ "$build_pipe" = "nvcc -std=c++17 -arch=sm_80 -c out/tf_pipe.cu" ] || { cat out.txt; fail "build command '$build_pipe'"; }
grep -q 'cp.async' out/tf_pipe.cu || fail "the configuration uses no cp.async: the build below proves nothing"
"$TF" export -o out --name tf_mm --arch sm_90 --config VEC=4 "$SRC/campaigns/matmul-1024.json" |
  grep -q "found in the farm's cache" || fail "a second export compiled again"
[ "$(head -c 4 out/tf_mm.cubin | od -An -c | tr -d ' ')" = '177ELF' ] || fail "the cubin is no ELF file"
grep -q 'tf_mm_use_cubin(const char \* /\* path \*/);' out/tf_mm.h || fail "no tf_mm_use_cubin"
grep -q 'cudaLibraryGetKernel(&tf_l_k, tf_l_lib, "_Z9tf_matmul' out/tf_mm.cu ||
  fail "the loader does not name the kernel's lowered name"
grep -q 'return cudaLaunchKernel((const void \*)tf_mm_cubin_kernel, tf_l_grid, tf_l_block, tf_l_args' out/tf_mm.cu ||
  fail "tf_mm_launch does not launch the cubin once loaded"
expect_exit 2 "$TF" export -o bad --arch sm_9x --config VEC=4 "$SRC/campaigns/matmul-1024.json"
grep -q "not an architecture" "$WORK/last.err" || fail "a bad --arch is not explained"
[ ! -e bad/tf_matmul_1024.h ] || fail "files written for a bad --arch"
expect_exit 2 "$TF" export -o bad --arch sm_12 --config VEC=4 "$SRC/campaigns/matmul-1024.json"
grep -q "builds no machine code for sm_12" "$WORK/last.err" || fail "an arch NVRTC lacks is not explained"
expect_exit 2 "$TF" export --arch sm_90 --no-cubin "$ln"
grep -q "give one of them" "$WORK/last.err" || fail "--arch with --no-cubin is not explained"
# An export without a cubin leaves none from an earlier one beside code without its loader.
"$TF" export -o out --name tf_mm --no-cubin --config VEC=4 "$SRC/campaigns/matmul-1024.json" \
  >/dev/null || fail "export --no-cubin failed"
[ ! -e out/tf_mm.cubin ] || fail "a stale cubin left beside code without its loader"
"$TF" export -o out --name tf_mm --arch sm_90 --config VEC=4 "$SRC/campaigns/matmul-1024.json" \
  >/dev/null || fail "export failed"
# A GPU this NVRTC cannot build for: the code is still exported, with a warning, and no cubin.
sed '1s/"backend":"sim"/"backend":"cuda"/; 1s/"arch":"sm_[0-9a-z]*"/"arch":"sm_99"/' "$ln" >gpu.jsonl
"$TF" export -o out99 --campaign campaigns/layernorm-4096x768.json gpu.jsonl >out.txt 2>err.txt ||
  fail "an export whose GPU NVRTC does not know failed"
grep -q "warning: no cubin: .*sm_99" err.txt || fail "no warning for a cubin not built"
[ -e out99/tf_layernorm_4096x768.cu ] && [ ! -e out99/tf_layernorm_4096x768.cubin ] ||
  fail "wrong files for a GPU NVRTC does not know"

expect_exit 2 "$TF" export --name 1x "$ln"
grep -q "C identifier" "$WORK/last.err" || fail "a bad name is not explained"
expect_exit 2 "$TF" export nope.jsonl
# an output folder that cannot be made is the user's to fix: bad input, named once
expect_exit 2 "$TF" export --no-cubin -o "$WORK/no/such/folder" "$ln"
grep -q "^tunefarm export: cannot make the folder '$WORK/no/such/folder'" last.err || { cat last.err; fail "export -o: no clear message"; }
: >"$WORK/a_file"
expect_exit 2 "$TF" export --no-cubin -o "$WORK/a_file" "$ln"
grep -q "is not a folder" last.err || { cat last.err; fail "export -o FILE: no clear message"; }
head -1 "$ln" >empty.jsonl
expect_exit 2 "$TF" export empty.jsonl
grep -q "no generation yet" "$WORK/last.err" || fail "a ledger without a best is not explained"
expect_exit 2 "$TF" export --config VEC=3 "$SRC/campaigns/matmul-1024.json"
sed -i 's/"min_gain": 0.01/"min_gain": 0.02/' campaigns/layernorm-4096x768.json
expect_exit 2 "$TF" export --campaign campaigns/layernorm-4096x768.json "$ln"
grep -q "changed since" "$WORK/last.err" || fail "a campaign that changed is not refused"

nvcc --version >/dev/null 2>&1 || { echo "SKIP: no working nvcc here: the exported code is not built"; exit 77; }
cat >drv.c <<'C'
#include <stdio.h>
#include "tf_ln.h"
#include "tf_mm.h"
int main(void) {
  const char *r[4] = {tf_mm_check(1024, 1024, 1024), tf_mm_check(1024, 1023, 1024),
                      tf_ln_check(4096, 768), tf_ln_check(4096, 0)};
  for (int i = 0; i < 4; i++) printf("%s\n", r[i] ? r[i] : "accepted");
  return !(r[0] == NULL && r[1] != NULL && r[2] == NULL && r[3] != NULL);
}
C
nvcc -std=c++17 -arch=sm_90 -Iout -o drv drv.c out/tf_mm.cu out/tf_ln.cu >nvcc.log 2>&1 ||
  { cat nvcc.log; fail "the exported code does not build with plain nvcc"; }
./drv || fail "the exported checks accept or refuse the wrong sizes"
# The printed commands build what was exported, as printed.
$build_ln -o ln.o >nvcc.log 2>&1 || { cat nvcc.log; fail "'$build_ln' does not build"; }
$build_pipe -o pipe.o >nvcc.log 2>&1 || { cat nvcc.log; fail "'$build_pipe' does not build"; }
echo "ok: exported, built with nvcc, its checks right"
