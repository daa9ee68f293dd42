#!/usr/bin/env bash
# The strategy comparison on a recorded space (scripts/compare-strategies.sh --space,
# `tunefarm study --strategies --truth SPACE_FILE`): on the CI space (the simulated sweep of
# campaigns/replay-layernorm.json, made here as docs/reference/strategies.md says) two strategies with two seeds each replay it and print the
# table, whose optimum is the space's best configuration that passed its check, as computed here
# from the file itself (ratio x reference_us); a configuration that failed its check is never
# the optimum; a space that is cut short, of another template, or without a configuration the
# campaign can reach is refused with one message naming the file, exit 2, before any run. The
# page (--html) holds a plot per threshold and the tables' numbers, and replaces only itself.
source "$(dirname "$0")/../lib.sh"
cd "$WORK"
export TUNEFARM_ROOT="$SRC"
camp="$SRC/campaigns/replay-layernorm.json"
space="$WORK/replay-layernorm.tfspace"
TUNEFARM_SIM_COMPILE=0 "$TF" sweep --backend sim --quiet -o "$space" "$camp" || fail "the CI space's sweep failed"
best_passing() { # SPACE -> "K=V,... LEVEL": the fastest configuration that passed its check
  python3 - "$1" <<'PY'
import gzip, json, sys
lines = [json.loads(l) for l in gzip.open(sys.argv[1], "rt")]
head = lines[0]
level, values = min((l["ratio"] * head["reference_us"], l["values"]) for l in lines[1:]
                    if l["type"] == "config" and l["check"] == "pass")
print(",".join(f"{k}={v}" for k, v in zip(head["knobs"], values)), "%.6g" % level)
PY
}
optimum_of() { sed -nE 's/^optimum: ([^ ]+) at ([0-9.e+-]+) us.*/\1 \2/p' "$1"; }

bash "$SRC/scripts/compare-strategies.sh" --tunefarm "$TF" --space "$space" --seeds 2 \
  --budget 16 --at 4,16 --out "$WORK/cmp" "$camp" coordinate random >cmp.out 2>cmp.err ||
  { cat cmp.err; fail "compare-strategies --space failed"; }
want="$(best_passing "$space")"
[ -n "$want" ] && [ "$(optimum_of cmp.out)" = "$want" ] ||
  { cat cmp.out; fail "optimum is not the space's best passing configuration ($want)"; }
grep -q "truth: the space '$space'" cmp.out || { cat cmp.out; fail "the table does not name the space"; }
for s in coordinate random; do
  grep -qE "^\| $s \| 2 \| [01]\.[0-9]{2} \| [01]\.[0-9]{2} \| ([0-9]+|-) \| ([0-9.]+|-) \| [01]\.[0-9]{2} \|$" cmp.out ||
    { cat cmp.out; fail "no $s row of two runs"; }
done
[ "$(grep -c 'median G to reach | median simulated s to reach | measured one' cmp.out)" -eq 2 ] ||
  { cat cmp.out; fail "wanted the 1% and 3% tables with generations and simulated seconds"; }
[ "$(ls "$WORK"/cmp/ledgers/*/*/*.jsonl | wc -l)" -eq 4 ] || fail "wanted one ledger per run"
grep -qh '"backend":"replay"' "$WORK"/cmp/ledgers/random/*/*.jsonl || fail "the runs did not replay the space"
echo "ok: compare-strategies --space prints both tables, optimum $want"

# "measured one": the fraction of runs that measured (as best or new) a configuration within
# the threshold, computed here from the ledgers and the space; never below the fraction whose
# answer is within it at the end.
python3 - "$space" cmp.out "$WORK/cmp/ledgers" <<'PY' || fail "the 'measured one' column is not what the ledgers measured"
import glob, gzip, json, re, sys
lines = [json.loads(l) for l in gzip.open(sys.argv[1], "rt")]
head = lines[0]
level = {tuple(l["values"]): l["ratio"] * head["reference_us"] for l in lines[1:]
         if l["type"] == "config" and l["check"] == "pass"}
opt = min(level.values())
tables = open(sys.argv[2]).read().split("Within 3%")
for within, table in ((1.01, tables[0]), (1.03, tables[1])):
    for s in ("coordinate", "random"):
        seen = []
        for f in sorted(glob.glob(f"{sys.argv[3]}/{s}/*/*.jsonl")):
            near = float("inf")
            for r in map(json.loads, open(f)):
                if r.get("type") != "generation" or r.get("decision") == "refused":
                    continue
                for arm in ("best", "new"):
                    c = tuple(r[arm][k] for k in head["knobs"])
                    near = min(near, level.get(c, float("inf")) / opt)
            seen.append(near <= within)
        row = re.search(rf"^\| {s} \|(.*)$", table, re.M).group(1).strip(" |").split("|")
        got, end = float(row[-1]), float(row[-4])
        want = sum(seen) / len(seen)
        assert abs(got - want) < 0.006 and got >= end, (s, within, got, want, end)
PY
echo "ok: 'measured one' is the fraction of runs that measured a configuration within the threshold"

# bench/basins.py on the same space: every configuration that passed takes part and every
# descent ends within 1000% of the optimum; at 0% it still prints a fraction and a median.
python3 "$SRC/bench/basins.py" "$space" --starts 20 --within 10 >basins.out &&
  grep -q "372 configurations passed; 20 descents end within 1000% from 100% of starts" basins.out ||
  { cat basins.out; fail "bench/basins.py: not every descent ends within 1000%"; }
