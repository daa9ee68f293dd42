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
c++ -std=c++17 -O1 -Wall -Wextra -Wno-unused-function -I"$SRC" -o ref_kernels "$SRC/tests/cli/ref_kernels.cc" \
  2>build.log || { cat build.log; fail "the reference kernels do not build for the host"; }
./ref_kernels || fail "a reference kernel computes something else than its template says"
