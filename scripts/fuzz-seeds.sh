#!/usr/bin/env bash
# fuzz-seeds.sh TARGET DIR: a fuzzer's seeds in DIR (made afresh): its corpus
# (tests/fuzz/corpus/TARGET), and for `template` also every template and committed kernel of
# the tree as fuzz_template reads one, named "t" (source t.cu, a reference kernel's too) with
# its doc left out. Made from the tree at every run, those seeds never fall behind it.
set -euo pipefail
[ $# -eq 2 ] || { echo "usage: scripts/fuzz-seeds.sh TARGET DIR" >&2; exit 2; }
src="$(cd "$(dirname "$0")/.." && pwd)"
rm -rf "$2"
mkdir -p "$2"
cp -r "$src/tests/fuzz/corpus/$1/." "$2/"
[ "$1" = template ] || exit 0
python3 - "$src" "$2" <<'PY'
import glob, json, os, sys
src, out = sys.argv[1], sys.argv[2]
for path in sorted(glob.glob(f"{src}/templates/*.json") + glob.glob(f"{src}/kernels/*.json")):
    spec = json.load(open(path))
    spec.pop("doc", None)
    spec["name"], spec["source"] = "t", "t.cu"
    if "source" in spec.get("reference", {}):
        spec["reference"]["source"] = "t.cu"
    name = "tree-" + os.path.basename(path)
    with open(os.path.join(out, name), "w") as f:
        json.dump(spec, f, separators=(",", ":"))
PY
