"""Probe: pairs of matmul configurations measured by `tunefarm measure`, the farm's own
protocol (correctness gate, burn-in, rotated rounds, L2 flushed), built from one job of a ledger
(the base: its buffers, control and measure options), without a campaign. A developer's tool
for asking "how fast is this configuration?" before a search.

    python3 bench/probe.py make BASE_JOB.json OUT.jsonl   # the pairs listed in PAIRS
    build/tunefarm measure --backend cuda <OUT.jsonl >results.jsonl
    python3 bench/probe.py show OUT.jsonl results.jsonl     # Markdown table

BASE_JOB.json: one ledger record's job, e.g.
    jq -c .job LEDGER.jsonl | grep -m1 tf_matmul >BASE_JOB.json
"""
import json, sys, copy, math
KN = ["BM","BN","BK","TM","TN","AK","VEC","STAGING","PIPE","SPLITK","WARP","KSLICE"]
DEFAULTS = (0, 1)  # WARP, KSLICE for pairs written before those knobs existed
# The pairs measured on the H200 on 2026-11-29 (docs/results/h200x2-2026-11-29-issue5/probe):
# (configuration, configuration) per problem size n (n x n x n), KSLICE 1 where omitted.
PAIRS = {
    1024: [((64,128,64,8,8,0,4,1,2,1,0),(64,128,64,8,8,0,4,1,2,1,1)),
           ((64,128,32,8,8,0,4,1,3,1,1),(128,64,32,8,8,0,4,1,3,1,1)),
           ((64,128,32,8,8,0,4,1,3,2,1),(128,128,16,16,8,0,4,1,3,2,1)),
           ((128,128,8,16,8,0,4,1,4,2,1),(64,128,16,8,8,0,4,1,4,2,1))],
    4096: [((64,128,32,8,8,0,4,1,3,1,0),(64,128,32,8,8,0,4,1,3,1,1)),
           ((128,128,16,8,8,0,4,1,3,1,1),(256,128,8,16,8,0,4,1,3,1,1)),
           ((128,256,8,8,16,0,4,1,3,1,1),(128,128,8,16,8,0,4,1,4,1,1)),
           ((256,128,16,16,8,0,4,1,3,1,1),(128,128,32,8,8,0,4,1,3,1,1))],
}


def arm_for(base_arm, cfg, n):
    cfg = tuple(cfg) + DEFAULTS[len(cfg) - len(KN):] if len(cfg) < len(KN) else tuple(cfg)
    BM,BN,BK,TM,TN,AK,VEC,STAGING,PIPE,SPLITK,WARP,KSLICE = cfg
    a = copy.deepcopy(base_arm)
    a["name_expr"] = "tf_matmul<%s>" % ", ".join(map(str, cfg))
    a["template"] = True
    a["config"] = list(cfg)
    a["grid"] = [math.ceil(n/BN), math.ceil(n/BM), SPLITK]
    a["block"] = [(BM//TM)*(BN//TN)*KSLICE, 1, 1]
    a["smem"] = 0 if PIPE == 0 else PIPE*4*((BK*(BM+4) if AK else BM*(BK+4)) + BK*BN)
    a["counts"] = [n*n]*3
    a["clear"] = [0, 0, 1 if SPLITK > 1 else 0]
    a["iargs"] = [0,0,0,n,n,n]
    return a
def make(base_path, out_path):
    base = json.load(open(base_path))
    ctl = base["arms"][2]
    jobs = []
    sets = PAIRS
    jid = 1000
    for n, pairs in sets.items():
        for a, b in pairs:
            j = copy.deepcopy(base)
            jid += 1
            j["id"] = jid
            j["dims"] = {"M": n, "N": n, "K": n}
            c = copy.deepcopy(ctl)
            # the control's tiles, from its grid at the base shape (both committed kernels'
            # grids are ceil(N/tile) x ceil(M/tile))
            bn, bm = base["dims"]["N"], base["dims"]["M"]
            tn, tm = bn // ctl["grid"][0], bm // ctl["grid"][1]
            if tn * ctl["grid"][0] != bn or tm * ctl["grid"][1] != bm:
                sys.exit(f"probe.py: cannot tell the control's tile from grid {ctl['grid']} at {bm}x{bn}")
            c["grid"] = [math.ceil(n / tn), math.ceil(n / tm), 1]
            c["counts"] = [n*n]*3; c["iargs"] = [0,0,0,n,n,n]
            j["arms"] = [dict(arm_for(base["arms"][0], a, n), role="best"), dict(arm_for(base["arms"][0], b, n), role="new"), c]
            j["measure"]["rounds"] = 6
            jobs.append(j)
    with open(out_path, "w") as f:
        for j in jobs: f.write(json.dumps(j) + "\n")
def show(jobs_path, path):
    import statistics
    print("| job | arm | config | median µs | kernel µs | rel_err |")
    print("|---|---|---|---:|---:|---:|")
    jobs = {j["id"]: j for j in map(json.loads, open(jobs_path))}
    for line in open(path):
        try: r = json.loads(line)
        except ValueError: continue
        if r.get("type") != "result": continue
        j = jobs.get(r["id"])
        if r.get("status") != "ok":
            print(f"| {r['id']} | - | {r.get('detail','')[:200]} | | | |"); continue
        for k, arm in zip(("best","new","control"), j["arms"]):
            us = [x[k+"_us"] for x in r["rounds"]]
            ku = [x[k+"_kernel_us"] for x in r["rounds"] if (x.get(k+"_kernel_us") or -1) >= 0]
            kcell = f"{statistics.median(ku):.2f}" if ku else "—"
            print(f"| {r['id']} {j['dims']['M']} | {k} | {arm['name_expr']} | {statistics.median(us):.2f} | {kcell} | {r['rel_err'][k]:.1e} |")
if __name__ == "__main__":
    if len(sys.argv) != 4 or sys.argv[1] not in ("make", "show"):
        sys.exit(__doc__)
    (make if sys.argv[1] == "make" else show)(sys.argv[2], sys.argv[3])
