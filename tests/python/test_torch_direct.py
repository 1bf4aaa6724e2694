"""memlake.torch.enable() with memlake's direct allocator (memlake/_torch_direct.cpp, issue 27): a
subclass of PyTorch's CUDAAllocator, compiled against the installed PyTorch on first use, instead of
CUDAPluggableAllocator. Each scenario runs in a fresh interpreter (enable() must precede the first
CUDA allocation). Skipped without torch, without a CUDA device, or without a compiler and ninja."""
import os
import shutil

import pytest

torch = pytest.importorskip("torch", reason="PyTorch not installed")
if not torch.cuda.is_available():
    pytest.skip("no CUDA device: GPU tests skipped", allow_module_level=True)
if shutil.which("ninja") is None or shutil.which("c++") is None:
    pytest.skip("no ninja or C++ compiler: the direct allocator cannot be built here", allow_module_level=True)

from test_torch_gpu import run as run_in_fresh_interpreter  # noqa: E402


def run(code, timeout=600, **env_extra):
    env = dict(os.environ, **env_extra)
    if "MEMLAKE_TORCH_OOM" not in env_extra:
        env.pop("MEMLAKE_TORCH_OOM", None)
    # The direct allocator is off by default until measured; these scenarios turn it on.
    env.setdefault("MEMLAKE_TORCH_DIRECT", "1")
    return run_in_fresh_interpreter(code, timeout, env)


def test_enable_installs_the_direct_allocator_and_tensors_come_from_memlake():
    out = run("""
        import torch, memlake, memlake.torch as mt
        mt.enable()
        alloc = mt._state["enabled"]
        assert isinstance(alloc, mt._DirectAllocator), alloc
        assert alloc.installed()
        assert torch.cuda.get_allocator_backend() == "memlake", torch.cuda.get_allocator_backend()
        assert torch.cuda.memory._get_current_allocator() is not None
        base = memlake.stats()["requested_bytes.all.current"]
        x = torch.arange(1 << 20, device="cuda", dtype=torch.float64)
        y = (x * 2).sum().item()
        assert y == float((1 << 20) * ((1 << 20) - 1)), y
        s = memlake.stats()
        assert s["requested_bytes.all.current"] >= base + (8 << 20), s
        a = [torch.empty(n << 20, device="cuda", dtype=torch.uint8) for n in (3, 5, 7, 9)]
        held = memlake.stats()["requested_bytes.all.current"]
        del a
        torch.cuda.synchronize()
        assert memlake.stats()["requested_bytes.all.current"] <= held - (24 << 20)
        # Empty tensors allocate nothing.
        e = torch.empty(0, device="cuda")
        assert e.data_ptr() == 0
        # PyTorch's C++ statistics (getDeviceStats) answer from memlake too.
        if hasattr(torch._C, "_cuda_memoryStats"):
            st = torch._C._cuda_memoryStats(torch.cuda.current_device())  # nested: {"allocated_bytes": {"all": ...}}
            assert st["allocated_bytes"]["all"]["current"] == memlake.stats()["allocated_bytes.all.current"], st
        assert torch.cuda.memory_allocated() == memlake.stats()["allocated_bytes.all.current"]
        print("direct ok", torch.cuda.get_allocator_backend())
    """)
    assert "direct ok memlake" in out


def test_raw_allocations_and_backward_on_autograd_threads():
    run("""
        import torch, memlake, memlake.torch as mt
        mt.enable()
        before = memlake.stats()["requested_bytes.all.current"]
        p = torch.cuda.caching_allocator_alloc(3 << 20)
        assert p and memlake.stats()["requested_bytes.all.current"] >= before + (3 << 20)
        torch.cuda.caching_allocator_delete(p)
        assert memlake.stats()["requested_bytes.all.current"] == before
        s = torch.cuda.Stream()
        with torch.cuda.stream(s):
            q = torch.cuda.caching_allocator_alloc(1 << 20, stream=s)
            torch.cuda.caching_allocator_delete(q)
        m = torch.nn.Sequential(torch.nn.Linear(512, 512), torch.nn.ReLU(), torch.nn.Linear(512, 1)).cuda()
        for _ in range(3):
            m(torch.randn(64, 512, device="cuda")).sum().backward()
        torch.cuda.synchronize()
        assert all(w.grad is not None for w in m.parameters())
    """)


def test_out_of_memory_is_torch_out_of_memory_error():
    out = run("""
        import torch, memlake, memlake.torch as mt
        mt.enable(memory_cap="1G")
        assert torch.cuda.get_allocator_backend() == "memlake"
        keep = torch.ones(256 << 20, device="cuda", dtype=torch.uint8)
        try:
            torch.empty(2 << 30, device="cuda", dtype=torch.uint8)
        except torch.OutOfMemoryError as e:
            assert "memlake: CUDA out of memory" in str(e), str(e)
            assert "2.00 GiB" in str(e), str(e)
            print("oom ok")
        z = torch.zeros(100 << 20, device="cuda", dtype=torch.uint8)
        assert bool(keep.eq(1).all()) and bool(z.eq(0).all())
        assert memlake.stats()["num_ooms"] == 1
    """)
    assert "oom ok" in out


def test_without_the_oom_conversion_out_of_memory_is_a_runtime_error():
    out = run("""
        import torch, memlake, memlake.torch as mt
        mt.enable(memory_cap="1G")
        assert torch.cuda.get_allocator_backend() == "memlake"
        try:
            torch.empty(2 << 30, device="cuda", dtype=torch.uint8)
        except Exception as e:
            print("raw:", type(e).__name__, isinstance(e, torch.OutOfMemoryError), mt.is_oom(e))
    """, MEMLAKE_TORCH_OOM="0")
    assert "raw: RuntimeError False True" in out, out


@pytest.mark.parametrize("how", ["env", "option"])
def test_direct_can_be_turned_off(how):
    code = """
        import torch, memlake, memlake.torch as mt
        mt.enable(%s)
        assert not isinstance(mt._state["enabled"], mt._DirectAllocator)
        x = torch.ones(1 << 20, device="cuda")
        assert memlake.stats()["requested_bytes.all.current"] >= 4 << 20
        print("backend", torch.cuda.get_allocator_backend())
    """
    if how == "env":
        out = run(code % "", MEMLAKE_TORCH_DIRECT="0")
    else:
        out = run(code % 'torch_direct="0"')  # what bench's memlake:torch_direct=0 passes
    assert "backend pluggable" in out, out


def test_graph_capture_and_replay_under_the_direct_allocator():
    run("""
        import torch, memlake, memlake.torch as mt
        mt.enable()
        assert torch.cuda.get_allocator_backend() == "memlake"
        x = torch.ones(1 << 20, device="cuda")
        s = torch.cuda.Stream()
        s.wait_stream(torch.cuda.current_stream())
        with torch.cuda.stream(s):
            for _ in range(2):
                y = x * 2 + 1
        torch.cuda.current_stream().wait_stream(s)
        g = torch.cuda.CUDAGraph()
        with torch.cuda.graph(g):
            y = x * 2 + 1
        x.fill_(3)
        g.replay()
        torch.cuda.synchronize()
        assert bool(y.eq(7).all())
        g.reset()
    """)


# Enabling too late, on either path: test_torch_gpu.py::test_enable_too_late_is_a_clear_error.
