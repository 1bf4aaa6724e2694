"""Sleep and wake through the Python package, on the host backend (real
memfd pages; the GPU run repeats this on the H200 with torch tensors)."""
import ctypes

import pytest

import memlake


@pytest.fixture
def alloc():
    a = memlake.Allocator(backend="host", granularity="64K", small_max="16K")
    yield a
    a.close()


def _write(p, data):
    ctypes.memmove(p, data, len(data))


def _read(p, n):
    return ctypes.string_at(p, n)


def test_sleep_offload_and_wake_keep_addresses_and_bytes(alloc):
    with memlake.tag("py-weights"):
        p = alloc.alloc(300_000)
    with memlake.tag("py-kv"):
        q = alloc.alloc(500_000)
    data = bytes(range(256)) * 1200
    _write(p, data[:300_000])
    r = memlake.sleep(tags=["py-weights"], mode="offload", allocator=alloc)
    assert r["allocations"] == 1 and r["offloaded_bytes"] == 300_000
    assert memlake.residency_stats(allocator=alloc)["asleep"]
    _write(q, b"still usable")  # an unselected tag stays
    w = memlake.wake(allocator=alloc)
    assert w["restored_bytes"] == 300_000
    assert _read(p, 300_000) == data[:300_000]
    assert _read(q, 12) == b"still usable"
    alloc.free(p)
    alloc.free(q)


def test_one_sleep_offloads_one_tag_and_discards_another(alloc):
    with memlake.tag("py-mix-w"):
        p = alloc.alloc(200_000)
    with memlake.tag("py-mix-kv"):
        q = alloc.alloc(400_000)
    _write(p, b"w" * 200_000)
    r = memlake.sleep(tags={"py-mix-w": "offload", "py-mix-kv": "discard"}, allocator=alloc)
    assert r["offloaded_bytes"] == 200_000 and r["discarded_bytes"] == 400_000
    memlake.wake(allocator=alloc)
    assert _read(p, 200_000) == b"w" * 200_000
    alloc.free(p)
    alloc.free(q)


def test_discard_everything(alloc):
    p = alloc.alloc(1 << 20)
    r = memlake.sleep(mode="discard", allocator=alloc)
    assert r["discarded_bytes"] == 1 << 20
    assert alloc.stats()["reserved_bytes.all.current"] == 0
    memlake.wake(allocator=alloc)
    _write(p, b"x" * 100)
    alloc.free(p)


def test_bad_arguments_are_value_errors(alloc):
    with pytest.raises(ValueError):
        memlake.sleep(mode="hibernate", allocator=alloc)
    with pytest.raises(ValueError):
        memlake.sleep(tags=["never-used-tag"], allocator=alloc)
    with pytest.raises(ValueError):
        memlake.wake(allocator=alloc)  # not asleep
    with pytest.raises(ValueError):
        memlake.host_tier(-1, allocator=alloc)
    with pytest.raises(ValueError):
        memlake.evict(0, allocator=alloc)
    with pytest.raises(ValueError):
        with memlake.tag(""):
            pass
    with pytest.raises(ValueError):
        memlake.sleep(device=-2, allocator=alloc)


def test_sleep_twice_is_refused_and_state_stays(alloc):
    p = alloc.alloc(2 << 20)
    memlake.sleep(allocator=alloc)
    with pytest.raises(ValueError, match="already asleep"):
        memlake.sleep(allocator=alloc)
    memlake.wake(allocator=alloc)
    alloc.free(p)


