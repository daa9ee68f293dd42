#!/usr/bin/env bash
# Do two builds of tunefarm make the same decisions? Runs a fixed set of campaigns on the
# simulated device (seeded, two workers) with each binary and compares the ledgers record by
# record: every record's type, generation, restart, duel, decision, reason, times, ratio and
# job id. Timestamps and durations are not compared. A refactoring must leave them equal.
#
# usage: scripts/same-decisions.sh OLD_TUNEFARM NEW_TUNEFARM [WORKDIR]
#   OLD_TUNEFARM, NEW_TUNEFARM  the two binaries (e.g. a build of main and of a branch)
#   WORKDIR                     scratch folder (default: a new temporary one)
#   OLD_ROOT=DIR                the old binary's templates, kernels and campaigns (its own
#                               checkout) where they changed between the two; default: this
#                               repository's, for both
# Exit status: 0 the same, 1 a difference (the first lines of it are printed), 2 bad usage.
set -euo pipefail
[ $# -ge 2 ] || { sed -n '2,10p' "$0" >&2; exit 2; }
old="$(realpath "$1")"; new="$(realpath "$2")"
for b in "$old" "$new"; do [ -x "$b" ] || { echo "same-decisions: '$b' is not an executable" >&2; exit 2; }; done
root="$(cd "$(dirname "$0")/.." && pwd)"
work="${3:-$(mktemp -d)}"
mkdir -p "$work"
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMPI_MCA_btl=self,vader
export TUNEFARM_SIM_COMPILE=0
old_root="$(realpath "${OLD_ROOT:-$root}")"
export TUNEFARM_CACHE="$work/cache"
# Campaigns of the repository, each shortened to a budget that takes seconds on the sim.
campaigns=(matmul-1024 layernorm-4096x768 gain-chain-short decide-aa)
facts() {
  grep -oE '"(type|generation|restart|duel|decision|reason|best_us|new_us|control_us|median_ratio|id|config|best|new)":("[^"]*"|[^,}]*)' "$1"
}
status=0
for c in "${campaigns[@]}"; do
  # without "peers": they are bench's rows only, and a build older than them refuses the key
  for side in old new; do
    bin="$old" tree="$old_root"
    [ "$side" = new ] && bin="$new" tree="$root"
    mkdir -p "$work/$side" # the campaign's file name names its ledgers' folder: the same
    sed -E 's/"budget": [0-9]+/"budget": 40/; /^  "peers":/d' "$tree/campaigns/$c.json" >"$work/$side/$c.json"
    rm -rf "${work:?}/$side-$c"
    TUNEFARM_ROOT="$tree" mpirun --oversubscribe -np 3 "$bin" run --backend sim \
      --ledgers "$work/$side-$c" --quiet "$work/$side/$c.json" >"$work/$side-$c.out" 2>&1 ||
      { echo "same-decisions: $side binary failed on $c (log: $work/$side-$c.out)" >&2; exit 1; }
  done
  n=0
  for l in "$work"/old-"$c"/*/*.jsonl; do
    rel="${l#"$work"/old-"$c"/}"
    if ! diff <(facts "$l") <(facts "$work/new-$c/$rel") >"$work/$c.diff"; then
      echo "DIFFERENT: $c $rel"; head -6 "$work/$c.diff"; status=1
    fi
    n=$((n + $(grep -c . "$l")))
  done
  echo "$c: $n records compared"
done
[ "$status" -eq 0 ] && echo "same decisions, record for record"
exit "$status"
