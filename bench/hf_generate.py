#!/usr/bin/env python3
"""HF generation with varying batch and prompt length: tokens/s and memory
utilization, memlake against PyTorch's native allocator and
expandable_segments, each in its own process, rounds alternated.

A Qwen2-like model (random weights, bf16, no download; --layers and --hidden
scale it; the default is ~1.5 B parameters), greedy decoding, DynamicCache.
Every call draws a batch (1..--max-batch), a prompt length
(--min-prompt..--max-prompt) and a number of new tokens
(--min-new..--max-new) from one seeded sequence, the same for every
allocator. The first --warmup calls are not timed. Utilization = peak
requested (memlake) or peak allocated (PyTorch) over peak reserved, the
measure of docs/results.md.

    python3 bench/hf_generate.py [--allocators native,expandable,memlake] [--repeats 3] [--calls 12] [--out r.json]

Allocators and rounds: bench/_rounds.py (memlake@NAME=VALUE for a variant).
"""
import argparse
import json
import random
import time

from _rounds import ratio_summary, run_rounds, use_allocator


def worker(a):
    memlake = use_allocator(a.allocator)
    import torch
    import transformers
    torch.manual_seed(0)
    cfg = transformers.Qwen2Config(hidden_size=a.hidden, num_hidden_layers=a.layers, num_attention_heads=12,
                                   num_key_value_heads=2, intermediate_size=a.hidden * 35 // 6, vocab_size=32000,
                                   max_position_embeddings=8192)
    model = transformers.AutoModelForCausalLM.from_config(cfg).to(dtype=torch.bfloat16, device="cuda").eval()
    rng = random.Random(a.seed)
    calls = [(rng.randint(1, a.max_batch), rng.randint(a.min_prompt, a.max_prompt), rng.randint(a.min_new, a.max_new))
             for _ in range(a.warmup + a.calls)]

    def peaks():
        if memlake:
            s = memlake.stats()
            return s["requested_bytes.all.peak"], s["reserved_bytes.all.peak"]
        return torch.cuda.max_memory_allocated(), torch.cuda.max_memory_reserved()

    tokens, seconds = 0, 0.0
    host0 = None
    for i, (bs, plen, new) in enumerate(calls):
        if i == a.warmup:
            host0 = memlake.stats()["memlake.host_seconds"] if memlake else None
        ids = torch.randint(0, cfg.vocab_size, (bs, plen), device="cuda",
                            generator=torch.Generator("cuda").manual_seed(i))
        torch.cuda.synchronize()
        t = time.perf_counter()
        with torch.no_grad():
            out = model.generate(input_ids=ids, attention_mask=torch.ones_like(ids), max_new_tokens=new,
                                 min_new_tokens=new, do_sample=False, pad_token_id=0)
        torch.cuda.synchronize()
        dt = time.perf_counter() - t
        if i >= a.warmup:
            tokens += bs * (out.shape[1] - plen)
            seconds += dt
        del out, ids
    pa, pr = peaks()
    res = dict(allocator=a.allocator, tokens=tokens, seconds=seconds, tokens_per_s=tokens / seconds,
               peak_allocated=pa, peak_reserved=pr, utilization=pa / pr if pr else 0.0)
    if memlake:
        res["memlake_host_seconds"] = memlake.stats()["memlake.host_seconds"] - host0
    print("RESULT " + json.dumps(res))


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--allocators", default="native,expandable,memlake")
    p.add_argument("--repeats", type=int, default=3)
    p.add_argument("--calls", type=int, default=12)
    p.add_argument("--warmup", type=int, default=2)
    p.add_argument("--layers", type=int, default=28)
    p.add_argument("--hidden", type=int, default=1536)
    p.add_argument("--max-batch", type=int, default=16)
    p.add_argument("--min-prompt", type=int, default=64)
    p.add_argument("--max-prompt", type=int, default=1024)
    p.add_argument("--min-new", type=int, default=16)
    p.add_argument("--max-new", type=int, default=96)
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--out", default="")
    p.add_argument("--worker", action="store_true", help=argparse.SUPPRESS)
    p.add_argument("--allocator", default="native", help=argparse.SUPPRESS)
    a = p.parse_args()
    if a.worker:
        return worker(a)
    passthru = [f"--{k.replace('_', '-')}={v}" for k, v in vars(a).items()
                if k not in ("allocators", "repeats", "out", "worker", "allocator")]
    order = a.allocators.split(",")
    runs = run_rounds(__file__, order, a.repeats, passthru, a.out,
                      lambda res: f"{res['tokens_per_s']:.0f} tokens/s, util {res['utilization']:.3f}")
    summary = ratio_summary(runs, order, "tokens_per_s")
    for al, v in summary.items():
        print(f"{al:<11} {v['tokens_per_s']:>9.0f} tokens/s  vs native {v['vs_native'] or 0:.3f} "
              f"(per round {', '.join(f'{x:.3f}' for x in v['ratios'])})  util {v['utilization']:.3f}")
    if a.out:
        with open(a.out, "w") as f:
            json.dump({"runs": runs, "summary": summary, "args": vars(a)}, f, indent=1)


if __name__ == "__main__":
    main()
