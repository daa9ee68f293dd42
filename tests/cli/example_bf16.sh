#!/usr/bin/env bash
# A BF16 tensor-core matmul brought with its own reference (examples/matmul_bf16): `check`
# accepts the campaign and its cuBLAS peer (cublasGemmEx for BF16), the kernel's interface
# (bf16 pointers in, float out) matches the spec's buffers, and NVRTC compiles a slice of the
# space (mma.sync, ldmatrix, cp.async through <cuda_bf16.h>) and the reference kernel (no GPU).
source "$(dirname "$0")/../lib.sh"
cd "$WORK"
cp -r "$SRC/examples/matmul_bf16" root
camp=root/campaigns/matmul-bf16-4096.json
export TUNEFARM_CACHE="$WORK/cache"

expect_exit 0 "$TF" check "$camp"
grep -q "accepted:   177" last.out || { cat last.out; fail "check: not 177 accepted configurations"; }
grep -q "four_warps  *30 " last.out || { cat last.out; fail "check: the blocks of fewer than four warps are not refused"; }
expect_exit 0 "$TF" audit --list "$camp"
grep -qx 'tf_matmul_bf16<128, 128, 32, 64, 64, 3>' last.out || fail "audit --list: the control is missing"
expect_exit 0 "$TF" audit --where 'BM == 128 && BN == 128 && BK == 64' "$camp"
grep -qE "compiled [1-9][0-9]*, failed 0" last.err last.out || { cat last.out last.err; fail "audit: a kernel failed"; }
# A and B declared f16 where the kernel takes bf16: refused, naming both sides (one of them
# alone is refused first by the peer, whose GEMM takes a and b of one type)
sed -i 's/"role": "input", "type": "bf16"/"role": "input", "type": "f16"/' root/templates/matmul_bf16.json
[ "$(grep -c '"type": "f16"' root/templates/matmul_bf16.json)" -eq 2 ] || fail "A and B not made f16"
expect_exit 2 "$TF" check "$camp"
grep -q "key 'args\[0\]'.*takes 'const __nv_bfloat16 \*', the spec passes buffer 'A' of type f16" last.err ||
  { cat last.err; fail "an f16 buffer for a bf16 parameter: no clear message"; }
echo "ok: example matmul_bf16"
