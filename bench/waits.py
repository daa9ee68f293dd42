#!/usr/bin/env python3
"""Where a run compiling ahead still waited for compiles, from its ledgers.

    python3 bench/waits.py [--by-keep] LEDGER...

Per ledger: the wall time from its first job to its last result, then the seconds its
generations spent waiting for the compile pool to finish their program (`times.compile_wait_s`,
counted where it exceeds 0.05 s), split by what the generation before decided (a keep changes
best, and with it every program of the path ahead), and the compiles of programs the cache
did not hold at all (`times.compile_s` where `cache_hit` is false). With --by-keep instead:
the compile time per generation (`times.compile_s`, waiting included, in ms) by how many
generations ago the last keep was (1: the first generation after it; before the first keep
counts in none but "all"), which tells which guesses came too late. Markdown on stdout."""
import sys

from phases import records  # bench/phases.py: a run's measured records, in order


def waits(path):
    recs = records(path)
    if not recs:
        return None
    wall = recs[-1]["elapsed_s"] - recs[0]["elapsed_s"] + recs[0]["wall_s"]
    keep, reject, miss = [0, 0.0], [0, 0.0], [0, 0.0]
    keeps = 0
    for before, d in zip(recs, recs[1:]):
        kept = before.get("decision") == "keep"
        keeps += kept
        t = d["times"]
        if not d.get("cache_hit"):
            miss[0] += 1
            miss[1] += t.get("compile_s", 0.0)
        elif t.get("compile_wait_s", 0.0) > 0.05:
            side = keep if kept else reject
            side[0] += 1
            side[1] += t["compile_wait_s"]
    return len(recs), wall, keeps, keep, reject, miss


BY_KEEP = ("1", "2", "3", "4 and more")


def by_keep(path):
    """Compile seconds and generations per distance from the last keep, and over all."""
    recs = records(path)
    if not recs:
        return None
    sums = {k: [0.0, 0] for k in BY_KEEP + ("all",)}
    since = None
    for d in recs:
        c = d["times"].get("compile_s", 0.0)
        for k in ([BY_KEEP[min(since, 4) - 1]] if since else []) + ["all"]:
            sums[k][0] += c
            sums[k][1] += 1
        if d.get("decision") == "keep":
            since = 1
        elif since:
            since += 1
    return sums


def main_by_keep(paths):
    print("| ledger | " + " | ".join(f"{k} after a keep, ms (generations)" for k in BY_KEEP) +
          " | all, ms (generations) |")
    print("|---|" + "---:|" * (len(BY_KEEP) + 1))
    for path in paths:
        sums = by_keep(path)
        if sums is None:
            print(f"waits.py: {path}: no measured generation with times", file=sys.stderr)
            continue
        cells = [f"{1e3 * s / n:.1f} ({n})" if n else "n/a ()"
                 for s, n in (sums[k] for k in BY_KEEP + ("all",))]
        print(f"| {path} | " + " | ".join(cells) + " |")


def main():
    if len(sys.argv) < 2 or sys.argv[1] in ("-h", "--help"):
        print(__doc__)
        sys.exit(0 if len(sys.argv) > 1 else 2)
    if sys.argv[1] == "--by-keep":
        main_by_keep(sys.argv[2:])
        return
    print("| ledger | generations | wall, s | waiting after a keep, s (generations of keeps) "
          "| waiting after a reject, s (generations) | not in the cache, s (generations) |")
    print("|---|---:|---:|---:|---:|---:|")
    for path in sys.argv[1:]:
        w = waits(path)
        if w is None:
            print(f"waits.py: {path}: no measured generation with times", file=sys.stderr)
            continue
        n, wall, keeps, keep, reject, miss = w
        print(f"| {path} | {n} | {wall:.1f} | {keep[1]:.1f} ({keep[0]} of {keeps}) | "
              f"{reject[1]:.1f} ({reject[0]}) | {miss[1]:.1f} ({miss[0]}) |")


if __name__ == "__main__":
    main()
