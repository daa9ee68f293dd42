#!/usr/bin/env python3
"""FFMA operand registers per kernel, from `cuobjdump -sass` text.

    python3 bench/ffma_banks.py SASS.txt

For each function: instructions, FFMAs, FFMAs with an operand-reuse flag, and FFMAs where
two source registers read without a reuse flag fall in the same register bank, taking the
bank as the register number mod 2 (the two-bank register file described for Volta-class
SMs; an assumption for Hopper, so this counts candidates, not measured conflicts). RZ and
constants are not registers. A high count next to ncu's "dispatch stall" is the evidence
that operand banks, not shared memory, hold the FFMAs back.
"""
import re
import sys
from collections import Counter

FFMA = re.compile(r"\bFFMA(?:\.\w+)*\s+R\d+,\s*(.*?)\s*;")
REG = re.compile(r"^-?\|?(R\d+)\|?(\.reuse)?$")


def scan(body):
    n = ffma = reuse = clash = 0
    for line in body.splitlines():
        if not re.search(r"/\*[0-9a-f]{4,}\*/\s+\S", line):
            continue
        n += 1
        m = FFMA.search(line)
        if not m:
            continue
        ffma += 1
        ops = [o.strip() for o in m.group(1).split(",")]
        regs = [REG.match(o) for o in ops]
        regs = [r for r in regs if r and r.group(1) != "RZ"]
        if any(r.group(2) for r in regs):
            reuse += 1
        banks = Counter(int(r.group(1)[1:]) % 2 for r in regs if not r.group(2))
        if any(v > 1 for v in banks.values()):
            clash += 1
    return n, ffma, reuse, clash


def main():
    text = open(sys.argv[1]).read()
    parts = re.split(r"(?:^|\n)\s*Function : (\S+)", text)
    print("| function | instructions | FFMA | with reuse | same-bank pairs (candidates) |")
    print("|---|---:|---:|---:|---:|")
    for name, body in zip(parts[1::2], parts[2::2]):
        n, ffma, reuse, clash = scan(body)
        print(f"| {name[:90]} | {n} | {ffma} | {reuse} | {clash} ({100.0 * clash / max(ffma, 1):.0f}%) |")


if __name__ == "__main__":
    main()
