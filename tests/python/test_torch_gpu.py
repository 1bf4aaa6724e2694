"""PyTorch integration on a GPU. Each scenario runs in a fresh interpreter
(enable() must precede the first CUDA allocation). Skipped without torch or
without a CUDA device."""
import os
import subprocess
import sys
import textwrap

import pytest

torch = pytest.importorskip("torch", reason="PyTorch not installed")
if not torch.cuda.is_available():
    pytest.skip("no CUDA device: GPU tests skipped", allow_module_level=True)


def run(code, timeout=600, env=None):
    """Runs `code` in a fresh interpreter (enable() must precede the first CUDA allocation); `env`:
    the environment, os.environ's by default. Returns its stdout; fails the test if it fails."""
    env = dict(os.environ if env is None else env, PYTHONPATH=":".join(sys.path))
    p = subprocess.run([sys.executable, "-c", textwrap.dedent(code)], capture_output=True, text=True, env=env,
                       timeout=timeout)
    assert p.returncode == 0, f"stdout:\n{p.stdout}\nstderr:\n{p.stderr[-4000:]}"
    return p.stdout


def test_enable_runs_tensors_and_reports_stats():
    out = run("""
        import torch, memlake, memlake.torch as mt
        mt.enable()
        x = torch.arange(1 << 20, device="cuda", dtype=torch.float64)
        y = (x * 2).sum().item()
        assert y == float((1 << 20) * ((1 << 20) - 1)), y
        s = memlake.stats()
        assert s["requested_bytes.all.current"] >= 4 << 20, s
        a = [torch.empty(n << 20, device="cuda", dtype=torch.uint8) for n in (3, 5, 7, 9)]
        del a[0], a[1]
        b = torch.ones(12 << 20, device="cuda", dtype=torch.uint8)
        torch.cuda.synchronize()
        assert int(b.sum().item()) == 12 << 20
        print("stitches", memlake.stats()["memlake.stitches"])
        # torch's own statistics answer from memlake (the pluggable allocator has none)
        assert torch.cuda.memory_allocated() == memlake.stats()["allocated_bytes.all.current"]
        assert torch.cuda.max_memory_reserved() >= torch.cuda.memory_reserved() > 0
        assert torch.cuda.memory_stats()["num_ooms"] == 0
        print(memlake.summary())
    """)
    assert "memlake memory summary" in out


def test_enable_out_of_memory_is_catchable_and_recoverable():
    out = run("""
        import torch, memlake, memlake.torch as mt
        mt.enable(memory_cap="1G")
        keep = torch.ones(256 << 20, device="cuda", dtype=torch.uint8)
        # Checks use eq().all(): sum() of uint8 makes an int64 copy (8x) that would not fit the cap.
        try:
            with mt.oom_errors():
                torch.empty(2 << 30, device="cuda", dtype=torch.uint8)
        except torch.OutOfMemoryError as e:
            assert isinstance(e, mt.OutOfMemoryError)
            assert "2.00 GiB" in str(e) and "cap 1.00 GiB" in str(e), str(e)
            print("oom ok:", str(e)[:200])
        # What PyTorch raises without oom_errors(): its own OutOfMemoryError (memlake._torch_oom)
        try:
            torch.empty(2 << 30, device="cuda", dtype=torch.uint8)
        except Exception as e:
            print("raw:", type(e).__name__, isinstance(e, torch.OutOfMemoryError), mt.is_oom(e))
            assert "2.00 GiB" in str(e), str(e)
        z = torch.zeros(100 << 20, device="cuda", dtype=torch.uint8)
        assert bool(keep.eq(1).all()) and bool(z.eq(0).all())
        assert memlake.stats()["num_ooms"] == 2
    """)
    assert "oom ok:" in out and "raw: OutOfMemoryError True True" in out, out


def test_without_the_wrapper_out_of_memory_is_a_runtime_error():
    os.environ["MEMLAKE_TORCH_OOM"] = "0"
    try:
        out = run("""
            import torch, memlake, memlake.torch as mt
            mt.enable(memory_cap="1G")
            try:
                torch.empty(2 << 30, device="cuda", dtype=torch.uint8)
            except Exception as e:
                print("raw:", type(e).__name__, mt.is_oom(e))
        """)
    finally:
        del os.environ["MEMLAKE_TORCH_OOM"]
    assert "raw: RuntimeError True" in out


@pytest.mark.parametrize("direct", ["0", "1"])  # through CUDAPluggableAllocator / the direct allocator
def test_enable_too_late_is_a_clear_error(direct):
    out = run("""
        import torch, memlake, memlake.torch as mt
        x = torch.ones(10, device="cuda")
        try:
            mt.enable()
        except memlake.Error as e:
            print("late:", e)
    """, env=dict(os.environ, MEMLAKE_TORCH_DIRECT=direct))
    assert "late:" in out and "before the first CUDA allocation" in out


