#!/usr/bin/env bash
# The shipped reference kernels, run on the host by ref_kernels.cc at the launch their
# templates give, match that file's own loops (no GPU needed). The launches the harness
# assumes are read back from the templates here, so the two cannot drift apart.
source "$(dirname "$0")/../lib.sh"
cd "$WORK"
python3 - "$SRC" <<'PY' || fail "a template's reference launch is not the one ref_kernels.cc runs"
import json, sys
src = sys.argv[1]
want = {
    "templates/matmul.json": (["ceil_div(N, 16)", "ceil_div(M, 16)", "1"], ["16", "16", "1"]),
    "templates/layernorm.json": (["ceil_div(R, 128)", "1", "1"], ["128", "1", "1"]),
    "templates/chain.json": (["ceil_div(N, 256)", "1", "1"], ["256", "1", "1"]),
    "templates/faulty.json": (["ceil_div(N, 256)", "1", "1"], ["256", "1", "1"]),
    "examples/softmax/templates/softmax.json": (["ceil_div(R, 128)", "1", "1"], ["128", "1", "1"]),
    "examples/transpose/templates/transpose.json": (["ceil_div(R*C, 256)", "1", "1"], ["256", "1", "1"]),
    "examples/histogram/templates/histogram.json": (["ceil_div(N, 256)", "1", "1"], ["256", "1", "1"]),
    "examples/copy/templates/copy.json": (["ceil_div(N, 256)", "1", "1"], ["256", "1", "1"]),
    "examples/matmul_bf16/templates/matmul_bf16.json": (["ceil_div(M*N, 256)", "1", "1"], ["256", "1", "1"]),
    "examples/matmul_bf16/templates/matmul_bf16_wgmma.json": (["ceil_div(M*N, 256)", "1", "1"], ["256", "1", "1"]),
}
bad = 0
for path, (grid, block) in want.items():
    launch = json.load(open(f"{src}/{path}"))["reference"]["launch"]
    got = ([str(g) for g in launch["grid"]], [str(b) for b in launch["block"]])
    if got != (grid, block):
        print(f"{path}: reference launch {got}, the harness runs {(grid, block)}")
        bad = 1
sys.exit(bad)
PY
command -v c++ >/dev/null 2>&1 || { echo "SKIP: no C++ compiler here to run the reference kernels on the host"; exit 77; }
# The BF16 reference includes cuda_bf16.h; on the host a bfloat16 is the top half of a float,
# rounded to nearest even (no NaN inputs here), as the CUDA conversion rounds.
mkdir -p shim
cat > shim/cuda_bf16.h <<'H'
#pragma once
#include <cstdint>
#include <cstring>
struct __nv_bfloat16 { std::uint16_t bits; };
static inline float __bfloat162float(__nv_bfloat16 h) {
  std::uint32_t u = (std::uint32_t)h.bits << 16;
  float f;
  std::memcpy(&f, &u, sizeof f);
  return f;
}
static inline __nv_bfloat16 __float2bfloat16(float f) {
  std::uint32_t u;
  std::memcpy(&u, &f, sizeof u);
  u += 0x7fffu + ((u >> 16) & 1u);
  return __nv_bfloat16{(std::uint16_t)(u >> 16)};
}
H
c++ -std=c++17 -O1 -Wall -Wextra -Wno-unused-function -I"$SRC" -Ishim -o ref_kernels "$SRC/tests/cli/ref_kernels.cc" \
  2>build.log || { cat build.log; fail "the reference kernels do not build for the host"; }
./ref_kernels || fail "a reference kernel computes something else than its template says"
