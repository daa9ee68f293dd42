# GPU tests skip (exit 77, which ctest shows as "Skipped") with the reason where there is no GPU.
if ! "$TF" devices >/dev/null 2>"$WORK/devices.err"; then
  echo "SKIP: no GPU here: $(head -1 "$WORK/devices.err")"
  exit 77
fi
GPUS=$("$TF" devices --json 2>/dev/null | grep -c uuid)
