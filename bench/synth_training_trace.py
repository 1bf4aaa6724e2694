#!/usr/bin/env python3
"""A synthetic allocation log of transformer fine-tuning with shapes that change every step.

The shipped traces settle: after their first half, every request fits a cached view and
memlake maps nothing more. PyTorch fine-tuning whose batch size follows the sequence length
(bench/torch_fragmentation.py's "V" strategies) does not: on the H200, memlake re-mapped
80-210 handles in every one of 25 steps (docs/results.md section 4b). This generator writes
an RMM-style log (the format `memlake replay` reads) of such a workload, so the churn can
be studied on the CPU until a real trace is recorded.

It is a model, not a recording: the tensors of one OPT-style decoder step (embedding,
per-layer attention and MLP activations, logits and the loss's float32 copies, LoRA
adapters on q and v, AdamW states), allocated and freed in the order a PyTorch step
allocates them, with gradient checkpointing ("R": each layer's input kept, the rest
recomputed in the backward pass). Sizes are the tensors' bytes; times are the event index.

    python3 bench/synth_training_trace.py --steps 50 --out /tmp/lrv.csv.gz
    build/memlake replay /tmp/lrv.csv.gz --sweep handle_size=0,8M
"""
import argparse
import gzip
import random


class Log:
    """Pointers are made up and never reused, so the log is unambiguous."""

    def __init__(self, f):
        self.f, self.t, self.next = f, 0, 0x7F0000000000
        self.live = {}
        f.write("Thread,Time,Action,Pointer,Size,Stream\n")

    def alloc(self, size):
        p = self.next
        self.next += (size + 4095) // 4096 * 4096 + 4096
        self.live[p] = size
        self.f.write(f"0,{self.t},allocate,{p:#x},{size},0\n")
        self.t += 1
        return p

    def free(self, p):
        size = self.live.pop(p)
        self.f.write(f"0,{self.t},free,{p:#x},{size},0\n")
        self.t += 1


def step(log, c, bs, seq, recompute, lora_grads):
    h, f, v, nh, r, bf, fp = c["hidden"], c["ffn"], c["vocab"], c["heads"], c["rank"], 2, 4
    t = bs * seq
    act = t * h * bf
    ids = log.alloc(t * 8)
    labels = log.alloc(t * 8)
    x = log.alloc(act)  # embeddings + positions
    pos = log.alloc(act)
    log.free(pos)

    def layer_forward(keep):
        """One decoder layer; returns its output and the tensors autograd keeps."""
        saved = []
        ln1 = log.alloc(act)
        q, k, vv = log.alloc(act), log.alloc(act), log.alloc(act)
        lora = [log.alloc(t * r * bf) for _ in range(4)]  # x@A and (x@A)@B for q and v
        scores = log.alloc(bs * nh * seq * seq * bf)
        probs = log.alloc(bs * nh * seq * seq * bf)
        ctx = log.alloc(act)
        out = log.alloc(act)
        res1 = log.alloc(act)
        ln2 = log.alloc(act)
        fc1 = log.alloc(t * f * bf)
        relu = log.alloc(t * f * bf)
        fc2 = log.alloc(act)
        res2 = log.alloc(act)
        tensors = [ln1, q, k, vv, *lora, scores, probs, ctx, out, res1, ln2, fc1, relu, fc2]
        if keep:
            saved = tensors
        else:
            for p in tensors:
                log.free(p)
        return res2, saved

    inputs = []
    for _ in range(c["layers"]):
        inputs.append(x)
        x, saved = layer_forward(keep=not recompute)
        if not recompute:
            inputs[-1] = (inputs[-1], saved)
    ln_f = log.alloc(act)
    logits = log.alloc(t * v * bf)
    up = log.alloc(t * v * fp)  # the loss in float32
    lsm = log.alloc(t * v * fp)
    log.free(up)
    loss = log.alloc(512)
    # backward
    g = log.alloc(t * v * fp)
    log.free(lsm)
    g16 = log.alloc(t * v * bf)
    log.free(g)
    log.free(logits)
    gx = log.alloc(act)
    log.free(g16)
    log.free(ln_f)
    log.free(x)
    for i in reversed(range(c["layers"])):
        if recompute:
            xin = inputs[i]
            out, saved = layer_forward(keep=True)
            log.free(out)
        else:
            xin, saved = inputs[i]
        # gradients flow back through the saved tensors, which are freed as they are used
        for p in reversed(saved):
            gp = log.alloc(log.live[p] if log.live[p] >= act else act)
            log.free(p)
            log.free(gp)
        for _ in range(4):  # LoRA A and B gradients of q and v, accumulated once per step
            if len(lora_grads) < 4 * c["layers"]:
                lora_grads.append(log.alloc(h * r * bf))
        ngx = log.alloc(act)
        log.free(gx)
        gx = ngx
        log.free(xin)
    log.free(gx)
    log.free(loss)
    log.free(ids)
    log.free(labels)


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--steps", type=int, default=40)
    p.add_argument("--batch", type=int, default=16)
    p.add_argument("--min-seq", type=int, default=64)
    p.add_argument("--max-seq", type=int, default=1024)
    p.add_argument("--fixed-batch", action="store_true", help="batch stays --batch (LR); default: batch x seq constant (LRV)")
    p.add_argument("--no-recompute", action="store_true")
    p.add_argument("--hidden", type=int, default=2048)
    p.add_argument("--ffn", type=int, default=8192)
    p.add_argument("--layers", type=int, default=24)
    p.add_argument("--heads", type=int, default=32)
    p.add_argument("--vocab", type=int, default=50272)
    p.add_argument("--rank", type=int, default=16)
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--out", required=True)
    a = p.parse_args()
    c = dict(hidden=a.hidden, ffn=a.ffn, layers=a.layers, heads=a.heads, vocab=a.vocab, rank=a.rank)
    rng = random.Random(a.seed)
    opener = gzip.open if a.out.endswith(".gz") else open
    with opener(a.out, "wt") as f:
        log = Log(f)
        h = a.hidden
        # weights (bf16), never freed
        log.alloc(a.vocab * h * 2)
        log.alloc(2050 * h * 2)
        for _ in range(a.layers):
            for _ in range(4):
                log.alloc(h * h * 2)
                log.alloc(h * 2)
            log.alloc(h * a.ffn * 2)
            log.alloc(a.ffn * 2)
            log.alloc(a.ffn * h * 2)
            for _ in range(5):
                log.alloc(h * 2)
            for _ in range(4):  # LoRA A, B of q and v
                log.alloc(h * a.rank * 2)
        lora_grads, adam = [], []
        for _ in range(a.steps):
            seq = rng.randint(a.min_seq, a.max_seq)
            bs = a.batch if a.fixed_batch else max(1, a.batch * a.max_seq // (4 * seq))
            step(log, c, bs, seq, not a.no_recompute, lora_grads)
            if not adam:  # AdamW's two float32 states per LoRA parameter, made at the first step
                adam = [log.alloc(h * a.rank * 4) for _ in range(8 * a.layers)]
            for p in lora_grads:  # zero_grad(set_to_none=True)
                log.free(p)
            lora_grads.clear()
    print(f"{a.out}: {log.t} events, {a.steps} steps")


if __name__ == "__main__":
    main()
