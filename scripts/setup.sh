#!/usr/bin/env bash
# Install what tunefarm needs on a Debian/Ubuntu machine (when missing) and build it.
# The CUDA toolkit (nvcc, NVRTC, CUPTI) must already be there: it comes with the machine.
set -euo pipefail
cd "$(dirname "$0")/.."

# iproute2: tests/mpi/two_hosts.sh makes two simulated hosts out of network namespaces.
pkgs="cmake gcc make pkg-config libopenmpi-dev openmpi-bin libcjson-dev zlib1g-dev libcmocka-dev iproute2"
# --tests (scripts/test.sh): what only the tests use, without recommends (about 25 s, 100 MB):
# Debian's JSON Schema validator for the T4 report, and headless Chromium for the HTML page
# (the shell alone: Blink without the desktop browser; the full chromium package took 96 s).
test_pkgs=""
[ "${1:-}" = "--tests" ] && test_pkgs="python3-jsonschema chromium-headless-shell"

missing_of() {
  local p out=""
  for p in "$@"; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || out="$out $p"
  done
  echo "$out"
}
missing=$(missing_of $pkgs)
missing_tests=$(missing_of $test_pkgs)
if [ -n "$missing$missing_tests" ]; then
  echo "setup: installing$missing$missing_tests"
  sudo=""
  [ "$(id -u)" -eq 0 ] || sudo="sudo"
  $sudo apt-get update
  [ -z "$missing" ] || DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y $missing
  [ -z "$missing_tests" ] ||
    DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y --no-install-recommends $missing_tests
fi

if ! command -v nvcc >/dev/null 2>&1; then
  for d in /usr/local/cuda/bin /usr/local/cuda-*/bin; do
    [ -x "$d/nvcc" ] && export PATH="$d:$PATH" && break
  done
fi
command -v nvcc >/dev/null 2>&1 || {
  echo "setup: no CUDA toolkit found (nvcc); install the CUDA toolkit and put nvcc on PATH" >&2
  exit 1
}

cmake -S . -B build -DCMAKE_BUILD_TYPE=RelWithDebInfo
cmake --build build -j"$(nproc)"
