#!/usr/bin/env bash
# `tunefarm measure` answers a line over its 4 MiB limit with an error
# naming the limit, skips it, and serves the lines after it (it does not end silently, as if
# the input had ended, dropping them).
source "$(dirname "$0")/../lib.sh"
cd "$WORK"
hello='{"type":"hello"}'
{
  echo "$hello"
  printf '{"pad":"'; head -c $((5 * 1024 * 1024)) /dev/zero | tr '\0' a; echo '"}'
  echo "$hello"
  head -c $((4 * 1024 * 1024)) /dev/zero | tr '\0' x; echo # the limit counts the newline
  printf '%s' "$hello" # a last line without its newline is still a line
} >in.txt
expect_exit 0 "$TF" measure --backend sim <in.txt
[ "$(wc -l <last.out)" -eq 5 ] || { cut -c1-120 last.out; fail "expected 5 replies"; }
[ "$(grep -c '"type":"hello"' last.out)" -eq 3 ] || fail "the lines after a long one were not served"
[ "$(grep -c 'a line longer than 4194304 bytes (4 MiB, the limit) was skipped' last.out)" -eq 2 ] ||
  { cut -c1-120 last.out; fail "no error naming the limit"; }
sed -n 2p last.out | grep -q '"type":"error"' || fail "the error is not in the long line's place"
echo "ok: long lines answered with an error and skipped, the rest served"
