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


def test_allocator_specs(monkeypatch):
    assert _rounds.parse_allocator_spec("memlake#2:max_mapped_ratio=1.5;small_max=512K") == \
        ("memlake", {"max_mapped_ratio": "1.5", "small_max": "512K"})
    assert _rounds.parse_allocator_spec("native") == ("native", {})
    monkeypatch.delenv("PYTORCH_CUDA_ALLOC_CONF", raising=False)
    assert _rounds.use_allocator("expandable") is None
    assert os.environ["PYTORCH_CUDA_ALLOC_CONF"] == "expandable_segments:True"
    assert _rounds.use_allocator("native") is None
    for bad in ("tcmalloc", "native:x=1"):
        try:
            _rounds.use_allocator(bad)
        except SystemExit as e:
            assert "unknown allocator" in str(e)
        else:
            raise AssertionError(f"{bad!r} was accepted")


def test_the_workers_get_every_option_but_the_drivers(tmp_path, capsys):
    import argparse
    import json
    a = argparse.Namespace(allocators="native,memlake", repeats=2, out=str(tmp_path / "r.json"), worker=False,
                           allocator="native", steps=5, min_batch=2, cudnn_benchmark=False, fast=True)
    assert _rounds.worker_args(a) == ["--steps=5", "--min-batch=2", "--fast"]
    script = tmp_path / "worker.py"
    script.write_text(textwrap.dedent("""
        import json, sys
        al = sys.argv[sys.argv.index("--allocator") + 1]
        print("RESULT " + json.dumps({"allocator": al, "rate": 80.0 if al == "memlake" else 100.0,
                                      "utilization": 0.9, "argv": sys.argv[1:]}))
    """))
    s = _rounds.throughput_main(a, str(script), "rate", "things")
    assert s["memlake"]["vs_native"] == 0.8 and s["memlake"]["rounds"] == 2
    assert "memlake" in capsys.readouterr().out
    saved = json.load(open(a.out))
    assert saved["summary"]["memlake"]["ratios"] == [0.8, 0.8] and "--fast" in saved["runs"][0]["argv"]


def test_a_workers_result_has_its_utilization(capsys):
    import json
    import types
    fake_torch = types.SimpleNamespace(cuda=types.SimpleNamespace(max_memory_allocated=lambda: 30,
                                                                  max_memory_reserved=lambda: 40))
    _rounds.emit_result(None, fake_torch, None, allocator="native", rate=5.0)
    res = json.loads(capsys.readouterr().out.split("RESULT ", 1)[1])
    assert res == {"allocator": "native", "rate": 5.0, "peak_allocated": 30, "peak_reserved": 40, "utilization": 0.75}
    fake_memlake = types.SimpleNamespace(stats=lambda: {"requested_bytes.all.peak": 9, "reserved_bytes.all.peak": 10,
                                                        "memlake.host_seconds": 2.5})
    assert _rounds.host_seconds(fake_memlake) == 2.5 and _rounds.host_seconds(None) is None
    res = _rounds.emit_result(fake_memlake, fake_torch, 0.5, allocator="memlake")
    assert res["utilization"] == 0.9 and res["memlake_host_seconds"] == 2.0
