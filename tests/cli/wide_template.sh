#!/usr/bin/env bash
# A template's tables are sized to what it declares: one with 20 knobs and 60 constraints (past
# the fixed 16 and 48 a spec once held) loads, checks and runs a short campaign on the
# simulated device; absurd counts (64 knobs, 4096 constraints) are refused as bad input naming
# the file and the key.
source "$(dirname "$0")/../lib.sh"
cd "$WORK"
mkdir -p root/templates root/campaigns
export TUNEFARM_ROOT="$WORK/root"

# template NAME NKNOBS NCONSTRAINTS: knobs K0.. (the first ten take 0 or 1, the rest only 0,
# so the space stays 1024 points), constraints c0.. over them; every 15th refuses three of
# the first ten knobs at 1 together.
template() {
  local name="$1" nk="$2" nc="$3" knobs="" params="" start="" cons="" k i
  for ((k = 0; k < nk; k++)); do
    if [ "$k" -lt 10 ]; then knobs+="\"K$k\": {\"values\": [0, 1]},"; else knobs+="\"K$k\": {\"values\": [0]},"; fi
    params+="int K$k, "
    start+="\"K$k\": 0, "
  done
  for ((i = 0; i < nc; i++)); do
    local a=$((i % 10)) b=$(((i + 1) % 10)) c=$(((i + 2) % 10)) x="K$((i % nk)) <= 1"
    [ $((i % 15)) -eq 0 ] && x="K$a + K$b + K$c < 3"
    cons+="{\"name\": \"c$i\", \"expr\": \"$x && N > 0\", \"reason\": \"constraint $i\"},"
  done
  cat >"root/templates/$name.json" <<JSON
{"name": "$name", "source": "$name.cu", "kernel": "k",
 "reference": {"kernel": "r", "source": "$name.cu", "launch": {"grid": ["ceil_div(N, 256)", 1, 1], "block": [256, 1, 1]}},
 "problem": {"N": [1, 65536]}, "knobs": {${knobs%,}}, "constraints": [${cons%,}],
 "launch": {"grid": ["ceil_div(N, 256)", 1, 1], "block": [256, 1, 1]},
 "buffers": [{"name": "x", "count": "N", "role": "input"}, {"name": "y", "count": "N", "role": "output"}],
 "args": ["x", "y", "N"]}
JSON
  printf 'template <%s> __global__ void k(const float *x, float *y, int n) {}\n__global__ void r(const float *x, float *y, int n) {}\n' \
    "${params%, }" >"root/templates/$name.cu"
  echo "{\"template\": \"$name\", \"problem\": {\"N\": 1024}, \"start\": {${start%, }}, \"control\": {${start%, }}, \"search\": {\"budget\": 6}}" \
    >"root/campaigns/$name.json"
}

template wide 20 60
expect_exit 0 timeout 30 "$TF" check root/campaigns/wide.json
grep -q "reachable: " last.out || { cat last.out; fail "check printed no reachable count"; }
expect_exit 0 timeout 60 "${MPIRUN[@]}" -np 2 "$TF" run --backend sim --quiet --ledgers "$WORK/led" \
  root/campaigns/wide.json
ledger=$(ls "$WORK"/led/*/*.jsonl | head -1)
check_consecutive "$ledger"
grep -q '"K19":0' "$ledger" || fail "the ledger's configurations lack knob K19"
echo "ok: 20 knobs and 60 constraints load, check and run ($(generations "$ledger" | wc -l) generations)"

template knobby 64 1
expect_exit 2 timeout 10 "$TF" check root/campaigns/knobby.json
grep -qF "spec '$WORK/root/templates/knobby.json': key 'knobs' declares 64 entries, more than the limit of 32" last.err ||
  { cat last.err; fail "64 knobs: the file and the key are not named"; }
echo "ok: $(head -1 last.err)"

template strict 4 4096
expect_exit 2 timeout 10 "$TF" check root/campaigns/strict.json
grep -qF "spec '$WORK/root/templates/strict.json': key 'constraints' declares 4096 entries, more than the limit of 255" last.err ||
  { cat last.err; fail "4096 constraints: the file and the key are not named"; }
echo "ok: $(head -1 last.err)"
