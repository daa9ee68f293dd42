#!/usr/bin/env bash
# The full audit: every reachable configuration of the tuning campaigns' spaces, rendered and
# compiled with NVRTC (sm_90): matmul at 1024^3 (5502) and 4095x4097x1023 (1365), layernorm
# at 4096x768 (4048) and 16384x4096 (5716). About an hour on two cores, so CI runs the
# sampled audit instead (sampled.sh) and this one runs on request, spread over every core:
#
#   TUNEFARM_AUDIT_FULL=1 ctest -L audit-full --output-on-failure      (in the build folder)
#
# TUNEFARM_AUDIT_RANKS sets the number of ranks (default: every core). Skipped otherwise.
source "$(dirname "$0")/../lib.sh"
source "$(dirname "$0")/lib.bash"
[ "${TUNEFARM_AUDIT_FULL:-0}" = 1 ] || {
  echo "SKIP: the full audit runs only with TUNEFARM_AUDIT_FULL=1 (ctest -L audit-full)"
  exit 77
}
cd "$WORK"
ranks=${TUNEFARM_AUDIT_RANKS:-$(nproc)}
reshaped matmul-odd matmul-1024 '"M": 4095, "N": 4097, "K": 1023'
audit_where matmul-1024 "$SRC/campaigns/matmul-1024.json" "$ranks"
audit_where matmul-4095x4097x1023 "$WORK/matmul-odd.json" "$ranks"
audit_where layernorm-4096x768 "$SRC/campaigns/layernorm-4096x768.json" "$ranks"
audit_where layernorm-16384x4096 "$SRC/campaigns/layernorm-16384x4096.json" "$ranks"
