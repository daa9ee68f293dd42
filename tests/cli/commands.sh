#!/usr/bin/env bash
# The command table: `tunefarm --help` and `tunefarm help` list the commands users type (not
# the ones tunefarm starts itself, which still run), every command answers --help with its
# own usage and status 0, `tunefarm help CMD` gives the same, and an unknown command gets one
# message and status 2.
source "$(dirname "$0")/../lib.sh"
cd "$WORK"

expect_exit 0 "$TF" --help
cp last.out main.help
expect_exit 0 "$TF" help
cmp -s last.out main.help || fail "'help' and '--help' differ"
cmds=$(sed -nE 's/^  ([a-z]+)( .*)?$/\1/p' main.help)
[ "$(echo "$cmds" | wc -w)" -ge 10 ] || { cat main.help; fail "main help lists too few commands"; }
grep -qE '^  compile' main.help && fail "main help lists the hidden 'compile'"

for c in $cmds compile; do
  expect_exit 0 "$TF" "$c" --help
  grep -q "tunefarm $c" last.out || { cat last.out; fail "'$c --help' is not $c's usage"; }
  cp last.out own.help
  # an option's line begins with it: one glued to the line before is a missing newline
  grep -E '[^ ]  +--[a-z]' own.help && fail "'$c --help': an option does not begin its line"
  expect_exit 0 "$TF" help "$c"
  cmp -s last.out own.help || fail "'help $c' differs from '$c --help'"
done

expect_exit 2 "$TF" frobnicate
[ "$(wc -l <last.err)" -eq 1 ] || { cat last.err; fail "unknown command: more than one line"; }
grep -qF "unknown command 'frobnicate'" last.err || { cat last.err; fail "message lacks the name"; }
[ -s last.out ] && fail "unknown command printed on stdout"
expect_exit 2 "$TF" help frobnicate
grep -qF "unknown command 'frobnicate'" last.err || { cat last.err; fail "help: lacks the name"; }
echo "ok: $(echo $cmds | wc -w) commands listed, each with its own --help"
