#!/usr/bin/env bash
# A campaign's "peers": the library calls `bench` times beside the template. Declared peers
# become rows (skipped off the cuda backend, with the call named by the buffers' types);
# without the key there is none, whatever the template computes; a bad peer is one message
# naming the file and the key, exit status 2.
source "$(dirname "$0")/../lib.sh"
cd "$WORK"
mkdir -p project/templates project/campaigns project/kernels
cp "$SRC"/kernels/*.json "$SRC"/kernels/*.cu project/kernels/
cp "$SRC"/templates/{matmul.json,matmul.cu,ref_matmul.cu} project/templates/
c=project/campaigns
sed -E 's/"budget": [0-9]+/"budget": 6/' "$SRC/campaigns/matmul-1024.json" >$c/mm.json
grep -v '"peers"' $c/mm.json >$c/nopeers.json
bench() { "$TF" bench --backend sim --rounds 1 --samples 2 "$@"; }

expect_exit 0 bench $c/mm.json
grep -qF '| cuBLAS | cublasSgemm_v2, CUBLAS_DEFAULT_MATH (FP32, no TF32) | skipped: needs the cuda backend |' \
  "$WORK/last.out" || { cat "$WORK/last.out"; fail "the declared peer is not a row"; }
expect_exit 0 bench $c/nopeers.json
grep -q 'cuBLAS' "$WORK/last.out" && fail "a campaign without peers has a cuBLAS row"

# A BF16 GEMM, B stored N x K: the row names cublasGemmEx and the types.
cat >project/templates/mmbf.cu <<'CU'
#include <cuda_bf16.h>
template <int T>
__global__ void mmbf(const __nv_bfloat16 *A, const __nv_bfloat16 *B, float *C, int M, int N, int K) {
  int r = blockIdx.y * T + threadIdx.y, c = blockIdx.x * T + threadIdx.x;
  if (r >= M || c >= N) return;
  float s = 0;
  for (int k = 0; k < K; k++) s += __bfloat162float(A[r * K + k]) * __bfloat162float(B[c * K + k]);
  C[r * N + c] = s;
}
__global__ void ref_mmbf(const __nv_bfloat16 *A, const __nv_bfloat16 *B, float *C, int M, int N, int K) {
  int r = blockIdx.y * 8 + threadIdx.y, c = blockIdx.x * 8 + threadIdx.x;
  if (r >= M || c >= N) return;
  double s = 0;
  for (int k = 0; k < K; k++) s += (double)__bfloat162float(A[r * K + k]) * __bfloat162float(B[c * K + k]);
  C[r * N + c] = (float)s;
}
CU
cat >project/templates/mmbf.json <<'JS'
{"name": "mmbf", "source": "mmbf.cu", "kernel": "mmbf",
 "reference": {"kernel": "ref_mmbf", "source": "mmbf.cu", "launch": {"grid": ["ceil_div(N, 8)", "ceil_div(M, 8)", "1"], "block": ["8", "8", "1"]}},
 "problem": {"M": [1, 4096], "N": [1, 4096], "K": [1, 4096]},
 "knobs": {"T": {"values": [8, 16]}},
 "launch": {"grid": ["ceil_div(N, T)", "ceil_div(M, T)", "1"], "block": ["T", "T", "1"], "smem": "0"},
 "buffers": [{"name": "A", "count": "M*K", "role": "input", "type": "bf16"},
             {"name": "B", "count": "N*K", "role": "input", "type": "bf16"},
             {"name": "C", "count": "M*N", "role": "output", "type": "f32", "check": {"rtol": 1e-3, "atol": 1e-3}}],
 "args": ["A", "B", "C", {"name": "M", "type": "i32", "value": "M"}, {"name": "N", "type": "i32", "value": "N"},
          {"name": "K", "type": "i32", "value": "K"}],
 "flops": "2*M*N*K", "bytes": "2*(M*K + N*K) + 4*M*N"}
JS
peer='{"library": "cublas", "routine": "gemm", "a": "A", "b": "B", "c": "C", "m": "M", "n": "N", "k": "K", "b_layout": "nk"}'
bf() {
  printf '{"template": "mmbf", "problem": {"M": 64, "N": 64, "K": 64}, "start": {"T": 8}, "control": {"T": 16}, "peers": [%s]}\n' "$1" >$c/bf.json
}
bf "$peer"
expect_exit 0 bench $c/bf.json
grep -qF '| cuBLAS | cublasGemmEx, BF16 inputs, FP32 output, CUBLAS_COMPUTE_32F, B transposed | skipped: needs the cuda backend |' \
  "$WORK/last.out" || { cat "$WORK/last.out"; fail "the BF16 peer's row does not name cublasGemmEx"; }

# Bad peers: the file, the key, exit status 2, before anything runs.
bad() { # JSON WHAT-THE-MESSAGE-SAYS
  bf "$1"
  expect_exit 2 "$TF" check $c/bf.json
  grep -q "bf.json" "$WORK/last.err" && grep -qF -- "$2" "$WORK/last.err" ||
    { cat "$WORK/last.err"; fail "peer $1: the message does not say '$2'"; }
}
bad "${peer/\"a\": \"A\"/\"a\": \"X\"}" "key 'peers[0].a': template 'mmbf' has no buffer 'X'"
bad "${peer/\"k\": \"K\"/\"k\": \"Q\"}" "key 'peers[0].k': template 'mmbf' has no problem dimension 'Q'"
bad "${peer/\"c\": \"C\"/\"c\": \"A\"}" "key 'peers[0]': a and b must be inputs of the template and c an output"
bad "${peer/\"b\": \"B\"/\"b\": \"C\"}" "key 'peers[0]': a and b must be inputs"
bad "${peer/\"nk\"/\"tn\"}" "key 'peers[0].b_layout'"
bad "${peer/\"gemm\"/\"gemv\"}" "unknown peer 'cublas' 'gemv'"
bad "${peer/\"library\"/\"libary\"}" "peers[0]"
bad "$peer, $peer, $peer, $peer, $peer" "key 'peers': at most 4"
# f32 inputs with a bf16 output is no GEMM cuBLAS offers
sed -i 's/"type": "f32", "check"/"type": "f16", "check"/' project/templates/mmbf.json
bad "$peer" "a GEMM takes a and b of one type"
echo "ok: peers are rows where declared, none elsewhere, and bad peers are refused"
