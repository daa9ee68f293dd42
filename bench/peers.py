"""Peers on one GPU, with the protocol of tunefarm's measure child and `tunefarm bench`: one
launch between two CUDA events, the L2 flushed (a write of 2x the L2) before each, FP32
without TF32, medians and spreads over rounds of samples. Every peer's output is checked
against a float64 reference on the same inputs first (relative L2 error, tolerance 1e-5).

Peers: torch.mm (cuBLAS), a Triton matmul (autotuned over the configurations below, IEEE
FP32 dot), torch layer_norm, a Triton layernorm (one row per program, autotuned over warps),
and device-to-device copies (bytes read + written): 1 GiB, the bandwidth ceiling, and the
bytes of each layernorm shape, its floor under the same protocol. The examples' peers:
torch.softmax, a Triton softmax at each of 1-16 warps and the copy of the same bytes at 4096x1000
(examples/softmax), torch's transpose and the copy of the same bytes at 4096x3000
(examples/transpose), and BF16 matmul 4096^3 with FP32
output, C = A B^T: torch.mm in BF16 (cuBLAS) and an autotuned Triton kernel
(examples/matmul_bf16; tunefarm times cublasGemmEx itself, in its own rounds).

Beside each event span, the kernel time: CUPTI's record of the same peer's kernels (through
torch.profiler, flushed launches without the events), as `tunefarm bench` reports for its
arms. The span minus the kernel time is what the protocol adds (the launch after the flush).

    python3 bench/peers.py [--rounds 10] [--samples 20]
                           [--only matmul|layernorm|copy|softmax|transpose|bf16]
                           [--matmul MxNxK]...

--matmul replaces the matmul shapes (1024x1024x1024 and 4096x4096x4096) with the ones given.

Prints one JSON line per measurement, then a Markdown table.
"""
import argparse
import datetime
import json
import statistics
import sys

import torch

try:
    import triton
    import triton.language as tl
except ImportError:  # the table says so; torch peers still run
    triton = None

MATMUL_SHAPES = [(1024, 1024, 1024), (4096, 4096, 4096)]
LAYERNORM_SHAPES = [(4096, 768), (16384, 4096)]
EPS = 1e-5
TOLERANCE = 1e-5
SPIN_CYCLES_PER_SAMPLE = 400_000  # 200 us at 2 GHz per queued sample, several times its CPU cost

