"""Training past GPU memory: a 3.02 B llama-like model (../shared/anchors.md),
bf16, torch AdamW, batch 8 x 1024, full fine-tuning, under GPU memory caps,
with memlake.torch.tier() next to the ideal (uncapped, native allocator) and
gradient checkpointing, side by side in one invocation (each configuration in
its own process, so each has its own allocator).

    python3 bench/tier_finetune.py --out docs/tier_finetune.json
    python3 bench/tier_finetune.py --configs ideal,tier24 --steps 8

Per configuration: median step time of steps 4.. (the first iterations warm
up; tier()'s first is its profile), tokens/s, ratio to the ideal, peak GPU
memory (native: max_memory_reserved; memlake: its reserved peak, which the
cap bounds), the first 5 losses (compared with the uncapped run of the same
settings), and tier()'s counters. A configuration that runs out of memory
says so. Random weights (seeded), random tokens (seeded).
"""
import argparse
import json
import os
import statistics
import subprocess
import sys
import time

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


def run_one(name, a):
    os.environ.setdefault("CUBLAS_WORKSPACE_CONFIG", ":4096:8")
    import torch
    # Every configuration alike: deterministic kernels where PyTorch has them
    # (warn only where it has none), so the losses can be compared.
    torch.use_deterministic_algorithms(True, warn_only=True)
    import transformers
    allocator, ckpt, cap, budget, method = CONFIGS[name]
    if allocator == "memlake":
        import memlake.torch as mt
        mt.enable()
    torch.manual_seed(a.seed)
    if cap and allocator == "native":
        total = torch.cuda.get_device_properties(0).total_memory
        torch.cuda.set_per_process_memory_fraction(cap * GIB / total)
    cfg = transformers.LlamaConfig(hidden_size=a.hidden, num_hidden_layers=a.layers, intermediate_size=a.ffn,
                                   num_attention_heads=24, num_key_value_heads=8, vocab_size=32000,
                                   max_position_embeddings=2048, tie_word_embeddings=False)
    out = dict(config=name, allocator=allocator, checkpointing=ckpt, cap_gib=cap, method=method, steps=a.steps)
    t_start = time.time()
    try:
        with torch.device("cuda"):
            model = transformers.AutoModelForCausalLM.from_config(cfg, torch_dtype=torch.bfloat16,
                                                                  attn_implementation=a.attn)
        out["params"] = sum(p.numel() for p in model.parameters())
        if ckpt:
            model.gradient_checkpointing_enable(gradient_checkpointing_kwargs={"use_reentrant": False})
            model.config.use_cache = False
        opt = CpuAdam(model, lr=1e-5) if method == "cpu_adam" else torch.optim.AdamW(model.parameters(), lr=1e-5)
        import contextlib
        saved = (lambda: torch.autograd.graph.save_on_cpu(pin_memory=True)) if method == "save_on_cpu" \
            else contextlib.nullcontext
        t = None
        if budget:
            t = mt.tier(model, opt, budget=budget)
        gen = torch.Generator(device="cuda").manual_seed(a.seed)
        times, losses = [], []
        for step in range(a.steps):
            ids = torch.randint(0, cfg.vocab_size, (a.batch, a.seq), device="cuda", generator=gen)
            torch.cuda.synchronize()
            t0 = time.perf_counter()
            with saved():
                loss = model(input_ids=ids, labels=ids).loss
            loss.backward()
            opt.step()
            opt.zero_grad(set_to_none=True)
            torch.cuda.synchronize()
            times.append(time.perf_counter() - t0)
            losses.append(loss.item())
        med = statistics.median(times[3:]) if len(times) > 3 else statistics.median(times)
        out.update(step_s=med, tokens_per_s=a.batch * a.seq / med, step_times=times, losses=losses[:5], ok=True)
        if allocator == "native":
            out["peak_reserved"] = torch.cuda.max_memory_reserved()
        else:
            import memlake
            out["peak_reserved"] = memlake.stats()["reserved_bytes.all.peak"]
        if t is not None:
            out["tier"] = t.stats()
            prof = t.profile()
            if prof and a.profile_dir:
                t.save_profile(os.path.join(a.profile_dir, f"tier_profile_{name}.txt"))
            out["plan"] = prof.get("plan") if prof else None
            out["peak_all_tiered"] = prof.get("peak_all_tiered") if prof else None
    except Exception as e:  # an out-of-memory (or a plan that does not fit) is a result
        out.update(ok=False, error=f"{type(e).__name__}: {str(e)[:600]}")
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
    ap.add_argument("--attn", default="sdpa", help="attention implementation (eager: deterministic backward, "
                                                      "so the loss comparison is exact; slower)")
    ap.add_argument("--out", default="")
    ap.add_argument("--profile-dir", default="")
    ap.add_argument("--run", default="", help=argparse.SUPPRESS)
    a = ap.parse_args()
    if a.run:
        return run_one(a.run, a)
    results = []
    for name in a.configs.split(","):
        if name not in CONFIGS:
            sys.exit(f"unknown config {name!r}; known: {', '.join(CONFIGS)}")
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
            same = "" if ref is None else (" (= uncapped)" if ref["losses"] == r["losses"] else " (DIFFER from uncapped)")
            print(f"{r['config']:<14} {r['step_s']:>7.3f} {r['tokens_per_s']:>8.0f} {x:>7.2f} "
                  f"{r['peak_reserved'] / GIB:>8.2f}  {[round(v, 4) for v in r['losses']]}{same}")
        else:
            print(f"{r['config']:<14} {'-':>7} {'-':>8} {'-':>7} {'-':>8}  {r.get('error', '')[:160]}")
    if a.out:
        with open(a.out, "w") as f:
            json.dump(results, f, indent=1)


if __name__ == "__main__":
    main()
