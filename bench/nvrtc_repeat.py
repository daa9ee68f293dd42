#!/usr/bin/env python3
"""Whether NVRTC gives one kernel the same machine code every time it compiles it.

    python3 bench/nvrtc_repeat.py SOURCE EXPR [--repeat N] [--processes P] [--arch sm_90]
                                  [--nvrtc PATH]

Compiles the name expression EXPR of SOURCE N times (default 100) in each of P fresh processes
(default 1, one after another) with tunefarm's options (bench/kernel_alone.py's NVRTC), in
memory, no cache, and counts each
distinct machine code (the kernel's .text section of the cubin) by its size and a hash. One
line means NVRTC repeated itself byte for byte; tunefarm's cubin cache is what makes best
and new one machine code when their configurations are the same, not a second compile.
Exit status 0 either way, 2 on bad usage."""
import argparse
import hashlib
import multiprocessing
import sys
from collections import Counter

from kernel_alone import Nvrtc, text_sections


def compile_n(a):
    """(size, hash) of the kernel's machine code in each of a.repeat compiles, in order."""
    nv, codes = Nvrtc(a.nvrtc, a.arch), []
    for _ in range(a.repeat):
        _, cubin = nv.compile([a.source], [a.expr])
        texts = text_sections(cubin)
        if len(texts) != 1:
            sys.exit(f"nvrtc_repeat.py: {len(texts)} kernels in the cubin, one expected")
        code = next(iter(texts.values()))
        codes.append((len(code), hashlib.sha256(code).hexdigest()[:16]))
    return codes


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("source")
    ap.add_argument("expr")
    ap.add_argument("--repeat", type=int, default=100)
    ap.add_argument("--processes", type=int, default=1)
    ap.add_argument("--arch", default="sm_90")
    ap.add_argument("--nvrtc", default="libnvrtc.so",
                    help="the NVRTC library (default: libnvrtc.so from the loader's path)")
    a = ap.parse_args()
    if a.repeat < 1 or a.processes < 1:
        ap.error("--repeat and --processes want positive counts")
    seen, first = Counter(), {}
    ctx = multiprocessing.get_context("spawn")  # a new process each time, not a copy of this one
    with ctx.Pool(1, maxtasksperchild=1) as pool:
        for p, codes in enumerate(pool.imap(compile_n, [a] * a.processes)):
            for i, key in enumerate(codes):
                seen[key] += 1
                first.setdefault(key, f"{p}.{i}")
    print("| .text bytes | sha256 (first 16) | compiles | first (process.compile) |")
    print("|---:|---|---:|---:|")
    for (size, digest), n in seen.most_common():
        print(f"| {size} | {digest} | {n} | {first[(size, digest)]} |")


if __name__ == "__main__":
    main()
