"""Training past GPU memory: a 3.02 B llama-like model (../shared/anchors.md),
bf16, torch AdamW, batch 8 x 1024, full fine-tuning, under GPU memory caps,
with memlake.torch.tier() next to the ideal (uncapped, native allocator) and
gradient checkpointing, side by side in one invocation (each configuration in
its own process, so each has its own allocator).

    python3 bench/tier_finetune.py --out docs/tier_finetune.json
    python3 bench/tier_finetune.py --configs ideal,tier24 --steps 8
    python3 bench/tier_finetune.py --configs ideal,ckpt,tier16_ckpt_disk --host-limit 6G   # disk tier
    python3 bench/tier_finetune.py --model neox2.7b --configs ideal,ckpt,tier24_ckpt,tier32
    python3 bench/tier_finetune.py --model resnet152 --batch 256 --configs ideal,tier20

Per configuration: median step time of steps 4.. (the first iterations warm
up; tier()'s first is its profile), tokens/s, ratio to the ideal, peak GPU
memory (native: max_memory_reserved; memlake: its reserved peak, which the
cap bounds), the first 5 losses (compared with the uncapped run of the same
settings), and tier()'s counters. A configuration that runs out of memory
says so. Random weights (seeded), random tokens (seeded).
"""
import argparse
import contextlib
import json
import os
import re
import statistics
import subprocess
import sys
import time

from _gputrace import format_summary
from _models import resnet

GIB = 1 << 30

# name: (allocator, checkpointing, cap GiB or 0, tier budget or None, baseline method or None)
CONFIGS = {
    "ideal": ("native", False, 0, None, None),
    "ckpt": ("native", True, 0, None, None),
    "ckpt_cap24": ("native", True, 24, None, None),
    # The reference again, in its own process: are its losses reproducible to the bit? (SDPA's
    # backward has no deterministic kernel; deterministic mode only warns there.)
    "ckpt_again": ("native", True, 0, None, None),
    "tier24_ckpt": ("memlake", True, 24, "24G", None),
    "tier32": ("memlake", False, 32, "32G", None),
    "tier36": ("memlake", False, 36, "36G", None),
    # Baselines: torch's save_on_cpu (pinned), and ZeRO-Offload's method (re-implemented: DeepSpeed
    # is not installed on the GPU machine): gradients stream to pinned host buffers as backward
    # produces them, the optimizer's states and step live on the CPU, updated weights come back.
    "save_on_cpu_cap32": ("native", False, 32, None, "save_on_cpu"),
    "cpu_adam_cap24_ckpt": ("native", True, 24, None, "cpu_adam"),
    "cpu_adam_cap32": ("native", False, 32, None, "cpu_adam"),
}


class CpuAdam:
    """ZeRO-Offload's method (Ren et al., ATC'21; DeepSpeed's offload_optimizer), re-implemented
    over torch: each gradient is copied to a pinned host buffer on a side stream as soon as
    backward produces it and freed on the GPU; after backward the optimizer (torch AdamW, same
    hyperparameters and dtype as on the GPU, states on the host) steps on the CPU and the updated
    weights are copied back. DeepSpeed's vectorised CPUAdam and its delayed parameter update are
    not reproduced: torch's foreach AdamW on the host stands for the former."""

    def __init__(self, model, **hp):
        import torch
        self.torch = torch
        self.params = [p for p in model.parameters() if p.requires_grad]
        self.host = [p.detach().to("cpu").pin_memory() for p in self.params]
        self.grads = [torch.empty_like(h).pin_memory() for h in self.host]
        for h, g in zip(self.host, self.grads):
            h.grad = g
        self.opt = torch.optim.AdamW(self.host, **hp)
        self.stream = torch.cuda.Stream()
        self.index = {p: i for i, p in enumerate(self.params)}
        for p in self.params:
            p.register_post_accumulate_grad_hook(self._grad)

    def _grad(self, p):
        torch = self.torch
        g, s = p.grad, self.stream
        s.wait_stream(torch.cuda.current_stream())
        with torch.cuda.stream(s):
            self.grads[self.index[p]].copy_(g, non_blocking=True)
        g.record_stream(s)
        p.grad = None

    def step(self):
        self.stream.synchronize()
        self.opt.step()
        with self.torch.no_grad():
            for p, h in zip(self.params, self.host):
                p.copy_(h, non_blocking=True)

    def zero_grad(self, set_to_none=True):
        pass  # the host gradients are overwritten by the next backward's copies


