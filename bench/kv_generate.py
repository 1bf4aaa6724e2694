#!/usr/bin/env python3
"""KV cache on memlake virtual memory against transformers' DynamicCache and StaticCache.

    python3 bench/kv_generate.py probe  --out DIR   # versions, transformers' cache/generate sources
    python3 bench/kv_generate.py check  --out DIR   # correctness on a small model (GPU)
    python3 bench/kv_generate.py bench  --out DIR   # decode time at 8K context, batch 8, GQA and MHA (GPU)
    python3 bench/kv_generate.py capacity [--backend host|cuda] --out DIR  # largest batch under a budget

Models: a ~1.5 B Qwen2-like config (hidden 1536, 28 layers, 12 heads, head_dim
128, intermediate 8960), random weights, bf16; GQA = 2 KV heads, MHA = 12.
Every result is a JSON line on stdout and in DIR/kv_<mode>.json.
"""
import argparse
import json
import math
import os
import random
import statistics
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "python"))

RESULTS = []


SAVE = {}


def emit(rec):
    RESULTS.append(rec)
    print(json.dumps(rec), flush=True)
    if SAVE.get("out"):  # as we go: a run cut short keeps what it measured
        save(SAVE["out"], SAVE["mode"])


def save(out, mode):
    if out:
        os.makedirs(out, exist_ok=True)
        with open(os.path.join(out, f"kv_{mode}.json"), "w") as f:
            json.dump(RESULTS, f, indent=1)


# ---------------------------------------------------------------- models
def qwen_config(kv_heads, layers=28, hidden=1536, heads=12, inter=8960, vocab=151936):
    from transformers import Qwen2Config
    cfg = Qwen2Config(hidden_size=hidden, intermediate_size=inter, num_hidden_layers=layers,
                      num_attention_heads=heads, num_key_value_heads=kv_heads, vocab_size=vocab,
                      max_position_embeddings=32768, tie_word_embeddings=True)
    cfg.head_dim = hidden // heads
    return cfg


def make_model(cfg, seed=0):
    import torch
    from transformers import AutoModelForCausalLM
    torch.manual_seed(seed)
    with torch.device("cuda"):
        m = AutoModelForCausalLM.from_config(cfg, dtype=torch.bfloat16, attn_implementation="sdpa")
    m.eval()
    m.generation_config.pad_token_id = 0
    m.generation_config.eos_token_id = None
    return m


def kv_cache(model, batch, max_len, **kw):
    import memlake.torch as mt
    return mt.KVCache(model.config, max_batch_size=batch, max_cache_len=max_len, dtype=model.dtype,
                      device="cuda", **kw)


def _layout_of(kind):
    """KVCache arguments of a bench kind: kv-* (KVCache's default: rows, group 2), kvtokens-* (tokens),
    kvrows-* (rows, group 1), kvrowsN-* (rows, group N), kvheads-* (heads), kvlive-* (the default
    layout, eager_reads="live": an uncompiled step reads only the positions written)."""
    head = kind.split("-")[0]
    if head == "kvlive":
        return {"eager_reads": "live"}
    if head.startswith("kvrows") and head[6:].isdigit():
        return {"layout": "rows", "group": int(head[6:])}
    if head == "kvrows":
        return {"layout": "rows", "group": 1}
    layout = {"kvheads": "heads", "kvtokens": "tokens"}.get(head)
    return {"layout": layout} if layout else {}


def static_cache(model, batch, max_len):
    from transformers import StaticCache
    return StaticCache(config=model.config, max_cache_len=max_len)


# ---------------------------------------------------------------- probe
def probe(args):
    import inspect
    import torch
    import transformers
    from transformers import cache_utils
    from transformers.generation import utils as gen_utils
    emit({"what": "versions", "torch": torch.__version__, "transformers": transformers.__version__,
          "gpu": torch.cuda.get_device_name() if torch.cuda.is_available() else None,
          "construct_storage": hasattr(torch._C, "_construct_storage_from_data_pointer"),
          "static_init": str(inspect.signature(cache_utils.StaticCache.__init__)),
          "get_mask_sizes": str(inspect.signature(cache_utils.Cache.get_mask_sizes))})
    if args.out:
        os.makedirs(args.out, exist_ok=True)
        with open(os.path.join(args.out, "cache_utils.py.txt"), "w") as f:
            f.write(inspect.getsource(cache_utils))
        with open(os.path.join(args.out, "generation_utils.py.txt"), "w") as f:
            f.write(inspect.getsource(gen_utils))


