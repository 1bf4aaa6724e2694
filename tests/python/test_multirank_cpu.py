"""A job of two ranks on the CPU (gloo), launched as torchrun launches them
(MASTER_ADDR/PORT, RANK, LOCAL_RANK, WORLD_SIZE: Debian's torch 1.13 has a
torchrun that fails under Python 3.11), memlake in each rank (host backend): MEMLAKE_TRACE=...%r gives every rank its own trace, each holding
that rank's own allocations only, and each rank's stats are its own (issue 25:
multi-rank where the CPU allows; FSDP2 itself needs CUDA and runs in
test_torch_gpu.py)."""
import gzip
import os
import socket
import subprocess
import sys
import textwrap

import pytest

torch = pytest.importorskip("torch", reason="PyTorch not installed")
dist = pytest.importorskip("torch.distributed", reason="torch without torch.distributed")
if not dist.is_available() or not dist.is_gloo_available():
    pytest.skip("torch.distributed has no gloo backend here", allow_module_level=True)

RANK_SCRIPT = textwrap.dedent("""
    import os, torch, torch.distributed as dist, memlake
    dist.init_process_group("gloo")
    rank, world = dist.get_rank(), dist.get_world_size()
    a = memlake.Allocator(backend="host", granularity="64K", small_max="16K")
    n = 5 + 3 * rank                     # rank r makes 5 + 3r allocations of (r + 1) x 100 KiB
    ptrs = [a.alloc((rank + 1) * 100 << 10) for _ in range(n)]
    s = a.stats()
    live = torch.tensor([s["requested_bytes.all.current"]], dtype=torch.float64)
    dist.all_reduce(live)                # the ranks really talk: the sum of every rank's live bytes
    for p in ptrs:
        a.free(p)
    a.close()
    print(f"RANK{rank} allocs={n} mine={s['requested_bytes.all.current']} total={int(live.item())}", flush=True)
    dist.destroy_process_group()
""")


def _trace_actions(path):
    with gzip.open(path, "rt") as f:
        rows = [line.rstrip("\n").split(",") for line in f][1:]
    return [(r[2], int(r[4])) for r in rows]


def _free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def test_two_ranks_each_write_their_own_trace_and_stats(tmp_path):
    script = tmp_path / "rank.py"
    script.write_text(RANK_SCRIPT)
    base = dict(os.environ, PYTHONPATH=":".join(sys.path), MEMLAKE_TRACE=str(tmp_path / "trace.%r.csv.gz"),
                OMP_NUM_THREADS="1", MASTER_ADDR="127.0.0.1", MASTER_PORT=str(_free_port()), WORLD_SIZE="2")
    procs = [subprocess.Popen([sys.executable, str(script)], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                              text=True, env=dict(base, RANK=str(r), LOCAL_RANK=str(r))) for r in (0, 1)]
    outs = []
    try:
        for p in procs:
            out, err = p.communicate(timeout=240)
            assert p.returncode == 0, f"stdout:\n{out}\nstderr:\n{err[-4000:]}"
            outs.append(out)
    finally:
        for p in procs:
            p.kill()
    lines = {ln.split()[0]: dict(kv.split("=") for kv in ln.split()[1:])
             for out in outs for ln in out.splitlines() if ln.startswith("RANK")}
    assert set(lines) == {"RANK0", "RANK1"}, outs
    mine = {r: int(lines[f"RANK{r}"]["mine"]) for r in (0, 1)}
    assert mine[0] == 5 * (100 << 10) and mine[1] == 8 * (200 << 10)  # each rank's stats are its own
    assert int(lines["RANK0"]["total"]) == int(lines["RANK1"]["total"]) == mine[0] + mine[1]
    for r, (n, size) in {0: (5, 100 << 10), 1: (8, 200 << 10)}.items():
        path = tmp_path / f"trace.{r}.csv.gz"
        assert path.exists(), sorted(x.name for x in tmp_path.iterdir())
        acts = _trace_actions(path)
        assert [s for a, s in acts if a == "allocate"] == [size] * n, (r, acts)
        assert sum(1 for a, _ in acts if a == "free") == n, (r, acts)
