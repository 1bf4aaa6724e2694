#!/usr/bin/env python3
"""Fragmentation benchmark: PyTorch's native allocator, native with
expandable_segments, and memlake, each in its own process, on the same
fine-tuning workload (HF causal LM, variable-length batches, the
../shared/workloads/hf_finetune.py recipe).

    python3 bench/torch_fragmentation.py                       # opt-1.3b, LR R LRV, 25 steps, batch 16
    python3 bench/torch_fragmentation.py --max-batch --cap 24G # also: largest batch under a 24 GiB cap
    python3 bench/torch_fragmentation.py --model opt-350m-ish --strategies LR --steps 5

Prints a table and writes JSON (--out), a plot of reserved vs allocated per
step (--plot, PNG with matplotlib, else SVG), and the allocation trace of
the first native run (--trace, replayable with `memlake replay`).
Strategy letters: L = LoRA (peft), R = recomputation, V = batch size varied
inversely with sequence length.
"""
import argparse
import gzip
import json
import os
import random
import shutil
import subprocess
import sys
import time

from _rounds import parse_allocator_spec

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)

CONFIGS = {
    "opt-1.3b": ("OPTConfig", dict(hidden_size=2048, num_hidden_layers=24, ffn_dim=8192, num_attention_heads=32,
                                   vocab_size=50272, max_position_embeddings=2048, word_embed_proj_dim=2048)),
    "opt-350m-ish": ("OPTConfig", dict(hidden_size=1024, num_hidden_layers=24, ffn_dim=4096, num_attention_heads=16,
                                       vocab_size=50272, max_position_embeddings=2048, word_embed_proj_dim=1024)),
    "opt-tiny": ("OPTConfig", dict(hidden_size=256, num_hidden_layers=2, ffn_dim=1024, num_attention_heads=4,
                                   vocab_size=50272, max_position_embeddings=2048, word_embed_proj_dim=256)),
}
# shim: PyTorch's own caching allocator on top of libmemlake_preload.so;
# shim-nocache: PYTORCH_NO_CUDA_MEMORY_CACHING=1 on the shim (PyTorch calls
# cudaMalloc/cudaFree per tensor, memlake does all the caching).
ALLOCATORS = ("native", "expandable", "memlake", "shim", "shim-nocache")
SHIMS = ("shim", "shim-nocache")


def allocator_spec(spec):
    """parse_allocator_spec, for the allocators this benchmark runs."""
    name, opts = parse_allocator_spec(spec)
    if name not in ALLOCATORS:
        raise SystemExit(f"unknown allocator '{spec}' (expected one of {', '.join(ALLOCATORS)}, memlake:KEY=VALUE,...)")
    return name, opts


def parse_size(s):
    s = str(s).strip().upper().rstrip("B").rstrip("I")
    mult = {"K": 1 << 10, "M": 1 << 20, "G": 1 << 30, "T": 1 << 40}
    if s and s[-1] in mult:
        return int(float(s[:-1]) * mult[s[-1]])
    return int(float(s))


def step_durations(timeline):
    """[(step, seconds, tokens)] from a timeline of dicts with 'step', 't' (seconds since
    the start, taken at the step's end) and 'tokens'."""
    return [(x["step"], x["t"] - (timeline[i - 1]["t"] if i else 0.0), x["tokens"]) for i, x in enumerate(timeline)]