# ---------------------------------------------------------------- check
class _Hook:
    """A LogitsProcessor that records the KV cache's stats after every step (and checks the bound)."""

    def __init__(self, cache):
        self.cache, self.steps, self.violations, self.worst = cache, 0, 0, 0.0

    def __call__(self, input_ids, scores):
        s = self.cache.stats()
        self.steps += 1
        if s["mapped_bytes"] > s["bound_bytes"]:
            self.violations += 1
        self.worst = max(self.worst, s["mapped_bytes"] / max(1, s["bound_bytes"]))
        return scores


def _divergence(seq, log, seq_ref, log_ref, prompt):
    """Where two greedy runs part: the first generated step whose tokens differ (None: never), the
    largest logit difference before it, and the reference's margin between its top two logits
    there (a margin within that difference is a tie that rounding broke, not a wrong cache)."""
    gen, ref = seq[:, prompt:], seq_ref[:, prompt:]
    diff = (gen != ref).any(0).nonzero()
    k = int(diff[0]) if diff.numel() else None
    upto = log.shape[1] if k is None else k
    before = float((log[:, :upto].float() - log_ref[:, :upto].float()).abs().max()) if upto else 0.0
    out = {"first_divergent_step": k, "max_abs_logit_diff_before": before}
    if k is not None:
        top = log_ref[:, k].float().topk(2, dim=-1).values
        rows = (gen[:, k] != ref[:, k]).nonzero().flatten()
        out["ref_top2_margin_there"] = float((top[rows, 0] - top[rows, 1]).min())
    return out


def _gen(model, ids, cache, new, compiled, hook=None):
    import torch
    from transformers import LogitsProcessorList
    kw = dict(max_new_tokens=new, do_sample=False, past_key_values=cache, return_dict_in_generate=True,
              output_logits=True, disable_compile=not compiled)
    if hook is not None:
        kw["logits_processor"] = LogitsProcessorList([hook])
    with torch.no_grad():
        out = model.generate(ids, attention_mask=torch.ones_like(ids), **kw)
    return out.sequences, torch.stack(out.logits, 1)


