#!/usr/bin/env bash
# A Hopper-only kernel (examples/matmul_bf16, the wgmma template): with "arch_specific" the
# farm compiles it for sm_90a, so `check` and `audit` accept it and the compile pool's program
# carries the flag; without it, `check` refuses the campaign with exit 2, naming the spec,
# the kernel and the portable target NVRTC refused it for.
source "$(dirname "$0")/../lib.sh"
cd "$WORK"
cp -r "$SRC/examples/matmul_bf16" root
camp=root/campaigns/matmul-bf16-wgmma-4096.json
export TUNEFARM_CACHE="$WORK/cache"

expect_exit 0 "$TF" check "$camp"
grep -q "accepted:   26" last.out || { cat last.out; fail "check: not 26 accepted configurations"; }
expect_exit 0 "$TF" audit --where 'BM == 128 && BN == 128' "$camp"
grep -q "failed 0" last.err last.out || { cat last.out last.err; fail "audit: a kernel failed"; }

# the compile pool's program: arch_specific compiles for sm_90a, a cache entry of its own
x='tf_matmul_bf16_wgmma<128, 128, 3, 1>'
printf '{"root": "%s", "sources": ["templates/matmul_bf16_wgmma.cu"], "exprs": ["%s"], "arch_specific": true}\n' \
  "$WORK/root" "$x" > prog.json
expect_exit 0 "$TF" compile --arch sm_90 < prog.json
grep -qE '"status": ?"(compiled|cached)"' last.out || { cat last.out last.err; fail "compile for sm_90a"; }
sed -i 's/, "arch_specific": true//' prog.json
expect_exit 0 "$TF" compile --arch sm_90 < prog.json # a refusal is an outcome, exit 0
grep -qE '"status": ?"refused"' last.out || { cat last.out; fail "wgmma compiled for plain sm_90"; }

# without the key: refused by check, exit 2, naming file, key and target
sed -i '/"arch_specific": true,/d' root/templates/matmul_bf16_wgmma.json
expect_exit 2 "$TF" check "$camp"
grep -q "matmul_bf16_wgmma.json': key 'kernel': NVRTC refuses 'tf_matmul_bf16_wgmma<.*' for sm_90 " last.err ||
  { cat last.err; fail "message"; }
echo "ok: wgmma example compiles for sm_90a only when the template asks for it"
