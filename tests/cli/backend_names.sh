#!/usr/bin/env bash
# Backends are known by their table (worker/backend.c): no source compares a device's or an
# option's backend with a backend's name, so that a backend is one row and its own file.
source "$(dirname "$0")/../lib.sh"
cd "$SRC"
hits=$(grep -nE 'str(n?case)?cmp\([^;]*"(cuda|sim|replay)"|strstr\([^;]*"(cuda|sim|replay)"' \
  tunefarm.c common/*.c coordinator/*.c tools/*.c worker/*.c 2>/dev/null || true)
[ -z "$hits" ] || { echo "$hits" >&2; fail "backend names compared outside the table"; }
echo "ok: no backend name compared outside worker/backend.c"