def check(args):
    import torch
    torch.backends.cuda.matmul.allow_tf32 = False
    for name, kvh in (("gqa", 2), ("mha", 4)):
        if args.models and name not in args.models.split(","):
            continue
        cfg = qwen_config(kvh, layers=args.layers, hidden=512, heads=4, inter=1024, vocab=4096)
        cfg.head_dim = 128
        model = make_model(cfg)
        b, plen, new, max_len = 4, args.prompt, args.new, args.prompt + args.new + 64
        g = torch.Generator(device="cuda").manual_seed(1)
        ids = torch.randint(1, cfg.vocab_size, (b, plen), device="cuda", generator=g)
        seq_s, log_s = _gen(model, ids, static_cache(model, b, max_len), new, False)
        from transformers import DynamicCache
        seq_d, log_d = _gen(model, ids, DynamicCache(config=model.config), new, False)
        for layout in ("tokens", "rows", "rows2", "heads", "live"):  # live: the default layout, eager_reads="live"
            try:
                cache = kv_cache(model, b, max_len, **_layout_of(f"kv{layout}"))
            except Exception as e:  # 'heads' needs whole pages per head
                emit({"what": "check", "model": name, "layout": layout, "skipped": str(e)})
                continue
            hook = _Hook(cache)
            seq_k, log_k = _gen(model, ids, cache, new, False, hook)
            st = cache.stats()
            emit({"what": "check", "model": name, "layout": layout, "mode": "eager",
                  "tokens_equal_static": bool(torch.equal(seq_k, seq_s)),
                  "vs_static": _divergence(seq_k, log_k, seq_s, log_s, plen),
                  "logits_bitwise_static": bool(torch.equal(log_k, log_s)),
                  "max_abs_logit_diff_static": float((log_k.float() - log_s.float()).abs().max()),
                  "max_abs_logit_diff_dynamic": float((log_k.float() - log_d.float()).abs().max()),
                  "dynamic_vs_static_max_abs": float((log_d.float() - log_s.float()).abs().max()),
                  "tokens_equal_dynamic": bool(torch.equal(seq_k, seq_d)),
                  "vs_dynamic": _divergence(seq_k, log_k, seq_d, log_d, plen),
                  "logits_bitwise_dynamic": bool(torch.equal(log_k, log_d)),
                  "bound_steps": hook.steps, "bound_violations": hook.violations,
                  "worst_mapped_over_bound": round(hook.worst, 4), "hook_calls": cache.hook_calls, "stats": st})
            cache.close()
        errors_check(model, name)
        if name not in args.compiled_models.split(","):
            del model
            torch.cuda.empty_cache()
            continue
        continuous_check(model, name)
        # Compiled generate, StaticCache vs KVCache (the layouts whose update writes a [batch, len, heads, dim] base).
        seq_sc, log_sc = _gen(model, ids, static_cache(model, b, max_len), new, True)
        for layout in ("tokens", "rows", "rows2"):
            cache = kv_cache(model, b, max_len, **_layout_of(f"kv{layout}"))
            hook = _Hook(cache)
            seq_kc, log_kc = _gen(model, ids, cache, new, True, hook)
            emit({"what": "check", "model": name, "layout": layout, "mode": "compiled",
                  "tokens_equal_static_compiled": bool(torch.equal(seq_kc, seq_sc)),
                  "vs_static_compiled": _divergence(seq_kc, log_kc, seq_sc, log_sc, plen),
                  "logits_bitwise_static_compiled": bool(torch.equal(log_kc, log_sc)),
                  "max_abs_logit_diff_static_compiled": float((log_kc.float() - log_sc.float()).abs().max()),
                  "compiled_vs_eager_static_max_abs": float((log_sc.float() - log_s.float()).abs().max()),
                  "bound_violations": hook.violations, "bound_steps": hook.steps, "hook_calls": cache.hook_calls,
                  "stats": cache.stats()})
            cache.close()
        del model
        torch.cuda.empty_cache()