def config(name):
    """A configuration by name, as CONFIGS' tuple and tier()'s margin in bytes (None: its default):
    CONFIGS, or the pattern tier<GiB>[_ckpt][_disk][_m<MiB>][_window] (memlake, tier() with that budget; _m: its
    margin, the reserve its plan keeps under the budget; _window: activations restored ahead within
    act_window only, act_prefetch_room=False), ckpt_cap<GiB> (native, checkpointing, capped)."""
    if name in CONFIGS:
        return CONFIGS[name] + (None,)
    m = re.fullmatch(r"tier(\d+)(_ckpt)?(_disk)?(?:_m(\d+))?(_window)?", name)
    if m:
        return ("memlake", bool(m.group(2)), int(m.group(1)), f"{m.group(1)}G", "disk" if m.group(3) else None,
                int(m.group(4)) << 20 if m.group(4) else None)
    m = re.fullmatch(r"ckpt_cap(\d+)", name)
    if m:
        return ("native", True, int(m.group(1)), None, None, None)
    return None


def build(a, ckpt, torch):
    """(model, batch(step, gen) -> loss) for --model."""
    if a.model == "resnet152":
        model = resnet(torch, 152).cuda().to(memory_format=torch.channels_last)
        if ckpt:  # each bottleneck block recomputed in backward
            from torch.utils.checkpoint import checkpoint
            for m in model.modules():
                if type(m).__name__ == "Bottleneck":
                    m.forward = (lambda f: lambda x: checkpoint(f, x, use_reentrant=False))(m.forward)

        def loss(step, gen):
            x = torch.randn(a.batch, 3, a.image, a.image, device="cuda", generator=gen)
            y = torch.randint(0, 1000, (a.batch,), device="cuda", generator=gen)
            with torch.autocast("cuda", dtype=torch.bfloat16):
                return torch.nn.functional.cross_entropy(model(x.to(memory_format=torch.channels_last)), y)
        return model, loss, a.batch
    import transformers
    if a.model == "neox2.7b":  # a Pythia-2.8B-shaped GPT-NeoX
        cfg = transformers.GPTNeoXConfig(hidden_size=2560, num_hidden_layers=32, num_attention_heads=32,
                                         intermediate_size=10240, vocab_size=50432, max_position_embeddings=2048,
                                         rotary_pct=0.25, use_parallel_residual=True, tie_word_embeddings=False)
    else:
        cfg = transformers.LlamaConfig(hidden_size=a.hidden, num_hidden_layers=a.layers, intermediate_size=a.ffn,
                                       num_attention_heads=24, num_key_value_heads=8, vocab_size=32000,
                                       max_position_embeddings=2048, tie_word_embeddings=False)
    with torch.device("cuda"):
        model = transformers.AutoModelForCausalLM.from_config(cfg, torch_dtype=torch.bfloat16,
                                                              attn_implementation=a.attn)
    if ckpt:
        model.gradient_checkpointing_enable(gradient_checkpointing_kwargs={"use_reentrant": False})
        model.config.use_cache = False

    def loss(step, gen):
        ids = torch.randint(0, cfg.vocab_size, (a.batch, a.seq), device="cuda", generator=gen)
        return model(input_ids=ids, labels=ids).loss
    return model, loss, a.batch * a.seq


