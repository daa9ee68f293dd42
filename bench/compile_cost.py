#!/usr/bin/env python3
"""What NVRTC spends on a ledger's longest programs, whole and kernel by kernel.

    python3 bench/compile_cost.py TUNEFARM LEDGER [--top N]

Takes the N (default 8) generations of LEDGER whose compile took longest and compiles each
program again with `TUNEFARM compile` into an empty cache: once whole (best, new and control
in one program, as the farm compiles it) and once per kernel alone (the program's sources
with that one name expression). Prints a markdown table of the seconds each took (the
compile's own "ms", cache lookup included) and the sums. Run it from the source tree (the
programs' sources are found under it) on the machine whose compile times matter, with
nothing else running. Exit status 2 on bad usage or a ledger without measured programs."""
import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile

ROLES = ("best", "new", "control")


def longest(path, top):
    recs = []
    with open(path) as f:
        for line in f:
            d = json.loads(line)
            if d.get("type") == "generation" and d.get("job") and d.get("times"):
                recs.append(d)
    recs.sort(key=lambda d: -d["times"].get("compile_s", 0.0))
    return recs[:top]


def compile_s(tf, sources, exprs):
    cache = tempfile.mkdtemp(prefix="tf-compile-cost-")
    try:
        req = json.dumps({"root": os.getcwd(), "sources": sources, "exprs": exprs})
        out = subprocess.run([tf, "compile", "--arch", "sm_90"], input=req, text=True,
                             capture_output=True, env=dict(os.environ, TUNEFARM_CACHE=cache))
        said = json.loads(out.stdout.strip().splitlines()[-1])
        if said.get("status") not in ("compiled", "refused"):
            sys.exit(f"compile_cost.py: {said.get('status')}: {said.get('message', '')}")
        return said["ms"] / 1e3
    finally:
        shutil.rmtree(cache)


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("tunefarm")
    ap.add_argument("ledger")
    ap.add_argument("--top", type=int, default=8)
    a = ap.parse_args()
    recs = longest(a.ledger, a.top)
    if not recs:
        print(f"compile_cost.py: {a.ledger}: no measured generation with its job", file=sys.stderr)
        sys.exit(2)
    print("| generation | in the ledger, s | whole, s | " + " | ".join(f"{r} alone, s" for r in ROLES) + " |")
    print("|---:|---:|---:|" + "---:|" * len(ROLES))
    sums = [0.0] * (1 + len(ROLES))
    for d in recs:
        job = d["job"]
        exprs = [arm["name_expr"] for arm in job["arms"]]
        # one kernel alone: its name expression in all three places, one instantiation
        row = [compile_s(a.tunefarm, job["sources"], exprs)]
        row += [compile_s(a.tunefarm, job["sources"], [e] * 3) for e in exprs]
        sums = [s + x for s, x in zip(sums, row)]
        print(f"| {d['generation']} | {d['times']['compile_s']:.2f} | " +
              " | ".join(f"{x:.2f}" for x in row) + " |")
    print("| sum | | " + " | ".join(f"{x:.2f}" for x in sums) + " |")


if __name__ == "__main__":
    main()
