#!/usr/bin/env bash
# An integer kernel brought with its own reference (examples/histogram): u8 input filled
# with integers below BINS, u32 bins checked exact, shared or global atomics as a knob.
# `check` and `audit` accept the campaign and NVRTC compiles every reachable configuration
# and the reference kernel (no GPU needed).
source "$(dirname "$0")/../lib.sh"
cd "$WORK"
cp -r "$SRC/examples/histogram" root
camp=root/campaigns/histogram-16m-256.json
export TUNEFARM_CACHE="$WORK/cache"

expect_exit 0 "$TF" check "$camp"
grep -q "accepted:   47" last.out || { cat last.out; fail "check: not 47 accepted configurations"; }
expect_exit 0 "$TF" audit --list "$camp"
grep -qx 'tf_histogram<256, 4, 1>' last.out || fail "audit --list: the control is missing"
expect_exit 0 "$TF" audit "$camp"
grep -q "compiled 47, failed 0" last.err last.out || { cat last.out last.err; fail "audit: not every kernel compiled"; }
printf '{"root": "%s", "sources": ["templates/ref_histogram.cu"], "exprs": ["ref_histogram"]}\n' \
  "$WORK/root" >prog.json
expect_exit 0 "$TF" compile <prog.json
# `check` reads the reference kernel's parameters from its compile, so it may be cached already
grep -qE '"status": ?"(compiled|cached)"' last.out || { cat last.out last.err; fail "the reference kernel does not compile"; }
echo "ok: example histogram"
