#!/usr/bin/env bash
# The strategy comparison on a recorded space (scripts/compare-strategies.sh --space,
# `tunefarm study --strategies --truth SPACE_FILE`): on the committed CI space
# (spaces/replay-layernorm.tfspace) two strategies with two seeds each replay it and print the
# table, whose optimum is the space's best configuration that passed its check, as computed here
# from the file itself (ratio x reference_us); a configuration that failed its check is never
# the optimum; a space that is cut short, of another template, or without a configuration the
# campaign can reach is refused with one message naming the file, exit 2, before any run.
source "$(dirname "$0")/../lib.sh"
cd "$WORK"
export TUNEFARM_ROOT="$SRC"
camp="$SRC/campaigns/replay-layernorm.json"
space="$SRC/spaces/replay-layernorm.tfspace"
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
  grep -qE "^\| $s \| 2 \| [01]\.[0-9]{2} \| [01]\.[0-9]{2} \| ([0-9]+|-) \| ([0-9.]+|-) \|$" cmp.out ||
    { cat cmp.out; fail "no $s row of two runs"; }
done
[ "$(grep -c 'median G to reach | median simulated s to reach' cmp.out)" -eq 2 ] ||
  { cat cmp.out; fail "wanted the 1% and 3% tables with generations and simulated seconds"; }
[ "$(ls "$WORK"/cmp/ledgers/*/*/*.jsonl | wc -l)" -eq 4 ] || fail "wanted one ledger per run"
grep -qh '"backend":"replay"' "$WORK"/cmp/ledgers/random/*/*.jsonl || fail "the runs did not replay the space"
echo "ok: compare-strategies --space prints both tables, optimum $want"

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