python3 "$SRC/bench/basins.py" "$space" --starts 20 --within 0 >basins0.out &&
  grep -qE "from [0-9]+% of starts, measuring a median [0-9]+ configurations" basins0.out ||
  { cat basins0.out; fail "bench/basins.py printed no fraction"; }
echo "ok: bench/basins.py descends on the CI space"

# The page: per threshold a plot with one line per strategy, its numbers those of the tables;
# it never replaces a ledger or a file that is not a page of its own, and it replaces its own.
groups=(coordinate="$WORK/cmp/ledgers/coordinate" random="$WORK/cmp/ledgers/random")
"$TF" study --strategies --truth "$space" --at 4,16 --html page.html "$camp" "${groups[@]}" \
  >page.out || fail "study --html failed"
python3 - page.html cmp.out <<'PY' || fail "the page does not hold the plots and the tables"
import html.parser, re, sys
class Page(html.parser.HTMLParser):
    def __init__(self):
        super().__init__(); self.lines, self.cells, self.td, self.figures = [], [], False, 0
    def handle_starttag(self, tag, attrs):
        a = dict(attrs)
        if tag == "polyline": self.lines.append(a.get("class"))
        if tag == "figure": self.figures += 1
        self.td = tag == "td"
    def handle_data(self, d):
        if self.td: self.cells.append(d)
    def handle_endtag(self, tag): self.td = False
p = Page(); p.feed(open(sys.argv[1]).read())
assert p.figures == 2 and p.lines == ["strategy"] * 4, (p.figures, p.lines)
rows = [l for l in open(sys.argv[2]) if re.match(r"^\| (coordinate|random) ", l)]
want = [c.strip() for l in rows for c in l.strip().strip("|").split("|")]
assert p.cells == want, (p.cells, want)
PY
cp "$(ls "$WORK"/cmp/ledgers/random/*/*.jsonl | head -1)" kept.jsonl
echo "not a page" >notes.txt
for target in kept.jsonl notes.txt "$WORK/cmp"; do
  before="$(cksum <"$target" 2>/dev/null || echo folder)"
  expect_exit 2 "$TF" study --strategies --truth "$space" --html "$target" "$camp" "${groups[@]}"
  grep -qF -- "--html '$target'" last.err || { cat last.err; fail "the refusal does not name '$target'"; }
  [ "$(cksum <"$target" 2>/dev/null || echo folder)" = "$before" ] || fail "'$target' was changed"
done
"$TF" study --strategies --truth "$space" --at 4,16 --html page.html "$camp" "${groups[@]}" \
  >/dev/null || fail "study --html did not replace its own page"
[ ! -e page.html.part ] || fail "a part file was left"
echo "ok: study --html draws both thresholds, one line per strategy, and replaces only its own page"

# The best configuration recorded as failing its check: the optimum is the next one.
zcat "$space" >plain
top="$(best_passing "$space" | cut -d' ' -f1)"
vals="[$(echo "$top" | sed -E 's/[A-Z]+=//g')]"
sed -E "/\"values\":\\$vals/s/\"check\":\"pass\"/\"check\":\"fail\"/" plain | gzip >failed.tfspace
want2="$(best_passing failed.tfspace)"
[ "${want2%% *}" != "$top" ] || fail "could not mark the best configuration as failed"
"$TF" study --strategies --truth failed.tfspace "$camp" >f.out || fail "study refused a space with a failed configuration"
[ "$(optimum_of f.out)" = "$want2" ] || { cat f.out; fail "optimum is not the best passing ($want2)"; }
echo "ok: a configuration that failed its check is not the optimum"

# Refusals: one message naming the file, exit 2, nothing run.
n="$(grep -c '"type":"config"' plain)"
{ sed -n 1p plain | sed -E "s/\"configs\":$n/\"configs\":$((n - 1))/"
  sed -n '3,$p' plain | sed -E "s/\"type\":\"end\",\"configs\":$n/\"type\":\"end\",\"configs\":$((n - 1))/"; } |
  gzip >missing.tfspace
head -n "$n" plain | gzip >cut.tfspace
for b in missing:"has no configuration" cut:"cut short" foreign:"recorded for template 'chain'"; do
  f="$WORK/${b%%:*}.tfspace" why="${b#*:}"
  [ "${b%%:*}" = foreign ] && f="$SRC/spaces/replay-chain.tfspace"
  expect_exit 2 "$TF" study --strategies --truth "$f" "$camp" x="$WORK/cmp/ledgers/random"
  [ "$(wc -l <last.err)" -eq 1 ] && grep -qF "space '$f'" last.err && grep -qF "$why" last.err ||
    { cat last.err; fail "study: wanted one line naming '$f': $why"; }
  expect_exit 2 bash "$SRC/scripts/compare-strategies.sh" --tunefarm "$TF" --space "$f" \
    --seeds 1 --out "$WORK/bad-${b%%:*}" "$camp" coordinate
  grep -qF "space '$f'" last.err && grep -qF "$why" last.err || { cat last.err; fail "compare: '$f' not refused"; }
  [ ! -e "$WORK/bad-${b%%:*}/ledgers" ] || fail "compare-strategies ran with the bad space '$f'"
done
echo "ok: a space short of a configuration, cut short or of another template is refused, exit 2"
