#!/usr/bin/env bash
# Every reachable configuration of both families renders and compiles with NVRTC (sm_90),
# spread over two ranks; the second audit comes from the cubin cache. matmul is audited at
# 4096^3 (2021 configurations): matmul-1024's 5502 (a superset) take far longer than CI's
# two cores should, so they are compiled where there are more (bench/gpu_session10.sh;
# bench/spills.sh). layernorm is audited at 4096x768 with ROWS 1 and 2 (2240 of 4048): ROWS 4
# and 8 change only a loop's trip count, and all of them were compiled and run on the GPU
# (bench/gpu_session11.sh).
source "$(dirname "$0")/../lib.sh"
cd "$WORK"
export TUNEFARM_CACHE="$WORK/cache"
audit_one() { # campaign [--where EXPR]
  local c=$1; shift
  local t0 t1 t2
  t0=$(date +%s.%N)
  "${MPIRUN[@]}" -np 2 "$TF" audit "$@" "$SRC/campaigns/$c.json" >"$c.first" 2>&1 || { cat "$c.first"; fail "$c: audit failed"; }
  t1=$(date +%s.%N)
  "$TF" audit "$@" "$SRC/campaigns/$c.json" >"$c.second" 2>&1 || { cat "$c.second"; fail "$c: cached audit failed"; }
  t2=$(date +%s.%N)
  grep -q ', failed 0;' "$c.first" || fail "$c: failures"
  grep -E '^  (space|accepted|reachable|--where):' "$c.first"
  echo "$c: first audit $(awk "BEGIN{print $t1 - $t0}") s (2 ranks), cached $(awk "BEGIN{print $t2 - $t1}") s"
  tail -1 "$c.second"
}
audit_one matmul-4096
audit_one layernorm-4096x768 --where 'ROWS <= 2'
