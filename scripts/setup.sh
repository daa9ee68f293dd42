#!/usr/bin/env bash
# Install what tunefarm needs on a Debian/Ubuntu machine (when missing) and build it.
# The CUDA toolkit (nvcc, NVRTC, CUPTI) must already be there: it comes with the machine.
set -euo pipefail
cd "$(dirname "$0")/.."

# iproute2: tests/mpi/two_hosts.sh makes two simulated hosts out of network namespaces.
pkgs="cmake gcc make pkg-config libopenmpi-dev openmpi-bin libcjson-dev libcmocka-dev iproute2"
missing=""
for p in $pkgs; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing="$missing $p"
done
if [ -n "$missing" ]; then
  echo "setup: installing$missing"
  sudo=""
  [ "$(id -u)" -eq 0 ] || sudo="sudo"
  $sudo apt-get update
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y $missing
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
