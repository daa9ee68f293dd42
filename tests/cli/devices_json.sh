#!/usr/bin/env bash
# `devices --json` is one JSON array, one device per line, and [] (exit 0) where
# there is no GPU, so a script reads it without special cases.
source "$(dirname "$0")/../lib.sh"
cd "$WORK"
"$TF" devices --json >devices.json 2>devices.err || { cat devices.err; fail "devices --json failed"; }
n=$(python3 -c 'import json, sys; a = json.load(open(sys.argv[1])); assert isinstance(a, list), "not an array"; print(len(a))' devices.json) ||
  { cat devices.json; fail "devices --json is not a JSON array"; }
[ "$n" -eq "$(grep -c '"uuid"' devices.json)" ] || fail "not one device per line"
if [ "$n" -eq 0 ]; then
  [ "$(cat devices.json)" = "[]" ] || { cat devices.json; fail "no device, yet not []"; }
  grep -q "no CUDA device" devices.err || fail "no reason on stderr"
fi
echo "ok: devices --json lists $n device(s) as a JSON array"
