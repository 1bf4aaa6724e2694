"""bench/_rounds.py: the allocator benchmarks' rounds (alternated order, per-round ratios, medians)."""
import os
import sys
import textwrap

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "bench"))

import _rounds  # noqa: E402


def test_rounds_alternate_and_ratios_are_per_round(tmp_path):
    log = tmp_path / "order.txt"
    script = tmp_path / "worker.py"
    # native's rate drifts by round; memlake is 0.9x native in every round, whatever the drift
    script.write_text(textwrap.dedent(f"""
        import json, sys
        al = sys.argv[sys.argv.index("--allocator") + 1]
        extra = sys.argv[sys.argv.index("--allocator") + 2:]
        with open({str(log)!r}, "a") as f:
            f.write(al + "\\n")
        n = sum(1 for _ in open({str(log)!r}))
        rnd = (n - 1) // 2
        rate = 100.0 * (rnd + 1) * (0.9 if al.startswith("memlake") else 1.0)
        if al == "broken":
            sys.exit(3)
        print("RESULT " + json.dumps({{"allocator": al, "rate": rate, "utilization": 0.5, "extra": extra}}))
    """))
    runs = _rounds.run_rounds(str(script), ["native", "memlake"], 3, ["--x", "1"], out=str(tmp_path / "r.json"))
    assert log.read_text().split() == ["native", "memlake", "memlake", "native", "native", "memlake"]
    assert [r["round"] for r in runs] == [0, 0, 1, 1, 2, 2] and runs[0]["extra"] == ["--x", "1"]
    assert (tmp_path / "r.json.partial").exists()
    s = _rounds.ratio_summary(runs, ["native", "memlake"], "rate")
    assert len(s["memlake"]["ratios"]) == 3 and all(abs(x - 0.9) < 1e-9 for x in s["memlake"]["ratios"])
    assert s["native"]["vs_native"] == 1.0 and s["memlake"]["rate"] == 180.0 and s["memlake"]["rounds"] == 3


def test_a_failed_worker_is_skipped(tmp_path, capsys):
    script = tmp_path / "worker.py"
    script.write_text("import sys; sys.exit(3)\n")
    assert _rounds.run_rounds(str(script), ["native"], 1, []) == []
    assert "native failed (exit 3)" in capsys.readouterr().err


def test_variants_set_their_options(monkeypatch):
    monkeypatch.delenv("PYTORCH_CUDA_ALLOC_CONF", raising=False)
    assert _rounds.use_allocator("expandable") is None
    assert os.environ["PYTORCH_CUDA_ALLOC_CONF"] == "expandable_segments:True"
    assert _rounds.use_allocator("native") is None
    try:
        _rounds.use_allocator("tcmalloc")
    except SystemExit as e:
        assert "unknown allocator" in str(e)
    else:
        raise AssertionError("an unknown allocator was accepted")