def continuous_check(model, name, slots=4, max_len=512, steps=160, seed=3):
    """Compiled decode with rows finishing and being replaced; each row's logits against
    a batch-1 DynamicCache run of the same tokens (teacher forcing)."""
    import torch
    from transformers import DynamicCache
    rng = random.Random(seed)
    cache = kv_cache(model, slots, max_len, rows=[])
    fwd = torch.compile(model.forward, mode="reduce-overhead", fullgraph=True)
    V = model.config.vocab_size
    rows = {}  # slot -> dict(tokens, start, logits, remaining)
    t = 64  # the shared write position (left-padded continuous batching)
    worst, finished, replaced = 0.0, 0, 0

    def admit(slot):
        plen = rng.randint(8, 48)
        prompt = torch.randint(1, V, (1, plen), device="cuda")
        d = DynamicCache(config=model.config)
        with torch.no_grad():
            out = model(input_ids=prompt, past_key_values=d, use_cache=True)
        cache.add_row(slot, start=t - plen, length=plen)
        cache.write_row(slot, t - plen, [l.keys for l in d.layers], [l.values for l in d.layers])
        rows[slot] = {"tokens": prompt[0].tolist() + [int(out.logits[0, -1].argmax())], "start": t - plen,
                      "logits": [], "left": rng.randint(10, 60)}

    cache.set_position(t)  # the layers' own write position (transformers 5.17's StaticLayer)
    for s in range(slots):
        admit(s)
    with torch.no_grad():
        for _ in range(steps):
            if t >= max_len - 1:
                break
            cache.prepare(t)
            ids = torch.tensor([[rows[s]["tokens"][-1] if s in rows else 0] for s in range(slots)], device="cuda")
            pos = torch.tensor([[t - rows[s]["start"] if s in rows else 0] for s in range(slots)], device="cuda")
            mask = torch.full((slots, 1, 1, max_len), float("-inf"), device="cuda", dtype=model.dtype)
            for s in range(slots):
                lo = rows[s]["start"] if s in rows else t
                mask[s, 0, 0, lo:t + 1] = 0
            out = fwd(input_ids=ids, position_ids=pos, cache_position=torch.tensor([t], device="cuda"),
                      attention_mask=mask, past_key_values=cache, use_cache=True)
            logits = out.logits[:, -1].float().clone()
            t += 1
            st = cache.stats()
            worst = max(worst, st["mapped_bytes"] / max(1, st["bound_bytes"]))
            for s in list(rows):
                r = rows[s]
                r["logits"].append(logits[s])
                r["tokens"].append(int(logits[s].argmax()))
                r["left"] -= 1
                if r["left"] == 0:
                    ref_err = _reference_err(model, r)
                    emit({"what": "continuous_row", "model": name, "slot": s, "generated": len(r["logits"]),
                          "max_abs_logit_diff_vs_dynamic_batch1": ref_err})
                    cache.finish_row(s)
                    del rows[s]
                    finished += 1
                    if t + 64 < max_len:
                        admit(s)
                        replaced += 1
    emit({"what": "continuous", "model": name, "finished": finished, "replaced": replaced,
          "worst_mapped_over_bound": round(worst, 4), "stats": cache.stats()})
    cache.close()


def _reference_err(model, r):
    import torch
    from transformers import DynamicCache
    n = len(r["logits"])
    toks = torch.tensor([r["tokens"][:-1]], device="cuda")  # prompt + generated inputs
    with torch.no_grad():
        out = model(input_ids=toks, past_key_values=DynamicCache(config=model.config), use_cache=True)
    ref = out.logits[0, -n:].float()
    got = torch.stack(r["logits"])
    return float((ref - got).abs().max())


def errors_check(model, name):
    import torch
    import memlake
    res = {"what": "errors", "model": name}
    cache = kv_cache(model, 2, 256, rows=[0])
    try:
        cache.prepare(256)
        res["past_max"] = "no error"
    except memlake.InvalidArgumentError as e:
        res["past_max"] = str(e)
    for what, fn in (("row_out_of_range", lambda: cache.finish_row(5)),
                     ("finish_twice", lambda: (cache.finish_row(0), cache.finish_row(0))),
                     ("add_active", lambda: (cache.add_row(1), cache.add_row(1)))):
        try:
            fn()
            res[what] = "no error"
        except memlake.InvalidArgumentError as e:
            res[what] = str(e)
    cache.close()
    # Out of memory while rows grow: torch.OutOfMemoryError, the other rows intact.
    # The limit: what rows 0 and 1 hold at 8 positions (the layout decides how many pages that is)
    # plus two pages, so that growing them to 8000 positions runs out on the way.
    page = 2 << 20
    cache = kv_cache(model, 3, 8192, rows=[0, 1])
    k0 = cache.layers[0].keys
    cache.prepare(0, 8)
    cache.virtual_tensor.set_memory_limit(cache.virtual_tensor.stats()["physical_bytes"] + 2 * page)
    k0[0, :, :8].fill_(1.5)
    k0[1, :, :8].fill_(2.5)
    try:
        cache.prepare(8, 8000)
        res["oom"] = "no error"
    except torch.OutOfMemoryError as e:
        res["oom"] = f"{type(e).__name__}: {e}"
    res["oom_rows_intact"] = bool((k0[0, :, :8] == 1.5).all() and (k0[1, :, :8] == 2.5).all())
    res["oom_stats"] = cache.stats()
    cache.close()
    emit(res)


