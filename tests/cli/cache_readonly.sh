#!/usr/bin/env bash
# A cubin cache on a read-only mount is read: `tunefarm export` and `tunefarm run` work from
# it, a hit as a hit, and a miss is compiled and used without being kept. Needs a mount
# namespace (unshare -m, as root: chmod does not stop root); skips where there is none.
source "$(dirname "$0")/../lib.sh"
cd "$WORK"
export TUNEFARM_ROOT="$SRC" TUNEFARM_CACHE="$WORK/cache"
mkdir -p cache
# "${RO[@]}" CMD...: CMD with the cache folder mounted read-only, in a mount namespace of its own
RO=(unshare -m sh -c 'mount --bind "$1" "$1" && mount -o remount,bind,ro "$1" && shift && exec "$@"'
  sh "$WORK/cache")
command -v unshare >/dev/null &&
  "${RO[@]}" sh -c '! touch "$TUNEFARM_CACHE/x" 2>/dev/null' 2>/dev/null || {
  echo "SKIP: no read-only bind mount here (unshare -m needs root)"
  exit 77
}

export_mm() {
  "$@" timeout 60 "$TF" export -o out --name tf_mm --arch sm_90 --config "VEC=$vec" \
    "$SRC/campaigns/matmul-1024.json" >out.txt 2>err.txt
}
vec=4
export_mm || fail "the first export failed"
entries=$(ls cache)
export_mm "${RO[@]}" || { cat err.txt >&2; fail "export from a read-only cache failed"; }
grep -q "found in the farm's cache" out.txt || fail "a read-only cache's entry is not a hit"
[ ! -s err.txt ] || { cat err.txt >&2; fail "a hit in a read-only cache says something"; }
vec=1 # not in the cache: compiled, exported, not kept
export_mm "${RO[@]}" || { cat err.txt >&2; fail "a miss in a read-only cache failed"; }
grep -q "compiled now" out.txt || fail "a miss in a read-only cache is not compiled"
[ "$(head -c 4 out/tf_mm.cubin | od -An -c | tr -d ' ')" = '177ELF' ] || fail "no cubin for a miss"
[ "$(ls cache)" = "$entries" ] || fail "a read-only cache changed"

# A farm run (simulated compiles: stand-in cubins in the cache), then the same run from the
# read-only cache: its entries read (the first generation's programs are the same), none lost.
mkdir -p campaigns
sed -E 's/"budget": [0-9]+/"budget": 4/' "$SRC/campaigns/layernorm-4096x768.json" \
  >campaigns/layernorm-4096x768.json
export TUNEFARM_SIM_COMPILE=0.001
"${MPIRUN[@]}" -np 2 "$TF" run --backend sim --quiet --ledgers ledgers \
  campaigns/layernorm-4096x768.json || fail "run failed"
"${RO[@]}" "${MPIRUN[@]}" -np 2 "$TF" run --backend sim --ledgers ledgers-ro \
  campaigns/layernorm-4096x768.json >run.out 2>run.err ||
  { cat run.err >&2; fail "run from a read-only cache failed"; }
grep -q ' 4 generations = .* 0 faults' run.err ||
  { cat run.err >&2; fail "run from a read-only cache lost jobs"; }
grep -q '"cache_hit":true' ledgers-ro/layernorm-4096x768/*.jsonl ||
  fail "run from a read-only cache did not read its entries"
echo "cache_readonly: ok"
