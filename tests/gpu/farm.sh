#!/usr/bin/env bash
# On the GPU(s): a short real run of each family, one worker per GPU; every arm correct,
# both instruments and the clocks in every recorded round, decisions recompute.
source "$(dirname "$0")/../lib.sh"
source "$(dirname "$0")/../lib_gpu.sh"
cd "$WORK"
# Six generations each: a generation refused for the control's drift counts against the
# budget (3 of 25 of layernorm's in eight runs of three on an H200), and a run whose every
# generation is refused leaves nothing decided to check.
for c in matmul-1024 layernorm-4096x768; do
  sed -E 's/"budget": [0-9]+/"budget": 6/' "$SRC/campaigns/$c.json" >"$c.json"
  TUNEFARM_ROOT="$SRC" "${MPIRUN[@]}" -np $((GPUS + 1)) "$TF" run --backend cuda \
    --ledgers "$WORK/ledgers" "$c.json" 2>"$c.err" || { cat "$c.err"; fail "$c: run failed"; }
  for l in "$WORK"/ledgers/"$c"/*.jsonl; do
    grep '"type":"generation"' "$l" | grep -v '"decision":"refused"' | grep -q '"correct":true' ||
      fail "$l: no correct measured generation"
    ! grep -q '"correct":false' "$l" || fail "$l: a template configuration is wrong"
    ! grep -q '"best_kernel_us":null' "$l" || fail "$l: a round without CUPTI kernel time"
    ! grep -q '"sm_mhz":\[0,' "$l" || fail "$l: a round without the SM clock"
    "$TF" verify "$l" >/dev/null || fail "$l: decisions do not recompute"
  done
  echo "ok $c: $(ls "$WORK"/ledgers/"$c" | wc -l) ledger(s)"
done
