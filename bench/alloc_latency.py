#!/usr/bin/env python3
"""Allocation latency under PyTorch: alloc+free p50/p99 for the size mixes of
the shipped traces, memlake against PyTorch's native allocator and
expandable_segments, side by side in one run.

Each trace (RMM-style CSV, traces/*.csv.gz and .gpu/traces or
../shared/traces when present) is replayed in trace order (its first
--events events) through PyTorch's allocator interface: the allocation and
the free of every block are timed one by one with perf_counter_ns, and a
block's alloc+free is the sum of its two. So each allocator is measured in
the state the real workload puts it in (its live set, its fragmentation),
with the trace's own mix of sizes. Each process replays every trace twice
and times the second pass (the first warms caches and grows the pool: what
is measured is the steady cost, not the driver's growth).

Two call paths, both the same for every allocator:
  raw    torch.cuda.caching_allocator_alloc / caching_allocator_delete: the
         allocator and PyTorch's thin dispatch to it (memlake through
         CUDAPluggableAllocator, which calls libmemlake.so directly)
  empty  torch.empty(n, dtype=uint8) / del: what a tensor costs a program

Every allocator runs in its own process; --repeats N runs N rounds, the order
alternating (odd rounds reversed) because a shared host drifts. Ratios are
per round against native in the same round, then the median over rounds.

    python3 bench/alloc_latency.py [--allocators native,expandable,memlake]
        [--repeats 3] [--events 60000] [--paths raw,empty] [--out result.json]

Allocators and rounds: bench/_rounds.py (memlake:KEY=VALUE;KEY=VALUE for a
variant, e.g. --allocators native,memlake,memlake:max_mapped_ratio=1.5).
"""
import argparse
import glob
import gzip
import json
import os
import statistics
import time

from _rounds import run_rounds, use_allocator

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)


def default_traces():
    seen, out = set(), []
    for d in (os.path.join(ROOT, "traces"), os.path.join(ROOT, ".gpu", "traces"),
              os.path.join(ROOT, "..", "shared", "traces")):
        for p in sorted(glob.glob(os.path.join(d, "*.csv.gz"))):
            n = os.path.basename(p)
            if n not in seen:
                seen.add(n)
                out.append(p)
    return out


def read_events(path, limit):
    """[(True, ptr, size)] / [(False, ptr, 0)] in trace order, first `limit` events; unmatched frees dropped."""
    out, live = [], set()
    with gzip.open(path, "rt") if path.endswith(".gz") else open(path) as f:
        col = {k: i for i, k in enumerate(f.readline().strip().split(","))}
        for line in f:
            x = line.rstrip("\n").split(",")
            if len(x) < len(col):
                continue
            act = x[col["Action"]]
            if act == "allocate" and int(x[col["Size"]]) > 0:
                out.append((True, x[col["Pointer"]], int(x[col["Size"]])))
                live.add(x[col["Pointer"]])
            elif act == "free" and x[col["Pointer"]] in live:
                out.append((False, x[col["Pointer"]], 0))
                live.discard(x[col["Pointer"]])
            if len(out) >= limit:
                break
    return out


def pct(v, q):
    if not v:
        return 0.0
    v = sorted(v)
    return float(v[min(len(v) - 1, int(q * len(v)))])


