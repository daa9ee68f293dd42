#!/usr/bin/env bash
# Restarts on the simulated device: a search that stalls begins again from a random legal
# configuration never tried on its device; a restarted search that kept something meets the
# champion in a duel; the end record, report and bench name the champion. A run cut after a
# restart resumes where it stopped: same records, nothing measured twice.
source "$(dirname "$0")/../lib.sh"
cd "$WORK"
mkdir -p tree/campaigns
ln -s "$SRC/templates" tree/templates
ln -s "$SRC/kernels" tree/kernels
sed 's/"search": {[^}]*}/"search": {"budget": 80, "max_stale": 6, "two_knob_after": 3, "restarts": 4}/' \
  "$SRC/campaigns/matmul-1024.json" >tree/campaigns/restarts.json
grep -q '"restarts": 4' tree/campaigns/restarts.json || fail "could not write the campaign"
cmd=("${MPIRUN[@]}" -np 2 "$TF" run --backend sim --ledgers "$WORK/ledgers" tree/campaigns/restarts.json)
"${cmd[@]}" 2>run.err || { cat run.err; fail "run failed"; }
l=$(ls ledgers/restarts/*.jsonl)
check_consecutive "$l"
n=$(grep -c '"type":"restart"' "$l" || true)
[ "$n" -ge 2 ] || fail "expected at least two restarts with max_stale 6, got $n"
# restarts are numbered 1, 2, ... in file order
k=0
for r in $(grep '"type":"restart"' "$l" | sed -E 's/.*"restart":([0-9]+).*/\1/'); do
  k=$((k + 1))
  [ "$r" -eq "$k" ] || fail "restart $r where $k was due"
done
# no configuration is measured twice as new, except by a duel (the segment's best again) and
# by a generation refused as noisy, which is measured again (max_requeue)
dups=$(grep '"type":"generation"' "$l" | grep -v -e '"duel":true' -e '"rounds":.*"decision":"refused"' | sed -E 's/.*"new":(\{[^}]*\}).*/\1/' |
       sort | uniq -d | wc -l)
[ "$dups" -eq 0 ] || fail "$dups configurations measured twice as new"
# a restart's start is never a configuration tried before it
grep -n '"type":"restart"' "$l" | while IFS=: read -r at line; do
  start=$(echo "$line" | sed -E 's/.*"start":(\{[^}]*\}).*/\1/')
  head -n "$at" "$l" | grep -q -F "\"new\":$start" && fail "restart at line $at from a tried configuration"
  true
done
grep -q '"duel":true' "$l" || fail "no duel: no restarted search kept anything"
# the answer is the champion: the end record's best is the last duel's outcome, or the
# champion the last restart record names when no duel came after it
end_best=$(grep '"type":"end"' "$l" | sed -E 's/.*"best":(\{[^}]*\}).*/\1/')
last=$(grep -E '"type":"restart"|"duel":true' "$l" | tail -1)
if echo "$last" | grep -q '"duel":true'; then
  key=$(echo "$last" | grep -q '"decision":"keep"' && echo new || echo best)
else
  key=champion
fi
want=$(echo "$last" | sed -E "s/.*\"$key\":(\{[^}]*\}).*/\1/")
[ "$end_best" = "$want" ] || fail "end record's best $end_best is not the champion $want"
"$TF" verify "$l" | tee verify.out
grep -q ' 0 differ' verify.out || fail "decisions do not recompute"
"$TF" report "$l" >report.md
grep -q -F "$(echo "$want" | sed -E 's/[{}"]//g; s/:/=/g; s/,/, /g')" report.md ||
  { cat report.md; fail "report's final best is not the champion"; }
grep -q "^- restarts: $n" report.md || fail "report does not count the restarts"

# Cut the ledger two generations after the first restart and resume. The simulated device's
# noise is keyed by job number, which starts again in a new run, so measurements differ
# from the uncut run; the state rebuilt from the ledger must not: the resumed run proposes
# the same configurations against the same best until a decision first differs.
r1=$(grep -n '"type":"restart"' "$l" | head -1 | cut -d: -f1)
mkdir -p cut/restarts
cut_l="cut/restarts/$(basename "$l")"
head -n $((r1 + 2)) "$l" >"$cut_l"
"${MPIRUN[@]}" -np 2 "$TF" run --backend sim --ledgers "$WORK/cut" tree/campaigns/restarts.json \
  2>resume.err || { cat resume.err; fail "resumed run failed"; }
check_consecutive "$cut_l"
grep -q '"type":"end"' "$cut_l" || fail "the resumed run did not end"
"$TF" verify "$cut_l" >/dev/null || fail "resumed decisions do not recompute"
arms() { grep -E '"type":"(generation|restart)"' "$1" | sed -E 's/.*("type":"[a-z]*").*("best":\{[^}]*\}|"champion":\{[^}]*\}).*("new":\{[^}]*\}|"start":\{[^}]*\}).*/\1 \2 \3/'; }
decisions() { grep -E '"type":"(generation|restart)"' "$1" | sed -E 's/.*"decision":"([a-z]*)".*/\1/; s/.*"type":"restart".*/restart/'; }
same=0
while IFS=$'\t' read -r a0 a1 d0 d1; do
  [ "$a0" = "$a1" ] || fail "after the cut, record $((same + 1)) differs: $a1 where $a0 was"
  same=$((same + 1))
  [ "$d0" = "$d1" ] || break
done < <(paste <(arms "$l") <(arms "$cut_l") <(decisions "$l") <(decisions "$cut_l"))
[ "$same" -gt $((r1 + 1)) ] || fail "the resumed run's first record after the cut already differs"
# K=V text of a {"K":V,...} object, as the run's summary prints a configuration.
kv() { echo "$1" | sed -E 's/[{}"]//g; s/:/=/g; s/,/ /g'; }
champ=$(kv "$want")

