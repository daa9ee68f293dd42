#!/usr/bin/env bash
# On the GPU: matmul's stream-K (SPLITK 0) configurations at shapes whose tiles leave the last
# wave partly empty, ragged ones among them (a block's pieces cross tiles and edges), launched
# as a measurement runs them and checked against the template's reference on two fresh input sets:
# a sample of one in twelve by a hash of the knobs, every PIPE and FRAG form among them.
# 2047x2049x1023 allows only 4-byte copies (N and K odd); its stream-K configurations have 8x8
# or smaller register tiles, which wide_tiles_guard_free still offers where 4-byte copies rule.
source "$(dirname "$0")/../lib.sh"
source "$(dirname "$0")/../lib_gpu.sh"
cd "$WORK"
mkdir -p campaigns
export TUNEFARM_ROOT="$SRC"
where='SPLITK == 0 && (BM*7 + BN*3 + BK*5 + TM + TN*11 + STAGING*13 + PIPE*17 + FRAG*19 + AK*23 + VEC + WARP*29) % 12 == 0'
for mnk in "1000 1000 1000" "1536 1536 4096" "2047 2049 1023"; do
  set -- $mnk
  sed -E "s/\"problem\": \{[^}]*\}/\"problem\": {\"M\": $1, \"N\": $2, \"K\": $3}/" \
    "$SRC/campaigns/matmul-1024.json" >"campaigns/mm-$1x$2x$3.json"
  n=$("$TF" audit --list --where "$where" "campaigns/mm-$1x$2x$3.json" | wc -l)
  [ "$n" -gt 0 ] || fail "no stream-K configuration sampled at $1x$2x$3"
  "${MPIRUN[@]}" -np "$(nproc)" "$TF" audit --run --where "$where" "campaigns/mm-$1x$2x$3.json" \
    >"audit-$1.log" 2>&1 || { tail -30 "audit-$1.log"; fail "stream-K wrong or not built at $1x$2x$3"; }
  echo "ok: $n stream-K configurations at $1x$2x$3 right on the GPU"
done
