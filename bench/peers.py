"""Peers on the same GPU, same protocol as tunefarm's measure child: one launch between two
CUDA events, the L2 flushed (a write of 2x the L2) before each, FP32 without TF32, the median
and spread over many launches. Prints one JSON line per measurement.

    python3 bench/peers.py [--samples 200]
"""
import argparse
import json
import statistics

import torch


def timed(fn, flush, samples):
    start = [torch.cuda.Event(enable_timing=True) for _ in range(samples)]
    end = [torch.cuda.Event(enable_timing=True) for _ in range(samples)]
    for _ in range(10):
        fn()
    for i in range(samples):
        flush.zero_()
        start[i].record()
        fn()
        end[i].record()
    torch.cuda.synchronize()
    us = sorted(1000.0 * s.elapsed_time(e) for s, e in zip(start, end))
    return {"median_us": statistics.median(us), "p10_us": us[len(us) // 10],
            "p90_us": us[9 * len(us) // 10]}


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--samples", type=int, default=200)
    a = ap.parse_args()
    torch.backends.cuda.matmul.allow_tf32 = False
    torch.backends.cudnn.allow_tf32 = False
    dev = torch.device("cuda")
    props = torch.cuda.get_device_properties(dev)
    flush = torch.empty(2 * props.L2_cache_size // 4 + 1, dtype=torch.float32, device=dev)
    g = torch.Generator(device=dev).manual_seed(1)
    out = []
    for m, n, k in [(1024, 1024, 1024), (4096, 4096, 4096)]:
        x = torch.rand(m, k, device=dev, generator=g) * 2 - 1
        y = torch.rand(k, n, device=dev, generator=g) * 2 - 1
        r = timed(lambda: torch.mm(x, y), flush, a.samples)
        r.update(peer="torch.mm (cuBLAS, FP32, no TF32)", shape=f"{m}x{n}x{k}",
                 tflops=2 * m * n * k / r["median_us"] / 1e6)
        out.append(r)
    for rows, width in [(4096, 768), (16384, 4096)]:
        x = torch.rand(rows, width, device=dev, generator=g) * 2 - 1
        w = torch.rand(width, device=dev, generator=g) * 2 - 1
        b = torch.rand(width, device=dev, generator=g) * 2 - 1
        ln = lambda: torch.nn.functional.layer_norm(x, (width,), w, b, 1e-5)
        r = timed(ln, flush, a.samples)
        r.update(peer="torch layer_norm", shape=f"{rows}x{width}",
                 gbps=8 * rows * width / r["median_us"] / 1e3)
        out.append(r)
    src = torch.rand(1 << 28, device=dev, generator=g)
    dst = torch.empty_like(src)
    r = timed(lambda: dst.copy_(src), flush, 50)
    r.update(peer="device copy (bytes read + written)", shape="1 GiB", gbps=2 * 4 * (1 << 28) / r["median_us"] / 1e3)
    out.append(r)
    for r in out:
        r.update(gpu=props.name, torch=torch.__version__)
        print(json.dumps(r))


if __name__ == "__main__":
    main()
