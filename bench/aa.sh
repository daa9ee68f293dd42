#!/usr/bin/env bash
# The standing A/A benchmark: each campaign named (default: the four campaigns/aa-*.json) is
# run on every GPU of this node, every GPU's generations spread over fresh measure processes
# (the campaign's search.fresh_every), and `tunefarm report` prints, per GPU, every process's
# canary and its median new/best over all its rounds (the placement bias an identical kernel
# shows in that process) and the false keeps with their 95% upper bound.
#
#   bash bench/aa.sh [--out DIR] [--backend cuda|sim] [--set KEY=VALUE]... [--tag T] [CAMPAIGN...]
#
# --set rewrites a copy of each campaign, e.g. --set measure.layout=per_arm (a layout kept to
# measure placement) or --set canary.rounds=0 (a bias undisturbed by the canary's restarts);
# the copy is named CAMPAIGN-T (T: --tag, default a checksum of the sets).
# Ledgers, logs and reports go under DIR (default: aa-out/). Run from a build (build/tunefarm)
# on the node whose GPUs you measure; python3 is needed only for --set.
set -euo pipefail
cd "$(dirname "$0")/.."
out=aa-out backend=cuda sets=() camps=() tag=
while [ $# -gt 0 ]; do
  case "$1" in
    --out) out=$2; shift 2 ;;
    --backend) backend=$2; shift 2 ;;
    --set) sets+=("$2"); shift 2 ;;
    --tag) tag=-$2; shift 2 ;;
    -h|--help) sed -n '2,14p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    -*) echo "bench/aa.sh: unknown option '$1' (see --help)" >&2; exit 2 ;;
    *) camps+=("$1"); shift ;;
  esac
done
[ ${#camps[@]} -gt 0 ] || camps=(campaigns/aa-layernorm-4096x768.json campaigns/aa-layernorm-4096x128.json campaigns/aa-layernorm-4096x128-median.json campaigns/aa-matmul-1024.json)
tf=${TUNEFARM:-build/tunefarm} # the binary: $TUNEFARM, else the default build
[ -x "$tf" ] || { echo "bench/aa.sh: build first (cmake -S . -B build && cmake --build build)" >&2; exit 2; }
if [ "$backend" = cuda ]; then
  gpus=$("$tf" devices 2>/dev/null | grep -c 'GPU-' || true)
  [ "$gpus" -gt 0 ] || { echo "bench/aa.sh: no GPU here (try --backend sim)" >&2; exit 3; }
else
  gpus=2
fi
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 TUNEFARM_ROOT=$PWD
mkdir -p "$out/campaigns"
[ -n "$tag" ] || [ ${#sets[@]} -eq 0 ] || tag=-set$(printf '%s\n' "${sets[@]}" | cksum | cut -c1-6)
for c in "${camps[@]}"; do
  name=$(basename "$c" .json)$tag
  python3 - "$c" "$out/campaigns/$name.json" "${sets[@]+"${sets[@]}"}" <<'PY' || cp "$c" "$out/campaigns/$name.json"
import json, sys
src, dst, sets = sys.argv[1], sys.argv[2], sys.argv[3:]
c = json.load(open(src))
for kv in sets:
    key, val = kv.split("=", 1)
    sec, k = key.split(".", 1)
    try: val = json.loads(val)
    except ValueError: pass
    c.setdefault(sec, {})[k] = val
json.dump(c, open(dst, "w"), indent=1)
PY
  echo "== $name: $gpus GPU(s), $(date -u +%FT%TZ)"
  rm -rf "$out/ledgers/$name"
  mpirun --oversubscribe -np $((gpus + 1)) "$tf" run --backend "$backend" --quiet \
    --ledgers "$out/ledgers" "$out/campaigns/$name.json" 2>"$out/$name.log" >/dev/null ||
    { echo "bench/aa.sh: $name failed (log: $out/$name.log)" >&2; tail -5 "$out/$name.log" >&2; }
  "$tf" report "$out/ledgers/$name" >"$out/$name.md"
  awk '/^## .* — campaign /{print} /^Measure processes/{p=1} p{print} /A\/A false keeps/{p=0}' \
    "$out/$name.md"
done
