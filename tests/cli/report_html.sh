#!/usr/bin/env bash
# `report --html FILE` in a real browser. The page of a short simulated campaign is
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
TUNEFARM_ROOT="$SRC" "$TF" report --html page.html ledgers/ln >report.out 2>report.err || { cat report.err; fail "report --html failed"; }
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

# no clipped text: a copy of the page with a probe that measures, as laid out, every SVG text
# against its plot's box and every caption, legend and warning against its own width
probe='<script>window.addEventListener("load",function(){var bad=[];document.querySelectorAll("svg").forEach(function(s){var o=s.getBoundingClientRect();s.querySelectorAll("text").forEach(function(t){var r=t.getBoundingClientRect();if(r.left<o.left-0.5||r.top<o.top-0.5||r.right>o.right+0.5||r.bottom>o.bottom+0.5)bad.push(t.textContent);});});document.querySelectorAll("figcaption,.legend,.warning,.gpu").forEach(function(e){if(e.scrollWidth>e.clientWidth+1)bad.push(e.textContent.slice(0,80));});document.documentElement.setAttribute("data-clipped",bad.length+": "+bad.join(" | "));});</script>'
python3 -c 'import sys; p=open(sys.argv[1]).read(); open(sys.argv[2],"w").write(p.replace("</body>", sys.argv[3]+"</body>"))' \
  page.html probe.html "$probe"
profile=$(mktemp -d)
timeout 60 "$browser" --headless --no-sandbox --disable-gpu --no-first-run --disable-sync \
  --host-resolver-rules="MAP * ~NOTFOUND" --user-data-dir="$profile" --virtual-time-budget=2000 \
  --dump-dom "file://$WORK/probe.html" >probe_dom.html 2>/dev/null || fail "$browser failed on the probe"
rm -rf "$profile"
clipped=$(grep -o 'data-clipped="[^"]*"' probe_dom.html) || fail "the probe did not run"
[ "$clipped" = 'data-clipped="0: "' ] || fail "clipped text: $clipped"
echo "ok: no plot title, label, legend or warning is clipped"

# what each GPU's column shows besides the marks: a legend under every plot, the control's
# tolerance band, the threshold lines 1 ± min_gain of the ratios and the A/A bias, the
# throughput of start, final best and control, the knob effects; a warning per GPU whose
# control beat its winner (as --json says)
TUNEFARM_ROOT="$SRC" "$TF" report --json ledgers/ln >report.json || fail "report --json failed"
python3 - dom.html report.json <<'PY' || fail "the page lacks a legend, a band, a threshold, a rate or the knob effects"
import json, sys
from html.parser import HTMLParser
class Parts(HTMLParser):
    def __init__(self):
        super().__init__()
        self.gpu, self.n, self.warn, self.stack = None, {}, [], []
    def handle_starttag(self, tag, attrs):
        a = dict(attrs)
        cls = (a.get("class") or "").split()
        if tag == "div" and "gpu" in cls:
            self.gpu = a["data-ledger"]
            self.n[self.gpu] = {}
        if tag == "p" and "warning" in cls:
            self.warn.append(a["data-ledger"])
        if self.gpu:
            for c in cls:
                key = tag + "." + c
                self.n[self.gpu][key] = self.n[self.gpu].get(key, 0) + 1
p = Parts()
p.feed(open(sys.argv[1]).read())
rep = json.load(open(sys.argv[2]))
for led in rep["ledgers"]:
    n = p.n[led["ledger"]]
    assert n.get("figure.plot") == 4 and n.get("div.legend", 0) >= 5, n
    assert n.get("rect.band") == 1, "no tolerance band"
    assert n.get("line.threshold") == 4, "threshold lines: %s" % n.get("line.threshold")
    assert n.get("tr.rate") == 3 and n.get("table.effects") == 1 and n.get("tr.effect", 0) >= 2, n
    tp = led["throughput"]
    assert tp["final_best"]["gbps"] > 0 and 0 < tp["final_best"]["fraction_of_fp32_peak"] < 1, tp
    faster = led["control"]["us"] < led["final_best"]["us"]
    assert tp["control_faster"] == faster
    assert (led["ledger"] in p.warn) == faster, "warning for %s: %s" % (led["ledger"], p.warn)
print("ok: legends, band, thresholds, throughput, knob effects and warnings on the page")
PY

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
