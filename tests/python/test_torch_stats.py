"""torch.cuda's memory statistics under memlake.torch.enable(), answered by memlake
(memlake.torch.torch_stats_functions). Checked on the host backend in a fresh interpreter:
the default allocator is memlake's, as under enable(); the GPU tests check the installed
functions through torch.cuda itself."""
import os
import subprocess
import sys
import textwrap

import pytest

pytest.importorskip("torch", reason="PyTorch not installed")


def test_torch_stats_functions_answer_from_memlake():
    code = textwrap.dedent("""
        import memlake, memlake.torch as mt
        f = mt.torch_stats_functions()
        d = memlake._default()
        p = d.alloc(3 << 20)
        q = d.alloc(5 << 20)
        d.free(q)
        s = f["memory_stats"](0)
        assert list(s) == sorted(s) and s["allocated_bytes.all.current"] == f["memory_allocated"](0)
        assert f["memory_allocated"](0) >= 3 << 20 and f["max_memory_allocated"](0) >= 8 << 20
        assert f["memory_reserved"](0) >= f["memory_allocated"](0)
        assert f["max_memory_reserved"](0) >= f["memory_reserved"](0)
        f["reset_peak_memory_stats"](0)
        assert f["max_memory_allocated"](0) == f["memory_allocated"](0)
        assert "memlake memory summary" in f["memory_summary"](0)
        d.free(p)
        print("OK")
    """)
    env = dict(os.environ, MEMLAKE_BACKEND="host", PYTHONPATH=":".join(sys.path))
    p = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, timeout=120)
    assert p.returncode == 0 and "OK" in p.stdout, p.stderr[-3000:]
