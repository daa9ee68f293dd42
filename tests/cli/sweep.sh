#!/usr/bin/env bash
# `tunefarm sweep` on the simulated device writes a recorded space: gzip, a versioned header
# that says its times are synthetic, one line per reachable configuration, an end line, no
# part file left; it resumes from a part file; and `run --space` refuses a space file that is
# missing, corrupt, cut short or short of a configuration with one message and status 2,
# before any rank starts.
source "$(dirname "$0")/../lib.sh"
cd "$WORK"
camp="$SRC/campaigns/replay-chain.json"
"$TF" sweep --backend sim -o chain.tfspace "$camp" 2>sweep.err || { cat sweep.err; fail "sweep failed"; }
grep -q "measured 9 of 9" sweep.err || fail "no progress on stderr"
gzip -t chain.tfspace || fail "not a gzip file"
[ ! -e chain.tfspace.part ] || fail "part file left behind"
zcat chain.tfspace >plain
head -1 plain | grep -q '"type":"tfspace","format":1' || fail "no versioned header"
head -1 plain | grep -q '"simulated":true' || fail "header does not say the times are synthetic"
head -1 plain | grep -q '"reference":{"ITERS":1100}' || fail "header names no reference"
[ "$(grep -c '"type":"config"' plain)" -eq 9 ] || fail "not one line per configuration"
[ "$(grep -c '"check":"pass".*"us":\[.*"ref_us":\[.*"control_us":\[' plain)" -eq 9 ] || fail "rounds missing"
tail -1 plain | grep -q '"type":"end","configs":9' || fail "no end line"
# Resume: a part file with the header and three configurations measures the other six.
head -4 plain >again.tfspace.part
"$TF" sweep --backend sim -o again.tfspace "$camp" 2>again.err || { cat again.err; fail "resume failed"; }
grep -q "measured 6 of 6" again.err || { cat again.err; fail "did not resume from the part file"; }
[ "$(zcat again.tfspace | grep -c '"type":"config"')" -eq 9 ] || fail "resumed file incomplete"
# Compile times: NVRTC's (here the simulated device's compile) for kernels the cache lacks,
# null for those it holds; a part file keeps them for the sweep that resumes it.
export TUNEFARM_SIM_COMPILE=0.01 TUNEFARM_CACHE="$WORK/cache"
"$TF" sweep --backend sim --quiet -o timed.tfspace "$camp" || fail "timed sweep failed"
[ "$(zcat timed.tfspace | grep -c '"compile_ms":[0-9]')" -eq 9 ] || fail "compile times not recorded"
{ zcat timed.tfspace | head -1
  zcat timed.tfspace | sed -n 2,4p | sed -E 's/"type":"config"/"type":"compile"/; s/,"rel_err".*$/}/'; } >warm.tfspace.part
"$TF" sweep --backend sim --quiet -o warm.tfspace "$camp" || fail "warm sweep failed"
[ "$(zcat warm.tfspace | grep -c '"compile_ms":[0-9]')" -eq 3 ] || fail "compile times of the part file lost"
[ "$(zcat warm.tfspace | grep -c '"compile_ms":null')" -eq 6 ] || fail "cached kernels given a compile time"
export TUNEFARM_SIM_COMPILE=0
# A part file of another campaign is not overwritten.
sed -n '1,2{s/"campaign_hash":"[0-9a-f]*"/"campaign_hash":"00"/;p}' plain >other.tfspace.part
expect_exit 2 "$TF" sweep --backend sim -o other.tfspace "$camp"
grep -q "holds a sweep of another campaign" "$WORK/last.err" || fail "foreign part file not refused"
# Bad space files for run: one message, status 2, no mpirun started.
refused() { # WHAT PATTERN SPACE
  expect_exit 2 "$TF" run --ledgers "$WORK/led" --space "$3" "$camp"
  [ "$(wc -l <"$WORK/last.err")" -eq 1 ] || { cat "$WORK/last.err"; fail "$1: not one message"; }
  grep -q "$2" "$WORK/last.err" || { cat "$WORK/last.err"; fail "$1: wrong message"; }
  [ ! -e "$WORK/led" ] || fail "$1: a ledger was written"
}
refused missing "space 'nothing.tfspace' cannot be opened" nothing.tfspace
head -c 900 chain.tfspace >cut.tfspace
refused truncated "space 'cut.tfspace'.*cut short" cut.tfspace
head -c 3000 /dev/urandom >noise.tfspace
refused corrupt "space 'noise.tfspace'" noise.tfspace
grep -v '"values":\[1030\]' plain | sed 's/"configs":9/"configs":8/' | gzip >short.tfspace
refused "configuration missing" "space 'short.tfspace' has no configuration ITERS=1030" short.tfspace
sed 's/"format":1/"format":9/' plain | gzip >future.tfspace
refused version "key 'format' is 9" future.tfspace
expect_exit 2 "$TF" run --backend replay "$camp"
grep -q "go together" "$WORK/last.err" || fail "--backend replay without --space accepted"
echo ok
