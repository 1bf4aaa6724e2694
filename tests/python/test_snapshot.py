"""memlake.snapshot: PyTorch memory snapshots (torch.cuda.memory._dump_snapshot) in and out."""
import gzip
import os
import pickle
import pickletools
import subprocess
import sys

import pytest

from memlake import snapshot as ms

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
TRACE = os.path.join(ROOT, "traces", "opt13b-LR-b30.csv.gz")


def cli_binary():
    lib = os.environ.get("MEMLAKE_LIBRARY", "")
    for p in (os.path.join(ROOT, "build", "memlake"), os.path.join(os.path.dirname(lib), "memlake") if lib else ""):
        if p and os.access(p, os.X_OK):
            return p
    return None


def torch_like_snapshot():
    """A snapshot as torch.cuda.memory._snapshot() returns it (keys and types of torch's Module.cpp)."""
    fr = [{"filename": "train.py", "line": 12, "name": "step"}]

    def e(action, addr, size, t, stream=0):
        return {"action": action, "addr": addr, "size": size, "stream": stream, "time_us": t, "frames": fr}
    s1 = 94558584300544  # a real stream handle (an int64)
    trace = [
        {"action": "free_requested", "addr": 0x7f0000000000, "size": 512, "stream": 0, "time_us": 1000, "frames": []},
        {"action": "free_completed", "addr": 0x7f0000000000, "size": 512, "stream": 0, "time_us": 1000, "frames": []},
        e("segment_alloc", 0x7f0000200000, 20971520, 1001),
        e("alloc", 0x7f0000200000, 8388608, 1002),
        e("alloc", 0x7f0000a00000, 4096, 1003, s1),
        {"action": "oom", "device_free": 1024, "size": 1 << 40, "stream": 0, "time_us": 1004, "frames": fr},
        e("free_requested", 0x7f0000200000, 8388608, 1005),
        e("free_completed", 0x7f0000200000, 8388608, 1006),
        {"action": "snapshot", "addr": 0, "size": 0, "stream": 0, "time_us": 1007},
        e("alloc", 0x7f0000200000, 1000, 1008),
    ]
    blk = lambda addr, size, req, state: {"address": addr, "size": size, "requested_size": req, "state": state,
                                          "frames": []}
    segments = [
        {"device": 0, "address": 0x7f0000000000, "total_size": 2097152, "allocated_size": 512, "active_size": 512,
         "requested_size": 500, "stream": 0, "segment_type": "small", "segment_pool_id": (0, 0),
         "is_expandable": False, "frames": [],
         "blocks": [blk(0x7f0000000000, 512, 500, "inactive"), blk(0x7f0000000200, 512, 500, "active_allocated"),
                    blk(0x7f0000000400, 2097152 - 1024, 0, "inactive")]},
        {"device": 0, "address": 0x7f0000200000, "total_size": 20971520, "allocated_size": 1024 + 4096,
         "active_size": 1024 + 4096, "requested_size": 1000 + 4096, "stream": 0, "segment_type": "large",
         "segment_pool_id": (0, 0), "is_expandable": False, "frames": [],
         "blocks": [blk(0x7f0000200000, 1024, 1000, "active_allocated"),
                    blk(0x7f0000200400, 8388608 - 1024, 0, "inactive"),
                    blk(0x7f0000a00000, 4096, 4096, "active_allocated"),
                    blk(0x7f0000a01000, 20971520 - 8388608 - 4096, 0, "inactive")]},
    ]
    return {"segments": segments, "device_traces": [trace, []],
            "allocator_settings": {"PYTORCH_CUDA_ALLOC_CONF": None, "max_split_size": -1,
                                   "garbage_collection_threshold": 0.0, "expandable_segments": False,
                                   "roundup_power2_divisions": {"1": 0}},
            "external_annotations": []}


def rows(path):
    with (gzip.open if path.endswith(".gz") else open)(path, "rt") as f:
        lines = f.read().splitlines()
    assert lines[0] == "Thread,Time,Action,Pointer,Size,Stream"
    return [tuple(l.split(",")) for l in lines[1:]]


