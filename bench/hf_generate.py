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

Allocators and rounds: bench/_rounds.py (memlake:KEY=VALUE;KEY=VALUE for a variant).
"""
import random
import time

from _rounds import emit_result, host_seconds, parser, throughput_main, use_allocator


def worker(a):
    memlake = use_allocator(a.allocator)
    import torch
    import transformers
    torch.manual_seed(0)
    cfg = transformers.Qwen2Config(hidden_size=a.hidden, num_hidden_layers=a.layers, num_attention_heads=12,
                                   num_key_value_heads=2, intermediate_size=a.hidden * 35 // 6, vocab_size=32000,
                                   max_position_embeddings=8192)
    with torch.device("cuda"):  # made on the GPU in bf16: seconds, where a CPU init in fp32 took most of a run
        model = transformers.AutoModelForCausalLM.from_config(cfg, dtype=torch.bfloat16).eval()
    rng = random.Random(a.seed)
    calls = [(rng.randint(1, a.max_batch), rng.randint(a.min_prompt, a.max_prompt), rng.randint(a.min_new, a.max_new))
             for _ in range(a.warmup + a.calls)]
    tokens, seconds = 0, 0.0
    host0 = None
    for i, (bs, plen, new) in enumerate(calls):
        if i == a.warmup:
            host0 = host_seconds(memlake)
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
    emit_result(memlake, torch, host0, allocator=a.allocator, tokens=tokens, seconds=seconds,
                tokens_per_s=tokens / seconds)


def main():
    p = parser(__doc__)
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
    a = p.parse_args()
    if a.worker:
        return worker(a)
    throughput_main(a, __file__, "tokens_per_s", "tokens")


if __name__ == "__main__":
    main()