def test_sleep_and_wake_from_another_process_through_the_stats_socket(tmp_path):
    """`memlake sleep PID` / `memlake wake PID` (same user) on a host-backend process."""
    import os
    import subprocess
    import sys
    import time
    cli = os.path.join(os.path.dirname(memlake.library_path), "memlake")
    if not os.path.exists(cli):
        pytest.skip("the memlake command is not built beside the library")
    env = dict(os.environ, MEMLAKE_BACKEND="host", MEMLAKE_STATS_SERVER="1", XDG_RUNTIME_DIR=str(tmp_path),
               PYTHONPATH=os.pathsep.join(sys.path))
    child = subprocess.Popen([sys.executable, "-c", r"""
import ctypes, sys, memlake
with memlake.tag("remote-w"):
    p = memlake._default().alloc(3 << 20)
ctypes.memmove(p, b"remote" * 1000, 6000)
print("ready", flush=True)
for line in sys.stdin:
    s = memlake.residency_stats()
    print("asleep" if s["asleep"] else "awake", ctypes.string_at(p, 6000) == b"remote" * 1000 if not s["asleep"] else "-",
          flush=True)
"""], env=env, stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    try:
        assert child.stdout.readline().strip() == "ready"
        pid = str(child.pid)
        for _ in range(50):
            if os.path.exists(os.path.join(str(tmp_path), "memlake", pid + ".sock")):
                break
            time.sleep(0.05)
        run = lambda *a: subprocess.run([cli, *a], env=env, capture_output=True, text=True, timeout=60)
        r = run("sleep", pid, "--tag", "remote-w")
        assert r.returncode == 0 and r.stdout.startswith("ok {\"allocations\":1,\"offloaded_bytes\":3145728"), r
        child.stdin.write("?\n"); child.stdin.flush()
        assert child.stdout.readline().split()[0] == "asleep"
        r = run("sleep", pid, "--tag", "remote-w")
        assert r.returncode == 1 and "already asleep" in r.stderr, r
        assert run("sleep", pid, "--tag", "no-such-tag").returncode == 1
        r = run("wake", pid)
        assert r.returncode == 0 and "\"restored_bytes\":3145728" in r.stdout, r
        child.stdin.write("?\n"); child.stdin.flush()
        assert child.stdout.readline().split() == ["awake", "True"]
        assert run("wake", pid).returncode == 1  # not asleep
    finally:
        child.kill()
        child.wait()


def test_evict_demote_restore_through_the_disk_tier(tmp_path):
    a = memlake.Allocator(backend="host", granularity="64K", small_max="16K", disk_tier=str(tmp_path))
    try:
        p = a.alloc(700_000)
        data = bytes((i * 7) & 0xFF for i in range(700_000))
        _write(p, data)
        memlake.evict(p, allocator=a)
        memlake.demote(p, allocator=a)
        s = memlake.residency_stats(allocator=a)
        assert s["demotions"] == 1 and s["disk_used"] >= 700_000 and s["evicted_now"] == 1
        with pytest.raises(memlake.InvalidArgumentError):
            memlake.demote(p, allocator=a)  # on disk already
        memlake.restore(p, allocator=a)
        assert _read(p, 700_000) == data
        s = memlake.residency_stats(allocator=a)
        assert s["disk_used"] == 0 and s["disk_read"] >= 700_000
        assert s["disk_write_seconds"] > 0 and s["disk_read_seconds"] > 0  # the tier's own I/O time
        assert list(tmp_path.iterdir()) == []  # the file has no name
        a.free(p)
    finally:
        a.close()


def test_asynchronous_demotion_and_read_ahead(tmp_path):
    a = memlake.Allocator(backend="host", granularity="64K", small_max="16K", disk_tier=str(tmp_path))
    try:
        ps = [a.alloc(3_000_000 + k) for k in range(3)]
        datas = [bytes((i * (k + 3)) & 0xFF for i in range(3_000_000 + k)) for k in range(3)]
        for p, d in zip(ps, datas):
            _write(p, d)
            memlake.evict(p, allocator=a)
            memlake.demote(p, allocator=a, wait=False)  # queued on the disk tier's threads
        memlake.settle(allocator=a)  # every write done
        s = memlake.residency_stats(allocator=a)
        assert s["demotions"] == 3 and s["disk_writing_now"] == 0 and s["disk_used"] >= 9_000_000
        memlake.fetch(ps[0], allocator=a)  # read back into the host tier ahead of its restore
        memlake.fetch(ps[1], allocator=a)
        memlake.settle(allocator=a)
        s = memlake.residency_stats(allocator=a)
        assert s["fetches"] == 2 and s["disk_failures"] == 0 and 3_000_000 <= s["disk_used"] < 4_000_000
        assert s["disk_busy_seconds"] > 0
        for p, d in zip(ps, datas):
            memlake.restore(p, allocator=a)
            assert _read(p, len(d)) == d
        assert memlake.residency_stats(allocator=a)["disk_used"] == 0
        with pytest.raises(memlake.InvalidArgumentError):
            memlake.fetch(ps[0], allocator=a)  # not evicted
        for p in ps:
            a.free(p)
    finally:
        a.close()


def test_a_restore_without_a_wait_and_ready(alloc):
    p = alloc.alloc(400_000)
    data = bytes((i * 13) & 0xFF for i in range(400_000))
    _write(p, data)
    memlake.evict(p, allocator=alloc)
    memlake.restore(p, allocator=alloc, wait=False)  # queued; the stream waits at ready()
    memlake.ready(p, allocator=alloc)
    memlake.ready(p, allocator=alloc)  # nothing pending: nothing to do
    assert _read(p, 400_000) == data
    memlake.evict(p, allocator=alloc)
    memlake.restore(p, allocator=alloc, wait=False)
    alloc.free(p)  # freed before ready(): ordered after the copy, no error
    with pytest.raises(memlake.InvalidArgumentError):
        memlake.ready(12345, allocator=alloc)  # not an allocation
