#!/usr/bin/env bash
# `tunefarm export`: a search's final best (or a configuration given) as NAME.h and NAME.cu
# that build with plain nvcc; NAME_check accepts the tuned sizes and refuses what a template
# constraint or range refuses (host code: this runs without a GPU); bad input exits 2.
source "$(dirname "$0")/../lib.sh"
cd "$WORK"
mkdir -p campaigns
export TUNEFARM_ROOT="$SRC"
sed -E 's/"budget": [0-9]+/"budget": 6/' "$SRC/campaigns/layernorm-4096x768.json" \
  >campaigns/layernorm-4096x768.json
"${MPIRUN[@]}" -np 2 "$TF" run --backend sim --quiet --ledgers ledgers \
  campaigns/layernorm-4096x768.json || fail "run failed"
ln=$(ls ledgers/layernorm-4096x768/*.jsonl)
"$TF" export -o out --name tf_ln "$ln" | grep -q 'out/tf_ln.cu' || fail "no word of what was written"
grep -q "Ledger: $ln" out/tf_ln.h || fail "the header does not say where the configuration came from"
"$TF" export -o out --name tf_mm --config VEC=4 "$SRC/campaigns/matmul-1024.json" >/dev/null ||
  fail "export of a configuration given failed"
grep -q 'VEC=4' out/tf_mm.h || fail "the header does not name the configuration given"

expect_exit 2 "$TF" export --name 1x "$ln"
grep -q "C identifier" "$WORK/last.err" || fail "a bad name is not explained"
expect_exit 2 "$TF" export nope.jsonl
head -1 "$ln" >empty.jsonl
expect_exit 2 "$TF" export empty.jsonl
grep -q "no generation yet" "$WORK/last.err" || fail "a ledger without a best is not explained"
expect_exit 2 "$TF" export --config VEC=3 "$SRC/campaigns/matmul-1024.json"
sed -i 's/"min_gain": 0.01/"min_gain": 0.02/' campaigns/layernorm-4096x768.json
expect_exit 2 "$TF" export --campaign campaigns/layernorm-4096x768.json "$ln"
grep -q "changed since" "$WORK/last.err" || fail "a campaign that changed is not refused"

command -v nvcc >/dev/null || { echo "SKIP: no nvcc here: the exported code is not built"; exit 77; }
cat >drv.c <<'C'
#include <stdio.h>
#include "tf_ln.h"
#include "tf_mm.h"
int main(void) {
  const char *r[4] = {tf_mm_check(1024, 1024, 1024), tf_mm_check(1024, 1023, 1024),
                      tf_ln_check(4096, 768), tf_ln_check(4096, 0)};
  for (int i = 0; i < 4; i++) printf("%s\n", r[i] ? r[i] : "accepted");
  return !(r[0] == NULL && r[1] != NULL && r[2] == NULL && r[3] != NULL);
}
C
nvcc -std=c++17 -arch=sm_90 -Iout -o drv drv.c out/tf_mm.cu out/tf_ln.cu >nvcc.log 2>&1 ||
  { cat nvcc.log; fail "the exported code does not build with plain nvcc"; }
./drv || fail "the exported checks accept or refuse the wrong sizes"
echo "ok: exported, built with nvcc, its checks right"
