"""bench/torch_fragmentation.py's profile summary, on a stand-in for torch.profiler
(this machine has no torch): overlapping GPU intervals are merged, idle time is
wall minus busy, the top operators are listed, and the chrome trace is gzipped."""
import enum
import gzip
import importlib.util
import json
import pathlib
import sys
import types

ROOT = pathlib.Path(__file__).resolve().parents[2]


def load_bench(monkeypatch):
    class DeviceType(enum.Enum):
        CPU = 0
        CUDA = 1

    torch = types.ModuleType("torch")
    autograd = types.ModuleType("torch.autograd")
    autograd.DeviceType = DeviceType
    torch.autograd = autograd
    monkeypatch.setitem(sys.modules, "torch", torch)
    monkeypatch.setitem(sys.modules, "torch.autograd", autograd)
    spec = importlib.util.spec_from_file_location("torch_fragmentation", ROOT / "bench" / "torch_fragmentation.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod, DeviceType


def test_profile_summary_merges_gpu_intervals(monkeypatch, tmp_path):
    bench, DeviceType = load_bench(monkeypatch)
    ns = types.SimpleNamespace

    def ev(dev, start, end):
        return ns(device_type=dev, time_range=ns(start=start, end=end))

    class Prof:
        def events(self):  # µs; two overlapping kernels, one apart, and host ops that do not count
            return [ev(DeviceType.CUDA, 0, 10), ev(DeviceType.CUDA, 5, 15), ev(DeviceType.CPU, 0, 100),
                    ev(DeviceType.CUDA, 20, 30), ev(DeviceType.CUDA, 22, 25)]

        def key_averages(self):
            return [ns(key="aten::mm", self_cpu_time_total=40.0, self_device_time_total=20.0, count=3),
                    ns(key="memlake alloc", self_cpu_time_total=90.0, self_device_time_total=0.0, count=7)]

        def export_chrome_trace(self, path):
            pathlib.Path(path).write_text('{"traceEvents": []}')

    out = bench.profile_summary(Prof(), 100e-6, (10, 12), str(tmp_path / "p.json"))
    assert abs(out["gpu_busy_s"] - 25e-6) < 1e-12
    assert abs(out["gpu_idle_fraction"] - 0.75) < 1e-9
    assert out["steps"] == [10, 12]
    assert out["top_host"][0][0] == "memlake alloc" and out["top_device"][0][0] == "aten::mm"
    with gzip.open(out["trace"], "rt") as f:
        assert json.load(f) == {"traceEvents": []}
    assert not (tmp_path / "p.json").exists()


def test_steady_rates_leave_out_the_native_runs_one_off_steps(monkeypatch):
    """A step that took far longer than the rest in the native run (cuDNN compiling
    kernels for a new shape, in every run) is left out of every allocator's steady
    rate; a step only the allocator makes slow is not an outlier of native's and
    still counts."""
    bench, _ = load_bench(monkeypatch)

    def timeline(durations, tokens=1000):
        t, out = 0.0, []
        for i, d in enumerate(durations):
            t += d
            out.append(dict(step=i, t=t, tokens=tokens))
        return out

    native = timeline([2.0, 0.5, 0.5, 7.0, 0.5, 0.5, 0.5, 0.5])
    mine = timeline([2.0, 0.5, 0.5, 7.5, 0.5, 2.5, 0.5, 0.5])  # step 5: slow only here
    assert bench.outlier_steps(native) == [3]
    assert bench.outlier_steps(timeline([1.0])) == []
    plain = bench.step_rates(native)
    assert abs(plain["steady_tokens_per_s"] - 7000 / 10.0) < 1e-9
    lo = bench.step_rates(native, [3])
    assert abs(lo["steady_tokens_per_s"] - 6000 / 3.0) < 1e-9
    assert abs(lo["late_tokens_per_s"] - 4000 / 2.0) < 1e-9  # steps 4..7
    m = bench.step_rates(mine, [3])
    assert abs(m["steady_tokens_per_s"] - 6000 / 5.0) < 1e-9, "the allocator's own slow step counts"

    runs = [dict(strategy="LRV", allocator="native", steady_tokens_per_s=100.0),
            dict(strategy="LRV", allocator="native", steady_tokens_per_s=140.0),
            dict(strategy="LRV", allocator="memlake", steady_tokens_per_s=110.0, steady_vs_native=1.1),
            dict(strategy="LRV", allocator="memlake", steady_tokens_per_s=126.0, steady_vs_native=0.9)]
    s = bench.repeat_summary(runs, ["LRV"], ["native", "memlake"])
    assert list(s) == ["LRV memlake"]
    v = s["LRV memlake"]
    assert v["n"] == 2 and v["min"] == 0.9 and v["max"] == 1.1
    assert abs(v["pooled"] - 118.0 / 120.0) < 1e-12


def test_table_runs_are_uncapped_and_searches_capped(monkeypatch):
    """The worker's --cap defaults to the searches' 24G; a table run must pass no cap at all
    (until session 18 every table run was capped at 24 GiB, which made native drop its cache
    and retry near the cap)."""
    bench, _ = load_bench(monkeypatch)
    seen = []
    monkeypatch.setattr(bench.subprocess, "Popen", lambda cmd, **kw: seen.append((cmd, kw["env"])))
    args = types.SimpleNamespace(model="opt-1.3b", min_seq=64, max_seq=1024, seed=0, profile_steps="")

    def cap_of(cmd):
        return bench.parse_size(cmd[cmd.index("--cap") + 1])

    bench.run_worker(args, "native", "LR", 25, 16)
    bench.run_worker(args, "expandable", "LR", 25, 16, cap=None)
    bench.run_worker(args, "memlake", "LR", 6, 30, cap=24 << 30)
    assert [cap_of(c) for c, _ in seen] == [0, 0, 24 << 30]
    assert "MEMLAKE_MEMORY_CAP" not in seen[0][1]


def test_live_bound_probes_uncapped_and_flags_an_oom(monkeypatch, capsys):
    """The bound on the largest batch is the live peak of an uncapped run (sessions 11-17
    measured it under the 24 GiB cap by mistake, and the run stopped at its OOM)."""
    bench, _ = load_bench(monkeypatch)
    caps = []

    def fake_probe(args, allocator, batch, cap):
        caps.append(cap)
        return dict(peak_allocated=int(24.62 * (1 << 30)), oom=batch > 30, error="full")

    monkeypatch.setattr(bench, "probe", fake_probe)
    args = types.SimpleNamespace(max_batch_strategy="LR", probe_steps=6)
    r = bench.live_bound(args, ["native", "memlake"], 30, 24 << 30)
    assert caps == [None] and r["over_cap"] and not r["probe_oom"]
    assert "no allocator can fit it" in capsys.readouterr().out
    r = bench.live_bound(args, ["native", "memlake"], 31, 24 << 30)
    assert r["probe_oom"] and "lower bound" in capsys.readouterr().out
