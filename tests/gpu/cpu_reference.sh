#!/usr/bin/env bash
# On the GPU(s): the softmax example checked against its CPU reference library
# (examples/softmax/templates/ref_softmax.c, include/tunefarm_ref.h). The measure child calls
# the library on every input set after copying the inputs to the host; every arm of every
# measured generation is checked against it (its "checked" bits name all three arms the
# first time a process meets them) and found correct, and the jobs name the library.
source "$(dirname "$0")/../lib.sh"
source "$(dirname "$0")/../lib_gpu.sh"
cd "$WORK"
[ -n "${TF_REF_SOFTMAX:-}" ] && [ -f "$TF_REF_SOFTMAX" ] || fail "TF_REF_SOFTMAX names no library"
cp -r "$SRC/examples/softmax" root
mkdir -p root/templates/lib
cp "$TF_REF_SOFTMAX" root/templates/lib/libref_softmax.so
camp=root/campaigns/softmax-cpu-4096x1000.json
sed -i -E 's/"budget": [0-9]+/"budget": 6/' "$camp"
expect_exit 0 "$TF" check "$camp"
"${MPIRUN[@]}" -np $((GPUS + 1)) "$TF" run --backend cuda --ledgers "$WORK/ledgers" "$camp" \
  2>run.err || { cat run.err; fail "run failed"; }
for l in "$WORK"/ledgers/softmax-cpu-4096x1000/*.jsonl; do
  gens=$(grep '"type":"generation"' "$l" | grep '"correct":' || true) # measured ones
  [ -n "$gens" ] || fail "$l: no measured generations"
  ! grep -q '"correct":false' "$l" || fail "$l: an arm disagrees with the cpu reference"
  # Lines of ~10 KB: no `grep -q` or `head` reads them from a pipe, whose writer a reader that
  # stops early kills with SIGPIPE (a failure under pipefail).
  ok=$(grep -c '"correct":true' <<<"$gens" || true)
  [ "$ok" -gt 0 ] || fail "$l: no generation checked correct"
  named=$(grep '"correct":true' <<<"$gens" | grep -c '"library":"templates/lib/libref_softmax.so"' || true)
  [ "$named" -eq "$ok" ] || fail "$l: a checked job does not name the library"
  # the first measured generation of a process checks every arm: best, new and the control
  first=$(grep -m1 '"correct":true' <<<"$gens" || true)
  [[ $first == *'"checked":["best","new","control"]'* ]] ||
    fail "$l: the first generation did not check every arm: ${first:0:300}"
  "$TF" verify "$l" >/dev/null || fail "$l: decisions do not recompute"
done
echo "ok: cpu reference on $GPUS GPU(s)"
