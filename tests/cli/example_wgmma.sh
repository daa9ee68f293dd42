#!/usr/bin/env bash
# A Hopper-only kernel (examples/matmul_bf16, the wgmma template): with "arch_specific" the
# farm compiles it for sm_90a, so `check` and `audit` accept it and the compile pool's program
# carries the flag; without it, `check` refuses the campaign with exit 2, naming the spec,
# the kernel and the portable target NVRTC refused it for. A problem TMA cannot map, a map of
# no buffer, and a pointer where the spec passes a map: exit 2, naming the key; `check` warns of
# configurations whose map TMA cannot take. `export` writes
# a launcher that makes the two maps as the farm does, and refuses K 4092 in its check.
source "$(dirname "$0")/../lib.sh"
cd "$WORK"
cp -r "$SRC/examples/matmul_bf16" root
camp=root/campaigns/matmul-bf16-wgmma-4096.json
export TUNEFARM_CACHE="$WORK/cache"

expect_exit 0 "$TF" check "$camp"
grep -q "accepted:   126" last.out || { cat last.out; fail "check: not 126 accepted configurations"; }
expect_exit 0 "$TF" audit --where 'BM == 128 && BN == 128 && GROUP == 8' "$camp"
grep -q "failed 0" last.err last.out || { cat last.out last.err; fail "audit: a kernel failed"; }

# the compile pool's program: arch_specific compiles for sm_90a, a cache entry of its own
x='tf_matmul_bf16_wgmma<128, 128, 64, 3, 1, 0>'
printf '{"root": "%s", "sources": ["templates/matmul_bf16_wgmma.cu"], "exprs": ["%s"], "arch_specific": true}\n' \
  "$WORK/root" "$x" > prog.json
expect_exit 0 "$TF" compile --arch sm_90 < prog.json
grep -qE '"status": ?"(compiled|cached)"' last.out || { cat last.out last.err; fail "compile for sm_90a"; }
sed -i 's/, "arch_specific": true//' prog.json
expect_exit 0 "$TF" compile --arch sm_90 < prog.json # a refusal is an outcome, exit 0
grep -qE '"status": ?"refused"' last.out || { cat last.out; fail "wgmma compiled for plain sm_90"; }

expect_exit 0 "$TF" export -o out --name bf --config BM=128,BN=128,WM=64,STAGES=4,GROUP=8,GRID=0 "$camp"
grep -q 'build with: nvcc -std=c++17 -gencode arch=compute_XXa,code=sm_XXa' last.out ||
  { cat last.out; fail "export: the arch-specific build line with no GPU named"; }
grep -q 'tf_tmap(tf_l_a4, CU_TENSOR_MAP_DATA_TYPE_BFLOAT16, 2, 2, tf_p_B, tf_l_d, tf_l_x, CU_TENSOR_MAP_SWIZZLE_128B)' out/bf.cu &&
  grep -q 'long long tf_l_d\[\] = {tf_p_K, tf_p_M}, tf_l_x\[\] = {64LL, 128LL};' out/bf.cu &&
  grep -q 'tf_tmap_fit(2, tf_l_d, tf_l_x, 2, 128, (tf_p_N \* tf_p_K))' out/bf.cu &&
  grep -q 'return cudaLaunchKernel((const void \*)tf_matmul_bf16_wgmma<128, 128, 64, 4, 8, 0>' out/bf.cu ||
  { cat out/bf.cu; fail "export: the tensor maps"; }
if nvcc --version >/dev/null 2>&1; then
  nvcc -std=c++17 -gencode arch=compute_90a,code=sm_90a -c -o bf.o out/bf.cu 2>nvcc.log ||
    { cat nvcc.log; fail "the wgmma export does not build with nvcc"; }
else
  echo "SKIP: no nvcc here: the wgmma export is not built"
fi

sed 's/"K": 4096}/"K": 4092}/' "$camp" > root/campaigns/k4092.json
expect_exit 2 "$TF" check root/campaigns/k4092.json
grep -q "key 'args\[3\].tensormap': a row (dims\[0\] elements) is not a multiple of 16 bytes" last.err ||
  { cat last.err; fail "K 4092"; }
tmpl=root/templates/matmul_bf16_wgmma.json
cp "$tmpl" tmpl.orig
sed -i 's/"buffer": "B", "dims"/"buffer": "Q", "dims"/' "$tmpl"
expect_exit 2 "$TF" check "$camp"
grep -q "key 'args\[4\].tensormap.buffer': no buffer is named 'Q'" last.err || { cat last.err; fail "no buffer"; }
cp tmpl.orig "$tmpl"
sed -i 's/\["A", "B", "C",/["A", "B",/; /"tmA"/ s/"swizzle": 128}},$/"swizzle": 128}}, "C",/' "$tmpl"
expect_exit 2 "$TF" check "$camp"
grep -q "key 'args\[2\]': kernel 'tf_matmul_bf16_wgmma<.*' takes 'float \*', the spec passes tensor map 'tmA'" last.err ||
  { cat last.err; fail "map for a pointer"; }
cp tmpl.orig "$tmpl"
# a box that grows with a knob: check counts the configurations TMA cannot map (run refuses them)
sed -i 's/"box": \["64", "BN"\]/"box": ["BN\/2", "BN"]/' "$tmpl"
sed 's/"control": {"BM": 128, "BN": 256/"control": {"BM": 128, "BN": 128/' "$camp" > root/campaigns/box.json
expect_exit 0 "$TF" check root/campaigns/box.json
grep -q "warning: key 'args\[4\].tensormap' fails at 18 of 126 accepted configurations .*BN=256.*exceeds the swizzle" last.err ||
  { cat last.err; fail "check: the maps a knob breaks"; }
cp tmpl.orig "$tmpl"

# without the key: refused by check, exit 2, naming file, key and target
sed -i '/"arch_specific": true,/d' root/templates/matmul_bf16_wgmma.json
expect_exit 2 "$TF" check "$camp"
grep -q "matmul_bf16_wgmma.json': key 'kernel': NVRTC refuses 'tf_matmul_bf16_wgmma<.*' for sm_90 " last.err ||
  { cat last.err; fail "message"; }
echo "ok: wgmma example compiles for sm_90a only when the template asks for it"
