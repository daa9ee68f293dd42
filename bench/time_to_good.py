#!/usr/bin/env python3
"""Time to a good kernel: for each ledger of a replay run (`tunefarm run --space SPACE`), the
recorded device's time (the sum of the generation records' wall_s, which the replay backend
sets to the recorded compile, check and round times) and the generations it took until the
search's best came within X of the space's optimum, judged by the space's drift-corrected
medians (ratio to the reference x the reference's median), not by the draws.

  python3 bench/time_to_good.py SPACE LEDGER... [--within 0.01,0.05]

One line per ledger and threshold: "LEDGER within 1.0%: 412.3 s, generation 87" or "never".
"""
import gzip, json, sys

def main(argv):
    within = [0.01, 0.05]
    args = []
    i = 0
    while i < len(argv):
        if argv[i] == "--within":
            within = [float(x) for x in argv[i + 1].split(",")]
            i += 2
        else:
            args.append(argv[i])
            i += 1
    if len(args) < 2:
        sys.exit(__doc__)
    with gzip.open(args[0], "rt") as f:
        lines = [json.loads(l) for l in f]
    head = lines[0]
    knobs, ref = head["knobs"], head["reference_us"]
    level = {tuple(l["values"]): l["ratio"] * ref for l in lines[1:]
             if l["type"] == "config" and l["check"] == "pass"}
    best = min(level.values())
    print(f"space {args[0]}: optimum {best:.4g} us over {len(level)} configurations that pass")
    for path in args[1:]:
        t, reached = 0.0, {}
        for line in open(path):
            r = json.loads(line)
            if r.get("type") != "generation":
                continue
            t += r.get("wall_s") or 0.0
            keep = r.get("decision") == "keep"
            cfg = r["new"] if keep else r["best"]
            us = level.get(tuple(cfg[k] for k in knobs))
            for w in within:
                if w not in reached and us is not None and us <= best * (1 + w):
                    reached[w] = (t, r["generation"])
        for w in within:
            got = reached.get(w)
            print(f"{path} within {100 * w:.1f}%: " +
                  (f"{got[0]:.1f} s, generation {got[1]}" if got else "never"))

if __name__ == "__main__":
    main(sys.argv[1:])
