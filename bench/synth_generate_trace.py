#!/usr/bin/env python3
"""A synthetic allocation log of Hugging Face generation (bench/hf_generate.py's workload), and
the utilization that page-granular allocation alone allows on it.

bench/hf_generate.py measured memlake's utilization at 0.922 against expandable_segments' 0.979
(docs/results.md §24d) while the shipped generation trace replays at 0.971. This generator
writes the tensors of hf_generate's Qwen2-like model (hidden 1536, 28 layers, 2 KV heads of 128,
MLP 8960, vocabulary 32000, bf16 weights) generating with DynamicCache: every call draws a batch,
a prompt and a number of new tokens as hf_generate does; the prefill's per-layer activations;
each decode step's K/V grown by concatenation (a new tensor one position longer, the old freed)
and its small transients; the last position's float32 logits. Sizes are the tensors' bytes; it is
a model, not a recording (`STEPS=gentrace` in scripts/gpu_steps.sh records the real one).

--bound prints, for the log, peak requested bytes over the peak of the same allocations with
those above `--packed` bytes rounded up to whole 2 MiB pages: what utilization page-granular
large allocations allow at best (expandable_segments packs them at 512 bytes).

    python3 bench/synth_generate_trace.py --out /tmp/gen.csv.gz
    build/memlake replay /tmp/gen.csv.gz
    python3 bench/synth_generate_trace.py --bound /tmp/gen.csv.gz traces/opt13b-R.csv.gz
"""
import argparse
import gzip
import random

from synth_training_trace import Log

PAGE = 2 << 20


def generate(log, a):
    rng = random.Random(a.seed)
    h, layers, kv, inter, vocab, bf = a.hidden, a.layers, a.kv_heads * a.head_dim, a.inter, a.vocab, 2
    for shape in [(vocab, h)] + [(h, h), (h, kv), (h, kv), (h, h), (h, inter), (h, inter), (inter, h)] * layers:
        log.alloc(shape[0] * shape[1] * bf)  # the weights, for good
    for _ in range(a.calls):
        b, p, new = rng.randint(1, a.max_batch), rng.randint(a.min_prompt, a.max_prompt), rng.randint(a.min_new,
                                                                                                      a.max_new)
        ids = log.alloc(b * p * 8)
        keys, values = [], []

        def layer(x, n, grow):
            """One decoder layer over n positions; grow(l): its K and V, new or one position longer."""
            y = log.alloc(b * n * h * bf)  # the norm
            q = log.alloc(b * n * h * bf)
            grow()
            att = log.alloc(b * n * h * bf)
            log.free(q)
            o = log.alloc(b * n * h * bf)
            log.free(att)
            log.free(y)
            gate, up = log.alloc(b * n * inter * bf), log.alloc(b * n * inter * bf)
            act = log.alloc(b * n * inter * bf)
            log.free(gate)
            log.free(up)
            out = log.alloc(b * n * h * bf)
            log.free(act)
            log.free(o)
            log.free(x)
            return out

        x = log.alloc(b * p * h * bf)
        for _ in range(layers):
            def first():
                keys.append(log.alloc(b * p * kv * bf))
                values.append(log.alloc(b * p * kv * bf))
            x = layer(x, p, first)
        logits = log.alloc(b * vocab * 4)
        log.free(x)
        log.free(logits)
        log.free(ids)
        for s in range(1, new):
            x = log.alloc(b * h * bf)
            for i in range(layers):
                def longer(i=i, length=p + s):
                    for cache in (keys, values):
                        grown = log.alloc(b * length * kv * bf)  # torch.cat: the new one first
                        log.free(cache[i])
                        cache[i] = grown
                x = layer(x, 1, longer)
            logits = log.alloc(b * vocab * 4)
            log.free(x)
            log.free(logits)
        for t in keys + values:
            log.free(t)


def bound(path, packed):
    """(peak requested, peak with allocations above `packed` bytes in whole pages)."""
    from alloc_latency import read_events  # the allocator benchmarks' reader of these logs
    live, req, rounded, peak_req, peak_rounded = {}, 0, 0, 0, 0
    for is_alloc, ptr, n in read_events(path, float("inf")):
        if is_alloc:
            r = n if n <= packed else (n + PAGE - 1) // PAGE * PAGE
            live[ptr] = (n, r)
            req, rounded = req + n, rounded + r
        else:
            n, r = live.pop(ptr)
            req, rounded = req - n, rounded - r
        peak_req, peak_rounded = max(peak_req, req), max(peak_rounded, rounded)
    return peak_req, peak_rounded


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--out", default="gen.csv.gz")
    ap.add_argument("--calls", type=int, default=40)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--hidden", type=int, default=1536)
    ap.add_argument("--layers", type=int, default=28)
    ap.add_argument("--kv-heads", type=int, default=2)
    ap.add_argument("--head-dim", type=int, default=128)
    ap.add_argument("--inter", type=int, default=8960)
    ap.add_argument("--vocab", type=int, default=32000)
    ap.add_argument("--max-batch", type=int, default=16)
    ap.add_argument("--min-prompt", type=int, default=64)
    ap.add_argument("--max-prompt", type=int, default=1024)
    ap.add_argument("--min-new", type=int, default=16)
    ap.add_argument("--max-new", type=int, default=96)
    ap.add_argument("--bound", nargs="+", metavar="TRACE", help="print each log's page-rounding bound instead")
    ap.add_argument("--packed", type=int, default=1 << 20, help="--bound: bytes up to which allocations are packed "
                    "(memlake's small_max, 1 MiB)")
    a = ap.parse_args()
    if a.bound:
        for path in a.bound:
            req, rounded = bound(path, a.packed)
            print(f"{path}: peak requested {req / 2**30:.3f} GiB, with whole pages above {a.packed} bytes "
                  f"{rounded / 2**30:.3f} GiB: utilization at most {req / rounded:.4f}")
        return
    with gzip.open(a.out, "wt") if a.out.endswith(".gz") else open(a.out, "w") as f:
        generate(Log(f), a)


if __name__ == "__main__":
    main()
