#!/usr/bin/env python3
"""Sleep and wake on the GPU, side by side (issue 21).

One invocation runs three workers, each in its own process, over the same
memory: a llama-like model of ~20 GiB of bf16 weights (random) and 40 GiB of
KV cache (1 GiB tensors):

  memlake  memlake.torch.pool() + memlake.tag(): memlake.sleep(offload the
           weights, discard the cache) / memlake.wake(); weights tagged
           read-only, so a repeat sleep copies nothing. Addresses stay.
  tms      torch_memory_saver's method, re-implemented faithfully (it is not
           installed on the GPU machine): per allocation, a pinned host
           buffer allocated at sleep time and a synchronous copy; the cache
           freed; on wake a synchronous copy back per allocation. (The real
           tool keeps addresses through VMM; this re-implementation lets
           PyTorch re-allocate, which costs the same order of time.)
  cpu      per allocation tensor.cpu() to sleep and .cuda() to wake.

Reported per worker: first sleep, repeat sleep, wake time and GB/s (weights
copied back / wake time), GPU memory the process still holds while asleep
(cuMemGetInfo via torch.cuda.mem_get_info, against the same process right
after CUDA set-up), logits bit-identical after wake, a CUDA graph captured
before the first sleep replaying the same output after wake (memlake), and
N sleep/wake cycles with host RSS and GPU memory (memlake).

    python3 bench/sleep_wake.py [--workers memlake,tms,cpu] [--cycles 100] [--json OUT]
"""
import argparse
import json
import os
import subprocess
import sys
import time

GiB = 1 << 30


def rss():
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) * 1024
    return 0


def build(args, torch, tag=None):
    """The model (weights) and the cache; `tag` wraps each in memlake.tag."""
    import contextlib
    from transformers import LlamaConfig, LlamaForCausalLM
    cfg = LlamaConfig(hidden_size=4096, intermediate_size=11008, num_hidden_layers=args.layers,
                      num_attention_heads=32, num_key_value_heads=8, vocab_size=32000,
                      max_position_embeddings=4096)
    ctx = tag or (lambda *a, **k: contextlib.nullcontext())
    torch.manual_seed(0)
    prev = torch.get_default_dtype()
    torch.set_default_dtype(torch.bfloat16)
    with ctx("weights", readonly=True), torch.device("cuda"):
        model = LlamaForCausalLM(cfg).eval()
    torch.set_default_dtype(prev)
    with ctx("kv"):
        cache = [torch.empty(GiB, dtype=torch.uint8, device="cuda") for _ in range(args.cache_gib)]
    for c in cache:
        c.fill_(7)
    torch.cuda.synchronize()
    return model, cache


def weight_bytes(model):
    return sum(p.numel() * p.element_size() for p in model.parameters())


def mlp_chain(model, x):
    """What the CUDA graph captures: every layer's MLP (two thirds of the weights)."""
    for layer in model.model.layers:
        x = x + layer.mlp(layer.post_attention_layernorm(x))
    return x


