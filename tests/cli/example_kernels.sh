#!/usr/bin/env bash
# Kernels brought with their own references, outputs checked exact: a tiled FP32 transpose
# (examples/transpose), a byte histogram with shared or global atomics (examples/histogram:
# u8 input of integers below BINS, u32 bins) and an FP32 copy with bulk copies as a knob
# (examples/copy). `check` and `audit` accept each campaign and NVRTC compiles every
# reachable configuration and the reference kernel (no GPU needed).
source "$(dirname "$0")/../lib.sh"
cd "$WORK"
export TUNEFARM_CACHE="$WORK/cache"

while IFS="|" read -r ex camp n control; do
  rm -rf root && cp -r "$SRC/examples/$ex" root
  expect_exit 0 "$TF" check "root/campaigns/$camp.json"
  grep -q "accepted: *$n " last.out || { cat last.out; fail "$ex: check: not $n accepted configurations"; }
  expect_exit 0 "$TF" audit --list "root/campaigns/$camp.json"
  grep -qxF "$control" last.out || fail "$ex: audit --list: the control is missing"
  expect_exit 0 "$TF" audit "root/campaigns/$camp.json"
  grep -q "compiled $n, failed 0" last.err last.out || { cat last.out last.err; fail "$ex: audit: not every kernel compiled"; }
  printf '{"root": "%s", "sources": ["templates/ref_%s.cu"], "exprs": ["ref_%s"]}\n' "$WORK/root" "$ex" "$ex" >prog.json
  expect_exit 0 "$TF" compile <prog.json
  # `check` reads the reference kernel's parameters from its compile, so it may be cached already
  grep -qE '"status": ?"(compiled|cached)"' last.out || { cat last.out last.err; fail "$ex: the reference kernel does not compile"; }
done <<'LIST'
transpose|transpose-4096x3000|62|tf_transpose<32, 4, 1, 1>
histogram|histogram-16m-256|47|tf_histogram<256, 4, 1>
copy|copy-4096x1000|693|tf_copy<256, 4, 1, 0, 0, 0, 0>
LIST

# the transpose's small blocks are refused; an odd width leaves only scalar accesses
camp=root/campaigns/transpose-4096x3000.json
rm -rf root && cp -r "$SRC/examples/transpose" root
expect_exit 0 "$TF" check "$camp"
grep -q "two_warps  *52 " last.out || { cat last.out; fail "check: the small blocks are not refused"; }
sed -i 's/"C": 3000/"C": 3001/' "$camp"
expect_exit 0 "$TF" check "$camp"
grep -q "vec_divides  *80 " last.out || { cat last.out; fail "check: VEC > 1 not refused at C=3001"; }
echo "ok: examples transpose, histogram, copy"
