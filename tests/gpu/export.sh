#!/usr/bin/env bash
# On the GPU: the final bests of two short searches (simulated, so this costs no GPU time),
# exported with `tunefarm export` for this GPU's architecture, built with plain nvcc into a
# small program that runs them on the GPU at the tuned sizes and others, against CPU
# references of its own (export_run.c): nvcc's builds, then the cubins the export wrote (NVRTC's, as the farm measures).
# On sm_90, also the wgmma example, whose launcher makes two tensor maps.
source "$(dirname "$0")/../lib.sh"
source "$(dirname "$0")/../lib_gpu.sh"
cd "$WORK"
mkdir -p campaigns
export TUNEFARM_ROOT="$SRC"
for c in matmul-1024 layernorm-4096x768; do
  sed -E 's/"budget": [0-9]+/"budget": 8/' "$SRC/campaigns/$c.json" >"campaigns/$c.json"
  "${MPIRUN[@]}" -np 2 "$TF" run --backend sim --quiet --ledgers ledgers "campaigns/$c.json" ||
    fail "$c: run failed"
done
cc=$(nvidia-smi --query-gpu=compute_cap --format=csv,noheader | head -1 | tr -d '.')
"$TF" export -o out --name tf_mm --arch "sm_$cc" --campaign campaigns/matmul-1024.json \
  ledgers/matmul-1024/*.jsonl || fail "export failed"
"$TF" export -o out --name tf_ln --arch "sm_$cc" --campaign campaigns/layernorm-4096x768.json \
  ledgers/layernorm-4096x768/*.jsonl || fail "export failed"
bf=() bin=()
if [ "$cc" = 90 ]; then
  env -u TUNEFARM_ROOT "$TF" export -o out --name tf_bf --arch sm_90 --config BM=128,BN=128,WM=64,STAGES=4,GROUP=8,GRID=132 \
    "$SRC/examples/matmul_bf16/campaigns/matmul-bf16-wgmma-4096.json" || fail "export of wgmma failed"
  nvcc -std=c++17 -gencode arch=compute_90a,code=sm_90a -O2 -Iout -c -o tf_bf.o out/tf_bf.cu 2>nvcc.log ||
    { cat nvcc.log; fail "the exported wgmma kernel does not build with nvcc"; }
  bf=(-DTF_BF tf_bf.o) bin=(out/tf_bf.cubin)
else
  echo "SKIP: the wgmma export (sm_90 only; this GPU is sm_$cc)"
fi
nvcc -std=c++17 -arch=native -O2 -I"$SRC" -Iout -o run "$SRC/tests/gpu/export_run.c" \
  out/tf_mm.cu out/tf_ln.cu "${bf[@]}" "$SRC/common/reference.c" "$SRC/common/err.c" 2>nvcc.log ||
  { cat nvcc.log; fail "the exported kernels do not build with nvcc"; }
./run out/tf_mm.cubin out/tf_ln.cubin "${bin[@]}" || fail "an exported kernel is wrong on the GPU"