def worker(args):
    import torch
    os.environ.setdefault("CUBLAS_WORKSPACE_CONFIG", ":4096:8")
    torch.backends.cuda.matmul.allow_tf32 = False
    torch.cuda.init()
    a = torch.randn(256, 256, device="cuda")
    (a @ a).sum().item()  # cuBLAS set up before the baseline is read
    free0, total = torch.cuda.mem_get_info()
    base_used = total - free0
    res = {"worker": args.worker}
    ml = None
    if args.worker == "memlake":
        import memlake
        import memlake.torch as mt
        ml = memlake
        t = time.perf_counter()
        memlake.host_tier(int(args.layers * 180e6 * 2 * 1.05) + GiB)  # the weights' copy, pinned once
        res["host_tier_pin_s"] = time.perf_counter() - t
        pool_cm = mt.pool()
        mp = pool_cm.__enter__()
        model, cache = build(args, torch, memlake.tag)
        pool_cm.__exit__(None, None, None)
        res["pool"] = str(mp)
    else:
        model, cache = build(args, torch)
    wbytes = weight_bytes(model)
    res["weight_bytes"] = wbytes
    res["cache_bytes"] = sum(c.numel() for c in cache)
    ids = torch.randint(0, 32000, (1, 64), device="cuda", generator=torch.Generator("cuda").manual_seed(1))
    with torch.no_grad():
        ref_logits = model(ids, use_cache=False).logits.float().clone()
        graph = None
        if ml:
            static_x = torch.randn(8, 4096, device="cuda", dtype=torch.bfloat16)
            s = torch.cuda.Stream()
            s.wait_stream(torch.cuda.current_stream())
            with torch.cuda.stream(s):
                for _ in range(2):
                    mlp_chain(model, static_x)
            torch.cuda.current_stream().wait_stream(s)
            graph = torch.cuda.CUDAGraph()
            with torch.cuda.graph(graph):
                static_y = mlp_chain(model, static_x)
            graph.replay()
            torch.cuda.synchronize()
            ref_graph = static_y.clone()
    torch.cuda.synchronize()

    def used():
        f, t_ = torch.cuda.mem_get_info()
        return t_ - f - base_used

    res["gpu_used_awake"] = used()

    def check():
        with torch.no_grad():
            ok = torch.equal(model(ids, use_cache=False).logits.float(), ref_logits)
            if graph is not None:
                graph.replay()
                torch.cuda.synchronize()
                ok = ok and torch.equal(static_y, ref_graph)
        return ok

    state = {}

    def driver_delta(a, b):
        out = {}
        for k, v in b.items():
            if k.startswith(("memlake.calls.", "memlake.seconds.")) and v != a.get(k, 0):
                out[k[len("memlake."):]] = round(v - a.get(k, 0), 6)
        return out

    def sleep(first):
        torch.cuda.synchronize()
        t = time.perf_counter()
        if ml:
            torch.cuda.empty_cache()  # PyTorch's own cached blocks first (vLLM's sleep does the same)
            r = ml.sleep(tags={"weights": "offload", "kv": "discard"})
            state["report"] = r
        elif args.worker == "tms":
            host = []
            for p in model.parameters():
                h = torch.empty(p.shape, dtype=p.dtype, pin_memory=True)  # pinned at sleep time, per allocation
                h.copy_(p.data)  # synchronous
                host.append(h)
                p.data = torch.empty(0, dtype=p.dtype, device="cuda")
            state["host"] = host
            cache.clear()
            torch.cuda.empty_cache()
        else:
            host = []
            for p in model.parameters():
                host.append(p.data.cpu())
                p.data = torch.empty(0, dtype=p.dtype, device="cuda")
            state["host"] = host
            cache.clear()
            torch.cuda.empty_cache()
        torch.cuda.synchronize()
        return time.perf_counter() - t

    def wake():
        torch.cuda.synchronize()
        t = time.perf_counter()
        if ml:
            state["wake"] = ml.wake()
        else:
            for p, h in zip(model.parameters(), state["host"]):
                p.data = h.to("cuda")  # synchronous per allocation
            for _ in range(args.cache_gib):
                cache.append(torch.empty(GiB, dtype=torch.uint8, device="cuda"))
            state["host"] = None
            if args.worker == "tms" and hasattr(torch._C, "_host_emptyCache"):
                torch._C._host_emptyCache()  # torch_memory_saver frees its pinned buffers on resume
        torch.cuda.synchronize()
        return time.perf_counter() - t

    res["sleep1_s"] = sleep(True)
    res["gpu_held_asleep"] = used()
    if ml:
        res["sleep1_report"] = state["report"]
    res["wake1_s"] = wake()
    res["wake1_GBps"] = wbytes / res["wake1_s"] / 1e9
    res["identical_after_wake"] = check()
    res["sleep2_s"] = sleep(False)
    if ml:
        res["sleep2_report"] = state["report"]
        # The repeat sleep of the read-only weights alone (the cache stays).
        res["wake2_s"] = wake()
        torch.cuda.synchronize()
        before = ml.stats()
        t = time.perf_counter()
        r = ml.sleep(tags={"weights": "offload"})
        res["sleep_weights_only_s"] = time.perf_counter() - t
        res["sleep_weights_only_report"] = r
        # Where the repeat sleep's time goes: driver calls made and seconds in them, by primitive.
        res["sleep_weights_only_driver"] = driver_delta(before, ml.stats())
        res["wake_weights_only_s"] = wake()
    else:
        res["wake2_s"] = wake()
    res["wake2_GBps"] = wbytes / res["wake2_s"] / 1e9
    res["identical_after_wake2"] = check()
    if ml and args.idle > 0:
        # A repeat sleep, asleep for --idle seconds, then wake: sleep's use is an idle process,
        # and the driver may finish work on the memory given back after cuMemRelease returns.
        res["sleep3_s"] = sleep(False)
        time.sleep(args.idle)
        res["wake3_after_idle_s"] = wake()
        res["wake3_after_idle_GBps"] = wbytes / res["wake3_after_idle_s"] / 1e9
    if ml and args.cycles:
        rs, gs, sl, wk, ok = [], [], [], [], True
        for i in range(args.cycles):
            sl.append(sleep(False))
            wk.append(wake())
            rs.append(rss())
            gs.append(used())
            if i % 10 == 9 or i == args.cycles - 1:
                ok = ok and check()
        res["cycles"] = {"n": args.cycles, "identical": ok, "sleep_s_median": sorted(sl)[len(sl) // 2],
                         "wake_s_median": sorted(wk)[len(wk) // 2], "rss_first": rs[0], "rss_last": rs[-1],
                         "rss_max": max(rs), "gpu_used_first": gs[0], "gpu_used_last": gs[-1], "gpu_used_max": max(gs)}
        res["residency_stats"] = ml.residency_stats()
    print("RESULT " + json.dumps(res), flush=True)


def table(results):
    rows = ["| worker | first sleep (offload weights, discard cache) | repeat sleep | wake | wake GB/s | "
            "wake after a repeat sleep, GB/s | the same after the idle wait, GB/s | GPU held asleep | logits identical |",
            "|---|---|---|---|---|---|---|---|---|"]
    for r in results:
        if "error" in r:
            rows.append(f"| {r['worker']} | failed: {r['error'][:80]} | | | | | | | |")
            continue
        idle = r.get("wake3_after_idle_GBps")
        rows.append(f"| {r['worker']} | {r['sleep1_s']:.3f} s | {r['sleep2_s']:.3f} s | {r['wake1_s']:.3f} s | "
                    f"{r['wake1_GBps']:.1f} | {r['wake2_GBps']:.1f} | {'' if idle is None else f'{idle:.1f}'} | "
                    f"{r['gpu_held_asleep'] / 2**20:.0f} MiB | "
                    f"{r['identical_after_wake'] and r['identical_after_wake2']} |")
    return "\n".join(rows)


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--workers", default="memlake,tms,cpu")
    ap.add_argument("--layers", type=int, default=58, help="decoder layers (58: 20 GiB of bf16 weights)")
    ap.add_argument("--cache-gib", type=int, default=40)
    ap.add_argument("--cycles", type=int, default=100)
    ap.add_argument("--idle", type=float, default=1.0, help="memlake: seconds asleep before one more wake (0: none)")
    ap.add_argument("--json", help="write every worker's results here")
    ap.add_argument("--worker", help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.worker:
        return worker(args)
    results = []
    for w in args.workers.split(","):
        # "memlake:64M" runs memlake with MEMLAKE_TIER_HANDLE_SIZE=64M.
        name, _, handle = w.partition(":")
        env = dict(os.environ, **({"MEMLAKE_TIER_HANDLE_SIZE": handle} if handle else {}))
        cmd = [sys.executable, __file__, "--worker", name, "--layers", str(args.layers), "--cache-gib",
               str(args.cache_gib), "--cycles", str(args.cycles), "--idle", str(args.idle)]
        t = time.perf_counter()
        p = subprocess.run(cmd, capture_output=True, text=True, env=env)
        line = [x for x in p.stdout.splitlines() if x.startswith("RESULT ")]
        if p.returncode or not line:
            results.append({"worker": w, "error": (p.stderr or p.stdout)[-2000:]})
            print(f"== {w}: failed (rc {p.returncode})\n{p.stderr[-3000:]}", flush=True)
            continue
        r = json.loads(line[-1][7:])
        r["worker"] = w
        r["wall_s"] = time.perf_counter() - t
        results.append(r)
        print(f"== {w}: " + json.dumps(r), flush=True)
    print(table(results))
    if args.json:
        with open(args.json, "w") as f:
            json.dump(results, f, indent=1)


if __name__ == "__main__":
    main()
