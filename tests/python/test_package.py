"""The Python package on any machine: loads, validates options, reaches the
host backend through ctypes, reports statistics and errors."""
import subprocess
import sys

import pytest

import memlake

PAGE = 64 << 10


@pytest.fixture
def alloc():
    with memlake.Allocator(backend="host", granularity="64K", small_max="16K") as a:
        yield a


def test_loads_without_torch():
    code = "import sys, memlake; print(memlake.version); assert 'torch' not in sys.modules"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         env={"PYTHONPATH": ":".join(sys.path)})
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == memlake.version


def test_alloc_free_and_torch_named_stats(alloc):
    p = alloc.alloc(3 * PAGE + 5)
    assert p % PAGE == 0
    s = alloc.stats()
    assert s["requested_bytes.all.current"] == 3 * PAGE + 5
    assert s["allocated_bytes.all.current"] == 4 * PAGE
    assert s["reserved_bytes.all.current"] == 4 * PAGE
    assert s["active.all.current"] == 1
    assert s["memlake.calls.create"] == 4
    assert s["memlake.seconds.create"] > 0 and s["memlake.seconds.unmap"] == 0
    assert s["memlake.driver_seconds"] >= s["memlake.seconds.create"]
    alloc.free(p)
    s = alloc.stats()
    assert s["allocated_bytes.all.current"] == 0
    assert s["allocated_bytes.all.peak"] == 4 * PAGE
    alloc.reset_peak_stats()
    assert alloc.stats()["allocated_bytes.all.peak"] == 0


def test_the_watermark_measures_a_stretch_and_leaves_the_peaks_alone(alloc):
    # What activation tiering reads at every forward boundary of its profile: the most allocated
    # since the last reset, apart from the peaks the user sees (allocated_bytes.all.peak, which
    # torch.cuda.max_memory_allocated() answers from under memlake.torch.enable()).
    assert alloc.watermark() == (0, 0)  # a device never used
    p = alloc.alloc(2 * PAGE)
    assert alloc.watermark(reset=True) == (2 * PAGE, 2 * PAGE)
    q = alloc.alloc(5 * PAGE)
    alloc.free(q)
    assert alloc.watermark() == (2 * PAGE, 7 * PAGE)  # the stretch's transient: 7 - 2 pages
    assert alloc.watermark(reset=True) == (2 * PAGE, 7 * PAGE)
    assert alloc.watermark() == (2 * PAGE, 2 * PAGE)
    assert alloc.stats()["allocated_bytes.all.peak"] == 7 * PAGE  # the user's peak is untouched
    q = alloc.alloc(PAGE)
    alloc.free(q)
    alloc.reset_peak_stats()  # and the user's reset leaves the watermark alone
    assert alloc.stats()["allocated_bytes.all.peak"] == 2 * PAGE
    assert alloc.watermark() == (2 * PAGE, 3 * PAGE)
    alloc.free(p)


def test_stitching_visible_through_python(alloc):
    blocks = [alloc.alloc(PAGE) for _ in range(4)]
    alloc.free(blocks[0])
    alloc.free(blocks[2])
    big = alloc.alloc(2 * PAGE)
    s = alloc.stats()
    assert s["memlake.stitches"] == 1
    assert s["reserved_bytes.all.current"] == 4 * PAGE
    # four growths and the stitch missed the cache and were timed
    assert s["memlake.slow_paths"] == 5 and s["memlake.slow_path_seconds"] > 0
    # every alloc and free is timed, the slow paths among them
    assert s["memlake.host_seconds"] > 0
    for p in (big, blocks[1], blocks[3]):
        alloc.free(p)


def test_empty_cache_and_cap(alloc):
    p = alloc.alloc(5 * PAGE)
    alloc.free(p)
    alloc.empty_cache()
    assert alloc.stats()["reserved_bytes.all.current"] == 0
    alloc.set_memory_cap(4 * PAGE)
    with pytest.raises(memlake.OutOfMemoryError) as e:
        alloc.alloc(8 * PAGE)
    assert "cap" in str(e.value) and str(8 * PAGE) in str(e.value)
    assert isinstance(e.value, MemoryError)
    assert alloc.stats()["num_ooms"] == 1
    q = alloc.alloc(2 * PAGE)  # still usable
    alloc.free(q)


def test_bad_input_is_a_clear_error(alloc):
    with pytest.raises(memlake.InvalidArgumentError, match="not a live allocation"):
        alloc.free(0x1000)
    p = alloc.alloc(100)
    alloc.free(p)
    with pytest.raises(memlake.InvalidArgumentError, match="double free"):
        alloc.free(p)
    assert alloc.alloc(0) == 0
    with pytest.raises(memlake.InvalidArgumentError):
        alloc.alloc(-1)


