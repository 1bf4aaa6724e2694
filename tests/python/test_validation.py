"""Python integers do not wrap on their way through ctypes: a negative or
out-of-range argument is a ValueError (memlake.InvalidArgumentError), and
MEMLAKE_TRACE survives the interpreter's exit."""
import gzip
import os
import subprocess
import sys

import pytest

import memlake


@pytest.fixture
def alloc():
    with memlake.Allocator(backend="host", granularity="64K", small_max="16K") as a:
        yield a


def test_copy_with_a_negative_length_is_a_value_error(alloc):
    dev = alloc.alloc(1 << 16)
    host = bytearray(1 << 16)
    with pytest.raises(ValueError, match="nbytes -1 is out of range"):
        alloc.copy(dev, host, -1)  # was SIZE_MAX through ctypes: a segfault
    with pytest.raises(ValueError):
        alloc.copy(dev, -4096, 16)
    with pytest.raises(ValueError):
        alloc.copy(dev, host, 16, device=-1)
    with pytest.raises(ValueError):
        alloc.copy(dev, host, 2**64)
    alloc.copy(dev, bytes(range(256)) * 4, 1024)  # a valid one still works
    back = bytearray(1024)
    alloc.copy(back, dev)
    assert back == bytes(range(256)) * 4
    alloc.free(dev)


def test_alloc_sizes_out_of_range_are_value_errors(alloc):
    with pytest.raises(ValueError, match="out of range"):
        alloc.alloc(2**64)  # wrapped to 0: returned a null "allocation"
    with pytest.raises(ValueError):
        alloc.alloc(-1)
    with pytest.raises(ValueError):
        alloc.alloc(1.5)
    with pytest.raises(ValueError):
        alloc.alloc(1024, device=2**40)
    with pytest.raises(ValueError):
        alloc.free(-1)
    with pytest.raises(ValueError):
        alloc.stats(device=-1)
    assert alloc.stats()["active.all.current"] == 0


def test_a_negative_memory_cap_is_a_value_error(alloc):
    with pytest.raises(ValueError, match="memory cap -1"):
        alloc.set_memory_cap(-1)  # wrapped to SIZE_MAX: no cap at all
    with pytest.raises(ValueError):
        alloc.set_memory_cap(2**64)
    alloc.set_memory_cap(1 << 20)
    with pytest.raises(memlake.OutOfMemoryError):
        alloc.alloc(2 << 20)
    alloc.set_memory_cap(0)
    alloc.free(alloc.alloc(2 << 20))


def _run(code, env_extra, cwd):
    env = dict(os.environ)
    env.update(env_extra)
    env["PYTHONPATH"] = ":".join(sys.path)
    return subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, cwd=cwd, timeout=120)


def test_trace_survives_interpreter_exit(tmp_path):
    # The repro: exit code 139 and a 0-byte trace.
    out = _run("import memlake; memlake.stats()", {"MEMLAKE_BACKEND": "host", "MEMLAKE_TRACE": "x.csv.gz"}, tmp_path)
    assert out.returncode == 0, out.stderr
    with gzip.open(tmp_path / "x.csv.gz", "rt") as f:
        assert f.readline().startswith("Thread,Time,Action,Pointer,Size,Stream")


def test_trace_of_a_process_named_by_pid_and_rank(tmp_path):
    code = ("import memlake, os\n"
            "a = memlake.Allocator(backend='host')\n"
            "a.free(a.alloc(1 << 20)); a.close(); print(os.getpid())\n")
    out = _run(code, {"MEMLAKE_TRACE": "t.%p.%r.csv.gz", "RANK": "3"}, tmp_path)
    assert out.returncode == 0, out.stderr
    name = tmp_path / f"t.{out.stdout.strip()}.3.csv.gz"
    assert oct(os.stat(name).st_mode & 0o777) == "0o600"
    with gzip.open(name, "rt") as f:
        lines = f.read().splitlines()
    assert [l.split(",")[2] for l in lines[1:]] == ["allocate", "free"]


def test_trace_write_errors_show_in_stats(capfd):
    import os
    if not os.access("/dev/full", os.W_OK):
        pytest.skip("no /dev/full")
    with memlake.Allocator(backend="host", trace="/dev/full") as a:
        assert a.stats_json()["trace"] == {"write_failed": False, "events_lost": 0}
        for _ in range(2000):
            a.free(a.alloc(4096))
        t = a.stats_json()["trace"]
        assert t["write_failed"] is True and t["events_lost"] > 0
    err = capfd.readouterr().err
    assert err.count("memlake: trace /dev/full: write: No space left on device") == 1, err
