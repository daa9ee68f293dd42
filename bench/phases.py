#!/usr/bin/env python3
"""Where a run's generations spent their time, from its ledgers.

    python3 bench/phases.py [--sums] LEDGER...

Per ledger (the records of one run: `elapsed_s` counts from its first job): measured
generations, the wall time to the last result, the busy fraction (`times.measure_s` summed
over that wall time) and decisions per hour, then medians per generation, in milliseconds,
of `times.compile_s`, `times.compile_wait_s`, `times.load_s`, `times.check_s`,
`times.measure_s` and of the gap: the time between one result reaching the coordinator and
the next job's start in its measure child, `elapsed_s[i] - elapsed_s[i-1] - wall_s[i]`
(the decision, the ledger's sync, the messages; with run-ahead the next job has started
already, and the gap is what the coordinator's clock adds). docs/reference/report.md defines the
figures. With --sums instead: the wall time split into sums over the generations, in
seconds (measuring, waiting for a compile ahead, compiling otherwise, loading, checking, the
rest of the measure child's `wall_s`, and the gaps before and between its jobs), and what the
run would have been with no waiting at all (decisions per hour, busy): the most compiling
ahead could still give it. Markdown on stdout."""
import json
import statistics
import sys


def records(path):
    """The measured records of a ledger that a run timed (`elapsed_s`), in the order of their
    results."""
    out = []
    with open(path) as f:
        for line in f:
            d = json.loads(line)
            if d.get("type") == "generation" and d.get("times") and d.get("elapsed_s") is not None:
                out.append(d)
    return sorted(out, key=lambda d: d["elapsed_s"])


def median_ms(values):
    return f"{1e3 * statistics.median(values):.1f}" if values else "n/a"


def row(path):
    recs = records(path)
    if not recs:
        return None
    wall = recs[-1]["elapsed_s"]
    measure = sum(r["times"]["measure_s"] for r in recs)
    gaps = [b["elapsed_s"] - a["elapsed_s"] - b["wall_s"] for a, b in zip(recs, recs[1:])]
    cells = [path, str(len(recs)), f"{wall:.1f}",
             f"{100 * measure / wall:.1f}%" if wall > 0 else "n/a",
             f"{3600 * len(recs) / wall:,.0f}" if wall > 0 else "n/a"]
    for key in ("compile_s", "compile_wait_s", "load_s", "check_s", "measure_s"):
        cells.append(median_ms([r["times"].get(key, 0.0) for r in recs]))
    cells.append(median_ms(gaps))
    return "| " + " | ".join(cells) + " |"


def sums_row(path):
    recs = records(path)
    if not recs:
        return None
    wall = recs[-1]["elapsed_s"]
    total = {k: sum(r["times"].get(k, 0.0) for r in recs)
             for k in ("measure_s", "compile_wait_s", "compile_s", "load_s", "check_s")}
    child = sum(r["wall_s"] for r in recs)
    rest = child - sum(total[k] for k in ("measure_s", "compile_s", "load_s", "check_s"))
    left = wall - total["compile_wait_s"]
    cells = [path, str(len(recs)), f"{wall:.1f}", f"{total['measure_s']:.1f}",
             f"{total['compile_wait_s']:.1f}", f"{total['compile_s'] - total['compile_wait_s']:.1f}",
             f"{total['load_s']:.1f}", f"{total['check_s']:.1f}", f"{rest:.1f}",
             f"{wall - child:.1f}",
             f"{3600 * len(recs) / left:,.0f}" if left > 0 else "n/a",
             f"{100 * total['measure_s'] / left:.1f}%" if left > 0 else "n/a"]
    return "| " + " | ".join(cells) + " |"


def main_sums(paths):
    print("| ledger | generations | wall, s | measuring | waiting | compiling, not waiting | "
          "loading | checking | rest of the child | gaps | decisions/h without waiting | "
          "busy without waiting |")
    print("|---|" + "---:|" * 11)
    for path in paths:
        line = sums_row(path)
        if line:
            print(line)
    return 0


def main():
    if len(sys.argv) < 2 or sys.argv[1] in ("-h", "--help"):
        print(__doc__)
        return 0 if len(sys.argv) > 1 else 2
    if sys.argv[1] == "--sums":
        return main_sums(sys.argv[2:])
    print("| ledger | generations | wall, s | busy | decisions/h | compile | waiting | load | "
          "check | measure | gap |")
    print("|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
    for path in sys.argv[1:]:
        line = row(path)
        if line:
            print(line)
    return 0


if __name__ == "__main__":
    sys.exit(main())