# ---------------------------------------------------------------- bench
def _sdpa_context(kind):
    """A kind ending "+flash" decodes under sdpa_kernel([FLASH_ATTENTION, EFFICIENT_ATTENTION]): SDPA
    without cuDNN's backend, which builds a plan for every new key length (results §24a), for that kind
    alone; the others keep PyTorch's choice."""
    import contextlib
    if kind.partition("+")[2] != "flash":
        return contextlib.nullcontext()
    from torch.nn.attention import SDPBackend, sdpa_kernel
    return sdpa_kernel([SDPBackend.FLASH_ATTENTION, SDPBackend.EFFICIENT_ATTENTION])


def _decode_time(model, cache, fwd, batch, pos0, steps, warm, kv=None):
    """Seconds per decode step at positions pos0.. (each step reads its token on the host, as generate does)."""
    import torch
    tok = torch.ones((batch, 1), dtype=torch.long, device="cuda")
    times = []
    with torch.no_grad():
        for i in range(warm + steps):
            p = pos0 + i
            if kv is not None:
                kv.prepare(p)
            t0 = time.perf_counter()
            out = fwd(input_ids=tok, position_ids=torch.full((batch, 1), p, device="cuda"),
                      cache_position=torch.tensor([p], device="cuda"), past_key_values=cache, use_cache=True,
                      logits_to_keep=1)
            tok = out.logits[:, -1].argmax(-1, keepdim=True)
            tok.cpu()  # the host waits for the step, as generate's stopping check does
            if i >= warm:
                times.append(time.perf_counter() - t0)
    times.sort()
    return times[len(times) // 2], sum(times) / len(times)


def _top_kernels(model, cache, fwd, batch, pos0, steps, kv=None, top=12):
    """The GPU kernels of `steps` decode steps (torch.profiler), by total time: name, count and
    microseconds per step. Where a cache is slower than another, this says which kernel pays."""
    import torch
    from torch.profiler import ProfilerActivity, profile
    with profile(activities=[ProfilerActivity.CUDA]) as prof:
        _decode_time(model, cache, fwd, batch, pos0, steps, 0, kv)
        torch.cuda.synchronize()
    rows = []
    for e in prof.key_averages():
        us = getattr(e, "device_time_total", None)
        us = us if us is not None else getattr(e, "cuda_time_total", 0)
        if us > 0 and getattr(e, "device_type", None) != torch.autograd.DeviceType.CPU:
            rows.append((us, e.key, e.count))
    rows.sort(reverse=True)
    return [{"kernel": k[:120], "us_per_step": round(us / steps, 1), "calls_per_step": round(n / steps, 1)}
            for us, k, n in rows[:top]]


def bench(args):
    import torch
    lowest = args.context - (args.rounds - 1) * (max(args.warm, args.warm_compiled, 2) + args.steps)
    if args.fresh_lengths and lowest < 1:
        raise SystemExit(f"--fresh-lengths: {args.rounds} rounds of {args.steps} steps start below position 1 "
                         f"({lowest}) at --context {args.context}")
    if args.no_cudnn_sdp:
        torch.backends.cuda.enable_cudnn_sdp(False)
    from transformers import DynamicCache
    batch, ctx, max_len = args.batch, args.context, args.max_len
    for name, kvh in (("gqa", 2), ("mha", 12)):
        if args.models and name not in args.models:
            continue
        cfg = qwen_config(kvh)
        model = make_model(cfg)
        fwd_c = torch.compile(model.forward, mode="reduce-overhead", fullgraph=True)
        hd, L = cfg.head_dim, cfg.num_hidden_layers
        kinds = args.kinds.split(",")  # the compiled pair first: the headline if the run is cut short
        built, times = {}, {k: [] for k in kinds}

        def build(kind, length):
            """(cache, forward, KVCache or None) of a kind, writing at the context's end as after a prefill."""
            kind = kind.partition("+")[0]
            if kind == "dynamic":
                cache = DynamicCache(config=model.config)
                for i in range(L):
                    k = torch.randn(batch, kvh, length, hd, device="cuda", dtype=torch.bfloat16)
                    cache.update(k, k.clone(), i)
                return cache, model.forward, None
            fwd = fwd_c if kind.endswith("compiled") else model.forward
            if kind.startswith("static"):
                cache = static_cache(model, batch, max_len)
                cache.early_initialization(batch, kvh, hd, torch.bfloat16, torch.device("cuda"))
                return cache, fwd, None
            cache = kv_cache(model, batch, max_len, **_layout_of(kind))  # kv-*, kvrows[N]-*, kvheads-*
            cache.prepare(0, ctx)
            return cache, fwd, cache

        # Rounds alternate the kinds (a compiled kind's cache and graph built once and kept, the
        # others' caches made anew each round and freed after it, so that at most one of them is
        # resident): the median over rounds of each round's median step is the figure, the
        # spread is the noise.
        for rnd in range(args.rounds):
            for kind in kinds:
                torch.cuda.reset_peak_memory_stats()
                t_build = time.perf_counter()
                warm = (args.warm_compiled if kind.endswith("compiled") else args.warm) if rnd == 0 else 2
                # --fresh-lengths: each round decodes at positions no earlier round reached (kernels that
                # plan per shape, e.g. cuDNN's attention over a live length, plan again as in generation)
                pos = ctx - rnd * (max(args.warm, args.warm_compiled, 2) + args.steps) if args.fresh_lengths else ctx
                if kind not in built:
                    built[kind] = build(kind, pos)
                cache, fwd, kv = built[kind]
                if kv is not None:
                    kv.set_position(pos)
                elif kind.startswith("static"):
                    for layer in cache.layers:
                        if isinstance(getattr(layer, "cumulative_length", None), torch.Tensor):
                            layer.cumulative_length.fill_(pos)
                with _sdpa_context(kind):
                    med, mean = _decode_time(model, cache, fwd, batch, pos, args.steps, warm, kv)
                times[kind].append(med)
                # peak_allocated_gib: the process's, the compiled kinds' caches kept for the next rounds included
                rec = {"what": "decode", "model": name, "cache": kind, "round": rnd, "batch": batch, "context": pos,
                       "max_len": max_len, "ms_per_step_median": round(med * 1e3, 3),
                       "ms_per_step_mean": round(mean * 1e3, 3), "steps": args.steps,
                       "wall_s": round(time.perf_counter() - t_build, 1),
                       "peak_allocated_gib": round(torch.cuda.max_memory_allocated() / 2**30, 2),
                       "gpu": torch.cuda.get_device_name()}
                if kv is not None:
                    rec["kv_stats"] = kv.stats()
                elif kind.startswith("static"):
                    rec["cache_bytes"] = sum(t.numel() * t.element_size() for layer in cache.layers
                                             for t in (layer.keys, layer.values))
                if args.trace_kernels and rnd == 0:
                    rec["top_kernels"] = _top_kernels(model, cache, fwd, batch, ctx + warm + args.steps,
                                                      args.trace_kernels, kv)
                emit(rec)
                if not kind.endswith("compiled"):  # only a compiled kind's graph needs its cache kept
                    if kv is not None:
                        kv.close()
                    del built[kind], cache, fwd, kv
                    torch.cuda.empty_cache()
        base = {m: statistics.median(times[m]) for m in kinds if times[m]}
        for kind in kinds:
            if not times[kind]:
                continue
            rec = {"what": "decode_summary", "model": name, "cache": kind, "rounds": len(times[kind]),
                   "fresh_lengths": args.fresh_lengths, "cudnn_sdp": not args.no_cudnn_sdp,
                   "ms_per_step": round(base[kind] * 1e3, 3),
                   "ms_per_round": [round(t * 1e3, 3) for t in times[kind]]}
            for ref in ("static-compiled", "static-eager", "dynamic"):
                if ref in base and ref != kind:
                    rec["x_" + ref] = round(base[ref] / base[kind], 3)  # > 1: faster than the reference
            emit(rec)
        for cache, _, kv in built.values():
            if kv is not None:
                kv.close()
        built.clear()
        model = fwd_c = None  # the next model's memory (build() reads these names: not del)
        torch._dynamo.reset()
        torch.cuda.empty_cache()


# ---------------------------------------------------------------- capacity
class CountingVT:
    """Counts pages as the virtual tensor does (private set, memory limit incl. 2 shared pages)."""
    def __init__(self, nbytes, limit=0, page=2 << 20):
        self.page_size = page; self.pages = -(-nbytes // page); self.limit = limit
        self.priv = set(); self.peak = 0
    def page_range(self, off, n):
        if n <= 0: return off // self.page_size, 0
        f = off // self.page_size
        return f, (off + n + self.page_size - 1) // self.page_size - f
    def map_bytes(self, off, n, stream=None):
        f, c = self.page_range(off, n)
        new = [p for p in range(f, f + c) if p not in self.priv]
        if self.limit and (len(self.priv) + len(new) + 2) * self.page_size > self.limit:
            import memlake
            raise memlake.OutOfMemoryError("limit")
        self.priv.update(new); self.peak = max(self.peak, (len(self.priv) + 2) * self.page_size)
    def unmap_bytes(self, off, n, backing="zero", stream=None):
        f, c = self.page_range(off, n)
        self.priv.difference_update(range(f, f + c))
    def stats(self):
        return {"bytes": self.pages * self.page_size, "private_pages": len(self.priv), "page_size": self.page_size,
                "physical_bytes": (len(self.priv) + 2) * self.page_size, "physical_peak": self.peak,
                "pages_mapped": 0, "pages_unmapped": 0, "syncs": 0}
    def close(self): pass


def capacity(args):
    """Largest batch whose KV pages stay under one budget, final lengths log-uniform in [128, max_len],
    64-token prompts, one token a step, with the real page mapping (KVPages over a virtual tensor).
    schedule batch: the rows start together and each stops at its length (finish_row gives its pages
    back, unless --keep-finished); continuous: a finished row takes the next request at once.
    StaticCache's largest batch under the same budget is budget // (max_len bytes of a row)."""
    import memlake
    from memlake.kv_pages import KVPages
    res_all = []
    for name, kvh in (("gqa", 2), ("mha", 12)):
        if args.models and name not in args.models.split(","):
            continue
        geo = dict(layers=28, heads=kvh, head_dim=128, max_len=args.max_len, itemsize=2, order=args.layout,
                   group=args.group)
        row_bytes = 28 * 2 * kvh * 128 * 2 * args.max_len
        budget = args.budget_rows * row_bytes  # StaticCache's batch under the budget: budget_rows
        alloc = memlake.Allocator(backend=args.backend) if args.backend != "count" else None
        factory = (lambda nb, lim=0: CountingVT(nb, lim)) if args.backend == "count" else None

        def runs(n):
            rng = random.Random(args.seed)
            g = dict(geo, batch=n, page_size=2 << 20) if factory else dict(geo, batch=n)
            pages = KVPages(g, allocator=alloc, rows=[], memory_limit=budget, vt_factory=factory)
            lo, hi = math.log(128), math.log(args.max_len)
            want, pos = [0] * n, [0] * n
            served, ok, prompt = 0, True, 64
            draw = lambda: min(args.max_len, int(math.exp(rng.uniform(lo, hi))))
            try:
                for r in range(n):
                    want[r] = draw()
                    pages.add_row(r, 0, prompt)
                    pos[r] = prompt
                if args.schedule == "batch":
                    # One batch generated together; a row stops at its final length and gives its
                    # pages back (keep_finished: keeps them, as a cache without finish would).
                    active = set(range(n))
                    while active:
                        for r in list(active):
                            if pos[r] >= want[r]:
                                if not args.keep_finished:
                                    pages.finish_row(r)
                                active.discard(r)
                                served += 1
                                continue
                            pos[r] += 1
                            pages.grow(r, pos[r])
                else:  # continuous: a finished request's row takes the next one at once
                    for _ in range(args.steps):
                        for r in range(n):
                            if pos[r] >= want[r]:
                                pages.finish_row(r)
                                served += 1
                                want[r] = draw()
                                pages.add_row(r, 0, prompt)
                                pos[r] = prompt
                            pos[r] += 1
                            pages.grow(r, pos[r])
            except memlake.OutOfMemoryError:
                ok = False
            st = pages.stats()
            pages.close()
            return ok, served, st

        good, bad = args.budget_rows, None
        info = runs(good)
        assert info[0], "the static batch itself must fit"
        n = good
        while bad is None:  # double, then bisect
            n *= 2
            r = runs(n)
            if r[0]:
                good, info = n, r
            else:
                bad = n
        while bad - good > 1:
            mid = (good + bad) // 2
            r = runs(mid)
            if r[0]:
                good, info = mid, r
            else:
                bad = mid
        n, last = good, (info[1], info[2]["physical_peak"], info[2])
        rec = {"what": "capacity", "model": name, "backend": args.backend, "schedule": args.schedule,
               "keep_finished": bool(args.keep_finished), "budget_bytes": budget,
               "static_batch": args.budget_rows, "kv_batch": n, "ratio": round(n / args.budget_rows, 2),
               "steps": args.steps, "requests_served": last[0] if last else None,
               "peak_physical_bytes": last[1] if last else None, "max_len": args.max_len,
               "lengths": "log-uniform [128, max_len], seed %d" % args.seed}
        emit(rec)
        res_all.append(rec)


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("mode", choices=["probe", "check", "bench", "capacity"])
    ap.add_argument("--out", default=None)
    ap.add_argument("--layers", type=int, default=8)
    ap.add_argument("--prompt", type=int, default=100)
    ap.add_argument("--new", type=int, default=300)
    ap.add_argument("--batch", type=int, default=8)
    ap.add_argument("--context", type=int, default=8000)
    ap.add_argument("--max-len", type=int, default=8192)
    ap.add_argument("--steps", type=int, default=30)
    ap.add_argument("--rounds", type=int, default=3, help="bench: rounds alternating the kinds")
    ap.add_argument("--fresh-lengths", action="store_true", help="bench: each round at positions not decoded before")
    ap.add_argument("--no-cudnn-sdp", action="store_true", help="bench: torch.backends.cuda.enable_cudnn_sdp(False)")
    ap.add_argument("--warm", type=int, default=3)
    ap.add_argument("--warm-compiled", type=int, default=4)
    ap.add_argument("--kinds", default="static-compiled,kv-compiled,kvtokens-compiled,static-eager,kv-eager,kvlive-eager,kvtokens-eager,dynamic",
                    help="bench: the kinds, alternated; an eager kind ending +flash (kvlive-eager+flash) decodes under "
                         "sdpa_kernel([FLASH_ATTENTION, EFFICIENT_ATTENTION]), without cuDNN's per-length plans")
    ap.add_argument("--models", default="")
    ap.add_argument("--trace-kernels", type=int, default=0,
                    help="bench: after the timing, profile this many decode steps and report the top kernels")
    ap.add_argument("--compiled-models", default="gqa", help="check: models whose compiled paths are checked")
    ap.add_argument("--backend", default="cuda",
                    help="capacity: cuda, host, or count (the page accounting alone, no memory mapped)")
    ap.add_argument("--budget-rows", type=int, default=8)
    ap.add_argument("--layout", default="tokens", choices=["tokens", "rows", "heads"], help="capacity: the KV layout")
    ap.add_argument("--group", type=int, default=None, help="capacity: K/V tensors per region (layout rows)")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--schedule", choices=["batch", "continuous"], default="batch",
                    help="capacity: one batch whose rows stop at their lengths, or continuous replacement")
    ap.add_argument("--keep-finished", action="store_true", help="capacity (batch): finished rows keep their pages")
    args = ap.parse_args()
    if args.mode == "capacity":
        args.steps = args.steps if args.steps != 30 else 12000
    SAVE.update(out=args.out, mode=args.mode)
    {"probe": probe, "check": check, "bench": bench, "capacity": capacity}[args.mode](args)
    save(args.out, args.mode)


if __name__ == "__main__":
    main()
