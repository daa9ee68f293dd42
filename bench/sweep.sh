#!/usr/bin/env bash
# Every configuration of a part of a campaign's space, timed beside one reference
# configuration: the configurations come from `tunefarm audit --list --where WHERE`; `audit
# --run` compiles them in parallel into the cubin cache and checks each on the GPU against
# the template's reference; then `tunefarm bench` times them 15 at a time, each group beside
# REFERENCE (same rounds, same protocol). Needs a GPU and python3.
#
#   bash bench/sweep.sh CAMPAIGN WHERE REFERENCE [OUT]
#
# REFERENCE is K=V,... as in `tunefarm bench --config` (the farm's best, for example). OUT (a
# new folder sweep-<UTC time> by default) keeps the list, the audit's log and the benches'
# tables. Prints the ten configurations fastest against the reference of their group, then
# how many were timed. TF (default build/tunefarm) and RANKS (default: the cores, at most 16)
# choose the binary and the audit's ranks.
set -euo pipefail
[ $# -ge 3 ] || { sed -n 2,14p "$0"; exit 2; }
campaign=$(realpath "$1") where=$2 ref=$3
out=$(realpath -m "${4:-sweep-$(date -u +%Y%m%dT%H%M%SZ)}")
tf=$(realpath -m "${TF:-$(dirname "$0")/../build/tunefarm}")
cd "$(dirname "$0")/.."
cores=$(nproc)
ranks=${RANKS:-$((cores < 16 ? cores : 16))}
mkdir -p "$out"
rm -f "$out"/group.* "$out/bench.md" "$out/bench.err"
export OMPI_ALLOW_RUN_AS_ROOT=${OMPI_ALLOW_RUN_AS_ROOT:-1} OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=${OMPI_ALLOW_RUN_AS_ROOT_CONFIRM:-1}
"$tf" audit --list --where "$where" "$campaign" >"$out/list"
echo "sweep.sh: $(wc -l <"$out/list") configurations" >&2
[ -s "$out/list" ] || { echo "sweep.sh: WHERE selects no configuration" >&2; exit 0; }
mpirun --oversubscribe -np "$ranks" "$tf" audit --run --where "$where" "$campaign" >"$out/audit.log" 2>&1 ||
  { echo "sweep.sh: audit --run failed or found a wrong configuration: $out/audit.log" >&2; exit 1; }
template=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["template"])' "$campaign")
# tf_NAME<v1, v2, ...> in the template's knob order, as --config K=V,...
python3 - "templates/$template.json" "$out/list" >"$out/configs" <<'PY'
import json, re, sys
knobs = json.load(open(sys.argv[1]))["knobs"]  # an object, in the template's order
names = list(knobs) if isinstance(knobs, dict) else [k["name"] for k in knobs]
for line in open(sys.argv[2]):
    values = re.findall(r"-?\d+", line.split("<", 1)[1])
    print(",".join(f"{n}={v}" for n, v in zip(names, values)))
PY
split -a 4 -l 15 "$out/configs" "$out/group."
for g in "$out"/group.*; do
  args=(--config "$ref")
  while read -r c; do args+=(--config "$c"); done <"$g"
  "$tf" bench --no-cublas "${args[@]}" "$campaign" >>"$out/bench.md" 2>>"$out/bench.err"
done
# Each group's table: its first config row is the reference; every other config row with a
# median is ranked by it over the reference's median in the same group. A group whose
# reference has no median (not timed) is left out and counted.
python3 - "$out/bench.md" <<'PY'
import re, sys
rows, first, group, lost = [], True, [], 0
ref = None
def close():
    global ref, group, first, lost
    if ref:
        rows.extend((us / ref, us, ref, cfg) for cfg, us in group)
    elif not first:
        lost += 1
    ref, group, first = None, [], True
for line in open(sys.argv[1]):
    if line.startswith("## "):
        close()
    m = re.match(r"\| config \| (.*?) \| ([^|]*) \|", line)
    if not m:
        continue
    median = re.fullmatch(r"\s*([\d.]+)\s*", m.group(2))
    if first:
        ref, first = (float(median.group(1)) if median else None), False
    elif median:
        group.append((m.group(1), float(median.group(1))))
close()
if lost:
    print(f"{lost} group(s) left out: the reference was not timed")
rows.sort()
print("| against the reference | median µs | reference µs | configuration |")
print("|---:|---:|---:|---|")
for r in rows[:10]:
    print("| %.3f | %.2f | %.2f | %s |" % r)
print(f"\n{len(rows)} configurations timed (tables: {sys.argv[1]})")
PY
