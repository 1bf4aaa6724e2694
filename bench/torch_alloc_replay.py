#!/usr/bin/env python3
"""The host cost of an allocator under PyTorch, without the model: replays an
allocation trace (RMM-style CSV, e.g. traces/opt13b-LRV.csv.gz) as
torch.empty / del through PyTorch's allocator interface, once per allocator,
each in its own process, and prints microseconds per allocation+free and the
difference to native. LRV fine-tuning is host-bound (the GPU idles ~80 % of a
step), so every microsecond an allocation costs the host is step time.

    python3 bench/torch_alloc_replay.py [--trace traces/opt13b-LRV.csv.gz]
        [--allocators native,null,memlake] [--passes 3]

Allocator specs as in torch_fragmentation.py (memlake:KEY=VALUE;...), plus
"null": bench/null_pluggable.cpp (an exact-size cache behind PyTorch's
CUDAPluggableAllocator, built here with nvcc), the floor of any plugged-in
allocator: memlake's own cost is its distance to "null", the wrapper's is
"null" against native. No kernels run: the time is PyTorch's tensor
creation plus the allocator's malloc and free, the same Python loop for
every allocator.
"""
import argparse
import gzip
import json
import os
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
sys.path.insert(0, HERE)
from _rounds import parse_allocator_spec as spec  # noqa: E402  (one syntax for every allocator benchmark)


def read_events(path):
    """[(True, ptr, size)] for allocations and [(False, ptr, 0)] for frees, in trace order."""
    opener = gzip.open if path.endswith(".gz") else open
    out = []
    with opener(path, "rt") as f:
        header = f.readline().strip().split(",")
        col = {k: i for i, k in enumerate(header)}
        for line in f:
            x = line.rstrip("\n").split(",")
            if len(x) < len(header):
                continue
            action = x[col["Action"]]
            if action == "allocate":
                out.append((True, x[col["Pointer"]], int(x[col["Size"]])))
            elif action == "free":
                out.append((False, x[col["Pointer"]], 0))
    return out


def worker(a):
    name, opts = spec(a.allocator)
    if name == "memlake":
        sys.path.insert(0, os.path.join(ROOT, "python"))
        import memlake.torch as mt
        mt.enable(**opts)
    elif name == "null":
        import torch
        torch.cuda.memory.change_current_allocator(
            torch.cuda.memory.CUDAPluggableAllocator(a.null_lib, "null_malloc", "null_free"))
    elif name != "native":
        raise SystemExit(f"unknown allocator {a.allocator}")
    import torch
    events = read_events(a.trace)
    allocs = sum(1 for e in events if e[0])
    torch.empty(1, device="cuda")
    torch.cuda.synchronize()
    seconds = []
    for _ in range(a.passes):
        live = {}
        t = time.perf_counter()
        for is_alloc, ptr, n in events:
            if is_alloc:
                live[ptr] = torch.empty(n, dtype=torch.uint8, device="cuda")
            else:
                live.pop(ptr, None)
        live.clear()
        seconds.append(time.perf_counter() - t)
        torch.cuda.synchronize()
    print("RESULT " + json.dumps(dict(allocator=a.allocator, allocs=allocs, events=len(events), seconds=seconds)))


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--trace", default=os.path.join(ROOT, "traces", "opt13b-LRV.csv.gz"))
    p.add_argument("--allocators", default="native,null,memlake")
    p.add_argument("--passes", type=int, default=3, help="replays per process; the best counts")
    p.add_argument("--rounds", type=int, default=2, help="processes per allocator, interleaved")
    p.add_argument("--out", default="")
    p.add_argument("--worker", action="store_true", help=argparse.SUPPRESS)
    p.add_argument("--allocator", default="native", help=argparse.SUPPRESS)
    p.add_argument("--null-lib", default="", help=argparse.SUPPRESS)
    a = p.parse_args()
    if a.worker:
        return worker(a)
    if any(spec(x)[0] == "null" for x in a.allocators.split(",")):
        a.null_lib = os.path.join(tempfile.mkdtemp(prefix="memlake-null-"), "null_pluggable.so")
        try:
            subprocess.run(["nvcc", "-O2", "-shared", "-Xcompiler", "-fPIC", "-o", a.null_lib,
                            os.path.join(HERE, "null_pluggable.cpp"), "-lcuda"], check=True)
        except (OSError, subprocess.CalledProcessError) as e:
            raise SystemExit(f"the 'null' allocator is built with nvcc, which failed ({e}); "
                             "leave it out of --allocators") from None
    results = []
    for rnd in range(a.rounds):
        order = a.allocators.split(",")
        for al in (order[::-1] if rnd % 2 else order):  # alternate the order: the host's speed drifts
            cmd = [sys.executable, os.path.abspath(__file__), "--worker", "--allocator", al, "--trace", a.trace,
                   "--passes", str(a.passes), "--null-lib", a.null_lib]
            r = subprocess.run(cmd, capture_output=True, text=True)
            line = [x for x in r.stdout.splitlines() if x.startswith("RESULT ")]
            if not line:
                raise SystemExit(f"{al} failed (exit {r.returncode}):\n{r.stderr[-3000:]}")
            results.append(json.loads(line[0][7:]))
    best = {}
    for r in results:
        best[r["allocator"]] = min(best.get(r["allocator"], float("inf")), min(r["seconds"]))
    n = results[0]["allocs"]
    base = best.get("native")
    print(f"{n} allocations and their frees from {os.path.basename(a.trace)}, best of "
          f"{a.rounds} processes x {a.passes} passes")
    print(f"{'allocator':<36}{'total s':>9}{'us per alloc+free':>19}{'vs native, us':>15}")
    for al, s in best.items():
        extra = f"{(s - base) / n * 1e6:+15.2f}" if base is not None else f"{'-':>15}"
        print(f"{al:<36}{s:>9.3f}{s / n * 1e6:>19.2f}{extra}")
    if a.out:
        with open(a.out, "w") as f:
            json.dump(dict(trace=a.trace, runs=results, best=best), f, indent=1)


if __name__ == "__main__":
    main()