def outlier_steps(timeline, factor=3.0):
    """Steps after the first that took more than factor x the median step. Taken from
    the native run and left out of every allocator's rates in that repeat: one-off
    host work that has nothing to do with memory (cuDNN compiling attention kernels
    for a new shape took 6-8 s of one LRV step in every run, native included, and
    decided the whole run's rate). A step only memlake makes slow is still counted."""
    d = step_durations(timeline)[1:]
    if not d:
        return []
    ordered = sorted(x[1] for x in d)
    median = ordered[len(ordered) // 2]
    return [k for k, t, _ in d if t > factor * median]


def step_rates(timeline, leave_out=()):
    """Tokens per second after the first step ('steady', which skips one-time set-up)
    and over the second half ('late': memory has mostly stopped growing), without the
    steps in leave_out."""
    d = [x for x in step_durations(timeline) if x[0] not in set(leave_out)]
    steps = [x["step"] for x in timeline]

    def rate(xs):
        t = sum(x[1] for x in xs)
        return sum(x[2] for x in xs) / t if t > 0 else 0.0
    out = {}
    if len(timeline) > 1:
        out["steady_tokens_per_s"] = rate([x for x in d if x[0] != steps[0]])
    h = len(timeline) // 2
    if h >= 2:
        out["late_tokens_per_s"] = rate([x for x in d if x[0] in steps[h:]])
    return out


def repeat_summary(runs, strategies, allocators):
    """Per strategy and non-native allocator: the median and range of the per-repeat
    steady ratio, and the pooled ratio (mean steady tokens/s over the repeats against
    native's mean), which is steadier when single runs vary by 20-30 %."""
    out = {}
    for s in strategies:
        nat = [r["steady_tokens_per_s"] for r in runs
               if r["strategy"] == s and r["allocator"] == "native" and r.get("steady_tokens_per_s")]
        for al in allocators:
            if allocator_spec(al)[0] == "native":
                continue
            mine = [r for r in runs if r["strategy"] == s and r["allocator"] == al and "steady_vs_native" in r]
            v = sorted(r["steady_vs_native"] for r in mine)
            if not v or not nat:
                continue
            mean = sum(r["steady_tokens_per_s"] for r in mine) / len(mine)
            out[f"{s} {al}"] = dict(median=v[len(v) // 2], min=v[0], max=v[-1], n=len(v),
                                    pooled=mean / (sum(nat) / len(nat)))
    return out


# --------------------------------------------------------------------------- worker

def worker(a):
    """One run in this process: prints one JSON line."""
    cap = parse_size(a.cap) if a.cap else 0
    kind, opts = allocator_spec(a.allocator)
    a.allocator = kind
    if kind == "memlake":
        sys.path.insert(0, os.path.join(ROOT, "python"))
        import memlake
        import memlake.torch as mt
        if cap:
            opts["memory_cap"] = cap
        mt.enable(**opts)
    elif kind in SHIMS:  # the preloaded shim already routes cudaMalloc to the same libmemlake
        sys.path.insert(0, os.path.join(ROOT, "python"))
        import memlake
    import torch
    import transformers
    if a.deterministic:
        # Strict: an op without a deterministic kernel raises instead of warning, and attention
        # runs as plain matmuls (eager) rather than fused kernels with atomics in their backward.
        torch.use_deterministic_algorithms(True)
        torch.backends.cudnn.benchmark = False
    if a.allocator not in ("memlake",) + SHIMS and cap:
        torch.cuda.set_per_process_memory_fraction(min(1.0, cap / torch.cuda.get_device_properties(0).total_memory))

    if a.trace:
        torch.cuda.memory._record_memory_history(enabled="all", context=None, stacks="python", max_entries=50_000_000)

    def mem():
        if a.allocator == "memlake" or a.allocator == "shim-nocache":
            s = memlake.stats()
            return s["requested_bytes.all.peak"], s["reserved_bytes.all.peak"]
        if a.allocator == "shim":  # tensors as PyTorch counts them; physical memory as memlake holds it
            return torch.cuda.max_memory_allocated(), memlake.stats()["reserved_bytes.all.peak"]
        return torch.cuda.max_memory_allocated(), torch.cuda.max_memory_reserved()

    def reset_peaks():
        if a.allocator in ("memlake",) + SHIMS:
            memlake.reset_peak_stats()
        if a.allocator != "memlake":
            torch.cuda.reset_peak_memory_stats()

    def is_oom(e):
        if a.allocator == "memlake":
            return mt.is_oom(e)
        return isinstance(e, torch.OutOfMemoryError)

    random.seed(a.seed)
    torch.manual_seed(a.seed)
    cls, kw = CONFIGS[a.model]
    cfg = getattr(transformers, cls)(**kw)
    res = dict(allocator=a.allocator, model=a.model, strategy=a.strategy, steps=a.steps, batch=a.batch, cap=cap,
               oom=False, losses=[], timeline=[])
    t_start = time.time()
    try:
        with torch.device("cuda"):
            extra = dict(attn_implementation="eager") if a.deterministic else {}
            model = transformers.AutoModelForCausalLM.from_config(cfg, torch_dtype=torch.bfloat16, **extra)
        if "R" in a.strategy:
            model.gradient_checkpointing_enable()
            model.config.use_cache = False
        if "L" in a.strategy:
            import peft
            model = peft.get_peft_model(model, peft.LoraConfig(r=16, lora_alpha=32, target_modules=["q_proj", "v_proj"]))
            if "R" in a.strategy:
                model.enable_input_require_grads()
        opt = torch.optim.AdamW([q for q in model.parameters() if q.requires_grad], lr=1e-4)
        torch.cuda.synchronize()
        t0 = time.time()
        tokens = 0
        prof_range = tuple(int(x) for x in a.profile_steps.split(":")) if a.profile_steps else None
        prof = None
        for step in range(a.steps):
            if prof_range and step == prof_range[0]:
                torch.cuda.synchronize()
                prof = torch.profiler.profile(activities=[torch.profiler.ProfilerActivity.CPU,
                                                          torch.profiler.ProfilerActivity.CUDA])
                prof.__enter__()
                tp0 = time.time()
            seq = random.randint(a.min_seq, a.max_seq)
            bs = max(1, a.batch * a.max_seq // (4 * seq)) if "V" in a.strategy else a.batch
            ids = torch.randint(0, cfg.vocab_size, (bs, seq), device="cuda")
            reset_peaks() if step else None
            out = model(input_ids=ids, labels=ids)
            out.loss.backward()
            opt.step()
            opt.zero_grad(set_to_none=True)
            res["losses"].append(float(out.loss.detach().float().item()))
            tokens += bs * seq
            pa, pr = mem()
            point = dict(step=step, t=time.time() - t0, tokens=bs * seq, peak_allocated=pa, peak_reserved=pr)
            if a.allocator in ("memlake",) + SHIMS:  # cumulative time inside memlake's driver calls
                st = memlake.stats()  # host waits for the GPU are counted as synchronize
                point.update(driver_s=st["memlake.driver_seconds"], wait_s=st["memlake.seconds.synchronize"],
                             maps=st["memlake.calls.map"], slow_s=st["memlake.slow_path_seconds"],
                             host_s=st["memlake.host_seconds"])
            res["timeline"].append(point)
            del out, ids
            if prof is not None and step == prof_range[1]:
                torch.cuda.synchronize()
                wall = time.time() - tp0
                prof.__exit__(None, None, None)
                name = f"profile_{a.allocator}_{a.strategy}_{os.getpid()}.json"
                res["profile"] = profile_summary(prof, wall, prof_range,
                                                 os.path.join(a.profile_dir, name) if a.profile_dir else "")
                prof = None
        torch.cuda.synchronize()
        dt = time.time() - t0
        res["tokens_per_s"] = tokens / dt
        res["seconds"] = dt
        res.update(step_rates(res["timeline"]))  # the parent leaves out the native run's outlier steps
    except Exception as e:  # noqa: BLE001 - classify, then report
        if not is_oom(e):
            raise
        res["oom"] = True
        res["error"] = str(e).splitlines()[0][:300]
    res["peak_allocated"] = max([x["peak_allocated"] for x in res["timeline"]] or [0])
    res["peak_reserved"] = max([x["peak_reserved"] for x in res["timeline"]] or [0])
    res["utilization"] = res["peak_allocated"] / res["peak_reserved"] if res["peak_reserved"] else 0.0
    res["wall_s"] = time.time() - t_start
    if a.allocator in ("memlake",) + SHIMS:
        s = memlake.stats()
        res["memlake"] = {k: s[k] for k in ("memlake.stitches", "memlake.cache_hits", "memlake.stitch_reuses",
                                            "memlake.grows", "memlake.calls.create", "memlake.calls.map",
                                            "memlake.calls.set_access", "memlake.driver_seconds",
                                            "memlake.seconds.create", "memlake.seconds.map",
                                            "memlake.seconds.set_access", "memlake.repairs",
                                            "memlake.calls.unmap", "memlake.seconds.unmap",
                                            "memlake.calls.event_record", "memlake.calls.event_query",
                                            "memlake.calls.synchronize", "memlake.seconds.synchronize",
                                            "memlake.slow_paths", "memlake.slow_path_seconds",
                                            "memlake.host_seconds")}
        tl = res["timeline"]
        if len(tl) > 1:  # driver time in the steady steps (after the first), against their wall time
            res["memlake"]["steady_driver_s"] = tl[-1]["driver_s"] - tl[0]["driver_s"]
            res["memlake"]["late_driver_s"] = tl[-1]["driver_s"] - tl[len(tl) // 2 - 1]["driver_s"]
            # All of memlake's host time in those steps (every alloc and free, slow paths and driver included).
            res["memlake"]["steady_host_s"] = tl[-1]["host_s"] - tl[0]["host_s"]
            res["memlake"]["steady_slow_s"] = tl[-1]["slow_s"] - tl[0]["slow_s"]
    if a.trace:
        write_trace(torch, a.trace)
    print("RESULT " + json.dumps(res), flush=True)


def write_trace(torch, path):
    import gzip
    snap = torch.cuda.memory._snapshot()
    torch.cuda.memory._record_memory_history(enabled=None)
    tr = snap["device_traces"][0]
    t0 = tr[0]["time_us"] if tr else 0
    acts = {"alloc": "allocate", "free_requested": "free", "segment_alloc": "segment_alloc",
            "segment_free": "segment_free"}
    with gzip.open(path, "wt") as f:
        f.write("Thread,Time,Action,Pointer,Size,Stream\n")
        for e in tr:
            act = acts.get(e["action"])
            if act:
                f.write(f"0,{e['time_us'] - t0},{act},0x{e['addr']:x},{e['size']},{e['stream']}\n")


# --------------------------------------------------------------------------- parent

def profile_summary(prof, wall, steps, path):
    """GPU busy time (the union of kernel and copy intervals) against wall time over the
    profiled steps, and the operators with the most host and device time. A GPU that idles
    while the host is busy points at host-side cost; the chrome trace shows where."""
    from torch.autograd import DeviceType
    events = prof.events()
    spans = sorted((e.time_range.start, e.time_range.end) for e in events if e.device_type == DeviceType.CUDA)
    busy, end = 0, None
    for s, e in spans:  # merge overlapping intervals (µs)
        if end is None or s > end:
            busy += e - s
            end = e
        elif e > end:
            busy += e - end
            end = e
    avgs = prof.key_averages()

    def dev(e):
        return getattr(e, "self_device_time_total", None) or getattr(e, "self_cuda_time_total", 0)

    out = dict(steps=list(steps), wall_s=wall, gpu_busy_s=busy / 1e6, gpu_idle_fraction=max(0.0, 1 - busy / 1e6 / wall),
               top_host=[[e.key, e.self_cpu_time_total / 1e6, e.count]
                         for e in sorted(avgs, key=lambda e: -e.self_cpu_time_total)[:15]],
               top_device=[[e.key, dev(e) / 1e6, e.count] for e in sorted(avgs, key=lambda e: -dev(e))[:15]])
    if path:
        prof.export_chrome_trace(path)
        with open(path, "rb") as f, gzip.open(path + ".gz", "wb") as g:
            shutil.copyfileobj(f, g)
        os.remove(path)
        out["trace"] = path + ".gz"
    return out


def run_worker(args, allocator, strategy, steps, batch, cap=None, trace=None, deterministic=False, profile=False):
    cmd = [sys.executable, os.path.abspath(__file__), "--worker", "--allocator", allocator, "--model", args.model,
           "--strategy", strategy, "--steps", str(steps), "--batch", str(batch), "--min-seq", str(args.min_seq),
           "--max-seq", str(args.max_seq), "--seed", str(args.seed)]
    # Always explicit: the worker's own --cap default (24G, for the searches) must not cap table runs.
    cmd += ["--cap", str(cap) if cap else "0"]
    if trace:
        cmd += ["--trace", trace]
    if deterministic:
        cmd += ["--deterministic"]
    if profile and args.profile_steps:
        cmd += ["--profile-steps", args.profile_steps,
                "--profile-dir", args.profile_dir or os.path.dirname(os.path.abspath(args.out))]
    env = dict(os.environ)
    env.pop("PYTORCH_CUDA_ALLOC_CONF", None)
    kind, opts = allocator_spec(allocator)
    if kind == "expandable":
        env["PYTORCH_CUDA_ALLOC_CONF"] = "expandable_segments:True"
    if kind in SHIMS:
        lib = env.get("MEMLAKE_LIBRARY") or os.path.join(ROOT, "build", "libmemlake.so")
        env["LD_PRELOAD"] = os.path.join(os.path.dirname(lib), "libmemlake_preload.so")
        env["MEMLAKE_LIBRARY"] = lib
        env["MEMLAKE_BACKEND"] = "cuda"
        for k, v in opts.items():
            env["MEMLAKE_" + k.upper()] = str(v)
        if cap:
            env["MEMLAKE_MEMORY_CAP"] = str(parse_size(cap))
        if kind == "shim-nocache":
            env["PYTORCH_NO_CUDA_MEMORY_CACHING"] = "1"
    if deterministic:
        env["CUBLAS_WORKSPACE_CONFIG"] = ":4096:8"
    return subprocess.Popen(cmd, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)


def collect(p, what):
    out, err = p.communicate()
    for line in out.splitlines():
        if line.startswith("RESULT "):
            return json.loads(line[7:])
    raise RuntimeError(f"{what} failed (exit {p.returncode}):\n{err[-3000:]}")


def gib(n):
    return n / (1 << 30)


def probe(args, allocator, batch, cap):
    return collect(run_worker(args, allocator, "LR" if not args.max_batch_strategy else args.max_batch_strategy,
                              args.probe_steps, batch, cap=cap), f"{allocator} batch {batch}")


def fits(args, allocator, batch, cap):
    return not probe(args, allocator, batch, cap)["oom"]


def max_batch(args, allocator, cap):
    """Largest batch that fits: doubling from --batch, then bisection to within 1."""
    lo, hi = 0, args.batch
    while fits(args, allocator, hi, cap):
        lo, hi = hi, hi * 2
        if hi > args.batch_limit:
            return lo
    while hi - lo > 1:
        mid = (lo + hi) // 2
        if fits(args, allocator, mid, cap):
            lo = mid
        else:
            hi = mid
    return lo


def live_bound(args, allocators, batch, cap):
    """Peak live bytes at `batch` with no cap: above the cap, no allocator can run that batch under it."""
    al = next((x for x in allocators if allocator_spec(x)[0] == "memlake"), "memlake")
    r = probe(args, al, batch, None)
    over = r["peak_allocated"] > cap
    if r["oom"]:  # the device itself was full: the peak seen is only a lower bound
        print(f"warning: the uncapped probe at batch {batch} ran out of memory ({r.get('error', '')[:120]}); "
              f"its peak is a lower bound", flush=True)
    print(f"peak live (allocated) bytes at batch {batch} ({args.max_batch_strategy}, {args.probe_steps} steps, uncapped): "
          f"{gib(r['peak_allocated']):.2f} GiB, {'over' if over else 'under'} the {gib(cap):.0f} GiB cap: "
          f"{'no allocator can fit it' if over else 'an allocator without waste could fit it'}", flush=True)
    return dict(batch=batch, peak_allocated=r["peak_allocated"], cap=cap, over_cap=over, probe_oom=r["oom"])


def plot(results, path):
    series = [(r["allocator"], r["timeline"]) for r in results]
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
        fig, ax = plt.subplots(figsize=(9, 4.5))
        colors = {"native": "tab:red", "expandable": "tab:orange", "memlake": "tab:blue"}
        variants = iter(["tab:green", "tab:purple", "tab:brown", "tab:cyan"])
        for name, tl in series:
            if name not in colors:
                colors[name] = next(variants, None)
            x = [p["step"] for p in tl]
            ax.plot(x, [gib(p["peak_reserved"]) for p in tl], color=colors.get(name), label=f"{name} reserved")
            ax.plot(x, [gib(p["peak_allocated"]) for p in tl], color=colors.get(name), linestyle="--",
                    label=f"{name} allocated")
        ax.set_xlabel("training step")
        ax.set_ylabel("peak memory in step (GiB)")
        ax.set_title(f"{results[0]['model']} {results[0]['strategy']}: reserved vs allocated")
        ax.legend(fontsize=8, ncol=3)
        ax.grid(alpha=0.3)
        if not path.endswith(".png"):
            path = os.path.splitext(path)[0] + ".png"
        fig.tight_layout()
        fig.savefig(path, dpi=120)
        return path
    except ImportError:
        path = os.path.splitext(path)[0] + ".svg"
        write_svg(series, path, f"{results[0]['model']} {results[0]['strategy']}: reserved (solid) vs allocated (dashed)")
        return path


def write_svg(series, path, title):
    """Dependency-free line chart."""
    w, h, m = 900, 450, 60
    pts = [p for _, tl in series for p in tl]
    xmax = max([p["step"] for p in pts] or [1]) or 1
    ymax = max([gib(max(p["peak_reserved"], p["peak_allocated"])) for p in pts] or [1]) * 1.1 or 1
    colors = ["#d62728", "#ff7f0e", "#1f77b4", "#2ca02c"]
    sx = lambda x: m + (w - 2 * m) * x / xmax  # noqa: E731
    sy = lambda y: h - m - (h - 2 * m) * y / ymax  # noqa: E731
    out = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{w}" height="{h}" font-family="sans-serif" font-size="12">',
           f'<rect width="{w}" height="{h}" fill="white"/>',
           f'<text x="{w / 2}" y="20" text-anchor="middle">{title}</text>',
           f'<line x1="{m}" y1="{h - m}" x2="{w - m}" y2="{h - m}" stroke="black"/>',
           f'<line x1="{m}" y1="{m}" x2="{m}" y2="{h - m}" stroke="black"/>',
           f'<text x="{w / 2}" y="{h - 15}" text-anchor="middle">training step</text>',
           f'<text x="15" y="{h / 2}" transform="rotate(-90 15 {h / 2})" text-anchor="middle">peak memory in step (GiB)</text>']
    for i in range(6):
        y = ymax * i / 5
        out.append(f'<text x="{m - 5}" y="{sy(y) + 4}" text-anchor="end">{y:.1f}</text>')
    for k, (name, tl) in enumerate(series):
        c = colors[k % len(colors)]
        for key, dash in (("peak_reserved", ""), ("peak_allocated", ' stroke-dasharray="6 4"')):
            d = " ".join(f"{sx(p['step']):.1f},{sy(gib(p[key])):.1f}" for p in tl)
            out.append(f'<polyline fill="none" stroke="{c}" stroke-width="2"{dash} points="{d}"/>')
        out.append(f'<text x="{w - m - 150}" y="{m + 16 * k}" fill="{c}">{name}</text>')
    out.append("</svg>")
    with open(path, "w") as f:
        f.write("\n".join(out))


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--model", default="opt-1.3b", choices=sorted(CONFIGS))
    p.add_argument("--strategies", default="LR,R,LRV")
    p.add_argument("--allocators", default=",".join(ALLOCATORS),
                   help="comma list: native, expandable, memlake, memlake:KEY=VALUE;KEY=VALUE (memlake options)")
    p.add_argument("--steps", type=int, default=25)
    p.add_argument("--repeats", type=int, default=1, help="interleaved repeats of the table runs (noise bounds)")
    p.add_argument("--order", choices=("alternate", "fixed"), default="alternate",
                   help="alternate: odd repeats run the allocators in reverse order (host speed drifts)")
    p.add_argument("--batch", type=int, default=16)
    p.add_argument("--min-seq", type=int, default=64)
    p.add_argument("--max-seq", type=int, default=1024)
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--cap", default="24G", help="memory cap for --max-batch and --bound-batch (table runs are uncapped)")
    p.add_argument("--max-batch", action="store_true", help="search the largest batch under --cap per allocator")
    p.add_argument("--max-batch-strategy", default="LR")
    p.add_argument("--probe-steps", type=int, default=4)
    p.add_argument("--bound-batch", type=int, default=0,
                   help="without --max-batch: only measure the live bytes at this batch (is it above --cap?)")
    p.add_argument("--batch-limit", type=int, default=1024)
    p.add_argument("--loss-check", action="store_true", help="deterministic short runs: losses must match native")
    p.add_argument("--skip-table", action="store_true")
    p.add_argument("--out", default="torch_fragmentation.json")
    p.add_argument("--plot", default="torch_fragmentation.png")
    p.add_argument("--trace", default="", help="write the first native run's allocation trace here (.csv.gz)")
    p.add_argument("--profile-steps", default="", help="A:B: torch.profiler over steps A..B of each table run: GPU busy "
                   "against wall time, top host and device operators, a chrome trace beside --out (or --profile-dir)")
    p.add_argument("--profile-dir", default="")
    # worker mode
    p.add_argument("--worker", action="store_true", help=argparse.SUPPRESS)
    p.add_argument("--allocator", default="native", help=argparse.SUPPRESS)
    p.add_argument("--strategy", default="LR", help=argparse.SUPPRESS)
    p.add_argument("--deterministic", action="store_true", help=argparse.SUPPRESS)
    a = p.parse_args()
    if a.worker:
        return worker(a)

    allocators = a.allocators.split(",")
    report = dict(model=a.model, steps=a.steps, batch=a.batch, seq=[a.min_seq, a.max_seq], seed=a.seed, runs=[])
    if not a.skip_table:
        # Warm-up process (discarded): the first CUDA process pays driver and GPU wake-up costs.
        collect(run_worker(a, "native", a.strategies.split(",")[0], 2, a.batch), "warm-up")
        print(f"{'strategy':<9}{'allocator':<26}{'peak alloc GiB':>15}{'peak resv GiB':>14}{'util':>7}"
              f"{'tok/s all':>10}{'tok/s steady':>13}{'steady vs native':>17}{'2nd half vs native':>19}"
              f"{'driver s (steady, 2nd half)':>29}", flush=True)
        for s, rep in [(s, k) for s in a.strategies.split(",") for k in range(a.repeats)]:
            # Odd repeats run the allocators in reverse order, so a drift of the host's speed
            # during the runs (seen: native 9.1k then 11.7k tokens/s) favours none of them.
            order = allocators[::-1] if (a.order == "alternate" and rep % 2) else allocators
            batch_runs = {}
            for al in order:  # one at a time: tokens/s must not share the GPU
                trace = a.trace if (a.trace and al == "native" and not report["runs"] and not batch_runs) else None
                r = collect(run_worker(a, al, s, a.steps, a.batch, trace=trace, profile=True), f"{al} {s}")
                r["allocator"] = al
                r["repeat"] = rep
                batch_runs[al] = r
            native = batch_runs.get("native")
            leave_out = outlier_steps(native["timeline"]) if native and not native["oom"] else []
            for r in batch_runs.values():
                if leave_out and not r["oom"]:
                    r.update(step_rates(r["timeline"], leave_out), left_out_steps=leave_out)
            for al in allocators:
                r = batch_runs[al]
                report["runs"].append(r)
                rel = float("nan")
                if native and not r["oom"] and native.get("steady_tokens_per_s"):
                    rel = r.get("steady_tokens_per_s", 0) / native["steady_tokens_per_s"]
                    r["steady_vs_native"] = rel
                    if native.get("late_tokens_per_s") and r.get("late_tokens_per_s"):
                        r["late_vs_native"] = r["late_tokens_per_s"] / native["late_tokens_per_s"]
                    r["all_vs_native"] = r.get("tokens_per_s", 0) / native["tokens_per_s"]
                m = r.get("memlake", {})
                drv = (f"{m['memlake.driver_seconds']:.2f} ({m.get('steady_driver_s', 0):.2f}, "
                       f"{m.get('late_driver_s', 0):.2f})") if m else "-"
                print(f"{s:<9}{al:<26}{gib(r['peak_allocated']):>15.2f}{gib(r['peak_reserved']):>14.2f}"
                      f"{r['utilization']:>7.3f}{r.get('tokens_per_s', 0):>10.0f}{r.get('steady_tokens_per_s', 0):>13.0f}"
                      f"{rel:>17.3f}{r.get('late_vs_native', float('nan')):>19.3f}{drv:>29}"
                      + ("  OOM" if r["oom"] else "")
                      + (f"  (steps {', '.join(map(str, leave_out))} left out: over 3x native's median step)"
                         if leave_out else ""), flush=True)
                if m and "steady_host_s" in m:  # a run that went OOM in its first step has no steady steps
                    print(f"{'':<9}  inside memlake's alloc and free: {m['memlake.host_seconds']:.2f} s, steady steps "
                          f"{m.get('steady_host_s', 0):.2f} s (slow paths {m.get('steady_slow_s', 0):.2f} s, driver "
                          f"{m.get('steady_driver_s', 0):.2f} s) over {r['timeline'][-1]['t'] - r['timeline'][0]['t']:.2f} s",
                          flush=True)
                if "profile" in r:
                    pr = r["profile"]
                    print(f"{'':<9}  profiled steps {pr['steps'][0]}-{pr['steps'][1]}: wall {pr['wall_s']:.3f} s, GPU busy "
                          f"{pr['gpu_busy_s']:.3f} s (idle {100 * pr['gpu_idle_fraction']:.1f} %); top host op "
                          f"{pr['top_host'][0][0]} {pr['top_host'][0][1]:.3f} s", flush=True)
        if a.repeats > 1:
            report["repeat_summary"] = repeat_summary(report["runs"], a.strategies.split(","), allocators)
            for key, v in report["repeat_summary"].items():
                print(f"{key:<35} steady vs native over {v['n']} repeats: median {v['median']:.3f}, "
                      f"range {v['min']:.3f} .. {v['max']:.3f}; mean tokens/s against native's mean {v['pooled']:.3f}")
        first = [r for r in report["runs"] if r["strategy"] == a.strategies.split(",")[0] and r["repeat"] == 0]
        if a.plot and first:
            report["plot"] = plot(first, a.plot)
            print("plot:", report["plot"])
    if a.loss_check:
        # Deterministic kernels; a second native run is the control: if native differs from itself,
        # the workload is not deterministic and no allocator can be held to bit-identical losses.
        names = ["native", "native#2"] + [al for al in allocators if allocator_spec(al)[0] != "native"]
        procs = [(al, run_worker(a, al, a.strategies.split(",")[0], 5, a.batch, deterministic=True)) for al in names]
        losses = {al: collect(pr, f"loss check {al}")["losses"] for al, pr in procs}
        report["loss_check"] = dict(losses=losses, identical={al: losses[al] == losses["native"] for al in names},
                                    max_abs_diff={al: max(abs(x - y) for x, y in zip(losses[al], losses["native"]))
                                                  for al in names})
        print("loss check (deterministic, 5 steps) identical to native:", json.dumps(report["loss_check"]["identical"]),
              "max |diff|:", json.dumps(report["loss_check"]["max_abs_diff"]))
    if a.max_batch:
        cap = parse_size(a.cap)
        # The searches run side by side (one process each, each capped): only memory is measured.
        import concurrent.futures as cf
        with cf.ThreadPoolExecutor(len(allocators)) as ex:
            found = dict(zip(allocators, ex.map(lambda al: max_batch(a, al, cap), allocators)))
        report["max_batch"] = dict(cap=cap, strategy=a.max_batch_strategy, probe_steps=a.probe_steps, batch=found)
        base = found.get("native") or 1
        print(f"largest batch under {a.cap} ({a.max_batch_strategy}, {a.probe_steps} steps): "
              + ", ".join(f"{k} {v} ({v / base:.2f}x)" for k, v in found.items()))
        # The bound no allocator can beat: the live bytes of one batch more than the best found, with no cap.
        report["max_batch"]["bound"] = live_bound(a, allocators, max(found.values()) + 1, cap)
    elif a.bound_batch:
        report["bound"] = live_bound(a, allocators, a.bound_batch, parse_size(a.cap))
    with open(a.out, "w") as f:
        json.dump(report, f, indent=1)
    print("json:", a.out)


if __name__ == "__main__":
    main()
