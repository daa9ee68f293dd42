#!/usr/bin/env python3
"""What a generation compiles, kernel by kernel, against the whole program.

    python3 bench/kernel_alone.py LEDGER [--top N] [--arch sm_90] [--nvrtc PATH]

tunefarm compiles each distinct kernel of a job alone, from the one source that holds it
(common/program.h), so a generation compiles only its new kernel; it used to compile best, new
and the control in one program from all the job's sources. This takes the N (default 8)
generations of LEDGER whose compile took longest and compiles each one's program both ways with
NVRTC itself (libnvrtc through ctypes, tunefarm's options and #line directives), in memory, no
cache: whole, and each kernel alone. It prints the seconds each took and checks that every
kernel's machine code (its .text section of the cubin) is the same, byte for byte, both ways.
Run it from the source tree, on the machine whose compile times matter, with nothing else
running. Exit status 1 when some kernel's code differs, 2 on bad usage or a ledger without
measured programs; sources with #include are refused (tunefarm hands NVRTC the headers itself;
this script does not)."""
import argparse
import ctypes
import json
import re
import struct
import sys
import time

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


class Nvrtc:
    def __init__(self, path, arch):
        self.lib = ctypes.CDLL(path)
        self.opts = [f"--gpu-architecture={arch}".encode(), b"-std=c++17", b"-lineinfo",
                     b"-DTF_NVRTC=1"]

    def compile(self, files, exprs):
        """(seconds, cubin) of one program: the files in order, each after its #line."""
        text = "".join(f'#line 1 "{p}"\n{open(p).read()}\n' for p in files)
        if re.search(r"^\s*#\s*include", text, re.M):
            sys.exit(f"kernel_alone.py: {files}: sources with #include are not handled here")
        lib, prog = self.lib, ctypes.c_void_p()
        if lib.nvrtcCreateProgram(ctypes.byref(prog), text.encode(), b"program.cu", 0, None, None):
            sys.exit("kernel_alone.py: nvrtcCreateProgram failed")
        for e in exprs:
            lib.nvrtcAddNameExpression(prog, e.encode())
        opts = (ctypes.c_char_p * len(self.opts))(*self.opts)
        t0 = time.monotonic()
        rc = lib.nvrtcCompileProgram(prog, len(self.opts), opts)
        dt = time.monotonic() - t0
        if rc:
            sys.exit(f"kernel_alone.py: NVRTC refused {exprs}")
        n = ctypes.c_size_t()
        lib.nvrtcGetCUBINSize(prog, ctypes.byref(n))
        buf = ctypes.create_string_buffer(n.value)
        lib.nvrtcGetCUBIN(prog, buf)
        lib.nvrtcDestroyProgram(ctypes.byref(prog))
        return dt, buf.raw


def text_sections(cubin):
    """{section name: bytes} of the cubin's .text.* sections (an ELF64 image)."""
    shoff, = struct.unpack_from("<Q", cubin, 0x28)
    shentsize, shnum, shstrndx = struct.unpack_from("<HHH", cubin, 0x3A)
    heads = [struct.unpack_from("<IIQQQQIIQQ", cubin, shoff + i * shentsize) for i in range(shnum)]
    strtab = heads[shstrndx][4]

    def name(off):
        return cubin[strtab + off:cubin.index(b"\0", strtab + off)].decode()

    return {name(h[0]): cubin[h[4]:h[4] + h[5]] for h in heads if name(h[0]).startswith(".text.")}


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("ledger")
    ap.add_argument("--top", type=int, default=8)
    ap.add_argument("--arch", default="sm_90")
    ap.add_argument("--nvrtc", default="libnvrtc.so",
                    help="the NVRTC library (default: libnvrtc.so from the loader's path)")
    a = ap.parse_args()
    recs = longest(a.ledger, a.top)
    if not recs:
        print(f"kernel_alone.py: {a.ledger}: no measured generation with its job", file=sys.stderr)
        sys.exit(2)
    nv = Nvrtc(a.nvrtc, a.arch)
    print("| generation | in the ledger, s | whole, s | " +
          " | ".join(f"{r} alone, s" for r in ROLES) + " | same code |")
    print("|---:|---:|---:|" + "---:|" * len(ROLES) + "---|")
    sums, differ = [0.0] * (1 + len(ROLES)), 0
    for d in recs:
        job = d["job"]
        files = [s for s in job["sources"] if s]
        exprs = [arm["name_expr"] for arm in job["arms"]]
        whole_s, whole = nv.compile(files, exprs)
        whole = text_sections(whole)
        row, same = [whole_s], True
        for arm in job["arms"]:
            own = files[0] if arm.get("template", True) or len(files) == 1 else files[1]
            alone_s, alone = nv.compile([own], [arm["name_expr"]])
            alone = text_sections(alone)
            row.append(alone_s)
            same &= len(alone) == 1 and all(whole.get(k) == v for k, v in alone.items())
        differ += not same
        sums = [s + x for s, x in zip(sums, row)]
        print(f"| {d['generation']} | {d['times']['compile_s']:.2f} | " +
              " | ".join(f"{x:.2f}" for x in row) + f" | {'yes' if same else 'NO'} |")
    print("| sum | | " + " | ".join(f"{x:.2f}" for x in sums) + " | |")
    sys.exit(1 if differ else 0)


if __name__ == "__main__":
    main()