def test_options_are_validated():
    with pytest.raises(memlake.InvalidArgumentError, match="unknown option 'colour'"):
        memlake.Allocator(backend="host", colour="blue")
    with pytest.raises(memlake.InvalidArgumentError, match="not a boolean"):
        memlake.validate_options(stitch="perhaps")
    with pytest.raises(memlake.InvalidArgumentError, match="size"):
        memlake.validate_options(memory_cap="lots")
    memlake.validate_options(memory_cap="24G", stitch=False, granularity="2M")
    table = memlake.options()
    assert set(table) >= {"backend", "granularity", "small_max", "memory_cap", "stitch"}


def test_summary_is_readable(alloc):
    p = alloc.alloc(2 * PAGE)
    text = alloc.summary()
    assert "Reserved memory (physical)" in text and "128.00 KiB" in text
    assert "Utilization" in text
    assert "Time in driver calls" in text
    alloc.free(p)


def test_json_stats(alloc):
    p = alloc.alloc(PAGE)
    j = alloc.stats_json()
    assert j["devices"][0]["backend"] == "host"
    assert j["devices"][0]["reserved_bytes"]["current"] == PAGE
    alloc.free(p)


def test_cuda_backend_without_driver_is_unavailable():
    try:
        memlake.Allocator(backend="cuda").close()
    except memlake.UnavailableError as e:
        assert "cuda" in str(e)
    # With a GPU the allocator simply works; both are fine here.


def test_default_allocator_configure_once():
    code = ("import memlake\n"
            "memlake.configure(backend='host', granularity='64K', small_max='16K')\n"
            "print(memlake.stats()['reserved_bytes.all.current'])\n"
            "try:\n    memlake.configure(backend='host')\nexcept memlake.InvalidArgumentError as e:\n    print('late:', e)\n")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         env={"PYTHONPATH": ":".join(sys.path)})
    assert out.returncode == 0, out.stderr
    lines = out.stdout.splitlines()
    assert lines[0] == "0"
    assert lines[1].startswith("late:") and "already exists" in lines[1]


def test_registration_cache_through_the_package():
    n = 9 << 20  # at least direct_below (8 MiB): staged, so registrable
    with memlake.Allocator(backend="host", copy_register_after="2") as a:
        src = bytearray((i * 13 + 1) % 253 for i in range(n))
        d = a.alloc(n)
        for _ in range(3):  # the 2nd copy registers it, the 3rd is served registered
            a.copy(d, src, n)
            src[0] = (src[0] + 1) % 256
        back = bytearray(n)
        a.copy(back, d, n)
        src[0] = (src[0] - 1) % 256
        assert back == src
        a.copy_forget(src)  # before the buffer goes; harmless when nothing is registered
        a.copy_forget(src)
        a.free(d)
    with pytest.raises(memlake.InvalidArgumentError, match="copy_register_after"):
        memlake.Allocator(backend="host", copy_register_after="-1")


def test_copy_between_host_buffers_and_device_memory(alloc):
    n = (5 << 20) + 3
    src = bytearray((i * 7 + 3) % 251 for i in range(n))
    d = alloc.alloc(n)
    alloc.copy(d, src, n)              # host -> device (below 8 MiB: the driver's own copy)
    back = bytearray(n)
    alloc.copy(back, d, n)             # device -> host
    assert back == src
    small = bytes(b"memlake")          # read-only source, direct path
    alloc.copy(d, small)
    out = bytearray(7)
    alloc.copy(out, d, 7)
    assert bytes(out) == small
    with pytest.raises(memlake.InvalidArgumentError, match="one host and one device pointer"):
        alloc.copy(bytearray(16), bytearray(16), 16)
    with pytest.raises(memlake.InvalidArgumentError, match="exceeds"):
        alloc.copy(d, bytearray(8), 100)
    with pytest.raises(memlake.InvalidArgumentError, match="nbytes is required"):
        alloc.copy(d, 12345)
    alloc.free(d)
    st = alloc.copy_stats()
    assert st["copies"] == 4 and st["bytes"] == 2 * n + 14
    assert st["direct"] == 4 and st["staged"] == 0 and st["threads"] >= 1
    assert st["paths_gpus"] == 0 and st["bytes_via"] == []


def test_copies_over_several_paths_with_a_described_topology():
    with memlake.Allocator(backend="host", copy_threads="2", copy_chunk="1M",
                           copy_topology="gpus 2; pcie 24; nvlink all 200") as a:
        n = 80 << 20
        src = bytearray(n)
        src[::4096] = bytes(range(256)) * (n // 4096 // 256)
        d = a.alloc(n)
        a.copy(d, src, n)
        back = bytearray(n)
        a.copy(back, d, n)
        assert back == src
        st = a.copy_stats()
        assert st["paths_gpus"] == 2 and st["transfers"] == 2 and st["split"] == 2
        assert len(st["bytes_via"]) == 2 and st["bytes_via"][1] > 0 and sum(st["bytes_via"]) == 2 * n
        a.free(d)
    with pytest.raises(memlake.InvalidArgumentError, match="copy_topology"):
        memlake.Allocator(backend="host", copy_topology="gpus two")