def raw_disk(directory, nbytes, chunk=64 << 20):
    """Raw O_DIRECT throughput of the disk under `directory`, bytes/s written, read, and both at once
    (a writer and a reader thread on two files, bytes of both over the time: the disk tier moves both
    ways at once in backward), the baseline the disk tier's throughput is set against; None where
    O_DIRECT is refused."""
    import mmap
    import threading
    paths = [os.path.join(directory, f".memlake_raw_disk_{os.getpid()}_{k}") for k in (0, 1)]
    bufs = [mmap.mmap(-1, chunk) for _ in range(2)]
    for b in bufs:
        b.write(os.urandom(1 << 20) * (chunk >> 20))
    fds = []
    try:
        for p in paths:
            fds.append(os.open(p, os.O_RDWR | os.O_CREAT | os.O_TRUNC | getattr(os, "O_DIRECT", 0), 0o600))
    except OSError:
        for fd in fds:
            os.close(fd)
        for p in paths[:len(fds)]:
            os.unlink(p)
        return None
    count = nbytes // chunk

    def write(fd, buf):
        for _ in range(count):
            os.write(fd, buf)
        os.fsync(fd)

    def read(fd, buf):
        os.lseek(fd, 0, os.SEEK_SET)
        for _ in range(count):
            os.readv(fd, [buf])

    try:
        t0 = time.perf_counter()
        write(fds[0], bufs[0])
        w = time.perf_counter() - t0
        t0 = time.perf_counter()
        read(fds[0], bufs[0])
        r = time.perf_counter() - t0
        errors = []

        def guarded(fn, *args):
            try:
                fn(*args)
            except OSError as e:
                errors.append(e)
        threads = [threading.Thread(target=guarded, args=(write, fds[1], bufs[1])),
                   threading.Thread(target=guarded, args=(read, fds[0], bufs[0]))]
        t0 = time.perf_counter()
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        both = time.perf_counter() - t0
        if errors:
            raise errors[0]
    except OSError:
        return None
    finally:
        for fd in fds:
            os.close(fd)
        for p in paths:
            os.unlink(p)
    n = count * chunk
    return dict(write_Bps=n / w, read_Bps=n / r, both_Bps=2 * n / both, bytes=n)


# The tiering's counters that bench prints per iteration (t.stats(); counts since tier(), differenced).
_STEP_COUNTS = ("act_evicted_bytes", "act_restores_planned", "act_restores_on_demand", "act_prefetch_deferred",
                "act_reclaimed_fwd_bytes", "act_reclaimed_bwd_bytes", "pressure_waits", "pressure_s",
                "restores_on_demand", "evicted_bytes", "host_s", "act_host_s")


def _counts(st):
    return {k: st[k] for k in _STEP_COUNTS if k in st}


def _print_checks(r):
    """Each iteration's tiering counts and the memory check of a planned forward (where there are)."""
    ps = r.get("per_step")
    if ps and "act_reclaimed_fwd_bytes" in ps[0]:
        gb = 1e9
        print("  per iteration (s; GB taken back in forward/after; waits at the cap, s; activations evicted GB; "
              "restores planned/on demand; prefetches deferred; host s in the states' / activations' hooks): " + "; ".join(
                  f"{s_:.3f} {c['act_reclaimed_fwd_bytes'] / gb:.2f}/{c['act_reclaimed_bwd_bytes'] / gb:.2f} "
                  f"{c.get('pressure_waits', 0)}x{c.get('pressure_s', 0.0):.3f} {c['act_evicted_bytes'] / gb:.2f} "
                  f"{c['act_restores_planned']}/{c['act_restores_on_demand']} {c['act_prefetch_deferred']} "
                  f"{c.get('host_s', 0.0):.3f}/{c.get('act_host_s', 0.0):.3f}"
                  for s_, c in zip(r["step_times"], ps)))
    mc = r.get("memory_check")
    if mc:
        gb = 1e9
        line = (f"  memory check of a planned forward ({mc['boundaries']} boundaries): on the GPU beyond the plan at "
                f"most {mc['excess_bytes'] / gb:.2f} GB (boundary {mc['excess_at']}), evictions in flight at most "
                f"{mc['leaving_max_bytes'] / gb:.2f} GB, reserved beyond live at most {mc['overhead_max_bytes'] / gb:.2f} GB; "
                f"taken back {mc['reclaimed_bytes'] / gb:.2f} GB; the plan's count includes {mc.get('other_bytes', 0) / gb:.2f} GB "
                f"of optimizer states kept on the GPU")
        b = mc.get("before_first_reclaim")
        if b:
            line += (f", first before boundary {mc['first_reclaim_at']} (at {b['boundary']}: plan {b['planned'] / gb:.2f}, "
                     f"live {b['resident'] / gb:.2f} of which leaving {b['leaving'] / gb:.2f}, reserved {b['reserved'] / gb:.2f} GB)")
        print(line)


