#!/usr/bin/env bash
# A hostile ledger that `verify` accepts: every free text the report prints (the device's
# name, host and uuid, the campaign's name and path, the run, the time, the control, a knob's
# name, a static refusal's reason and constraint, the restarts' and the end's reasons, the
# ledger's own path) carries control characters, `*/`, `</script>`, `<!--`, both quotes, a
# newline, `|`, a backtick, `=HYPERLINK("x")`, Markdown link syntax and invalid UTF-8. Every format is valid UTF-8 and
# prints that text as text: no tag or comment of the ledger's in the page or the Markdown, no
# cell that a spreadsheet runs, no row or cell split. A 1 MB string is refused by the reader
# (every ledger string has its size), exit 2 naming the file and the key, nothing written.
source "$(dirname "$0")/../lib.sh"
source "$(dirname "$0")/report_lib.bash"
cd "$WORK"
report_farm

# the ledger's own path is text the report prints too
dir='=HYPERLINK("p")<script>|`'"'"'&amp;[x](y)'
mkdir -p "$dir"
hostile="$dir/h.jsonl"
src=$(grep -l '"type":"restart"' "${LEDGERS[@]}" | head -1)
other=$(printf '%s\n' "${LEDGERS[@]}" | grep -vxF "$src")
python3 - "$src" "$hostile" <<'PY'
import json, sys
BAD = b"\xff\xfe\xc0\xaf\xed\xa0\x80\xc3(".decode("utf-8", "surrogateescape")  # no valid UTF-8
CORE = "<script>*/</script><!--'\"\n|`" + BAD
ALL = ("\x01\x07\x1b[2J\x7f\u0085\u009b*/</script><script>alert(1)</script><!-- '\"\n\r\t|`"
       "=HYPERLINK(\"x\")~_*[x](javascript:alert(1))&amp;\\|" + BAD)
KNOB = "</script><!--|`*/\n'\"=" + BAD
def knobs(cfg):
    return {(KNOB if k == "VEC" else k): v for k, v in cfg.items()}
out = []
for line in open(sys.argv[1], encoding="utf-8"):
    r = json.loads(line)
    t = r["type"]
    if t == "device":
        d = r["device"]
        d["host"] = '=HYPERLINK("x")' + CORE + "\x01"
        d["name"] = ALL
        d["uuid"] = "+" + CORE
        d["pci_bus_id"], d["arch"], d["sim_noise"] = "@" + CORE[:20], "-" + BAD, ALL
        r["campaign"] = "@SUM(1)" + CORE + "\x1b"
        r["campaign_path"] = ALL + "/" + ALL
        r["created"] = "-1\t|<b>'\"" + BAD
        r["mode"] = "<!--|`\n" + BAD[:2]
    elif t == "generation":
        r["device"] = "+" + CORE
        if "run" in r:
            r["run"] = "-</script><!--|`\n'\"*/" + BAD
        r["time"] = "\t=1+2|<script>'\"" + BAD
        if "job" in r:  # a measured one: its reason is the rule's, which verify recomputes
            r["job"]["arms"][2]["name_expr"] = ALL
        else:  # a static refusal: its reason and constraint are the template's words
            r["reason"], r["constraint"] = "-" + ALL, "=" + CORE
        r["best"], r["new"] = knobs(r["best"]), knobs(r["new"])
        if "change" in r:
            r["change"] = knobs(r["change"])
    elif t in ("restart", "end"):
        r["reason"] = '=HYPERLINK("x")' + ALL
    out.append(json.dumps(r, ensure_ascii=False, separators=(",", ":")))
open(sys.argv[2], "w", encoding="utf-8", errors="surrogateescape").write("\n".join(out) + "\n")
PY
grep -q '"type":"restart"' "$hostile" || fail "the hostile ledger has no restart"
"$TF" verify "$hostile" >verify.out || { cat verify.out; fail "verify refuses the hostile ledger"; }
grep -q ", 0 differ$" verify.out || fail "verify: $(cat verify.out)"
echo "ok: verify accepts the hostile ledger ($(wc -c <"$hostile") bytes)"

for fmt in md csv json; do
  flag=()
  [ "$fmt" = md ] || flag=("--$fmt")
  "$TF" report "${flag[@]}" "$hostile" "$other" >"out.$fmt" 2>"err.$fmt" ||
    { cat "err.$fmt"; fail "report --$fmt failed on the hostile ledger"; }
done
"$TF" report --t4 "$hostile" >out.t4 2>err.t4 || { cat err.t4; fail "report --t4 failed"; }
"$TF" report --html page.html "$hostile" "$other" 2>err.html || { cat err.html; fail "report --html failed"; }