@pytest.mark.parametrize("protocol", [2, pickle.DEFAULT_PROTOCOL])
def test_torch_snapshot_to_trace(tmp_path, protocol):
    p = tmp_path / "snap.pickle"
    p.write_bytes(pickle.dumps(torch_like_snapshot(), protocol=protocol))
    out = str(tmp_path / "t.csv.gz")
    c = ms.snapshot_to_trace(str(p), out)
    got = rows(out)
    assert got == [
        # live before the trace began: the small segment (no event of its own), the block the trace frees,
        # the block only the final state holds
        ("0", "1000", "segment_alloc", "0x7f0000000000", "2097152", "0"),
        ("0", "1000", "allocate", "0x7f0000000000", "512", "0"),
        ("0", "1000", "allocate", "0x7f0000000200", "500", "0"),
        ("0", "1000", "free", "0x7f0000000000", "512", "0"),
        ("0", "1001", "segment_alloc", "0x7f0000200000", "20971520", "0"),
        ("0", "1002", "allocate", "0x7f0000200000", "8388608", "0"),
        ("0", "1003", "allocate", "0x7f0000a00000", "4096", "94558584300544"),
        ("0", "1004", "allocate failure", "0x0", str(1 << 40), "0"),
        ("0", "1006", "free", "0x7f0000200000", "8388608", "0"),
        ("0", "1008", "allocate", "0x7f0000200000", "1000", "0"),
    ], got
    assert c["preexisting_blocks"] == 2 and c["preexisting_segments"] == 1 and c["ooms"] == 1 and c["frees"] == 2
    assert os.stat(out).st_mode & 0o777 == 0o600


def test_plain_alloc_free_options(tmp_path):
    out = str(tmp_path / "t.csv")
    ms.snapshot_to_trace(torch_like_snapshot(), out, segments=False, preexisting=False)
    acts = [r[2] for r in rows(out)]
    assert acts == ["allocate", "allocate", "allocate failure", "free", "allocate"]


def test_free_requested_only_trace(tmp_path):
    snap = torch_like_snapshot()
    snap["device_traces"][0] = [e for e in snap["device_traces"][0] if e["action"] != "free_completed"]
    out = str(tmp_path / "t.csv")
    ms.snapshot_to_trace(snap, out, segments=False, preexisting=False)
    assert ("0", "1005", "free", "0x7f0000200000", "8388608", "0") in rows(out)


def test_trace_is_valid_for_memlake_replay(tmp_path):
    cli = cli_binary()
    if not cli:
        pytest.skip("the memlake binary is not built")
    out = str(tmp_path / "t.csv.gz")
    ms.snapshot_to_trace(torch_like_snapshot(), out)
    p = subprocess.run([cli, "replay", out, "--check", "--json", "--no-progress"], capture_output=True, text=True)
    assert p.returncode == 0, p.stderr
    import json
    r = json.loads(p.stdout)
    assert r["allocs"] == 5 and r["frees"] == 2 and r["unmatched_frees"] == 0 and r["recorded_failures"] == 1


def test_repo_trace_round_trips_through_a_snapshot(tmp_path):
    pk = str(tmp_path / "s.pickle")
    snap = ms.trace_to_snapshot(TRACE, pk)
    orig = ms.read_trace(TRACE)
    # the recording allocator's segments hold every block: they are the snapshot's segments
    assert any(e["action"] == "segment_alloc" for e in snap["device_traces"][0])
    live = {}
    for a, _t, ptr, size, _s, _th in orig:
        if a == "allocate":
            live[ptr] = size
        elif a == "free":
            live.pop(ptr, None)
    blocks = {b["address"]: b["requested_size"] for s in snap["segments"] for b in s["blocks"]
              if b["state"] == "active_allocated"}
    assert blocks == live
    for s in snap["segments"]:  # as torch's segsum asserts
        assert sum(b["size"] for b in s["blocks"]) == s["total_size"]
    back = str(tmp_path / "back.csv.gz")
    ms.snapshot_to_trace(pk, back)
    again = ms.read_trace(back)
    key = lambda evs: [(a, p, s, st) for a, _t, p, s, st, _th in evs if a in ("allocate", "free")]
    assert key(again) == key(orig)
    seg = lambda evs: [(a, p, s) for a, _t, p, s, _st, _th in evs if a.startswith("segment")]
    assert seg(again) == seg(orig)
    assert [t for _a, t, *_ in again] == [t for _a, t, *_ in orig]


