#!/usr/bin/env bash
# `tunefarm export` of templates with typed buffers and scalars (examples/softmax: f32 and
# i32 scalars; examples/histogram: a u8 input, u32 output bins, a u32 scalar; examples/
# transpose; and a template of every other type): the launcher declares each buffer with its element type, const for an input,
# and each scalar with its C type, in the template's order, and the .cu builds with plain nvcc.
source "$(dirname "$0")/../lib.sh"
cd "$WORK"
export TUNEFARM_CACHE="$WORK/cache"
for ex in softmax/softmax-4096x1000 histogram/histogram-16m-256 transpose/transpose-4096x3000; do
  cp -r "$SRC/examples/${ex%/*}" "${ex%/*}"
done
"$TF" export -o out --name sm --config BLOCK=128,VEC=4,ROWS=2 softmax/campaigns/softmax-4096x1000.json \
  >out.txt || fail "export of softmax"
"$TF" export -o out --name hg --config ITEMS=4,SHARED=1 histogram/campaigns/histogram-16m-256.json \
  >out.txt || fail "export of histogram"
"$TF" export -o out --name tp --config TILE=32,ROWS=4,PAD=1 transpose/campaigns/transpose-4096x3000.json \
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

# Every other element and scalar type: bf16 and f16 buffers (void pointers in the header),
# i64 and i8 buffers, f16, bf16, f64, i64 and i8 scalars with the very bits the farm passes,
# and a tensor map of rank 1 without swizzle.
mkdir -p all/templates all/campaigns
cat >all/templates/all.cu <<'CU'
#include <cuda_fp16.h>
#include <cuda_bf16.h>
struct __align__(64) tmap { unsigned char b[128]; };
template <int B>
__global__ void tf_all(const __half *x, __nv_bfloat16 *y, long long *z, const signed char *w,
                       __half s, __nv_bfloat16 t, double d, long long big, signed char k,
                       const __grid_constant__ tmap m) {
  int i = blockIdx.x * B + threadIdx.x;
  y[i] = __float2bfloat16(__half2float(x[i]) * __half2float(s) + __bfloat162float(t) + (float)d);
  z[i] = big + w[i] + k;
}
CU
cat >all/templates/ref_all.cu <<'CU'
#include <cuda_fp16.h>
#include <cuda_bf16.h>
__global__ void ref_all(const __half *x, __nv_bfloat16 *y, long long *z, const signed char *w,
                        __half s, __nv_bfloat16 t, double d, long long big, signed char k) {}
CU
cat >all/templates/all.json <<'JSON'
{"name": "all", "source": "all.cu", "kernel": "tf_all",
 "reference": {"kernel": "ref_all", "source": "ref_all.cu",
               "launch": {"grid": ["N", "1", "1"], "block": ["1", "1", "1"]}},
 "problem": {"N": [1, 1024]}, "knobs": {"B": {"values": [32, 64]}},
 "launch": {"grid": ["N/B", "1", "1"], "block": ["B", "1", "1"]},
 "buffers": [{"name": "x", "count": "N", "role": "input", "type": "f16"},
             {"name": "y", "count": "N", "role": "output", "type": "bf16"},
             {"name": "z", "count": "N", "role": "inout", "type": "i64", "clear": "1"},
             {"name": "w", "count": "N", "role": "input", "type": "i8"}],
 "args": ["x", "y", "z", "w", {"name": "s", "type": "f16", "value": "0.1"},
          {"name": "t", "type": "bf16", "value": -2.5}, {"name": "d", "type": "f64", "value": 1e-300},
          {"name": "big", "type": "i64", "value": "N*N*N*N"}, {"name": "k", "type": "i8", "value": "N/16 - 100"},
          {"name": "m", "tensormap": {"buffer": "z", "dims": ["N"], "box": ["B"]}}]}
JSON
cat >all/campaigns/all.json <<'JSON'
{"template": "all", "problem": {"N": 1024}, "start": {"B": 32}, "control": {"B": 64},
 "search": {"budget": 2}, "measure": {"rounds": 3, "samples": 5}, "decide": {"rule": "median"}}
JSON
"$TF" export -o out --name al --config B=64 all/campaigns/all.json >out.txt || fail "export of all types"
grep -qF 'cudaError_t al_launch(const void * /* x */, void * /* y */, long long * /* z */, const signed char * /* w */, long long /* N */' out/al.h ||
  { cat out/al.h; fail "all: the launcher's buffers"; }
grep -q '^#include <cuda_fp16.h>$' out/al.cu && grep -q '^#include <cuda_bf16.h>$' out/al.cu ||
  fail "all: NAME.cu does not include the fp16 and bf16 headers"
# 0.1 as f16 is 0x2e66, -2.5 as bf16 0xc020: the bits the farm passes
grep -qF 'tf_l_r4.x = 0x2e66;' out/al.cu && grep -qF 'tf_l_r5.x = 0xc020;' out/al.cu ||
  { grep tf_l_r out/al.cu; fail "all: the f16 and bf16 scalars' bits"; }
grep -qF 'double tf_l_a6 = 1e-300;' out/al.cu || fail "all: the f64 scalar"
grep -qF 'long long tf_l_a7 = (long long)tf_l_v7;' out/al.cu || fail "all: the i64 scalar"
grep -qF 'if (tf_l_v8 < -128LL || tf_l_v8 > 127LL) ev->bad = 1;' out/al.cu || fail "all: the i8 scalar's range"
grep -qF '* sizeof(long long), tf_l_stream);' out/al.cu || fail "all: z cleared by the wrong size"
grep -qF 'tf_l_r = tf_tmap(tf_l_a9, CU_TENSOR_MAP_DATA_TYPE_INT64, 8, 1, tf_p_z, tf_l_d, tf_l_x, CU_TENSOR_MAP_SWIZZLE_NONE);' out/al.cu &&
  grep -qF 'tf_tmap_fit(1, tf_l_d, tf_l_x, 8, 0, tf_p_N);' out/al.cu || { grep -n tmap out/al.cu; fail "all: the tensor map"; }

nvcc --version >/dev/null 2>&1 || { echo "SKIP: no working nvcc here: the exported code is not built"; exit 77; }
for n in sm hg tp al; do
  nvcc -std=c++17 -arch=sm_90 -c "out/$n.cu" -o "$n.o" >nvcc.log 2>&1 ||
    { cat nvcc.log; fail "the export $n does not build with plain nvcc"; }
done
# The headers are C: a C file includes them and calls the launchers with typed pointers.
cat >drv.c <<'C'
#include "sm.h"
#include "hg.h"
#include "tp.h"
#include "al.h"
int main(void) {
  const unsigned char *x = 0;
  unsigned int *bins = 0;
  const float *in = 0;
  float *out = 0;
  long long *z = 0;
  const signed char *w = 0;
  return hg_launch(x, bins, 100, 256, 0) + tp_launch(in, out, 10, 20, 0) +
         sm_launch(in, out, out, 1, 1, 0) + al_launch(x, out, z, w, 64, 0);
}
C
gcc -std=c99 -Wall -Werror -I"${TF_CUDA_INCLUDE:?the build names the CUDA include folder}" -Iout -fsyntax-only drv.c >gcc.log 2>&1 ||
  { cat gcc.log; fail "a C file that includes the exported headers does not compile"; }
echo "ok: typed exports build"
