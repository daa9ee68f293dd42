#!/usr/bin/env bash
# `check` and `run` on a legal 2^24-point space (6 knobs of 16 values, no
# constraints) finish within 30 s; a space that would cost more than the enumeration's limit
# is refused at once as bad input naming the limit. (The naive reachability walk ran for
# hours on the first: every visit looked at all 3,936 one- and two-knob neighbours.)
source "$(dirname "$0")/../lib.sh"
cd "$WORK"
mkdir -p root/templates root/campaigns
export TUNEFARM_ROOT="$WORK/root"

# template NAME KNOB-VALUE-COUNTS...: knobs K0.. with those many values, no constraints
template() {
  local name="$1" knobs="" params="" start="" k=0
  shift
  for n in "$@"; do
    knobs+="${k:+}\"K$k\": {\"values\": [$(seq -s, 0 $((n - 1)))]},"
    params+="int K$k, "
    start+="\"K$k\": 0, "
    k=$((k + 1))
  done
  cat >"root/templates/$name.json" <<JSON
{"name": "$name", "source": "$name.cu", "kernel": "k",
 "reference": {"kernel": "r", "source": "$name.cu", "launch": {"grid": ["ceil_div(N, 256)", 1, 1], "block": [256, 1, 1]}},
 "problem": {"N": [1, 65536]}, "knobs": {${knobs%,}}, "constraints": [],
 "launch": {"grid": ["ceil_div(N, 256)", 1, 1], "block": [256, 1, 1]},
 "buffers": [{"name": "x", "count": "N", "role": "input"}, {"name": "y", "count": "N", "role": "output"}],
 "args": ["x", "y", "N"]}
JSON
  printf 'template <%s> __global__ void k(const float *x, float *y, int n) {}\n__global__ void r(const float *x, float *y, int n) {}\n' \
    "${params%, }" >"root/templates/$name.cu"
  echo "{\"template\": \"$name\", \"problem\": {\"N\": 1024}, \"start\": {${start%, }}, \"control\": {${start%, }}, \"search\": {\"budget\": 2}}" \
    >"root/campaigns/$name.json"
}

template big 16 16 16 16 16 16
t0=$(date +%s)
expect_exit 0 timeout 30 "$TF" check root/campaigns/big.json
grep -q "reachable:  16777216 " last.out || { cat last.out; fail "not every point reachable"; }
expect_exit 0 timeout 30 "${MPIRUN[@]}" -np 2 "$TF" run --backend sim --quiet --ledgers "$WORK/led" \
  root/campaigns/big.json
echo "ok: check and run on 2^24 points in $(($(date +%s) - t0)) s"

# 2^24 points of 8 knobs: 2^24 * (1 + 8 + 8 * 9) steps, past the limit of 2^30
template wide 16 16 16 16 4 4 4 4
expect_exit 2 timeout 5 "$TF" check root/campaigns/wide.json
grep -qF "template '$WORK/root/templates/wide.json': checking its 16777216 configurations" last.err &&
  grep -qF "more than the limit of 1073741824" last.err || { cat last.err; fail "wide: the limit is not named"; }
expect_exit 2 timeout 10 "${MPIRUN[@]}" -np 2 "$TF" run --backend sim --ledgers "$WORK/led2" \
  root/campaigns/wide.json
grep -qF "more than the limit of 1073741824" last.err || { cat last.err; fail "run: the limit is not named"; }
[ ! -e "$WORK/led2" ] || fail "run wrote a ledger for a space it refused"
echo "ok: a space past the limit refused: $(head -1 last.err)"
