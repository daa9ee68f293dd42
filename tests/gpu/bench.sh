#!/usr/bin/env bash
# On the GPU: `tunefarm bench` of matmul 1024^3 with 3 rounds measures the start, both
# committed matmul kernels and cuBLAS SGEMM; every arm is correct (exit status 0) and the
# cuBLAS row is present, measured, and within 1e-5 of the template's reference kernel.
source "$(dirname "$0")/../lib.sh"
source "$(dirname "$0")/../lib_gpu.sh"
cd "$WORK"
rc=0
"$TF" bench --backend cuda --rounds 3 "$SRC/campaigns/matmul-1024.json" >bench.md 2>bench.err || rc=$?
[ "$rc" -eq 0 ] || { cat bench.err bench.md; fail "bench failed with exit status $rc"; }
cat bench.err bench.md
row=$(grep '^| cuBLAS |' bench.md) || fail "no cuBLAS row"
# | arm | config or kernel | median µs | spread µs | kernel µs | TFLOP/s | rel_err | vs fastest |
field() { echo "$row" | awk -F'|' -v i="$1" '{ gsub(/ /, "", $i); print $i }'; }
median=$(field 4)
rel_err=$(field 8)
awk -v x="$median" 'BEGIN { exit !(x + 0 > 0) }' || fail "cuBLAS not measured: $row"
awk -v x="$rel_err" 'BEGIN { exit !(x != "" && x + 0 <= 1e-5) }' ||
  fail "cuBLAS rel_err '$rel_err' over 1e-5"
grep -q '^- cuBLAS: the campaign.s peers from libcublas' bench.md || fail "the header does not name libcublas"
for k in matmul_pipelined matmul_regtile; do
  grep -qE "^\| committed kernel \| $k \| [0-9]+\.[0-9]+ \|" bench.md || fail "$k not measured"
done
! ldd "$TF" | grep -Eq 'libcublas|libcuda\.so' || fail "the binary links libcublas or libcuda"
echo "ok: cuBLAS median $median µs, rel_err $rel_err"