python3 - "$hostile" <<'PY' || fail "an output is unsafe (above)"
import csv, io, json, re, sys
from html.parser import HTMLParser
path = sys.argv[1]
raw = open(path, "rb").read()
for name in ("out.md", "out.csv", "out.json", "out.t4", "page.html"):
    data = open(name, "rb").read()
    data.decode("utf-8")  # strict: raises on any invalid byte
    bad = [c for c in data.decode() if (ord(c) < 0x20 and c != "\n") or 0x7f <= ord(c) < 0xa0]
    assert not bad, (name, "raw control characters", bad[:5])

# The page: its one script is tunefarm's; the ledger's text is text, attributes round-trip.
page = open("page.html", encoding="utf-8").read()
assert len(re.findall(r"<script", page, re.I)) == 1 and len(re.findall(r"</script", page, re.I)) == 1, "a <script> of the ledger's in the page"
assert page.index("<script") < page.index("</script>") < page.index("</head>")
assert "<!--" not in page and "<b>" not in page, "a comment or a tag of the ledger's in the page"
assert "&lt;/script&gt;&lt;script&gt;alert(1)&lt;/script&gt;&lt;!--" in page, "the device name is missing"
class Attrs(HTMLParser):
    def __init__(self):
        super().__init__()
        self.ledgers, self.tags = [], 0
    def handle_starttag(self, tag, attrs):
        a = dict(attrs)
        if "data-ledger" in a:
            self.ledgers.append(a["data-ledger"])
        self.tags += tag == "script"
p = Attrs()
p.feed(page)
assert p.tags == 1 and path in p.ledgers, (p.tags, p.ledgers)

# Markdown: no tag, comment or link of the ledger's; every table row has its header's cells.
md = open("out.md", encoding="utf-8").read()
for bad in ("<script", "</script", "<!--", "<b>"):
    assert bad.lower() not in md.lower(), ("markdown holds", bad)
assert not re.search(r"(?<!\\)\]\(javascript", md), "markdown holds a link"
for want in ("&lt;/script&gt;", "&amp;amp;", "\\|", "\\`", "\\x1b", "\\u009b", "\ufffd"):
    assert want in md, ("markdown lacks", want)
table = None
for line in md.split("\n"):
    if not line.startswith("|"):
        table = None
        continue
    cells = len(re.findall(r"(?<!\\)\|", line.replace("\\\\", "")))
    table = table or cells
    assert cells == table, ("a row with %d cells where the header has %d" % (cells, table), line)

# CSV: one row per generation, every row the header's width; no text cell a spreadsheet runs.
rows = list(csv.reader(io.StringIO(open("out.csv", encoding="utf-8").read())))
gens = sum(1 for l in open("out.json") for x in json.loads(l)["ledgers"] for g in x["generations"])
assert len(rows) == 1 + gens, (len(rows), gens)
def number(s):
    try:
        return float(s) == float(s)
    except ValueError:
        return False
for row in rows:
    assert len(row) == len(rows[0]), row
    for cell in row:
        assert not cell or cell[0] not in "=+-@\t\r" or number(cell), ("a formula cell", cell)
assert any(c.startswith("'=HYPERLINK(\"x\")") for r in rows for c in r), "the host cell is missing"

# JSON and T4: the ledger's strings whole, invalid bytes as U+FFFD.
led = json.load(open("out.json"))["ledgers"][0]
want = json.loads(raw.split(b"\n")[0].decode("utf-8", "replace"))
assert led["device"]["name"] == want["device"]["name"] and led["ledger"] == path
assert led["campaign"]["name"] == want["campaign"], led["campaign"]
json.load(open("out.t4"))
print("ok: Markdown, CSV, JSON, T4 and the page are valid UTF-8 and print the hostile text as text")
PY

# One string of 1 MB: the reader holds every string in its own size and refuses a longer one.
python3 - "$hostile" big.jsonl <<'PY'
import sys
lines = open(sys.argv[1], "rb").read().split(b"\n")
end = [i for i, l in enumerate(lines) if l.startswith(b'{"type":"end"')][0]
lines[end] = lines[end].replace(b'"reason":"', b'"reason":"' + b"A" * (1 << 20), 1)
open(sys.argv[2], "wb").write(b"\n".join(lines))
PY
for fmt in --json --csv ""; do
  expect_exit 2 "$TF" report $fmt --html big.html big.jsonl
  grep -q "ledger 'big.jsonl': line [0-9]*: key 'reason' is longer than" last.err ||
    fail "the 1 MB reason: $(cat last.err)"
  [ ! -s last.out ] && [ ! -e big.html ] || fail "output written for a refused ledger"
done
echo "ok: a 1 MB string is refused naming the file and the key; nothing written"
