#!/usr/bin/env bash
# Session 5, device call 6 (nvidia-h200-x2), the last of the session's device time. The final
# proposer: steps only from near misses whose median showed the 1% gain a keep needs
# (PROPOSE_STEP_FROM 0.99). The three campaigns that call 5 left short of the template's best
# on one GPU or both, 3 ranks, one ledger per H200; report and verify.
set -uo pipefail
source bench/gpu_env.sh
LATE_S=${LATE_S:-200}
gpu_session_start
campaign_run layernorm-4096x768 60
campaign_run matmul-1024 110
campaign_run matmul-4096 110
