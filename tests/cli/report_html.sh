#!/usr/bin/env bash
# issue 19: `report --html FILE` in a real browser. The page of a short simulated campaign is
# self-contained (no URL, no external script, style or font), renders in headless Chromium
# with no console message and no script error, and plots, per GPU and never pooled, as many
# points as the ledger holds: the best so far per generation, a ring per keep, a line per
# restart, a dot per unscreened round's ratio, the control per generation, one mark per canary.
source "$(dirname "$0")/../lib.sh"
source "$(dirname "$0")/report_lib.bash"
cd "$WORK"
browser=""
for b in chromium-headless-shell chromium; do
  command -v "$b" >/dev/null && browser="$b" && break
done
[ -n "$browser" ] || {
  echo "SKIP: no headless Chromium (Debian: chromium-headless-shell; scripts/setup.sh installs it)"
  exit 77
}
report_farm
"$TF" report --html page.html ledgers/ln >report.out 2>report.err || { cat report.err; fail "report --html failed"; }
[ -s page.html ] && [ ! -s report.out ] || fail "no page, or text on stdout"
grep -q "wrote page.html (2 ledgers)" report.err || fail "no note of the page written"
grep -Eqi 'https?:|//[a-z]|src=|href=|@import|url\(|@font-face' page.html && fail "the page reaches outside itself"
echo "ok: the page is self-contained ($(wc -c <page.html) bytes)"

# as root Chromium needs --no-sandbox; no network, no first-run or background traffic
profile=$(mktemp -d)
timeout 60 "$browser" --headless --no-sandbox --disable-gpu --disable-quic --no-first-run \
  --disable-background-networking --disable-component-update --disable-sync \
  --host-resolver-rules="MAP * ~NOTFOUND" --user-data-dir="$profile" \
  --enable-logging=stderr --v=0 --virtual-time-budget=2000 --dump-dom "file://$WORK/page.html" \
  >dom.html 2>browser.err || { tail -20 browser.err; fail "$browser failed"; }
rm -rf "$profile"
grep -q 'data-rendered="yes"' dom.html || { tail -20 browser.err; fail "the page's script did not run to its end"; }
grep -q 'data-errors=' dom.html && fail "script errors: $(grep -o 'data-errors="[^"]*"' dom.html)"
grep -q ':CONSOLE' browser.err && { grep ':CONSOLE' browser.err; fail "the page wrote to the console"; }
echo "ok: $browser rendered it, no console message, no script error"

# the marks of each GPU's column against that GPU's ledger
python3 - dom.html "${LEDGERS[@]}" <<'PY' >marks.txt || fail "could not count the marks"
import sys
from html.parser import HTMLParser
class Marks(HTMLParser):
    def __init__(self):
        super().__init__()
        self.gpu, self.count = None, {}
    def handle_starttag(self, tag, attrs):
        a = dict(attrs)
        cls = (a.get("class") or "").split()
        if tag == "div" and "gpu" in cls:
            self.gpu = a["data-ledger"].split("/")[-1]
            self.count[self.gpu] = dict.fromkeys(
                ["best", "keep", "restart", "ratio", "control", "canary"], 0)
        elif self.gpu and cls and ("data-gen" in a or "data-restart" in a):
            if cls[0] in self.count[self.gpu]:  # a mark's kind is its first class
                self.count[self.gpu][cls[0]] += 1
p = Marks()
p.feed(open(sys.argv[1]).read())
for path in sys.argv[2:]:
    c = p.count[path.split("/")[-1]]
    print(path, c["keep"], c["restart"], c["ratio"], c["control"], c["canary"], c["best"])
PY
for l in "${LEDGERS[@]}"; do
  read -r gens keeps restarts ratios controls canaries best < <(ledger_counts "$l")
  got=$(grep -F "$l " marks.txt | cut -d' ' -f2-)
  want="$keeps $restarts $ratios $controls $canaries $best"
  [ "$got" = "$want" ] || fail "$l: plotted keeps restarts ratios controls canaries best: $got; the ledger holds $want"
  [ "$ratios" -gt 0 ] && [ "$canaries" -gt 1 ] || fail "$l: too little to plot ($want)"
  echo "ok: $(basename "$l"): $gens generations; plotted $keeps keeps, $restarts restarts, $ratios ratios, $controls controls, $canaries canaries, $best best-so-far points"
done
