"""bench/torch_alloc_replay.py reads an allocation trace into the allocate/free
sequence it replays through PyTorch: segment events and short lines are skipped,
sizes are integers, order is kept. (The replay itself needs a GPU.)"""
import gzip
import importlib.util
import pathlib

ROOT = pathlib.Path(__file__).resolve().parents[2]


def load():
    spec = importlib.util.spec_from_file_location("torch_alloc_replay", ROOT / "bench" / "torch_alloc_replay.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def test_read_events_keeps_allocations_and_frees_in_order(tmp_path):
    bench = load()
    p = tmp_path / "t.csv.gz"
    with gzip.open(p, "wt") as f:
        f.write("Thread,Time,Action,Pointer,Size,Stream\n"
                "0,0,segment_alloc,0x1000,2097152,0\n"
                "0,1,allocate,0x1000,512,0\n"
                "0,2,allocate,0x1200,4096,0\n"
                "0,3,free,0x1000,512,0\n"
                "0,4,broken\n"
                "0,5,free,0x1200,4096,0\n")
    assert bench.read_events(str(p)) == [(True, "0x1000", 512), (True, "0x1200", 4096), (False, "0x1000", 0),
                                         (False, "0x1200", 0)]


def test_the_recorded_lrv_trace_is_readable():
    bench = load()
    events = bench.read_events(str(ROOT / "traces" / "opt13b-LRV.csv.gz"))
    allocs = sum(1 for e in events if e[0])
    assert allocs == 68128 and len(events) - allocs == 67447  # as `memlake replay` counts them


def test_the_null_allocator_without_nvcc_is_a_clear_error(tmp_path):
    # `null` is built with nvcc before any worker starts: without one, the run stops with why.
    import os
    import subprocess
    import sys
    env = dict(os.environ, PATH=str(tmp_path))  # no nvcc on this PATH
    p = subprocess.run([sys.executable, str(ROOT / "bench" / "torch_alloc_replay.py"), "--allocators", "native,null"],
                       capture_output=True, text=True, env=env)
    assert p.returncode != 0
    assert "the 'null' allocator is built with nvcc" in p.stderr and "leave it out of --allocators" in p.stderr
