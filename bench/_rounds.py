"""What the allocator benchmarks under PyTorch share: each allocator in its own
process, rounds alternating the order (a shared host drifts), a ratio per
round against native in the same round, the median over rounds.

Allocators: native, expandable (PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True),
memlake (memlake.torch.enable()), and memlake with options:
memlake:max_mapped_ratio=1.5;small_max=512K (keys of `memlake options`; the
syntax of bench/torch_fragmentation.py too). One key is memlake.torch.enable()'s, not an option's:
torch_direct=0|1 (1: memlake as PyTorch's CUDAAllocator itself; 0, the default: through
CUDAPluggableAllocator), so both paths can run side by side.

A benchmark's worker calls use_allocator() before importing torch and prints
one line "RESULT {json}"; its main calls run_rounds() and ratio_summary().
"""
import json
import os
import statistics
import subprocess
import sys
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def parse_allocator_spec(spec):
    """'memlake:granularity=8M;small_max=1M' -> ('memlake', {'granularity': '8M', ...}); '#2' suffixes label
    repeats. Any name: the caller knows which it runs (every allocator benchmark parses with this)."""
    name, _, rest = spec.partition(":")
    opts = dict(kv.split("=", 1) for kv in rest.split(";") if kv) if rest else {}
    return name.split("#")[0], opts


def use_allocator(spec):
    """Makes `spec` PyTorch's CUDA allocator for this process (before torch allocates anything): native,
    expandable, or memlake with options (memlake:KEY=VALUE;KEY=VALUE, keys of `memlake options`).
    Returns the memlake module for memlake, else None."""
    name, opts = parse_allocator_spec(spec)
    if name == "expandable" and not opts:
        os.environ["PYTORCH_CUDA_ALLOC_CONF"] = "expandable_segments:True"
        return None
    if name == "native" and not opts:
        return None
    if name != "memlake":
        raise SystemExit(f"unknown allocator {spec!r} (native, expandable, memlake, memlake:KEY=VALUE;KEY=VALUE)")
    sys.path.insert(0, os.path.join(ROOT, "python"))
    import memlake
    import memlake.torch as mt
    mt.enable(**opts)
    return memlake


def run_rounds(script, allocators, repeats, args, out="", describe=None):
    """Runs `script --worker --allocator A *args` for every allocator, `repeats` rounds, odd rounds in
    reverse order. Returns the workers' results (each with its "round"); a failed worker is reported
    and skipped. With `out`, what has run so far is kept in out + ".partial" should the rest be cut short."""
    runs = []
    for r in range(repeats):
        for al in (allocators[::-1] if r % 2 else allocators):
            t0 = time.time()
            pr = subprocess.run([sys.executable, os.path.abspath(script), "--worker", "--allocator", al, *args],
                                capture_output=True, text=True)
            line = [x for x in pr.stdout.splitlines() if x.startswith("RESULT ")]
            if not line:
                print(f"{al} failed (exit {pr.returncode}):\n{pr.stderr[-3000:]}", file=sys.stderr)
                continue
            res = json.loads(line[0][7:])
            res["round"], res["seconds_process"] = r, time.time() - t0
            runs.append(res)
            if out:
                with open(out + ".partial", "w") as f:
                    json.dump({"runs": runs}, f)
            print(f"round {r} {al}: {describe(res) if describe else ''}", file=sys.stderr, flush=True)
    return runs


def ratio_summary(runs, allocators, rate):
    """Per allocator: the median of `rate`, of its ratio to native's in the same round, and of the
    utilization (where the results have one), with the per-round ratios."""
    summary = {}
    for al in allocators:
        mine = {x["round"]: x for x in runs if x["allocator"] == al}
        base = {x["round"]: x for x in runs if x["allocator"] == "native"}
        if not mine:
            continue
        ratios = [mine[r][rate] / base[r][rate] for r in sorted(mine) if r in base and base[r][rate]]
        utils = [x["utilization"] for x in mine.values() if "utilization" in x]
        summary[al] = {rate: statistics.median(x[rate] for x in mine.values()),
                       "vs_native": statistics.median(ratios) if ratios else None, "ratios": ratios,
                       "utilization": statistics.median(utils) if utils else None, "rounds": len(mine)}
    return summary


def worker_args(a):
    """The parsed arguments as a worker's command line: every option but the driver's own
    (allocators, repeats, out, worker, allocator); a true flag as itself, a false one or None left
    out (store_true flags and plain values only)."""
    out = []
    for k, v in vars(a).items():
        if k in ("allocators", "repeats", "out", "worker", "allocator") or v is False or v is None:
            continue
        out.append(f"--{k.replace('_', '-')}" if v is True else f"--{k.replace('_', '-')}={v}")
    return out


def throughput_main(a, script, rate, unit):
    """The driver of a throughput benchmark: every allocator of a.allocators for a.repeats rounds,
    `rate` (e.g. "tokens_per_s") per round against native's, utilization; the table printed and,
    with a.out, the runs and summary written as JSON."""
    order = a.allocators.split(",")
    runs = run_rounds(script, order, a.repeats, worker_args(a), a.out,
                      lambda res: f"{res[rate]:.0f} {unit}/s, util {res['utilization']:.3f}")
    summary = ratio_summary(runs, order, rate)
    for al, v in summary.items():
        print(f"{al:<11} {v[rate]:>9.0f} {unit}/s  vs native {v['vs_native'] or 0:.3f} "
              f"(per round {', '.join(f'{x:.3f}' for x in v['ratios'])})  util {v['utilization']:.3f}")
    if a.out:
        with open(a.out, "w") as f:
            json.dump({"runs": runs, "summary": summary, "args": vars(a)}, f, indent=1)
    return summary


def parser(doc):
    """An argparse parser with the driver's own options (--allocators, --repeats, --out) and the
    worker's (--worker, --allocator, hidden)."""
    import argparse
    p = argparse.ArgumentParser(description=doc, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--allocators", default="native,expandable,memlake")
    p.add_argument("--repeats", type=int, default=3)
    p.add_argument("--out", default="")
    p.add_argument("--worker", action="store_true", help=argparse.SUPPRESS)
    p.add_argument("--allocator", default="native", help=argparse.SUPPRESS)
    return p


def host_seconds(memlake):
    """memlake's own host time so far (None for PyTorch's allocators)."""
    return memlake.stats()["memlake.host_seconds"] if memlake else None


def emit_result(memlake, torch, host0, **fields):
    """A worker's RESULT line: its fields, the peaks (requested for memlake, allocated for PyTorch)
    over reserved as the utilization, and memlake's host time since host0."""
    if memlake:
        s = memlake.stats()
        pa, pr = s["requested_bytes.all.peak"], s["reserved_bytes.all.peak"]
    else:
        pa, pr = torch.cuda.max_memory_allocated(), torch.cuda.max_memory_reserved()
    res = dict(fields, peak_allocated=pa, peak_reserved=pr, utilization=pa / pr if pr else 0.0)
    if memlake:
        res["memlake_host_seconds"] = host_seconds(memlake) - host0
    print("RESULT " + json.dumps(res))
    return res