def test_pool_keeps_torch_stats_and_oom():
    out = run("""
        import torch, memlake, memlake.torch as mt
        with mt.pool(memory_cap="512M") as p:
            x = torch.ones(64 << 20, device="cuda", dtype=torch.uint8)
            assert torch.cuda.memory_stats()["allocated_bytes.all.current"] >= 64 << 20
            assert memlake.stats()["reserved_bytes.all.current"] >= 64 << 20
            try:
                torch.empty(1 << 30, device="cuda", dtype=torch.uint8)
            except torch.OutOfMemoryError as e:
                print("pool oom ok")
            assert bool(x.eq(1).all())  # not sum(): its int64 copy would not fit the cap
        y = torch.ones(8, device="cuda")  # outside: PyTorch's own allocator
        print("done")
    """)
    assert "pool oom ok" in out and "done" in out


def test_graph_capture_under_enable_keeps_the_graphs_memory_apart():
    # memlake learns of the capture from the wrapped torch.cuda.CUDAGraph; the
    # graph's temporaries stay its own while eager tensors come and go, and
    # the memory goes back when the graph is collected.
    out = run("""
        import gc, torch, memlake, memlake.torch as mt
        mt.enable()
        x = torch.randn(1 << 20, device="cuda")
        g = torch.cuda.CUDAGraph()
        s = torch.cuda.Stream()
        s.wait_stream(torch.cuda.current_stream())
        with torch.cuda.stream(s):  # warm-up, as PyTorch's docs do
            y = ((x * 2).sin() + 1) * 3
        torch.cuda.current_stream().wait_stream(s)
        with torch.cuda.graph(g, stream=s):
            t = (x * 2).sin()      # a temporary, freed inside the capture
            y = (t + 1) * 3
            del t
        ref = ((x * 2).sin() + 1) * 3
        for i in range(20):
            junk = [torch.full(((1 << 18) * (k + 1),), float(i), device="cuda") for k in range(8)]
            x.copy_(torch.randn_like(x))
            ref = ((x * 2).sin() + 1) * 3
            g.replay()
            torch.cuda.synchronize()
            assert torch.allclose(y, ref), (i, (y - ref).abs().max().item())
            del junk
        live = memlake.stats()["active.all.current"]
        del g, y
        gc.collect()
        torch.cuda.synchronize()
        print("replays ok; blocks", live, "->", memlake.stats()["active.all.current"])
    """)
    assert "replays ok" in out, out


def test_capture_check_query_refuses_a_capture():
    out = run("""
        import os
        os.environ["MEMLAKE_CAPTURE_CHECK"] = "query"
        import torch, memlake.torch as mt
        mt.enable()
        x = torch.ones(1 << 20, device="cuda")
        g = torch.cuda.CUDAGraph()
        s = torch.cuda.Stream()
        try:
            with torch.cuda.graph(g, stream=s):
                y = x * 2
            print("captured")
        except Exception as e:
            print("refused:", type(e).__name__, str(e).splitlines()[0][:200])
    """)
    assert "refused:" in out and "captured" not in out, out


def test_compile_reduce_overhead_matches_native(tmp_path):
    code = """
        import sys, torch
        if sys.argv[1] == "memlake":
            import memlake.torch as mt
            mt.enable()
        torch.manual_seed(0)
        m = torch.nn.Sequential(torch.nn.Linear(256, 1024), torch.nn.GELU(), torch.nn.Linear(1024, 256)).cuda()
        c = torch.compile(m, mode="reduce-overhead")
        outs = []
        for i in range(6):
            x = torch.randn(64, 256, device="cuda", generator=torch.Generator("cuda").manual_seed(i))
            outs.append(c(x).clone())
        torch.save([o.cpu() for o in outs], sys.argv[2])
        print("saved")
    """
    env = dict(os.environ, PYTHONPATH=":".join(sys.path))
    for who in ("native", "memlake"):
        p = subprocess.run([sys.executable, "-c", textwrap.dedent(code), who, str(tmp_path / f"{who}.pt")],
                           capture_output=True, text=True, env=env, timeout=600)
        assert p.returncode == 0, f"{who}: {p.stdout}\n{p.stderr[-4000:]}"
    a, b = torch.load(tmp_path / "native.pt"), torch.load(tmp_path / "memlake.pt")
    for x, y in zip(a, b):
        assert torch.equal(x, y), (x - y).abs().max().item()


def test_torch_compile_works_under_memlake():
    out = run("""
        import torch, memlake.torch as mt
        mt.enable()
        torch.manual_seed(0)
        m = torch.nn.Sequential(torch.nn.Linear(256, 512), torch.nn.GELU(), torch.nn.Linear(512, 256)).cuda()
        x = torch.randn(64, 256, device="cuda")
        ref = m(x)
        c = torch.compile(m)
        for _ in range(3):
            out = c(x)
        print("max diff", (out - ref).abs().max().item())
        assert torch.allclose(out, ref, atol=1e-4, rtol=1e-4)
    """)
    assert "max diff" in out


