"""bench/synth_training_trace.py writes a log that memlake replays: every free
matches an allocation, the shapes change every step, and memlake serves it."""
import csv
import gzip
import pathlib
import subprocess
import sys

import memlake

ROOT = pathlib.Path(__file__).resolve().parents[2]


def test_synthetic_trace_replays(tmp_path):
    out = tmp_path / "t.csv.gz"
    subprocess.run([sys.executable, str(ROOT / "bench" / "synth_training_trace.py"), "--steps", "4", "--layers", "2",
                    "--hidden", "256", "--ffn", "1024", "--heads", "4", "--vocab", "1000", "--max-seq", "256",
                    "--out", str(out)], check=True, capture_output=True)
    with gzip.open(out, "rt") as f:
        rows = list(csv.DictReader(f))
    assert rows and set(rows[0]) == {"Thread", "Time", "Action", "Pointer", "Size", "Stream"}
    live, sizes = {}, set()
    with memlake.Allocator(backend="host", granularity="64K", small_max="16K") as a:
        for r in rows:
            if r["Action"] == "allocate":
                assert r["Pointer"] not in live
                live[r["Pointer"]] = a.alloc(int(r["Size"]))
                sizes.add(int(r["Size"]))
            else:
                assert r["Action"] == "free"
                a.free(live.pop(r["Pointer"]))
        s = a.stats()
    assert s["allocation.all.allocated"] == sum(r["Action"] == "allocate" for r in rows)
    assert s["allocation.all.current"] == len(live)  # the weights and optimizer states stay
    assert len(sizes) > 20  # shapes vary with the step's sequence length
