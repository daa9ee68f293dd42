#!/usr/bin/env bash
# On the GPU(s): a short real run of each shipped template, one worker per GPU; every arm correct,
# both instruments and the clocks in every recorded round, decisions recompute.
source "$(dirname "$0")/../lib.sh"
source "$(dirname "$0")/../lib_gpu.sh"
cd "$WORK"
# Six generations each. A generation may be refused, for the control's drift or for its
# process's canary, and refusals come in runs on a noisy GPU, so that a short run may leave
# none decided. So the test asks for a generation whose arms were checked correct, refused or
# decided, and verify
# recomputes both kinds.
for c in matmul-1024 layernorm-4096x768; do
  sed -E 's/"budget": [0-9]+/"budget": 6/' "$SRC/campaigns/$c.json" >"$c.json"
  TUNEFARM_ROOT="$SRC" "${MPIRUN[@]}" -np $((GPUS + 1)) "$TF" run --backend cuda \
    --ledgers "$WORK/ledgers" "$c.json" 2>"$c.err" || { cat "$c.err"; fail "$c: run failed"; }
  for l in "$WORK"/ledgers/"$c"/*.jsonl; do
    ! grep -q '"correct":false' "$l" || fail "$l: a template configuration is wrong"
    grep '"type":"generation"' "$l" | grep -q '"correct":true' ||
      fail "$l: no generation whose arms were checked correct"
    ! grep -q '"best_kernel_us":null' "$l" || fail "$l: a round without CUPTI kernel time"
    ! grep -q '"sm_mhz":\[0,' "$l" || fail "$l: a round without the SM clock"
    "$TF" verify "$l" >/dev/null || fail "$l: decisions do not recompute"
    echo "$l: $(grep '"type":"generation"' "$l" | grep -c '"decision":"refused"') of" \
      "$(grep -c '"type":"generation"' "$l") generations refused"
  done
  echo "ok $c: $(ls "$WORK"/ledgers/"$c" | wc -l) ledger(s)"
done