# The budget ends inside a restarted search that kept something: its duel is measured past the
# budget, and is the last generation (the seeded simulated device takes this path).
last_gen=$(grep '"type":"generation"' "$l" | tail -1)
echo "$last_gen" | grep -q '"duel":true' || fail "the last generation is not the closing duel"
grep '"type":"end"' "$l" | grep -q 'budget' || fail "the run did not end by its budget"
# That duel refused as noisy: a resumed run measures the same duel again, past the budget,
# not the champion against itself.
mkdir -p noisy/restarts
noisy_l="noisy/restarts/$(basename "$l")"
grep -v '"type":"end"' "$l" | sed -E '$ s/"decision":"(keep|reject)"/"decision":"refused"/' >"$noisy_l"
tail -1 "$noisy_l" | grep -q '"duel":true.*"decision":"refused"' || fail "could not make the duel noisy"
"${MPIRUN[@]}" -np 2 "$TF" run --backend sim --ledgers "$WORK/noisy" tree/campaigns/restarts.json \
  2>noisy.err || { cat noisy.err; fail "resume after a noisy duel failed"; }
again=$(grep '"type":"generation"' "$noisy_l" | tail -1)
echo "$again" | grep -q '"duel":true' || fail "the noisy duel was not measured again"
[ "$(echo "$again" | sed -E 's/.*"best":(\{[^}]*\}).*/\1/')" = "$(echo "$last_gen" | sed -E 's/.*"best":(\{[^}]*\}).*/\1/')" ] &&
  [ "$(echo "$again" | sed -E 's/.*"new":(\{[^}]*\}).*/\1/')" = "$(echo "$last_gen" | sed -E 's/.*"new":(\{[^}]*\}).*/\1/')" ] ||
  fail "the duel measured again is not the same pair: $(echo "$again" | cut -c1-400)"

# A search that ends in a restarted search with no keeps: the ledger cut right after the last
# restart record, with its end record. Running the campaign again finds it ended and names the
# champion, not the restart's start.
r_last=$(grep -n '"type":"restart"' "$l" | tail -1 | cut -d: -f1)
champ_r=$(sed -n "${r_last}p" "$l" | sed -E 's/.*"champion":(\{[^}]*\}).*/\1/')
mkdir -p ended/restarts
ended_l="ended/restarts/$(basename "$l")"
head -n "$r_last" "$l" >"$ended_l"
g_last=$(sed -n "${r_last}p" "$l" | sed -E 's/.*"generation":([0-9]+).*/\1/')
echo "{\"type\":\"end\",\"reason\":\"budget of 80 generations spent\",\"generation\":$g_last,\"best\":$champ_r}" >>"$ended_l"
"${MPIRUN[@]}" -np 2 "$TF" run --backend sim --ledgers "$WORK/ended" tree/campaigns/restarts.json \
  2>ended.err || { cat ended.err; fail "running an ended search again failed"; }
grep -qE "; best $(kv "$champ_r")( \(|$)" ended.err || { grep ' best ' ended.err; fail "an ended search does not name its champion"; }

# Cut right after the first duel: the resumed run goes on with the next restart, whose champion
# is the duel's outcome (not a second duel of the same search).
d1=$(grep -n '"duel":true' "$l" | head -1 | cut -d: -f1)
duel=$(sed -n "${d1}p" "$l")
dkey=$(echo "$duel" | grep -q '"decision":"keep"' && echo new || echo best)
mkdir -p afterduel/restarts
ad_l="afterduel/restarts/$(basename "$l")"
head -n "$d1" "$l" >"$ad_l"
"${MPIRUN[@]}" -np 2 "$TF" run --backend sim --ledgers "$WORK/afterduel" tree/campaigns/restarts.json \
  2>afterduel.err || { cat afterduel.err; fail "resume after a duel failed"; }
next=$(sed -n "$((d1 + 1))p" "$ad_l")
echo "$next" | grep -q '"type":"restart"' || fail "after a duel, resume did not restart: $(echo "$next" | cut -c1-200)"
[ "$(echo "$next" | sed -E 's/.*"champion":(\{[^}]*\}).*/\1/')" = "$(echo "$duel" | sed -E "s/.*\"$dkey\":(\{[^}]*\}).*/\1/")" ] ||
  fail "after a duel, the next restart's champion is not the duel's outcome"

# Cut right after the last keep of the first restarted search: the resumed search still owes
# its duel (it kept something before the cut).
r1=$(grep -n '"type":"restart"' "$l" | sed -n 1p | cut -d: -f1)
r2=$(grep -n '"type":"restart"' "$l" | sed -n 2p | cut -d: -f1)
k=$(sed -n "$((r1 + 1)),$((r2 - 1))p" "$l" | grep -n '"decision":"keep"' | grep -v '"duel":true' | tail -1 | cut -d: -f1)
[ -n "$k" ] || fail "the first restarted search kept nothing"
mkdir -p afterkeep/restarts
ak_l="afterkeep/restarts/$(basename "$l")"
head -n $((r1 + k)) "$l" >"$ak_l"
"${MPIRUN[@]}" -np 2 "$TF" run --backend sim --ledgers "$WORK/afterkeep" tree/campaigns/restarts.json \
  2>afterkeep.err || { cat afterkeep.err; fail "resume after a keep failed"; }
sed -n "$((r1 + k + 1)),\$p" "$ak_l" | sed '/"type":"restart"/,$d' | grep -q '"duel":true' ||
  fail "a restarted search that kept something before the cut ended without its duel"

echo "ok: $n restarts, $(grep -c '"duel":true' "$l") duels; resumed: $same records as uncut"
