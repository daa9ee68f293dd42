#!/usr/bin/env bash
# Compare search strategies (search.proposer, docs/reference/strategies.md) on one campaign:
# each strategy runs N seeds (measure.seed 1..N: on the simulated device each seed is its own
# cost landscape and noise; on a recorded space, its own draws of the recorded rounds), every
# run's ledgers land under OUT/ledgers/STRATEGY/, and `tunefarm study --strategies` prints, per
# strategy, the fraction of runs whose answer is within 1% and 3% of the space's optimum after
# G measured generations, and the median generations and time to reach it.
#   bash scripts/compare-strategies.sh [options] CAMPAIGN STRATEGY...
#     --seeds N        runs per strategy (default 5); each run has WORKERS devices
#     --budget N       search.budget of every run (default: the campaign's)
#     --workers N      simulated devices per run (default 2): more runs for one launch; 1 with
#                      --space (a replayed device is one device)
#     --backend B      the backend `tunefarm run` measures with (default sim)
#     --truth T        what the comparison takes as the true times (default sim: the simulated
#                      device's cost model)
#     --space FILE     a recorded space (`tunefarm sweep`): the runs replay it (run --space) and
#                      it is the truth; time is the recorded device's (the records' wall_s)
#     --at G,G,...     the generation counts of the table (default 10,25,50,100,200)
#     --out DIR        scratch folder (default: a new one under /tmp); its ledgers are kept
#     --html FILE      also the page: the tables and, per threshold, a plot of the fraction
#                      of runs within it against measured generations, one line a strategy
#     --tunefarm BIN   the binary (default build/tunefarm of this repository)
# The campaign's template is found under this repository (TUNEFARM_ROOT) unless set already.
# A run that ledgers already hold for that strategy and seed resumes, and ends at once.
set -euo pipefail
repo="$(cd "$(dirname "$0")/.." && pwd)"
tf="$repo/build/tunefarm"
seeds=5 budget="" workers=2 backend=sim truth=sim at=10,25,50,100,200 out="" space="" html=""
die() { echo "compare-strategies: $*" >&2; exit 2; }
while [ $# -gt 0 ]; do
  case "$1" in
    --seeds) seeds="$2"; shift 2 ;;
    --budget) budget="$2"; shift 2 ;;
    --workers) workers="$2"; shift 2 ;;
    --backend) backend="$2"; shift 2 ;;
    --truth) truth="$2"; shift 2 ;;
    --space) space="$2"; shift 2 ;;
    --at) at="$2"; shift 2 ;;
    --out) out="$2"; shift 2 ;;
    --html) html="$2"; shift 2 ;;
    --tunefarm) tf="$2"; shift 2 ;;
    -h|--help) sed -n '2,24p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    -*) die "unknown option '$1'" ;;
    *) break ;;
  esac
done
[ $# -ge 2 ] || die "usage: compare-strategies.sh [options] CAMPAIGN STRATEGY..."
campaign="$(cd "$(dirname "$1")" && pwd)/$(basename "$1")"
shift
[ -f "$campaign" ] || die "campaign '$campaign' is not a file"
[[ "$seeds" =~ ^[1-9][0-9]*$ ]] || die "--seeds '$seeds' must be a positive integer"
[[ "$workers" =~ ^[1-9][0-9]*$ ]] || die "--workers '$workers' must be a positive integer"
[ -z "$budget" ] || [[ "$budget" =~ ^[1-9][0-9]*$ ]] || die "--budget '$budget' must be a positive integer"
[ -x "$tf" ] || die "no tunefarm binary at '$tf' (build first, or --tunefarm BIN)"
space_args=()
if [ -n "$space" ]; then # the replay backend answers from it, and it is the truth
  [ -f "$space" ] || die "space '$space' is not a file"
  space="$(cd "$(dirname "$space")" && pwd)/$(basename "$space")"
  backend=replay truth="$space" workers=1 space_args=(--space "$space")
fi
command -v python3 >/dev/null || die "python3 writes the campaign variants and is not on PATH"
export TUNEFARM_ROOT="${TUNEFARM_ROOT:-$repo}"
export OMPI_ALLOW_RUN_AS_ROOT="${OMPI_ALLOW_RUN_AS_ROOT:-1}" OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="${OMPI_ALLOW_RUN_AS_ROOT_CONFIRM:-1}"
out="${out:-$(mktemp -d /tmp/compare-strategies-XXXXXX)}"
mkdir -p "$out/campaigns"
name="$(basename "$campaign" .json)"
# Check every strategy name before running anything: `tunefarm check` refuses an unknown one.
variant() { # STRATEGY SEED -> the campaign file for that run
  local f="$out/campaigns/$name-$1-s$2.json"
  python3 - "$campaign" "$f" "$1" "$2" "$budget" <<'PY'
import json, sys
src, dst, strategy, seed, budget = sys.argv[1:6]
c = json.load(open(src))
c.setdefault("search", {})["proposer"] = strategy
if budget:
    c["search"]["budget"] = int(budget)
c.setdefault("measure", {})["seed"] = int(seed)
json.dump(c, open(dst, "w"), indent=1)
PY
  echo "$f"
}
# A space that cannot answer this campaign's runs is refused before any run.
[ -z "$space" ] || "$tf" study --strategies --truth "$space" "$campaign" >/dev/null || exit 2
for s in "$@"; do
  f="$(variant "$s" 1)"
  "$tf" check "$f" >/dev/null || die "strategy '$s': 'tunefarm check' refused its campaign"
done
groups=()
for s in "$@"; do
  for ((i = 1; i <= seeds; i++)); do
    f="$(variant "$s" "$i")"
    echo "compare-strategies: $s seed $i" >&2
    mpirun --oversubscribe -np $((workers + 1)) "$tf" run --backend "$backend" "${space_args[@]}" \
      --ledgers "$out/ledgers/$s" --quiet "$f" >"$out/$s-s$i.log" 2>&1 ||
      { tail -5 "$out/$s-s$i.log" >&2; die "strategy '$s' seed $i: the run failed ($out/$s-s$i.log)"; }
  done
  groups+=("$s=$out/ledgers/$s")
done
echo "compare-strategies: ledgers under $out/ledgers" >&2
page_args=()
[ -z "$html" ] || page_args=(--html "$html")
"$tf" study --strategies --truth "$truth" --at "$at" "${page_args[@]}" "$campaign" "${groups[@]}"
