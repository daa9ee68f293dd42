#!/usr/bin/env python3
"""FFMA operand registers per kernel, from `cuobjdump -sass` text.

    python3 bench/ffma_banks.py SASS.txt

For each function: instructions, FFMAs, FFMAs with an operand-reuse flag, and FFMAs where
two distinct source registers read from the register file fall in the same bank, taking the
bank as the register number mod 2 (the two-bank register file described for Volta-class
SMs; an assumption for Hopper, so this counts candidates, not measured conflicts). An
operand comes from the reuse cache, not the register file, when the previous instruction
read the same register in the same operand slot with `.reuse` (the flag keeps a value for
the next instruction; the flagged instruction itself still reads it). RZ and constants are
not registers. A high count next to ncu's "dispatch stall" is the evidence
that operand banks, not shared memory, hold the FFMAs back.
"""
import re
import sys
from collections import Counter

FFMA = re.compile(r"\bFFMA(?:\.\w+)*\s+R\d+,\s*(.*?)\s*;")
REG = re.compile(r"^-?\|?(R\d+)\|?(\.reuse)?$")


def scan(body):
    n = ffma = reuse = clash = 0
    cached = set()  # (slot, register) the previous instruction flagged .reuse
    for line in body.splitlines():
        if not re.search(r"/\*[0-9a-f]{4,}\*/\s+\S", line):
            continue
        n += 1
        m = FFMA.search(line)
        if not m:
            cached = set()
            continue
        ffma += 1
        ops = [REG.match(o.strip()) for o in m.group(1).split(",")]
        slots = [(i, r.group(1), bool(r.group(2))) for i, r in enumerate(ops) if r and r.group(1) != "RZ"]
        if any(flag for _, _, flag in slots):
            reuse += 1
        read = {reg for i, reg, _ in slots if (i, reg) not in cached}
        banks = Counter(int(reg[1:]) % 2 for reg in read)
        if any(v > 1 for v in banks.values()):
            clash += 1
        cached = {(i, reg) for i, reg, flag in slots if flag}
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