def test_copy_with_tensors_pageable_and_pinned():
    out = run("""
        import torch, memlake
        n = (64 << 20) + 3
        src = torch.randint(0, 255, (n,), dtype=torch.uint8)          # pageable
        dst = torch.empty(n, dtype=torch.uint8, device="cuda")        # PyTorch's own allocator
        s = torch.cuda.Stream()
        memlake.copy(dst, src, stream=s)
        s.synchronize()
        assert torch.equal(dst.cpu(), src)
        back = torch.empty(n, dtype=torch.uint8)
        memlake.copy(back, dst)
        assert torch.equal(back, src)
        pinned = src.pin_memory()
        memlake.copy(dst[1:], pinned[1:], n - 1)
        torch.cuda.synchronize()
        assert torch.equal(dst.cpu(), src)
        print("copies ok")
    """)
    assert "copies ok" in out


def test_backward_allocates_from_autograd_threads():
    # autograd runs backward on its own thread, which has no current CUDA
    # context until it launches something: memlake must make its own current.
    out = run("""
        import torch, memlake.torch as mt
        mt.enable()
        m = torch.nn.Sequential(torch.nn.Linear(1024, 4096), torch.nn.GELU(), torch.nn.Linear(4096, 1024)).cuda()
        for _ in range(3):
            x = torch.randn(256, 1024, device="cuda", requires_grad=True)
            m(x).square().mean().backward()
        torch.cuda.synchronize()
        print("grad ok", float(m[0].weight.grad.abs().sum()) > 0)
    """)
    assert "grad ok True" in out


def _preloaded_env(**extra):
    """Environment for a child process under libmemlake_preload.so (skips the test if it is not built)."""
    lib = os.environ.get("MEMLAKE_LIBRARY", "")
    pre = os.path.join(os.path.dirname(lib), "libmemlake_preload.so")
    if not os.path.exists(pre):
        pytest.skip("libmemlake_preload.so not built next to MEMLAKE_LIBRARY")
    return dict(os.environ, PYTHONPATH=":".join(sys.path), LD_PRELOAD=pre, MEMLAKE_BACKEND="cuda", **extra)


def test_shim_routes_an_unmodified_torch_program():
    # PyTorch with its caching off calls cudaMalloc/cudaFree per tensor; under
    # libmemlake_preload.so those land in memlake (same libmemlake, so
    # memlake.stats() in the process sees them).
    env = _preloaded_env(PYTORCH_NO_CUDA_MEMORY_CACHING="1")
    code = """
        import torch, memlake
        x = torch.arange(1 << 22, device="cuda", dtype=torch.float32)
        ys = [x * i for i in range(8)]
        del ys[::2]
        z = torch.ones(5 << 22, device="cuda")
        assert float(z.sum()) == 5 << 22 and float(ys[0][3]) == 3.0
        free, total = torch.cuda.mem_get_info()
        s = memlake.stats()
        print("routed", s["allocation.all.allocated"] >= 6, s["reserved_bytes.all.current"] > 0)
    """
    p = subprocess.run([sys.executable, "-c", textwrap.dedent(code)], capture_output=True, text=True, env=env,
                       timeout=600)
    assert p.returncode == 0, p.stderr[-4000:]
    assert "routed True True" in p.stdout, p.stdout


def test_shim_copies_pageable_tensors_through_the_engine():
    # MEMLAKE_SHIM_COPY=1: PyTorch's cudaMemcpyAsync between pageable CPU
    # tensors and the GPU (shared libcudart) goes through memlake's copy
    # engine; the shim's log names each decision. Bytes must survive the trip.
    env = _preloaded_env(MEMLAKE_SHIM_COPY="1", MEMLAKE_SHIM_LOG="1")
    code = """
        import torch
        h = torch.arange(24 << 20, dtype=torch.int32)   # 96 MiB, pageable
        d = h.to("cuda")
        assert bool((d[-5:] == torch.arange((24 << 20) - 5, 24 << 20, device="cuda", dtype=torch.int32)).all())
        back = (d + 1).cpu()
        assert bool((back - 1 == h).all())
        print("round trip ok")
    """
    p = subprocess.run([sys.executable, "-c", textwrap.dedent(code)], capture_output=True, text=True, env=env,
                       timeout=600)
    assert p.returncode == 0, p.stderr[-4000:]
    assert "round trip ok" in p.stdout
    assert "H2D of 100663296 bytes -> memlake" in p.stderr, p.stderr[-4000:]
    assert "D2H of 100663296 bytes -> memlake" in p.stderr, p.stderr[-4000:]


