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
