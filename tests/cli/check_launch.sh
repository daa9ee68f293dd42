#!/usr/bin/env bash
# `check` evaluates the launch (grid, block, shared memory, buffer sizes, arguments) at every
# accepted configuration: a template whose shared memory divides by zero where ROWS is 8 gets
# one warning line naming the key, how many configurations fail and the first of them, and
# exit 0 (`run` refuses such a candidate and goes on); narrowed away, no warning; where the
# start itself cannot launch, the campaign is refused, exit 2.
source "$(dirname "$0")/../lib.sh"
cd "$WORK"
mkdir -p root/campaigns root/templates root/kernels
cp "$SRC"/templates/layernorm.* "$SRC"/templates/ref_layernorm.cu root/templates/
cp "$SRC"/kernels/layernorm_twowarp.* root/kernels/
cp "$SRC/campaigns/layernorm-4096x768.json" root/campaigns/ln.json
export TUNEFARM_ROOT="$WORK/root"
tmpl=root/templates/layernorm.json
grep -q '"smem": "0"' "$tmpl" || fail "the layernorm template's smem is not \"0\""
sed -i 's|"smem": "0"|"smem": "1024 / (8 - ROWS)"|' "$tmpl"

expect_exit 0 "$TF" check root/campaigns/ln.json
[ "$(wc -l <last.err)" -eq 1 ] || { cat last.err; fail "not one warning line"; }
grep -qF "tunefarm check: warning: key 'launch.smem' fails at " last.err &&
  grep -qF "; the first, FORM=" last.err && grep -qF "ROWS=8: spec '" last.err &&
  grep -qF "key 'launch.smem': column 6: division by zero" last.err || { cat last.err; fail "the warning lacks the key, the configuration or why"; }
failing=$(sed -E 's/.* fails at ([0-9]+) of ([0-9]+) accepted.*/\1/' last.err)
accepted=$(grep -oE 'accepted: +[0-9]+' last.out | grep -oE '[0-9]+$')
[ "$(sed -E 's/.* fails at ([0-9]+) of ([0-9]+) accepted.*/\2/' last.err)" = "$accepted" ] ||
  fail "the warning's total is not the accepted count $accepted"
echo "ok: $(cut -c1-220 last.err)"

# the count is every accepted configuration with ROWS=8: a constraint refusing them leaves the rest
sed 's|"constraints": \[|"constraints": [{"name": "no8", "expr": "ROWS != 8", "reason": "test"},|' \
  "$tmpl" >root/templates/t8.json
sed 's|"name": "layernorm"|"name": "t8"|' -i root/templates/t8.json
sed 's|"template": "layernorm"|"template": "t8"|' root/campaigns/ln.json >root/campaigns/t8.json
expect_exit 0 "$TF" check root/campaigns/t8.json
[ ! -s last.err ] || { cat last.err; fail "a warning where ROWS=8 is refused"; }
rest=$(grep -oE 'accepted: +[0-9]+' last.out | grep -oE '[0-9]+$')
[ "$((accepted - rest))" -eq "$failing" ] || fail "$failing failing, but $((accepted - rest)) accepted have ROWS=8"
echo "ok: $failing = $accepted - $rest accepted configurations with ROWS=8"

# narrowed away: nothing to warn about
sed 's|"template": "layernorm",|"template": "layernorm", "knobs": {"ROWS": [1, 2, 4]},|' \
  root/campaigns/ln.json >root/campaigns/narrow.json
expect_exit 0 "$TF" check root/campaigns/narrow.json
[ ! -s last.err ] || { cat last.err; fail "a warning for a narrowed-away value"; }

# the start itself cannot launch: bad input, exit 2
sed -i 's|"smem": "1024 / (8 - ROWS)"|"smem": "1024 / (ROWS - 1)"|' "$tmpl"
expect_exit 2 "$TF" check root/campaigns/ln.json
grep -qF "key 'launch.smem': column 6: division by zero" last.err || { cat last.err; fail "start: no reason"; }
echo "ok: a start that cannot launch refused: $(cut -c1-160 last.err)"
