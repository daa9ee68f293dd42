#!/usr/bin/env bash
# A kernel brought with its own reference (examples/softmax): `check` and `audit --list`
# accept the campaign, `audit` compiles its configurations with NVRTC (no GPU needed), and
# the reference kernel and a kernel including the toolkit's <cuda_fp16.h> compile too.
source "$(dirname "$0")/../lib.sh"
cd "$WORK"
cp -r "$SRC/examples/softmax" root
camp=root/campaigns/softmax-4096x1000.json
export TUNEFARM_CACHE="$WORK/cache"

expect_exit 0 "$TF" check "$camp"
grep -q "accepted:   152" last.out || { cat last.out; fail "check: not 152 accepted configurations"; }
expect_exit 0 "$TF" audit --list "$camp"
[ "$(grep -c '^tf_softmax<' last.out)" -eq 152 ] || { cat last.out; fail "audit --list: not 152 kernels"; }
grep -qx 'tf_softmax<128, 4, 2, 0, 0>' last.out || fail "audit --list: the control is missing"
expect_exit 0 "$TF" audit --where 'BLOCK == 128' "$camp"
grep -q "failed 0" last.err last.out || { cat last.out last.err; fail "audit: a kernel failed"; }

# the reference kernel and the toolkit's fp16 header, through the compile path of the arms
cat > root/templates/half.cu <<'CU'
#include <cuda_fp16.h>
#include <cuda_bf16.h>
__global__ void tf_half(const __half *x, __nv_bfloat16 *y, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) y[i] = __float2bfloat16(__half2float(x[i]) * 2.0f);
}
CU
for k in "templates/ref_softmax.cu ref_softmax" "templates/half.cu tf_half"; do
  set -- $k
  printf '{"root": "%s", "sources": ["%s"], "exprs": ["%s"]}\n' "$WORK/root" "$1" "$2" > prog.json
  expect_exit 0 "$TF" compile < prog.json
  # `check` above compiled the reference kernel already (to read its parameters): cached
  grep -qE '"status": ?"(compiled|cached)"' last.out || { cat last.out last.err; fail "compile of $2"; }
done

# any other system header stays refused, naming the two allowed
sed -i 's/#include <cuda_bf16.h>/#include <cuda_runtime.h>/' root/templates/half.cu
sed -i 's/"source": "softmax.cu"/"source": "half.cu"/' root/templates/softmax.json
expect_exit 2 "$TF" check "$camp"
grep -q "<cuda_fp16.h> and <cuda_bf16.h>" last.err || { cat last.err; fail "message"; }
echo "ok: example softmax"