if triton is not None:

    def _mm_configs():
        out = []
        for bm, bn, bk, w, s in [(128, 128, 32, 8, 3), (128, 128, 16, 8, 4), (128, 64, 32, 4, 4),
                                 (64, 128, 32, 4, 4), (64, 64, 32, 4, 4), (128, 256, 16, 8, 3),
                                 (64, 128, 16, 4, 5), (128, 128, 32, 4, 3), (64, 64, 64, 4, 3),
                                 (256, 128, 16, 8, 3)]:
            out.append(triton.Config({"BM": bm, "BN": bn, "BK": bk, "GROUP": 8},
                                     num_warps=w, num_stages=s))
        return out

    @triton.autotune(configs=_mm_configs(), key=["M", "N", "K"])
    @triton.jit
    def _mm(a, b, c, M, N, K, BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr,
            GROUP: tl.constexpr):
        # Grouped tile order: GROUP row tiles share their B columns while they are in L2.
        pid = tl.program_id(0)
        tiles_m = tl.cdiv(M, BM)
        tiles_n = tl.cdiv(N, BN)
        per_group = GROUP * tiles_n
        first = (pid // per_group) * GROUP
        rows = min(tiles_m - first, GROUP)
        pm = first + (pid % per_group) % rows
        pn = (pid % per_group) // rows
        rm = pm * BM + tl.arange(0, BM)
        rn = pn * BN + tl.arange(0, BN)
        rk = tl.arange(0, BK)
        pa = a + rm[:, None] * K + rk[None, :]
        pb = b + rk[:, None] * N + rn[None, :]
        acc = tl.zeros((BM, BN), dtype=tl.float32)
        for k in range(0, tl.cdiv(K, BK)):
            left = K - k * BK
            x = tl.load(pa, mask=(rm[:, None] < M) & (rk[None, :] < left), other=0.0)
            y = tl.load(pb, mask=(rk[:, None] < left) & (rn[None, :] < N), other=0.0)
            acc = tl.dot(x, y, acc, input_precision="ieee")
            pa += BK
            pb += BK * N
        tl.store(c + rm[:, None] * N + rn[None, :], acc, mask=(rm[:, None] < M) & (rn[None, :] < N))

    def triton_mm(x, y):
        m, k = x.shape
        n = y.shape[1]
        out = torch.empty(m, n, device=x.device, dtype=torch.float32)
        grid = lambda meta: (triton.cdiv(m, meta["BM"]) * triton.cdiv(n, meta["BN"]),)
        _mm[grid](x, y, out, m, n, k)
        return out

    @triton.autotune(configs=[triton.Config({}, num_warps=w) for w in (1, 2, 4, 8, 16)],
                     key=["D"])
    @triton.jit
    def _ln(x, w, b, y, D, eps, BLOCK: tl.constexpr):
        row = tl.program_id(0)
        cols = tl.arange(0, BLOCK)
        inside = cols < D
        v = tl.load(x + row * D + cols, mask=inside, other=0.0)
        mean = tl.sum(v, axis=0) / D
        d = tl.where(inside, v - mean, 0.0)
        rstd = 1.0 / tl.sqrt(tl.sum(d * d, axis=0) / D + eps)
        g = tl.load(w + cols, mask=inside, other=0.0)
        h = tl.load(b + cols, mask=inside, other=0.0)
        tl.store(y + row * D + cols, d * rstd * g + h, mask=inside)

    def triton_ln(x, w, b):
        rows, width = x.shape
        out = torch.empty_like(x)
        _ln[(rows,)](x, w, b, out, width, EPS, BLOCK=triton.next_power_of_2(width))
        return out

    @triton.jit
    def _softmax(x, y, D, BLOCK: tl.constexpr):
        row = tl.program_id(0)
        cols = tl.arange(0, BLOCK)
        v = tl.load(x + row * D + cols, mask=cols < D, other=-float("inf"))
        e = tl.exp(v - tl.max(v, axis=0))
        tl.store(y + row * D + cols, e / tl.sum(e, axis=0), mask=cols < D)

    def triton_softmax(x, warps):
        rows, width = x.shape
        out = torch.empty_like(x)
        _softmax[(rows,)](x, out, width, BLOCK=triton.next_power_of_2(width), num_warps=warps)
        return out

    def _bf16_configs():
        return [triton.Config({"BM": bm, "BN": bn, "BK": bk, "GROUP": 8}, num_warps=w,
                              num_stages=st)
                for bm, bn, bk, w, st in [(128, 128, 64, 4, 4), (128, 256, 64, 8, 3),
                                          (256, 128, 64, 8, 3), (128, 128, 32, 4, 4),
                                          (128, 64, 64, 4, 4), (64, 128, 64, 4, 4),
                                          (256, 128, 32, 8, 4)]]

    @triton.autotune(configs=_bf16_configs(), key=["M", "N", "K"])
    @triton.jit
    def _mm_bf16(a, b, c, M, N, K, BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr,
                 GROUP: tl.constexpr):
        # C[M][N] = A[M][K] B[N][K]^T, BF16 in, FP32 accumulate and out; grouped tile order.
        pid = tl.program_id(0)
        tiles_n = tl.cdiv(N, BN)
        per_group = GROUP * tiles_n
        first = (pid // per_group) * GROUP
        rows = min(tl.cdiv(M, BM) - first, GROUP)
        pm = first + (pid % per_group) % rows
        pn = (pid % per_group) // rows
        rm = pm * BM + tl.arange(0, BM)
        rn = pn * BN + tl.arange(0, BN)
        rk = tl.arange(0, BK)
        pa = a + rm[:, None] * K + rk[None, :]
        pb = b + rn[None, :] * K + rk[:, None]
        acc = tl.zeros((BM, BN), dtype=tl.float32)
        for k in range(0, tl.cdiv(K, BK)):
            left = K - k * BK
            x = tl.load(pa, mask=(rm[:, None] < M) & (rk[None, :] < left), other=0.0)
            y = tl.load(pb, mask=(rk[:, None] < left) & (rn[None, :] < N), other=0.0)
            acc = tl.dot(x, y, acc)
            pa += BK
            pb += BK
        tl.store(c + rm[:, None] * N + rn[None, :], acc, mask=(rm[:, None] < M) & (rn[None, :] < N))

    def triton_mm_bf16(x, y):
        m, k = x.shape
        n = y.shape[0]
        out = torch.empty(m, n, device=x.device, dtype=torch.float32)
        grid = lambda meta: (triton.cdiv(m, meta["BM"]) * triton.cdiv(n, meta["BN"]),)
        _mm_bf16[grid](x, y, out, m, n, k)
        return out


def timed(fn, flush, rounds, samples):
    """Median and spread of `rounds` round medians of `samples` flushed launches each.

    Each round starts with a spin kernel long enough for Python to enqueue all of the round's
    launches behind it: a Python launch (Triton's above all) costs tens of microseconds of CPU,
    more than a small kernel runs, and without the spin the GPU would idle between the start
    event and the launch and the span would time the launcher. tunefarm's C harness enqueues
    faster than the GPU drains the flush, so it needs no spin."""
    for _ in range(10):
        fn()
    meds = []
    for _ in range(rounds):
        start = [torch.cuda.Event(enable_timing=True) for _ in range(samples)]
        end = [torch.cuda.Event(enable_timing=True) for _ in range(samples)]
        torch.cuda._sleep(SPIN_CYCLES_PER_SAMPLE * samples)
        for i in range(samples):
            flush.zero_()
            start[i].record()
            fn()
            end[i].record()
        torch.cuda.synchronize()
        meds.append(statistics.median(1000.0 * s.elapsed_time(e) for s, e in zip(start, end)))
    return {"median_us": statistics.median(meds), "min_us": min(meds), "max_us": max(meds)}


def cuda_events(fn, samples):
    """CUPTI's device activities (kernels, copies) of `samples` calls of fn, in start order."""
    acts = [torch.profiler.ProfilerActivity.CUDA]
    with torch.profiler.profile(activities=acts) as prof:
        for _ in range(samples):
            fn()
        torch.cuda.synchronize()
    evs = [e for e in prof.profiler.kineto_results.events() if "CUDA" in str(e.device_type())]
    return sorted(evs, key=lambda e: e.start_ns())


def kernel_us(fn, flush, samples):
    """Median device time per call of fn (its kernels summed), the flush before each call left
    out by name (none of these peers launches the flush's fill kernel itself); None, with the
    reason on stderr, when the profiler sees no activity of fn's own."""
    def flushed():
        flush.zero_()
        fn()

    try:
        flush_names = {e.name() for e in cuda_events(flush.zero_, 2)}
        evs = [e for e in cuda_events(flushed, samples) if e.name() not in flush_names]
    except Exception as err:  # kineto_results is torch's internal API: say so, keep the span
        print(f"peers.py: no kernel time ({type(err).__name__}: {err})", file=sys.stderr)
        return None
    per_call = len(evs) // samples
    if per_call == 0 or per_call * samples != len(evs):
        print(f"peers.py: no kernel time ({len(evs)} device activities in {samples} calls)",
              file=sys.stderr)
        return None
    times = [sum(e.duration_ns() for e in evs[i * per_call:(i + 1) * per_call]) / 1e3
             for i in range(samples)]
    return statistics.median(times)


def rel_err(out, ref):
    return float(torch.linalg.vector_norm(out.double() - ref) / torch.linalg.vector_norm(ref))


def measure(arms, ref, flush, a, shape, rate, out):
    """Check each (name, fn, tuner) arm against ref, time it, and append its record; rate(us)
    formats the throughput, tuner (or None) is an autotuned Triton kernel whose choice is kept."""
    for name, fn, tuner in arms:
        err = rel_err(fn(), ref)
        r = timed(fn, flush, a.rounds, a.samples)
        r["kernel_us"] = kernel_us(fn, flush, a.samples)
        r.update(peer=name, shape=shape, rel_err=err, rate=rate(r["median_us"]))
        if tuner is not None:
            r["config"] = str(tuner.best_config)
        out.append(r)


def matmul_peers(a, flush, gen, out):
    for m, n, k in a.matmul or MATMUL_SHAPES:
        x = torch.rand(m, k, device="cuda", generator=gen) * 2 - 1
        y = torch.rand(k, n, device="cuda", generator=gen) * 2 - 1
        ref = x.double() @ y.double()
        arms = [("torch.mm (cuBLAS, FP32, no TF32)", lambda: torch.mm(x, y), None)]
        if triton is not None:
            arms.append(("Triton matmul (autotuned, IEEE FP32 dot)", lambda: triton_mm(x, y), _mm))
        measure(arms, ref, flush, a, f"{m}x{n}x{k}",
                lambda us: f"{2 * m * n * k / us / 1e6:.1f} TFLOP/s", out)


def layernorm_peers(a, flush, gen, out):
    for rows, width in LAYERNORM_SHAPES:
        x = torch.rand(rows, width, device="cuda", generator=gen) * 2 - 1
        w = torch.rand(width, device="cuda", generator=gen) * 2 - 1
        b = torch.rand(width, device="cuda", generator=gen) * 2 - 1
        xd = x.double()
        mean = xd.mean(dim=1, keepdim=True)
        var = ((xd - mean) ** 2).mean(dim=1, keepdim=True)
        ref = (xd - mean) / torch.sqrt(var + EPS) * w.double() + b.double()
        arms = [("torch layer_norm",
                 lambda: torch.nn.functional.layer_norm(x, (width,), w, b, EPS), None)]
        if triton is not None:
            arms.append(("Triton layernorm (row per program, autotuned warps)",
                         lambda: triton_ln(x, w, b), _ln))
        measure(arms, ref, flush, a, f"{rows}x{width}",
                lambda us: f"{8 * rows * width / us / 1e3:.0f} GB/s", out)


def copy_peer(a, flush, gen, out):
    for shape, n in (("1 GiB", 1 << 28), ("16384x4096", 16384 * 4096), ("4096x768", 4096 * 768)):
        copy_of(n, shape, a, flush, gen, out, samples=5 if n == 1 << 28 else None)


def softmax_peers(a, flush, gen, out):
    rows, width = 4096, 1000
    x = torch.rand(rows, width, device="cuda", generator=gen) * 8 - 4
    ref = torch.softmax(x.double(), dim=1)
    arms = [("torch.softmax", lambda: torch.softmax(x, dim=1), None)]
    for w in (1, 2, 4, 8, 16) if triton is not None else ():  # each, not autotune's pick
        arms.append((f"Triton softmax (row per program, {w} warps)",
                     lambda w=w: triton_softmax(x, w), None))
    measure(arms, ref, flush, a, f"{rows}x{width}",
            lambda us: f"{8 * rows * width / us / 1e3:.0f} GB/s", out)
    copy_of(rows * width, f"{rows}x{width}", a, flush, gen, out)


def copy_of(n, shape, a, flush, gen, out, samples=None):
    """The device copy of n floats: the floor of a kernel that reads and writes them once."""
    src = torch.rand(n, device="cuda", generator=gen)
    dst = torch.empty_like(src)
    samples = samples or a.samples
    r = timed(lambda: dst.copy_(src), flush, a.rounds, samples)
    r["kernel_us"] = kernel_us(lambda: dst.copy_(src), flush, samples)
    r.update(peer="device copy (bytes read + written)", shape=shape, rel_err=0.0,
             rate=f"{2 * 4 * n / r['median_us'] / 1e3:.0f} GB/s")
    out.append(r)


def transpose_peers(a, flush, gen, out):
    rows, cols = 4096, 3000
    x = torch.rand(rows, cols, device="cuda", generator=gen) * 2 - 1
    ref = x.double().t()
    measure([("torch transpose (x.t().contiguous())", lambda: x.t().contiguous(), None)], ref,
            flush, a, f"{rows}x{cols}", lambda us: f"{8 * rows * cols / us / 1e3:.0f} GB/s", out)
    copy_of(rows * cols, f"{rows}x{cols}", a, flush, gen, out)


def bf16_peers(a, flush, gen, out):
    m = n = k = 4096
    x = (torch.rand(m, k, device="cuda", generator=gen) * 2 - 1).bfloat16()
    y = (torch.rand(n, k, device="cuda", generator=gen) * 2 - 1).bfloat16()
    ref = x.double() @ y.double().t()
    yt = y.t()
    arms = [("torch.mm BF16 (cuBLAS, BF16 out)", lambda: torch.mm(x, yt), None)]
    if triton is not None:
        arms.append(("Triton matmul BF16 (autotuned, FP32 out)", lambda: triton_mm_bf16(x, y),
                     _mm_bf16))
    first = len(out)
    measure(arms, ref, flush, a, f"{m}x{n}x{k} bf16",
            lambda us: f"{2 * m * n * k / us / 1e6:.1f} TFLOP/s", out)
    # A BF16 output keeps 8 bits of mantissa (relative rounding up to 2^-9); FP32 outputs of
    # FP32 sums over K = 4096 stay near 1e-6.
    for r in out[first:]:
        r["tolerance"] = 4e-3 if "BF16 out" in r["peer"] else 1e-5


def mnk(text):
    try:
        m, n, k = (int(v) for v in text.lower().split("x"))
    except ValueError:
        raise argparse.ArgumentTypeError(f"'{text}' is not MxNxK (e.g. 3072x2048x1536)")
    if min(m, n, k) <= 0:
        raise argparse.ArgumentTypeError(f"'{text}': sizes must be positive")
    return m, n, k


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--rounds", type=int, default=10)
    ap.add_argument("--samples", type=int, default=20)
    ap.add_argument("--only", choices=["matmul", "layernorm", "copy", "softmax", "transpose",
                                       "bf16"])
    ap.add_argument("--matmul", action="append", type=mnk, metavar="MxNxK",
                    help="a matmul shape instead of the default ones (repeatable)")
    a = ap.parse_args()
    torch.backends.cuda.matmul.allow_tf32 = False
    torch.backends.cudnn.allow_tf32 = False
    props = torch.cuda.get_device_properties(0)
    flush = torch.empty(2 * props.L2_cache_size // 4 + 1, dtype=torch.float32, device="cuda")
    gen = torch.Generator(device="cuda").manual_seed(1)
    out = []
    if a.only in (None, "matmul"):
        matmul_peers(a, flush, gen, out)
    if a.only in (None, "layernorm"):
        layernorm_peers(a, flush, gen, out)
    if a.only in (None, "copy"):
        copy_peer(a, flush, gen, out)
    if a.only in (None, "softmax"):
        softmax_peers(a, flush, gen, out)
    if a.only in (None, "transpose"):
        transpose_peers(a, flush, gen, out)
    if a.only in (None, "bf16"):
        bf16_peers(a, flush, gen, out)
    when = datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%dT%H:%MZ")
    for r in out:
        r.update(gpu=props.name, torch=torch.__version__,
                 triton=triton.__version__ if triton else None, date=when)
        r["correct"] = r["rel_err"] <= r.get("tolerance", TOLERANCE)
        print(json.dumps(r))
    print(f"\n{props.name}, torch {torch.__version__}, triton "
          f"{triton.__version__ if triton else 'missing'}, {when}; L2 flushed before every launch; "
          f"{a.rounds} rounds x {a.samples} samples\n")
    print("| peer | shape | median µs | spread µs (round medians) | kernel µs | rate | rel_err |")
    print("|---|---|---:|---|---:|---:|---:|")
    for r in out:
        k = f"{r['kernel_us']:.2f}" if r["kernel_us"] is not None else "n/a"
        print(f"| {r['peer']} | {r['shape']} | {r['median_us']:.2f} | {r['min_us']:.2f}–"
              f"{r['max_us']:.2f} | {k} | {r['rate']} | {r['rel_err']:.1e}"
              f"{'' if r['correct'] else ' WRONG'} |")


if __name__ == "__main__":
    main()