class _kineto:
    """A Kineto profile of the GPU's activity alone (kernels and copies; no host-side op
    recording, so the host runs as it does unprofiled). A profiler that fails to start or stop
    leaves the iteration unprofiled (`error`), never the run failed."""

    def __init__(self, torch):
        self.prof, self.error = None, None
        try:
            from torch.profiler import ProfilerActivity, profile
            self.prof = profile(activities=[ProfilerActivity.CUDA])
        except Exception as e:  # noqa: BLE001 - a measurement extra
            self.error = f"{type(e).__name__}: {e}"

    def __enter__(self):
        if self.prof is not None:
            try:
                self.prof.__enter__()
            except Exception as e:  # noqa: BLE001
                self.prof, self.error = None, f"{type(e).__name__}: {e}"
        return self

    def __exit__(self, *exc):
        if self.prof is not None:
            try:
                self.prof.__exit__(None, None, None)
            except Exception as e:  # noqa: BLE001
                self.prof, self.error = None, f"{type(e).__name__}: {e}"
        return False


def _timeline(k, a, name):
    """The profiled iteration's GPU timeline summary (bench/_gputrace.py); the trace itself
    beside the tiering profiles, gzipped, where --profile-dir is given. {"error": ...} where
    the profiler failed."""
    import gzip
    import tempfile
    from _gputrace import timeline_summary
    if k.prof is None:
        return dict(error=k.error)
    try:
        with tempfile.TemporaryDirectory() as d:
            path = os.path.join(d, "trace.json")
            k.prof.export_chrome_trace(path)
            with open(path, "rb") as f:
                raw = f.read()
        if a.profile_dir:
            with gzip.open(os.path.join(a.profile_dir, f"kineto_{a.model}_{name}.json.gz"), "wb") as f:
                f.write(raw)
        return timeline_summary(json.loads(raw)) or dict(error="no kernels recorded")
    except Exception as e:  # noqa: BLE001 - a measurement extra
        return dict(error=f"{type(e).__name__}: {e}")


