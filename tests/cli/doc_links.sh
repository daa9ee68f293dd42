#!/usr/bin/env bash
# Every relative link and #anchor of the repository's Markdown pages, and every page under
# docs/ that the sources name, exists (scripts/check-links.sh); and the check itself fails on
# a dead link, a dead anchor and a dead source mention, each named with its file and line,
# a mention in a campaign input (templates/, campaigns/ ...) as much as any other.
# (The planted tree's names are built from $d, so that this file names no page itself.)
source "$(dirname "$0")/../lib.sh"
command -v git >/dev/null && git -C "$SRC" rev-parse --git-dir >/dev/null 2>&1 ||
  { echo "SKIP: the source tree is not a git work tree"; exit 77; }
bash "$SRC/scripts/check-links.sh" "$SRC" 2>/dev/null || fail "dead documentation links, listed above"

# A small tree with one dead link of each kind: the check must name all four, and no more.
d=docs
mkdir -p "$WORK/tree/$d" "$WORK/tree/src" "$WORK/tree/templates"
cd "$WORK/tree"
git init -q .
printf '# Title\n\n## A section\n\n[ok](%s/page.md#a-heading) [self](#a-section)\n' "$d" >README.md
printf '# Page\n\n## A heading\n\n[gone](missing.md) [bad anchor](../README.md#no-such-heading)\n' >"$d/page.md"
printf '/* see %s/page.md and %s/GONE.md */\n' "$d" "$d" >src/x.c
printf '{"doc": "see %s/page.md and %s/OLD.md"}\n' "$d" "$d" >templates/t.json
expect_exit 1 bash "$SRC/scripts/check-links.sh" "$WORK/tree"
out="$WORK/last.out"
grep -qF "$d/page.md:5: link missing.md" "$out" || { cat "$out"; fail "a dead link not named"; }
grep -qF "$d/page.md:5: link ../README.md#no-such-heading" "$out" || { cat "$out"; fail "a dead anchor not named"; }
grep -qF "src/x.c:1: mentions $d/GONE.md" "$out" || { cat "$out"; fail "a dead source mention not named"; }
grep -qF "templates/t.json:1: mentions $d/OLD.md" "$out" || { cat "$out"; fail "a dead mention in a campaign input not named"; }
[ "$(wc -l <"$out")" -eq 4 ] || { cat "$out"; fail "a live link reported dead"; }
echo "ok: no dead documentation link; the check finds each kind"
