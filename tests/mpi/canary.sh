#!/usr/bin/env bash
# The canary on the simulated device with a placement term (TUNEFARM_SIM_NOISE place=0.02:
# every buffer of every measure process has its own speed, as on a GPU):
#  - per-arm buffers, canary off: identical kernels measure apart in some process (the problem);
#  - per-arm buffers, canary on: processes are found biased, their generations refused and
#    measured again, and after canary.max_restarts biased processes in a row the search ends;
#  - shared buffers (the default): the placement cancels, no process is biased.
# Every run's decisions recompute with verify; the report shows each process.
source "$(dirname "$0")/../lib.sh"
cd "$WORK"
mkdir -p campaigns
export TUNEFARM_ROOT="$SRC"
export TUNEFARM_SIM_NOISE="place=0.02,round=0.001,boost_p=0,jitter=0.002,drift=0"
aa() { # aa NAME LAYOUT CANARY_ROUNDS
  sed -E -e "s/\"budget\": [0-9]+/\"budget\": 40/; s/\"fresh_every\": [0-9]+/\"fresh_every\": 10/" \
    -e "s/\"seed\": 1}/\"seed\": 1, \"layout\": \"$2\"},\n  \"canary\": {\"rounds\": $3, \"max_restarts\": 2}/" \
    "$SRC/campaigns/aa-layernorm-4096x128.json" >"campaigns/$1.json"
  "${MPIRUN[@]}" -np 3 "$TF" run --backend sim --ledgers "$WORK/ledgers" "campaigns/$1.json" \
    2>"$1.err" || { cat "$1.err"; fail "$1: run failed"; }
  "$TF" verify "$WORK"/ledgers/"$1"/*.jsonl >"$1.verify" || { cat "$1.verify"; fail "$1: verify"; }
  "$TF" report "$WORK/ledgers/$1" >"$1.md" || fail "$1: report failed"
}

aa perarm_off per_arm 0
# Column 9 of a process row is the A/A event span bias: some process is far off.
awk -F'|' '/^\| 20[0-9][0-9]-/ {split($9, w, " "); b = w[1]; sub(/%/, "", b); b += 0;
  if (b > 0.5 || b < -0.5) far = 1} END {exit !far}' perarm_off.md ||
  fail "per-arm buffers with a placement term should show a process biased beyond 0.5%"

aa perarm_on per_arm 16
grep -q '"verdict":"biased"' ledgers/perarm_on/*.jsonl || fail "no process found biased"
grep -q '"untrusted":true' ledgers/perarm_on/*.jsonl || fail "a biased process decided"
! grep '"untrusted":true' ledgers/perarm_on/*.jsonl | grep -q '"decision":"keep"' ||
  fail "an untrusted generation was kept"
grep -q 'biased beyond' perarm_on.err || fail "the end by biased processes is not said"
grep -q '| biased |' perarm_on.md || fail "the report does not show the biased process"

aa shared shared 16
! grep -q '"verdict":"biased"' ledgers/shared/*.jsonl || fail "shared buffers: a process biased"
grep -q '"verdict":"ok"' ledgers/shared/*.jsonl || fail "shared buffers: no canary ran"
! grep -q '"untrusted":true' ledgers/shared/*.jsonl || fail "shared buffers: a generation untrusted"
echo "ok: placement shows with per-arm buffers, the canary stops it, shared buffers cancel it"
