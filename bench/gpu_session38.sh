#!/usr/bin/env bash
# Session 7, device call 12 (nvidia-h200). The GPU tests at the session's last code commit.
set -uo pipefail
source bench/gpu_env.sh
LATE_S=${LATE_S:-300}
gpu_session_start
ctest_gpu 200
