#!/usr/bin/env bash
# `tunefarm export` of templates with typed buffers and scalars (examples/softmax: f32 and
# i32 scalars; examples/histogram: a u8 input, u32 output bins, a u32 scalar; examples/
# transpose): the launcher declares each buffer with its element type, const for an input,
# and each scalar with its C type, in the template's order, and the .cu builds with plain nvcc.
source "$(dirname "$0")/../lib.sh"
cd "$WORK"
export TUNEFARM_CACHE="$WORK/cache"
for ex in softmax/softmax-4096x1000 histogram/histogram-16m-256 transpose/transpose-4000x3000; do
  cp -r "$SRC/examples/${ex%/*}" "${ex%/*}"
done
"$TF" export -o out --name sm --config BLOCK=128,VEC=4,ROWS=2 softmax/campaigns/softmax-4096x1000.json \
  >out.txt || fail "export of softmax"
"$TF" export -o out --name hg --config ITEMS=4,SHARED=1 histogram/campaigns/histogram-16m-256.json \
  >out.txt || fail "export of histogram"
"$TF" export -o out --name tp --config TILE=32,ROWS=4,PAD=1 transpose/campaigns/transpose-4000x3000.json \
  >out.txt || fail "export of transpose"

grep -qF 'cudaError_t sm_launch(const float * /* x */, float * /* y */, float * /* lse */, long long /* R */, long long /* D */, cudaStream_t /* stream */);' out/sm.h ||
  { cat out/sm.h; fail "softmax: the launcher's buffers"; }
grep -qF 'cudaError_t hg_launch(const unsigned char * /* x */, unsigned int * /* bins */, long long /* N */, long long /* BINS */, cudaStream_t /* stream */);' out/hg.h ||
  { cat out/hg.h; fail "histogram: the launcher's buffers are not u8 and u32"; }
grep -q '^ \*   x: u8, input$' out/hg.h && grep -q '^ \*   bins: u32, output$' out/hg.h ||
  fail "histogram: the header does not list the buffers' types and roles"
grep -qF 'unsigned int tf_l_a2 = (unsigned int)tf_l_v2;' out/hg.cu || fail "histogram: the u32 scalar n"
grep -qF 'if (tf_l_v2 < 0LL || tf_l_v2 > 4294967295LL) ev->bad = 1;' out/hg.cu ||
  fail "histogram: the u32 scalar's range is not checked"
grep -qF '* sizeof(unsigned int), tf_l_stream);' out/hg.cu || fail "histogram: bins cleared by the wrong size"
grep -qF 'int tf_l_a3 = (int)tf_l_v3;' out/tp.cu || fail "transpose: the i32 scalar R"

command -v nvcc >/dev/null || { echo "SKIP: no nvcc here: the exported code is not built"; exit 77; }
for n in sm hg tp; do
  nvcc -std=c++17 -arch=sm_90 -c "out/$n.cu" -o "$n.o" >nvcc.log 2>&1 ||
    { cat nvcc.log; fail "the export $n does not build with plain nvcc"; }
done
# The headers are C: a C file includes them and calls the launchers with typed pointers.
cat >drv.c <<'C'
#include "sm.h"
#include "hg.h"
#include "tp.h"
int main(void) {
  const unsigned char *x = 0;
  unsigned int *bins = 0;
  const float *in = 0;
  float *out = 0;
  return hg_launch(x, bins, 100, 256, 0) + tp_launch(in, out, 10, 20, 0) + sm_launch(in, out, out, 1, 1, 0);
}
C
gcc -std=c99 -Wall -Werror -I"$(dirname "$(command -v nvcc)")/../include" -Iout -fsyntax-only drv.c >gcc.log 2>&1 ||
  { cat gcc.log; fail "a C file that includes the exported headers does not compile"; }
echo "ok: typed exports build"