def run_one(name, a):
    os.environ.setdefault("CUBLAS_WORKSPACE_CONFIG", ":4096:8")
    import torch
    # Every configuration alike: deterministic kernels where PyTorch has them
    # (warn only where it has none), so the losses can be compared.
    torch.use_deterministic_algorithms(True, warn_only=True)
    allocator, ckpt, cap, budget, method, margin = config(name)
    out = dict(config=name, model=a.model, allocator=allocator, checkpointing=ckpt, cap_gib=cap, method=method,
               steps=a.steps)
    if allocator == "memlake":
        import memlake.torch as mt
        if method == "disk":
            os.makedirs(a.disk_dir, exist_ok=True)
            out["raw_disk"] = raw_disk(a.disk_dir, a.disk_probe_gib << 30)
            mt.enable(disk_tier=a.disk_dir)
        else:
            mt.enable()
    torch.manual_seed(a.seed)
    if cap and allocator == "native":
        total = torch.cuda.get_device_properties(0).total_memory
        torch.cuda.set_per_process_memory_fraction(cap * GIB / total)
    t_start = time.time()
    try:
        model, step_loss, items = build(a, ckpt, torch)
        out["params"] = sum(p.numel() for p in model.parameters())
        opt = CpuAdam(model, lr=1e-5) if method == "cpu_adam" else torch.optim.AdamW(model.parameters(), lr=1e-5)
        saved = (lambda: torch.autograd.graph.save_on_cpu(pin_memory=True)) if method == "save_on_cpu" \
            else contextlib.nullcontext
        t = None
        if budget:
            kw = dict(host_limit=a.host_limit) if method == "disk" else {}
            if margin is not None:
                kw["margin"] = margin
            if name.endswith("_window"):
                kw["act_prefetch_room"] = False
            t = mt.tier(model, opt, budget=budget, **kw)
        gen = torch.Generator(device="cuda").manual_seed(a.seed)
        times, losses, per_step = [], [], []
        for step in range(a.steps):
            torch.cuda.synchronize()
            kineto = _kineto(torch) if step == a.kineto_step else contextlib.nullcontext()
            t0 = time.perf_counter()
            with kineto:
                with saved():
                    loss = step_loss(step, gen)
                loss.backward()
                opt.step()
                opt.zero_grad(set_to_none=True)
                torch.cuda.synchronize()
            times.append(time.perf_counter() - t0)
            if step == a.kineto_step:
                out["gpu_timeline"] = _timeline(kineto, a, name)
            losses.append(loss.item())
            if t is not None:  # each iteration's own counts: where the pressure and the waits are
                per_step.append(_counts(t.stats()))
        timed = [x for i, x in enumerate(times) if i != a.kineto_step]  # not the profiled one
        med = statistics.median(timed[3:]) if len(timed) > 3 else statistics.median(timed)
        out.update(step_s=med, tokens_per_s=items / med, step_times=times, losses=losses[:5], ok=True)
        if allocator == "native":
            out["peak_reserved"] = torch.cuda.max_memory_reserved()
        else:
            import memlake
            out["peak_reserved"] = memlake.stats()["reserved_bytes.all.peak"]
        if t is not None:
            out["tier"] = t.stats()
            out["per_step"] = [{k: v - (per_step[i - 1][k] if i else 0) for k, v in c.items()}
                               for i, c in enumerate(per_step)]
            prof = t.profile()
            if prof and a.profile_dir:
                t.save_profile(os.path.join(a.profile_dir, f"tier_profile_{a.model}_{name}.txt"))
            out["plan"] = prof.get("plan") if prof else None
            out["peak_all_tiered"] = prof.get("peak_all_tiered") if prof else None
            out["profile_activations"] = prof.get("activations") if prof else None
            out["memory_check"] = prof.get("memory_check") if prof else None
            if prof:  # the times the states were planned on: the first iteration's, or the retimed one's
                out["profile_times"] = dict(timed_iteration=prof.get("timed_iteration"),
                                            first_iteration_ms=prof.get("first_iteration_ms"),
                                            timed_ms=prof.get("lead_ms", 0.0) + prof.get("backward_ms", 0.0),
                                            predicted_ms=(prof.get("plan") or {}).get("predicted_ms"))
            st = out["tier"]
            # The disk tier's own rates: bytes over the time with a request of that direction in flight
            # (reads and writes overlap: `both` is all bytes over the time with either in flight).
            if st.get("disk_io_written"):
                out["disk_write_Bps"] = st["disk_io_written"] / max(st["disk_io_write_s"], 1e-9)
            if st.get("disk_io_read"):
                out["disk_read_Bps"] = st["disk_io_read"] / max(st["disk_io_read_s"], 1e-9)
            if st.get("disk_io_busy_s"):
                out["disk_both_Bps"] = (st["disk_io_written"] + st["disk_io_read"]) / st["disk_io_busy_s"]
    except Exception as e:  # an out-of-memory (or a plan that does not fit) is a result
        import traceback
        out.update(ok=False, error=f"{type(e).__name__}: {str(e)[:600]}",
                   failed_step=len(times) if "times" in locals() else None,
                   where=[f"{f.name}:{f.lineno} {f.line}" for f in traceback.extract_tb(e.__traceback__)[-6:]])
        try:  # what memory held when it failed: the allocator's and the tiering's own counts
            if allocator == "memlake":
                import memlake
                ms = memlake.stats()
                out["stats_at_failure"] = {k: v for k, v in ms.items() if k.startswith(("reserved_bytes.all",
                                           "allocated_bytes.all", "tier", "evict", "restor", "host"))}
            if "t" in locals() and t is not None:
                out["tier_at_failure"] = t.stats()
        except Exception as e2:
            out["stats_at_failure_error"] = str(e2)[:200]
    out["wall_s"] = time.time() - t_start
    print("RESULT " + json.dumps(out), flush=True)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--configs", default="ideal,ckpt,ckpt_again,ckpt_cap24,tier24_ckpt,tier32,tier36,save_on_cpu_cap32,cpu_adam_cap24_ckpt")
    ap.add_argument("--steps", type=int, default=8)
    ap.add_argument("--batch", type=int, default=8)
    ap.add_argument("--seq", type=int, default=1024)
    ap.add_argument("--hidden", type=int, default=3072)
    ap.add_argument("--layers", type=int, default=28)
    ap.add_argument("--ffn", type=int, default=8192)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--model", default="llama3b", choices=["llama3b", "neox2.7b", "resnet152"],
                    help="llama3b: anchors.md's 3.02 B llama; neox2.7b: a Pythia-2.8B-shaped GPT-NeoX; resnet152: "
                         "images of --image pixels, bf16 autocast (--batch images)")
    ap.add_argument("--image", type=int, default=224)
    ap.add_argument("--disk-dir", default=os.environ.get("TMPDIR", "/tmp") + "/memlake_disk_tier",
                    help="*_disk configurations: the disk tier's directory (local disk)")
    ap.add_argument("--host-limit", default="6G", help="*_disk: host-tier bytes the optimizer states may hold")
    ap.add_argument("--disk-probe-gib", type=int, default=4, help="*_disk: GiB written and read raw (O_DIRECT)")
    ap.add_argument("--attn", default="sdpa", help="attention implementation (eager: deterministic backward, "
                                                      "so the loss comparison is exact; slower)")
    ap.add_argument("--out", default="")
    ap.add_argument("--profile-dir", default="")
    ap.add_argument("--kineto-step", type=int, default=-1,
                    help="profile this iteration's GPU activity (torch.profiler): the compute stream's busy and idle "
                         "time, idle time with copies in flight, each direction's bytes and rate (left out of the median)")
    ap.add_argument("--run", default="", help=argparse.SUPPRESS)
    a = ap.parse_args()
    if a.run:
        return run_one(a.run, a)
    results = []
    for name in a.configs.split(","):
        if config(name) is None:
            sys.exit(f"unknown config {name!r}; known: {', '.join(CONFIGS)}, tier<GiB>[_ckpt][_disk][_m<MiB>], ckpt_cap<GiB>")
        cmd = [sys.executable, __file__, "--run", name] + [f"--{k.replace('_', '-')}={v}" for k, v in vars(a).items()
                                                            if k not in ("run", "configs", "out")]
        p = subprocess.run(cmd, capture_output=True, text=True)
        line = [x for x in p.stdout.splitlines() if x.startswith("RESULT ")]
        r = json.loads(line[-1][7:]) if line else dict(config=name, ok=False,
                                                        error=f"exit {p.returncode}: {p.stderr[-800:]}")
        results.append(r)
        print(json.dumps({k: v for k, v in r.items() if k not in ("step_times",)}), flush=True)
    ideal = next((r for r in results if r["config"] == "ideal" and r.get("ok")), None)
    print(f"\n{'config':<14} {'step s':>7} {'tok/s':>8} {'x ideal':>7} {'peak GiB':>8}  losses / error")
    for r in results:
        if r.get("ok"):
            x = ideal["step_s"] / r["step_s"] if ideal else float("nan")
            ref = ideal if not r["checkpointing"] else next((q for q in results if q["config"] == "ckpt" and q.get("ok")), None)
            same = ("" if ref is None or ref is r else
                    " (= uncapped)" if ref["losses"] == r["losses"] else " (DIFFER from uncapped)")
            print(f"{r['config']:<14} {r['step_s']:>7.3f} {r['tokens_per_s']:>8.0f} {x:>7.2f} "
                  f"{r['peak_reserved'] / GIB:>8.2f}  {[round(v, 4) for v in r['losses']]}{same}")
        else:
            print(f"{r['config']:<14} {'-':>7} {'-':>8} {'-':>7} {'-':>8}  {r.get('error', '')[:160]}")
    if a.model == "resnet152":
        print("(tok/s: images/s)")
    for r in results:  # where the profiled iteration's GPU time went (--kineto-step)
        if "gpu_timeline" in r:
            g = r["gpu_timeline"]
            print(f"{r['config']}: GPU timeline not recorded: {g['error']}" if "error" in g
                  else f"{r['config']}:" + format_summary(g)[1:])
    for r in results:  # what tier() moved, per tier
        st = r.get("tier")
        if not st:
            continue
        line = (f"{r['config']}: states evicted {st['evicted_bytes'] / GIB:.1f} GiB in {st['iteration']} iterations, "
                f"restores planned/on demand {st['restores_planned']}/{st['restores_on_demand']}")
        if "act_evicted_bytes" in st:
            line += (f"; activations evicted {st['act_evicted_bytes'] / GIB:.1f} GiB, restores planned/on demand/"
                     f"late {st['act_restores_planned']}/{st['act_restores_on_demand']}/{st['act_late_uses']}, "
                     f"profiles {st['act_profiles']}")
        line += (f"; at the cap: {st.get('pressure_waits', 0)} retries, {st.get('pressure_s', 0.0):.2f} s, "
                 f"{st.get('reclaimed_bytes', 0) / GIB:.2f} GiB taken back")
        if "act_reclaimed_fwd_bytes" in st:
            line += (f" ({st['act_reclaimed_fwd_bytes'] / GIB:.2f} in forwards, {st['act_reclaimed_bwd_bytes'] / GIB:.2f} "
                     f"after them), prefetches deferred {st.get('act_prefetch_deferred', 0)}")
        print(line)
        pt = r.get("profile_times")
        if pt and pt.get("predicted_ms") is not None:
            first = pt.get("first_iteration_ms")
            print(f"  planned on iteration {pt['timed_iteration']}'s times: {pt['timed_ms']:.1f} ms of compute to the "
                  f"last step" + (f" (the profile iteration's: {first:.1f} ms)" if first is not None else "") +
                  f"; the states' plan predicts {pt['predicted_ms']:.1f} ms, measured step {r['step_s'] * 1e3:.1f} ms")
        _print_checks(r)
        raw = r.get("raw_disk")
        if raw or st.get("demoted_bytes"):
            gb = 1e9
            w, rd, both = (r.get(k, 0) / gb for k in ("disk_write_Bps", "disk_read_Bps", "disk_both_Bps"))
            print(f"  disk tier: {st.get('disk_io_written', 0) / GIB:.1f} GiB written, "
                  f"{st.get('disk_io_read', 0) / GIB:.1f} GiB read; read-aheads asked for {st.get('fetched_bytes', 0) / GIB:.1f} "
                  f"GiB (one of a state still being written stops its write: no read); restores waited {st.get('disk_read_s', 0):.2f} s for the disk in all; "
                  f"{st.get('disk_failures', 0)} failed moves; optimizer states in the host tier at most "
                  f"{st.get('host_states_peak', 0) / GIB:.2f} GiB (host_limit {a.host_limit})")
            line = f"  its own file I/O (checksums beside it): write {w:.2f} GB/s, read {rd:.2f} GB/s, both {both:.2f} GB/s"
            if raw:
                rw, rr = raw["write_Bps"] / gb, raw["read_Bps"] / gb
                # The same bytes moved one direction after the other at the raw rates.
                nw, nr = st.get("disk_io_written", 0) / gb, st.get("disk_io_read", 0) / gb
                raw_both = (nw + nr) / (nw / rw + nr / rr) if nw + nr else 0
                line += (f"; raw O_DIRECT in the same run: write {rw:.2f}, read {rr:.2f} GB/s -> "
                         f"{w / rw:.2f}x, {rd / rr:.2f}x" + (f", both {both / raw_both:.2f}x" if raw_both else ""))
                if raw.get("both_Bps"):  # a writer and a reader at once, as the tier's backward has them
                    rb = raw["both_Bps"] / gb
                    line += f"; raw both at once {rb:.2f} GB/s -> {both / rb:.2f}x"
            else:
                line += "; raw O_DIRECT not measured (refused)"
            print(line)
    if a.out:
        with open(a.out, "w") as f:
            json.dump(results, f, indent=1)


if __name__ == "__main__":
    main()