def worker(a):
    memlake = use_allocator(a.allocator)
    import torch
    torch.empty(1, device="cuda")
    torch.cuda.synchronize()
    dev = torch.cuda.current_device()
    stream = torch.cuda.current_stream(dev)
    ns = time.perf_counter_ns
    calloc, cdelete = torch.cuda.caching_allocator_alloc, torch.cuda.caching_allocator_delete
    result = {"allocator": a.allocator, "traces": {}}
    for path in a.traces:
        events = read_events(path, a.events)
        per = {}
        for kind in a.paths:
            pairs = []
            for timed in (False, True):
                t_alloc, live = {}, {}
                for is_alloc, ptr, n in events:
                    if is_alloc:
                        if kind == "raw":
                            t0 = ns()
                            live[ptr] = calloc(n, dev, stream)
                            t1 = ns()
                        else:
                            t0 = ns()
                            live[ptr] = torch.empty(n, dtype=torch.uint8, device="cuda")
                            t1 = ns()
                        t_alloc[ptr] = t1 - t0
                    else:
                        if kind == "raw":
                            p = live.pop(ptr)
                            t0 = ns()
                            cdelete(p)
                            t1 = ns()
                        else:
                            held = [live.pop(ptr)]
                            t0 = ns()
                            held.clear()  # the tensor's last reference: its free is what is timed
                            t1 = ns()
                        if timed:
                            pairs.append(t_alloc.pop(ptr) + t1 - t0)
                for p in list(live.values()):
                    if kind == "raw":
                        cdelete(p)
                live.clear()
                torch.cuda.synchronize()
            per[kind] = {"pairs": len(pairs), "p50_ns": pct(pairs, 0.50), "p90_ns": pct(pairs, 0.90),
                         "p99_ns": pct(pairs, 0.99), "mean_ns": statistics.fmean(pairs) if pairs else 0.0}
        result["traces"][os.path.basename(path)] = per
    if memlake:
        st = memlake.stats()
        result["memlake_host_seconds"] = st.get("memlake.host_seconds")
    print("RESULT " + json.dumps(result))


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--allocators", default="native,expandable,memlake")
    p.add_argument("--repeats", type=int, default=3)
    p.add_argument("--events", type=int, default=60000, help="events of each trace replayed (per pass)")
    p.add_argument("--paths", default="raw,empty")
    p.add_argument("--traces", nargs="*", default=None)
    p.add_argument("--out", default="")
    p.add_argument("--worker", action="store_true", help=argparse.SUPPRESS)
    p.add_argument("--allocator", default="native", help=argparse.SUPPRESS)
    a = p.parse_args()
    a.traces = a.traces or default_traces()
    a.paths = a.paths.split(",")
    if a.worker:
        return worker(a)
    order = a.allocators.split(",")
    runs = run_rounds(__file__, order, a.repeats, ["--events", str(a.events), "--paths", ",".join(a.paths),
                                                   "--traces", *a.traces], a.out)
    # Per round ratios against native, median over rounds.
    summary = {}
    names = [os.path.basename(t) for t in a.traces]
    for al in order:
        for tr in names:
            for kind in a.paths:
                rows = []
                for r in range(a.repeats):
                    mine = [x for x in runs if x["allocator"] == al and x["round"] == r]
                    base = [x for x in runs if x["allocator"] == "native" and x["round"] == r]
                    if not mine or not base or tr not in mine[0]["traces"]:
                        continue
                    m, b = mine[0]["traces"][tr][kind], base[0]["traces"][tr][kind]
                    rows.append({k: m[k] for k in ("p50_ns", "p99_ns", "mean_ns")} |
                                {"p50_ratio": m["p50_ns"] / b["p50_ns"], "p99_ratio": m["p99_ns"] / b["p99_ns"]})
                if rows:
                    summary[f"{al}|{tr}|{kind}"] = {
                        "p50_us": statistics.median(x["p50_ns"] for x in rows) / 1e3,
                        "p99_us": statistics.median(x["p99_ns"] for x in rows) / 1e3,
                        "p50_vs_native": statistics.median(x["p50_ratio"] for x in rows),
                        "p99_vs_native": statistics.median(x["p99_ratio"] for x in rows),
                        "rounds": len(rows)}
    width = max(11, max(len(al) for al in order) + 1)
    print(f"{'allocator':<{width}}{'trace':<24}{'path':<6}{'p50 us':>8}{'p99 us':>8}{'p50/nat':>9}{'p99/nat':>9}")
    for k, v in summary.items():
        al, tr, kind = k.split("|")
        print(f"{al:<{width}}{tr[:23]:<24}{kind:<6}{v['p50_us']:>8.2f}{v['p99_us']:>8.2f}"
              f"{v['p50_vs_native']:>9.3f}{v['p99_vs_native']:>9.3f}")
    if a.out:
        with open(a.out, "w") as f:
            json.dump({"runs": runs, "summary": summary, "events": a.events, "traces": names}, f, indent=1)


if __name__ == "__main__":
    main()