def test_per_block_segments_without_segment_events(tmp_path):
    tr = tmp_path / "t.csv"
    tr.write_text("Thread,Time,Action,Pointer,Size,Stream\n0,1,allocate,0x1000,512,0\n0,2,allocate,0x2000,64,7\n"
                  "0,3,free,0x1000,512,0\n0,4,allocate failure,0x0,99,0\n")
    snap = ms.trace_to_snapshot(str(tr), str(tmp_path / "s.pickle"))
    assert [e["action"] for e in snap["device_traces"][0]] == [
        "segment_alloc", "alloc", "segment_alloc", "alloc", "free_requested", "free_completed", "segment_free", "oom"]
    assert [(s["address"], s["total_size"], s["stream"]) for s in snap["segments"]] == [(0x2000, 64, 7)]


def test_written_pickle_uses_only_what_memory_viz_reads(tmp_path):
    # MemoryViz.js has its own unpickler: protocols 2-4 and a fixed set of opcodes.
    pk = tmp_path / "s.pickle"
    ms.trace_to_snapshot(TRACE, str(pk))
    js = {"APPENDS", "BINGET", "BININT", "BININT1", "BININT2", "EMPTY_DICT", "EMPTY_LIST", "FRAME", "LONG1",
          "LONG_BINGET", "MARK", "MEMOIZE", "PROTO", "SETITEMS", "SHORT_BINUNICODE", "STOP", "TUPLE2", "APPEND",
          "NEWFALSE", "BINPUT", "BINUNICODE", "EMPTY_TUPLE", "NEWTRUE", "NONE", "BINFLOAT", "TUPLE", "TUPLE1",
          "TUPLE3", "LONG_BINPUT", "LIST", "DICT", "SETITEM"}
    data = pk.read_bytes()
    ops = {op.name for op, _arg, _pos in pickletools.genops(data)}
    assert ops <= js, ops - js
    assert data[0] == 0x80 and 2 <= data[1] <= 4


class Evil:
    def __reduce__(self):
        return (os.system, ("echo pwned > /dev/null",))


def test_hostile_pickle_is_a_value_error(tmp_path):
    p = tmp_path / "evil.pickle"
    p.write_bytes(pickle.dumps({"segments": [], "device_traces": [[Evil()]]}, protocol=2))
    with pytest.raises(ValueError, match="refused global"):
        ms.snapshot_to_trace(str(p), str(tmp_path / "t.csv"))
    # the GLOBAL opcode of protocol 0, as a hand-written pickle
    with pytest.raises(ValueError, match="refused global"):
        ms.load_snapshot(b"cos\nsystem\n(S'true'\ntR.")
    with pytest.raises(ValueError, match="refused global"):
        ms.load_snapshot(b"cbuiltins\neval\n(S'1'\ntR.")


