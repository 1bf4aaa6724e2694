#!/usr/bin/env python3
"""ResNet-50 training with the batch and the resolution changing every step:
images/s and memory utilization, memlake against PyTorch's native allocator
and expandable_segments, each in its own process, rounds alternated.

What varies is what makes a caching allocator fragment: every step draws a
batch (--min-batch..--max-batch) and a square resolution (--resolutions)
from one seeded sequence, the same for every allocator, so activations of
every size come and go. bf16 autocast, channels_last, SGD with momentum,
random images and labels made on the GPU (seeded per step), random weights
(seeded). The first --warmup steps are not timed. cuDNN's algorithm search
is off (PyTorch's default; --cudnn-benchmark turns it on: it runs for every
new shape, which is nearly every step here). Utilization = peak requested (memlake) or peak allocated
(PyTorch) over peak reserved, as in docs/results.md.

    python3 bench/vision_varshape.py [--allocators native,expandable,memlake] [--repeats 3] [--steps 60]
        [--out r.json]

Allocators and rounds: bench/_rounds.py (memlake:KEY=VALUE;KEY=VALUE for a variant).
"""
import random
import time

from _models import resnet
from _rounds import emit_result, host_seconds, parser, throughput_main, use_allocator


def shapes(a):
    """(batch, resolution) of every step, warm-up first: one seeded sequence for every allocator."""
    rng = random.Random(a.seed)
    res = [int(x) for x in a.resolutions.split(",")]
    return [(rng.randint(a.min_batch, a.max_batch), rng.choice(res)) for _ in range(a.warmup + a.steps)]


def worker(a):
    memlake = use_allocator(a.allocator)
    import torch
    torch.manual_seed(0)
    torch.backends.cudnn.benchmark = a.cudnn_benchmark
    model = resnet(torch, a.depth).cuda().to(memory_format=torch.channels_last)
    opt = torch.optim.SGD(model.parameters(), lr=0.01, momentum=0.9, weight_decay=1e-4)
    loss_fn = torch.nn.CrossEntropyLoss()

    images, seconds, host0, loss = 0, 0.0, None, None
    for i, (bs, r) in enumerate(shapes(a)):
        if i == a.warmup:
            torch.cuda.synchronize()
            host0 = host_seconds(memlake)
            t = time.perf_counter()
        g = torch.Generator("cuda").manual_seed(i)
        x = torch.randn(bs, 3, r, r, device="cuda", generator=g).to(memory_format=torch.channels_last)
        y = torch.randint(0, 1000, (bs,), device="cuda", generator=g)
        with torch.autocast("cuda", dtype=torch.bfloat16):
            loss = loss_fn(model(x), y)
        loss.backward()
        opt.step()
        opt.zero_grad(set_to_none=True)
        if i >= a.warmup:
            images += bs
        del x, y
    torch.cuda.synchronize()
    seconds = time.perf_counter() - t
    emit_result(memlake, torch, host0, allocator=a.allocator, images=images, seconds=seconds,
                images_per_s=images / seconds, last_loss=float(loss), gpu=torch.cuda.get_device_name())


def main():
    p = parser(__doc__)
    p.add_argument("--steps", type=int, default=60)
    p.add_argument("--warmup", type=int, default=10)
    p.add_argument("--depth", type=int, default=50, help="ResNet depth: 50, 101 or 152")
    p.add_argument("--min-batch", type=int, default=16)
    p.add_argument("--max-batch", type=int, default=128)
    p.add_argument("--resolutions", default="128,160,192,224,256,288")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--cudnn-benchmark", action="store_true")
    a = p.parse_args()
    if a.steps < 1 or a.warmup < 0 or a.min_batch < 1 or a.max_batch < a.min_batch:
        p.error("--steps >= 1, --warmup >= 0, 1 <= --min-batch <= --max-batch")
    if a.worker:
        return worker(a)
    throughput_main(a, __file__, "images_per_s", "images")


if __name__ == "__main__":
    main()
