#!/usr/bin/env bash
# A tiled FP32 transpose brought with its own reference (examples/transpose), its output
# checked exact: `check` and `audit` accept the campaign and NVRTC compiles every reachable
# configuration and the reference kernel (no GPU needed).
source "$(dirname "$0")/../lib.sh"
cd "$WORK"
cp -r "$SRC/examples/transpose" root
camp=root/campaigns/transpose-4096x3000.json
export TUNEFARM_CACHE="$WORK/cache"

expect_exit 0 "$TF" check "$camp"
grep -q "accepted:   62" last.out || { cat last.out; fail "check: not 62 accepted configurations"; }
grep -q "two_warps  *52 " last.out || { cat last.out; fail "check: the small blocks are not refused"; }
expect_exit 0 "$TF" audit --list "$camp"
grep -qx 'tf_transpose<32, 4, 1, 1>' last.out || fail "audit --list: the control is missing"
expect_exit 0 "$TF" audit "$camp"
grep -q "compiled 62, failed 0" last.err last.out || { cat last.out last.err; fail "audit: not every kernel compiled"; }
printf '{"root": "%s", "sources": ["templates/ref_transpose.cu"], "exprs": ["ref_transpose"]}\n' \
  "$WORK/root" >prog.json
expect_exit 0 "$TF" compile <prog.json
# `check` reads the reference kernel's parameters from its compile, so it may be cached already
grep -qE '"status": ?"(compiled|cached)"' last.out || { cat last.out last.err; fail "the reference kernel does not compile"; }
# an odd width leaves only scalar accesses: every VEC > 1 is refused as unaligned
sed -i 's/"C": 3000/"C": 3001/' "$camp"
expect_exit 0 "$TF" check "$camp"
grep -q "vec_divides  *80 " last.out || { cat last.out; fail "check: VEC > 1 not refused at C=3001"; }
echo "ok: example transpose"
