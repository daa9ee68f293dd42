#!/usr/bin/env bash
# Dead documentation links, in the files git tracks or would track (not ignored) of ROOT:
#   - every relative link of every *.md ([text](path), [text](path#anchor), [text](#anchor),
#     [name]: path): the file or folder exists, and an #anchor is a heading of the target page
#     under GitHub's slugs (lower case, punctuation dropped, spaces as '-', -1, -2 ... for
#     repeats);
#   - every docs/<page>.md path that a *.md, *.c, *.h, *.cu, *.sh, *.py, *.sbatch, *.json or
#     CMakeLists.txt mentions (comments, help texts, prose): the page exists.
# Links inside fenced code blocks and `code spans` are not links; a docs/ path in a code
# span is still a path and is checked.
# Every dead link fails, campaign inputs included (templates/, kernels/, campaigns/,
# examples/: fixing one there changes the campaigns' identity, and their ledgers need
# `run --fresh`).
# Exit status: 0 no dead link, 1 dead links (each listed as file:line: what), 2 bad usage.
# Usage: scripts/check-links.sh [ROOT]   (default: the repository that holds this script)
set -euo pipefail
root="${1:-$(cd "$(dirname "$0")/.." && pwd)}"
[ -d "$root" ] || { echo "check-links: '$root' is not a folder" >&2; exit 2; }
cd "$root"
git ls-files -z >/dev/null 2>&1 || { echo "check-links: '$root' is not a git work tree" >&2; exit 2; }

git ls-files -z --cached --others --exclude-standard | python3 -c '
import os, re, sys, unicodedata

files = [f for f in sys.stdin.read().split("\0") if f]
tracked = set(files)
SOURCE_EXT = (".c", ".h", ".cu", ".sh", ".py", ".sbatch", ".json")
DOCS_PATH = re.compile(r"docs/[A-Za-z0-9_./-]*?\.md\b")
INLINE = re.compile(r"(?<!!)\[[^\]]*\]\(\s*<?([^)\s>]+)>?(?:\s+\"[^\"]*\")?\s*\)")
IMAGE = re.compile(r"!\[[^\]]*\]\(\s*<?([^)\s>]+)>?(?:\s+\"[^\"]*\")?\s*\)")
REFDEF = re.compile(r"^\s{0,3}\[[^\]]+\]:\s*<?(\S+?)>?(?:\s.*)?$")
FENCE = re.compile(r"^\s{0,3}(```+|~~~+)")
HEADING = re.compile(r"^\s{0,3}(#{1,6})\s+(.*?)\s*#*\s*$")

def exists(path):
    return os.path.exists(path)

def lines_outside_fences(text):
    """(line number, line) of the lines outside fenced code blocks."""
    fence = None
    for n, line in enumerate(text.split("\n"), 1):
        m = FENCE.match(line)
        if m:
            mark = m.group(1)
            if fence is None:
                fence = mark[0] * 3
            elif mark.startswith(fence):
                fence = None
            continue
        if fence is None:
            yield n, line

def slug(heading):
    """GitHub: inline markup dropped, lower case, punctuation out, spaces to hyphens."""
    t = re.sub(r"!?\[([^\]]*)\]\([^)]*\)", r"\1", heading)  # links: their text
    t = re.sub(r"<[^>]+>", "", t)                            # inline HTML
    t = t.strip().lower()
    out = []
    for ch in t:
        cat = unicodedata.category(ch)
        if ch in "-_" or ch == " " or cat[0] in "LN" or cat == "Mn":
            out.append("-" if ch == " " else ch)
    return "".join(out)

anchor_cache = {}
def anchors(path):
    if path not in anchor_cache:
        seen, found = {}, set()
        with open(path, encoding="utf-8", errors="replace") as f:
            text = f.read()
        for _, line in lines_outside_fences(text):
            m = HEADING.match(line)
            if not m:
                continue
            s = slug(m.group(2))
            k = seen.get(s, 0)
            seen[s] = k + 1
            found.add(s if k == 0 else "%s-%d" % (s, k))
        for m in re.finditer(r"<a\s+(?:name|id)=\"([^\"]+)\"", text):
            found.add(m.group(1))
        anchor_cache[path] = found
    return anchor_cache[path]

dead = []

def check_link(md, n, target):
    if re.match(r"^[a-zA-Z][a-zA-Z0-9+.-]*:", target) or target.startswith("//"):
        return  # a URL (http:, https:, mailto:)
    path, _, anchor = target.partition("#")
    if path:
        resolved = os.path.normpath(os.path.join(os.path.dirname(md), path))
        if resolved.startswith(".."):
            dead.append("%s:%d: link %s leaves the repository" % (md, n, target))
            return
        if not exists(resolved):
            dead.append("%s:%d: link %s: no file %s" % (md, n, target, resolved))
            return
    else:
        resolved = md
    if anchor:
        if not resolved.endswith(".md") or os.path.isdir(resolved):
            return  # an anchor into code or a folder: GitHub lines, not headings
        if anchor.lower() not in anchors(resolved):
            dead.append("%s:%d: link %s: no heading #%s in %s" % (md, n, target, anchor, resolved))

def check_mention(f, n, path):
    if path.endswith("/.md") or exists(path):
        return
    dead.append("%s:%d: mentions %s, which does not exist" % (f, n, path))

for f in files:
    base = os.path.basename(f)
    is_md = f.endswith(".md")
    if not (is_md or f.endswith(SOURCE_EXT) or base == "CMakeLists.txt"):
        continue
    if not exists(f):
        continue  # deleted in the work tree, not yet in the index
    with open(f, encoding="utf-8", errors="replace") as fh:
        text = fh.read()
    if is_md:
        for n, line in lines_outside_fences(text):
            bare = re.sub(r"`[^`]*`", "", line)  # code spans hold no links
            for m in INLINE.finditer(bare):
                check_link(f, n, m.group(1))
            for m in IMAGE.finditer(bare):
                check_link(f, n, m.group(1))
            m = REFDEF.match(bare)
            if m:
                check_link(f, n, m.group(1))
    for n, line in enumerate(text.split("\n"), 1):
        for m in DOCS_PATH.finditer(line):
            start = m.start()
            if start > 0 and (line[start - 1].isalnum() or line[start - 1] in "_-."):
                continue  # part of another name (mydocs/x.md)
            check_mention(f, n, m.group(0))

for d in dead:
    print(d)
if dead:
    print("check-links: %d dead link(s)" % len(dead), file=sys.stderr)
    sys.exit(1)
print("check-links: no dead link", file=sys.stderr)
'