def test_truncated_and_foreign_pickles_are_value_errors(tmp_path):
    good = pickle.dumps(torch_like_snapshot(), protocol=2)
    p = tmp_path / "cut.pickle"
    p.write_bytes(good[: len(good) // 2])
    with pytest.raises(ValueError, match="truncated|not a PyTorch"):
        ms.snapshot_to_trace(str(p), str(tmp_path / "t.csv"))
    with pytest.raises(ValueError):
        ms.load_snapshot(b"")
    with pytest.raises(ValueError, match="not a PyTorch memory snapshot"):
        ms.load_snapshot(pickle.dumps([1, 2, 3])[:-1] + b".")
    with pytest.raises(ValueError, match="not a PyTorch memory snapshot"):
        ms.load_snapshot(pickle.dumps("a string"))
    with pytest.raises(ValueError, match="no trace for device 3"):
        ms.snapshot_to_trace(torch_like_snapshot(), str(tmp_path / "t.csv"), device=3)
    bad = torch_like_snapshot()
    bad["device_traces"][0].append({"action": "alloc", "addr": 0x7f0000a00000, "size": 1, "stream": 0})
    with pytest.raises(ValueError, match="already allocated"):
        ms.snapshot_to_trace(bad, str(tmp_path / "t.csv"))


def run_cli(*args):
    env = dict(os.environ, PYTHONPATH=os.path.join(ROOT, "python") + os.pathsep + os.environ.get("PYTHONPATH", ""))
    return subprocess.run([sys.executable, "-m", "memlake.snapshot", *args], capture_output=True, text=True, env=env)


def test_cli(tmp_path):
    pk, tr = str(tmp_path / "s.pickle"), str(tmp_path / "t.csv.gz")
    p = run_cli("to-snapshot", TRACE, pk)
    assert p.returncode == 0 and "memory_viz" in p.stdout, p.stderr
    p = run_cli("to-trace", pk, tr)
    assert p.returncode == 0 and os.path.exists(tr), p.stderr
    evil = tmp_path / "evil.pickle"
    evil.write_bytes(pickle.dumps(Evil()))
    p = run_cli("to-trace", str(evil), tr)
    assert p.returncode == 2 and "refused global" in p.stderr and "Traceback" not in p.stderr
    p = run_cli("to-snapshot", str(tmp_path / "missing.csv"), pk)
    assert p.returncode == 2 and "missing.csv" in p.stderr
    bad = tmp_path / "bad.csv"
    bad.write_text("Thread,Time,Action,Pointer,Size,Stream\n0,1,grow,0x1,2,0\n")
    p = run_cli("to-snapshot", str(bad), pk)
    assert p.returncode == 2 and "bad.csv:2: unknown action" in p.stderr


def test_torch_memory_viz_reads_the_snapshot(tmp_path):
    torch = pytest.importorskip("torch", reason="PyTorch not installed")
    from torch.cuda import _memory_viz as mv
    if not hasattr(mv, "trace"):  # torch < 2.1 (Debian's 1.13): snapshots had no device traces yet
        pytest.skip(f"torch {torch.__version__}'s _memory_viz has no trace view")
    pk = str(tmp_path / "s.pickle")
    ms.trace_to_snapshot(TRACE, pk)
    with open(pk, "rb") as f:
        snap = pickle.load(f)  # torch's tooling reads it with plain pickle
    text = mv.trace(snap)  # walks every event and segment, as `python -m torch.cuda._memory_viz trace`
    assert "Device 0" in text and "cudaMalloc" in text
    summary = mv.segsum(snap)  # asserts the blocks of every segment add up
    assert "total_reserved" in summary
    for plot in ("trace_plot", "segment_plot"):
        if hasattr(mv, plot):
            html = getattr(mv, plot)(snap)
            assert "MemoryViz" in html or "<html" in html.lower()
    # and a torch snapshot recorded on this machine's GPU goes the other way
    if torch.cuda.is_available():
        torch.cuda.memory._record_memory_history(max_entries=10000)
        x = [torch.empty(n << 20, device="cuda") for n in (1, 3, 5)]
        del x[1]
        path = str(tmp_path / "real.pickle")
        torch.cuda.memory._dump_snapshot(path)
        torch.cuda.memory._record_memory_history(enabled=None)
        out = str(tmp_path / "real.csv.gz")
        c = ms.snapshot_to_trace(path, out)
        assert c["allocs"] >= 3 and c["frees"] >= 1
        cli = cli_binary()
        if cli:
            p = subprocess.run([cli, "replay", out, "--check", "--no-progress"], capture_output=True, text=True)
            assert p.returncode == 0, p.stderr
