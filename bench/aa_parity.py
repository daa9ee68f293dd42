#!/usr/bin/env python3
"""Per measure process of A/A ledgers and per input set: the median new/best over the rounds
of each phase (worker/placement.h: the phase flips after every cycle through the input sets),
on both instruments. With measure.layout "swap" best and new exchange their buffers by phase:
a bias that follows the buffers flips sign between the phases, a bias that follows the slot
(or anything else about new's place) keeps its sign. With "per_arm" both phases have the same
placement: the two columns agree, and the input sets (different buffers) may not.

    python3 bench/aa_parity.py LEDGER.jsonl...
"""
import json
import statistics
import sys


def pct(xs):
    return f"{100 * (statistics.median(xs) - 1):+.2f}%" if xs else "—"


def main(paths):
    print("| ledger | child | set | rounds phase 0/1 | event span phase 0 | phase 1 | kernel phase 0 | phase 1 |")
    print("|---|---:|---:|---|---:|---:|---:|---:|")
    for path in paths:
        procs = {}
        for line in open(path):
            try:
                r = json.loads(line)
            except ValueError:
                continue
            if r.get("type") != "generation" or r.get("untrusted") or "rounds" not in r:
                continue
            if r.get("change"):
                continue  # not A/A
            sets = r["job"]["measure"].get("input_sets", 1)
            for i, rd in enumerate(r["rounds"]):
                if rd.get("screened"):
                    continue
                key = (r.get("run", ""), r.get("child", 0), i % sets)
                g = procs.setdefault(key, [[[], []], [[], []]])
                phase = i // sets % 2
                g[0][phase].append(rd["new_us"] / rd["best_us"])
                kb, kn = rd.get("best_kernel_us"), rd.get("new_kernel_us")
                if kb and kn:
                    g[1][phase].append(kn / kb)
        for (run, child, st), (span, kern) in sorted(procs.items()):
            print(f"| {path.split('/')[-1][:14]} | {child} | {st} | {len(span[0])}/{len(span[1])} | "
                  f"{pct(span[0])} | {pct(span[1])} | {pct(kern[0])} | {pct(kern[1])} |")


if __name__ == "__main__":
    if len(sys.argv) < 2 or sys.argv[1] in ("-h", "--help"):
        print(__doc__)
        sys.exit(0 if len(sys.argv) > 1 else 2)
    main(sys.argv[1:])
