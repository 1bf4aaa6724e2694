"""What the allocator benchmarks under PyTorch share: each allocator in its own
process, rounds alternating the order (a shared host drifts), a ratio per
round against native in the same round, the median over rounds.

Allocators: native, expandable (PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True),
memlake (memlake.torch.enable()), and memlake variants with options from
memlake's environment table: memlake@MEMLAKE_MAX_MAPPED_RATIO=1.5 (several
joined by '@').

A benchmark's worker calls use_allocator() before importing torch and prints
one line "RESULT {json}"; its main calls run_rounds() and ratio_summary().
"""
import json
import os
import statistics
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def use_allocator(name):
    """Makes `name` PyTorch's CUDA allocator for this process (before torch allocates anything).
    Returns the memlake module for memlake and its variants, else None."""
    if name == "expandable":
        os.environ["PYTORCH_CUDA_ALLOC_CONF"] = "expandable_segments:True"
        return None
    if not name.startswith("memlake"):
        if name != "native":
            raise SystemExit(f"unknown allocator {name!r} (native, expandable, memlake, memlake@NAME=VALUE)")
        return None
    for kv in name.split("@")[1:]:
        k, _, v = kv.partition("=")
        os.environ[k] = v
    sys.path.insert(0, os.path.join(ROOT, "python"))
    import memlake
    import memlake.torch as mt
    mt.enable()
    return memlake


def run_rounds(script, allocators, repeats, args, out="", describe=None):
    """Runs `script --worker --allocator A *args` for every allocator, `repeats` rounds, odd rounds in
    reverse order. Returns the workers' results (each with its "round"); a failed worker is reported
    and skipped. With `out`, what has run so far is kept in out + ".partial" should the rest be cut short."""
    runs = []
    for r in range(repeats):
        for al in (allocators[::-1] if r % 2 else allocators):
            pr = subprocess.run([sys.executable, os.path.abspath(script), "--worker", "--allocator", al, *args],
                                capture_output=True, text=True)
            line = [x for x in pr.stdout.splitlines() if x.startswith("RESULT ")]
            if not line:
                print(f"{al} failed (exit {pr.returncode}):\n{pr.stderr[-3000:]}", file=sys.stderr)
                continue
            res = json.loads(line[0][7:])
            res["round"] = r
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
