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
