#!/usr/bin/env python3
"""How far local descent can take a search on a recorded space, without noise: from uniformly
drawn starts, a first-improvement descent moves to a one-knob neighbour (in random order), else
a two-knob one, faster by more than the rule's min_gain, until none is; then the fraction of
starts whose descent ends within X of the optimum, the median configurations measured per
descent, and the descents that 95% of runs would need (ln 0.05 / ln(1 - fraction)).

Levels are the space's drift-corrected medians (ratio x reference_us); only configurations that
passed their check take part (one that failed would cost a generation and never be kept).

  python3 bench/basins.py SPACE [--starts 300] [--min-gain 0.01] [--within 0.01] [--seed 1]
"""
import gzip, itertools, json, math, random, statistics, sys


def load(path):
    with gzip.open(path, "rt") as f:
        lines = [json.loads(l) for l in f]
    head = lines[0]
    level = {tuple(l["values"]): l["ratio"] * head["reference_us"] for l in lines[1:]
             if l.get("type") == "config" and l.get("check") == "pass"}
    domains = [sorted({c[k] for c in level}) for k in range(len(head["knobs"]))]
    return level, domains


def moves(c, domains, level, nknobs):
    for ks in itertools.combinations(range(len(domains)), nknobs):
        for vs in itertools.product(*(domains[k] for k in ks)):
            if any(v == c[k] for k, v in zip(ks, vs)):
                continue
            n = list(c)
            for k, v in zip(ks, vs):
                n[k] = v
            n = tuple(n)
            if n in level:
                yield n


def descend(c, domains, level, rng, keep):
    measured, tried = 1, {c}
    while True:
        step = None
        for nknobs in (1, 2):
            cands = [n for n in moves(c, domains, level, nknobs) if n not in tried]
            rng.shuffle(cands)
            for n in cands:
                measured += 1
                tried.add(n)
                if level[n] < keep * level[c]:
                    step = n
                    break
            if step:
                break
        if not step:
            return c, measured
        c = step


def main(argv):
    opts = {"--starts": 300, "--min-gain": 0.01, "--within": 0.01, "--seed": 1}
    args = []
    i = 0
    while i < len(argv):
        if argv[i] in opts:
            opts[argv[i]] = type(opts[argv[i]])(argv[i + 1])
            i += 2
        elif argv[i] in ("-h", "--help"):
            print(__doc__)
            return 0
        else:
            args.append(argv[i])
            i += 1
    if len(args) != 1:
        sys.exit(__doc__)
    level, domains = load(args[0])
    best = min(level.values())
    rng = random.Random(opts["--seed"])
    starts = rng.sample(sorted(level), min(opts["--starts"], len(level)))
    ends = [descend(s, domains, level, rng, 1 - opts["--min-gain"]) for s in starts]
    good = sum(level[e] <= (1 + opts["--within"]) * best for e, _ in ends) / len(ends)
    need = math.log(0.05) / math.log(1 - good) if 0 < good < 1 else (1 if good else math.inf)
    print(f"{args[0]}: {len(level)} configurations passed; {len(starts)} descents end within "
          f"{opts['--within']:.0%} from {good:.0%} of starts, measuring a median "
          f"{statistics.median(m for _, m in ends):.0f} configurations each; 95% needs "
          f"{need:.1f} descents")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
