#!/usr/bin/env bash
# Install what is missing, build from scratch, and run every test ctest knows.
# GPU tests (label gpu) skip with a visible message where there is no GPU; the full audit
# (label audit-full, every reachable configuration) skips unless asked for:
#   TUNEFARM_AUDIT_FULL=1 bash scripts/test.sh -L audit-full
set -euo pipefail
cd "$(dirname "$0")/.."
rm -rf build
bash scripts/setup.sh --tests
# mpirun refuses root unless told; CI runs as root on two cores.
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
export TUNEFARM_CACHE="$PWD/build/test-cache"
cd build
ctest --output-on-failure -j2 "$@"