def test_sleep_and_wake_under_enable_keep_tensors_and_give_memory_back():
    out = run("""
        import torch, memlake, memlake.torch as mt
        mt.enable()
        torch.ones(1, device="cuda"); torch.cuda.synchronize()
        base = torch.cuda.mem_get_info()[0]
        with memlake.tag("w-enable", readonly=True):
            w = torch.randn(64 << 20, device="cuda")          # 256 MiB
        with memlake.tag("kv-enable"):
            kv = torch.full((128 << 20,), 3, device="cuda", dtype=torch.int32)  # 512 MiB
        small = torch.arange(1000, device="cuda")              # a slab: stays
        ref = w.clone().cpu()
        ptr = w.data_ptr()
        r = memlake.sleep(tags={"w-enable": "offload", "kv-enable": "discard"})
        assert r["offloaded_bytes"] == 256 << 20 and r["discarded_bytes"] == 512 << 20, r
        freed = torch.cuda.mem_get_info()[0] - base
        assert freed > -(64 << 20), freed   # the driver got (almost) everything back
        assert int(small.sum().item()) == 499500
        memlake.wake()
        assert w.data_ptr() == ptr
        assert torch.equal(w.cpu(), ref)
        kv.fill_(5); assert int(kv[-1].item()) == 5
        # read-only weights: the next sleep copies nothing
        r = memlake.sleep(tags=["w-enable"])
        assert r["offloaded_bytes"] == 0 and r["kept_bytes"] == 256 << 20, r
        memlake.wake()
        assert torch.equal(w.cpu(), ref)
        print("ok", memlake.residency_stats())
    """)
    assert "ok" in out


def test_cuda_graph_captured_before_sleep_replays_after_wake_under_pool():
    out = run("""
        import torch, memlake, memlake.torch as mt
        with mt.pool() as mp, memlake.tag("w-graph"):
            w = torch.randn(2048, 2048, device="cuda")
        x = torch.randn(16, 2048, device="cuda")
        s = torch.cuda.Stream(); s.wait_stream(torch.cuda.current_stream())
        with torch.cuda.stream(s):
            y = x @ w
        torch.cuda.current_stream().wait_stream(s)
        g = torch.cuda.CUDAGraph()
        with torch.cuda.graph(g):
            y = x @ w
        g.replay(); torch.cuda.synchronize(); ref = y.clone()
        memlake.sleep(tags=["w-graph"])
        memlake.wake()
        y.zero_(); g.replay(); torch.cuda.synchronize()
        assert torch.equal(y, ref)
        print("ok")
    """)
    assert "ok" in out


FSDP = """
import os, torch, torch.distributed as dist
import memlake, memlake.torch as mt
mt.enable()  # before torch.cuda.set_device, which initialises PyTorch's allocator (torch 2.11)
torch.cuda.set_device(int(os.environ["LOCAL_RANK"]))
dist.init_process_group("nccl")
rank = dist.get_rank()
from torch.distributed.fsdp import fully_shard
torch.manual_seed(0)
model = torch.nn.Sequential(*[torch.nn.Linear(1024, 1024) for _ in range(4)]).cuda()
for m in model:
    fully_shard(m)
fully_shard(model)
opt = torch.optim.AdamW(model.parameters(), lr=1e-3)
g = torch.Generator(device="cuda").manual_seed(1)
for step in range(3):
    loss = model(torch.randn(64, 1024, device="cuda", generator=g)).square().mean()
    loss.backward()
    opt.step()
    opt.zero_grad()
s = memlake.stats()
print(f"RANK{rank} OK loss={loss.item():.6f} peak={s['requested_bytes.all.peak']}", flush=True)
dist.destroy_process_group()
"""


def test_fsdp2_under_torchrun_trains_with_memlake_in_every_rank(tmp_path):
    # issue 25: a torchrun job with FSDP2 (fully_shard), memlake in every rank, a trace per rank.
    if not hasattr(__import__("torch.distributed.fsdp", fromlist=["fully_shard"]), "fully_shard"):
        pytest.skip("this torch has no FSDP2 (fully_shard)")
    script = tmp_path / "fsdp.py"
    script.write_text(FSDP)
    env = dict(os.environ, PYTHONPATH=":".join(sys.path), MEMLAKE_TRACE=str(tmp_path / "trace.%r.csv.gz"))
    p = subprocess.run([sys.executable, "-m", "torch.distributed.run", "--standalone", "--nproc_per_node=1",
                        str(script)], capture_output=True, text=True, env=env, timeout=300)
    assert p.returncode == 0, f"stdout:\n{p.stdout}\nstderr:\n{p.stderr[-4000:]}"
    assert "RANK0 OK" in p.stdout, p.stdout
    assert (tmp_path / "trace.0.csv.gz").exists(), list(tmp_path.iterdir())
