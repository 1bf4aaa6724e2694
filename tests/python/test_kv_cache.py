"""The virtual tensor and the KV cache's page bookkeeping on the host backend (no GPU, no torch).

memlake.torch.KVCache itself: test_kv_cache_cpu.py (the class over the host backend's pages,
against a stand-in of transformers' static cache), test_kv_cache_gpu.py and bench/kv_generate.py
check (docs/results.md) on a GPU."""
import math
import random

import pytest

import memlake
from memlake.kv_pages import KVGeometry, KVPages
from memlake.vt import PRIVATE, SINK, ZERO, VirtualTensor

PAGE = 64 << 10


@pytest.fixture(scope="module")
def alloc():
    a = memlake.Allocator(backend="host", granularity="64K", small_max="16K")
    yield a
    a.close()


def test_virtual_tensor_maps_and_unmaps(alloc):
    with VirtualTensor(10 * PAGE + 1, allocator=alloc) as vt:
        assert vt.pages == 11 and vt.page_size == PAGE and vt.base
        s = vt.stats()
        assert s["zero_pages"] == 11 and s["physical_bytes"] == 2 * PAGE
        vt.map(2, 3)
        vt.unmap(3, 1, backing="sink")
        assert vt.page_states(0, 5) == bytes([ZERO, ZERO, PRIVATE, SINK, PRIVATE])
        vt.map_bytes(PAGE * 6 - 1, 2)  # pages 5 and 6
        assert vt.stats()["private_pages"] == 4
        with pytest.raises(memlake.InvalidArgumentError, match="outside"):
            vt.map(10, 2)
        with pytest.raises(memlake.InvalidArgumentError):
            vt.unmap(0, 1, backing="private")
        vt.set_memory_limit(6 * PAGE)
        with pytest.raises(memlake.OutOfMemoryError):
            vt.map(7, 1)
        assert vt.page_states(7, 1) == bytes([ZERO])
    with pytest.raises(memlake.InvalidArgumentError, match="closed"):
        vt.map(0, 1)


def geo(**kw):
    d = dict(layers=4, batch=3, heads=2, head_dim=64, max_len=1024, itemsize=2, order="tokens")
    d.update(kw)
    return d


def test_geometry_tokens_layout():
    g = KVGeometry(page_size=PAGE, **geo())
    assert g.token_bytes == 4 * 2 * 2 * 64 * 2
    assert g.row_bytes % PAGE == 0 and g.row_bytes >= 1024 * g.token_bytes
    off, shape, strides = g.tensor(1, 1)
    assert shape == (3, 2, 1024, 64)
    assert off == 3 * 2 * 64 * 2  # layer 1's V follows layer 0's K, V and layer 1's K within a token
    assert strides == (g.row_bytes // 2, 64, g.token_bytes // 2, 1)
    # Position p of row r, head h of layer l's K/V lies inside row r's region at token p.
    (o, n), = g.row_ranges(2, 10, 12)
    assert o == 2 * g.row_bytes + 10 * g.token_bytes and n == 2 * g.token_bytes


def test_geometry_rows_layout_is_a_dense_permutation_with_one_region_per_row_layer_and_kv():
    g = KVGeometry(page_size=PAGE, **geo(max_len=8192, order="rows"))
    assert g.row_bytes == 8192 * 2 * 64 * 2 and g.nbytes == 4 * 2 * 3 * g.row_bytes
    off, shape, strides = g.tensor(1, 1)
    assert shape == (3, 2, 8192, 64)
    assert off == 3 * 3 * g.row_bytes  # layer 1's V: after layer 0's K and V and layer 1's K
    # [B, H, L, D] over [B, L, H, D]: dense, so torch keeps the order and updates it in place
    assert strides == (8192 * 2 * 64, 64, 2 * 64, 1)
    ranges = g.row_ranges(2, 10, 12)
    assert len(ranges) == 4 * 2  # one region per (layer, K/V)
    assert ranges[3] == ((3 * 3 + 2) * g.row_bytes + 10 * 2 * 64 * 2, 2 * 2 * 64 * 2)
    assert g.tokens_per_page == PAGE // (2 * 64 * 2)
    padded = KVGeometry(page_size=PAGE, **geo(max_len=250, order="rows"))
    assert padded.row_bytes == PAGE  # a row of a layer's K or V rounds up to whole pages
    assert g.covered(1) == g.tokens_per_page and g.covered(g.tokens_per_page + 1) == 2 * g.tokens_per_page


def test_geometry_rows_layout_with_groups_interleaves_a_groups_tensors_by_position():
    g = KVGeometry(page_size=PAGE, **geo(max_len=8192, order="rows", group=2))  # a layer's K and V together
    per = 2 * 2 * 64 * 2  # one position of one region: K and V, 2 heads of 64
    assert g.regions_per_row == 4 and g.region_token_bytes == per
    assert g.row_bytes == 8192 * per and g.nbytes == 4 * 3 * g.row_bytes
    off, shape, strides = g.tensor(1, 1)  # layer 1's V: region 1, after its K within a position
    assert off == 1 * 3 * g.row_bytes + 2 * 64 * 2
    assert shape == (3, 2, 8192, 64) and strides == (g.row_bytes // 2, 64, per // 2, 1)
    ranges = g.row_ranges(2, 10, 12)
    assert ranges == [((q * 3 + 2) * g.row_bytes + 10 * per, 2 * per) for q in range(4)]
    # group 1 is "rows" as it was; one group of every tensor is "tokens", byte for byte
    assert KVGeometry(page_size=PAGE, **geo(order="rows", group=1)).tensor(1, 1) == \
        KVGeometry(page_size=PAGE, **geo(order="rows")).tensor(1, 1)
    t, r8 = KVGeometry(page_size=PAGE, **geo()), KVGeometry(page_size=PAGE, **geo(order="rows", group=8))
    assert all(t.tensor(i, kv) == r8.tensor(i, kv) for i in range(4) for kv in (0, 1))
    assert t.row_ranges(1, 5, 9) == r8.row_ranges(1, 5, 9) and t.nbytes == r8.nbytes
    for bad in (3, 0, -2, True, 2.0):
        with pytest.raises(memlake.InvalidArgumentError, match="group"):
            KVGeometry(page_size=PAGE, **geo(order="rows", group=bad))
    with pytest.raises(memlake.InvalidArgumentError, match="group"):
        KVGeometry(page_size=PAGE, **geo(group=2))  # tokens: one group, by definition


@pytest.mark.parametrize("group", [None, 2, 4])
def test_rows_layout_stays_within_the_bound(alloc, group):
    p = KVPages(geo(order="rows", max_len=3000, group=group), allocator=alloc)
    p.prepare(0, 10)
    for t in range(10, 3000, 7):
        p.prepare(t, 7 if t + 7 <= 3000 else 3000 - t)
        s = p.stats()
        assert s["live_bytes"] <= s["mapped_bytes"] <= s["bound_bytes"], (t, s)
    p.finish_row(0)
    g = p.geometry
    p.add_row(0, start=g.tokens_per_page - 1, length=2)  # mid-page: a partial page at each region's start
    for t in range(g.tokens_per_page + 1, 2000, 5):
        p.grow(0, t)
        s = p.stats()
        assert s["live_bytes"] <= s["mapped_bytes"] <= s["bound_bytes"], (t, s)
    p.finish_row(0)
    for off, n in g.row_region(0):
        first, count = p.vt.page_range(off, n)
        assert set(p.vt.page_states(first, count)) == {SINK}
    p.close()


def test_geometry_heads_layout_is_static_cache_contiguous():
    g = KVGeometry(page_size=PAGE, **geo(max_len=512, order="heads"))
    off, shape, strides = g.tensor(0, 1)
    assert strides == (2 * 512 * 64, 512 * 64, 64, 1)  # contiguous [B, H, L, D]
    assert off == 3 * 2 * 512 * 64 * 2
    assert len(g.row_ranges(0, 0, 5)) == 4 * 2 * 2  # one region per (layer, K/V, head)
    with pytest.raises(memlake.InvalidArgumentError, match="whole number"):
        KVGeometry(page_size=PAGE, **geo(max_len=500, order="heads"))


def test_rows_grow_within_the_bound_and_finish(alloc):
    p = KVPages(geo(), allocator=alloc)
    p.prepare(0, 100)  # prefill
    for t in range(100, 1000):
        p.prepare(t)
        s = p.stats()
        assert s["live_bytes"] == 3 * (t + 1) * p.geometry.token_bytes
        assert s["live_bytes"] <= s["mapped_bytes"] <= s["bound_bytes"], (t, s)
    # The pages really are private where rows live, zero beyond.
    states = p.vt.page_states()
    g = p.geometry
    assert states[0] == PRIVATE and states[(g.row_bytes - 1) // PAGE] in (PRIVATE, ZERO)
    before = p.stats()["mapped_bytes"]
    p.finish_row(1)
    s = p.stats()
    assert s["active_rows"] == 2
    assert s["mapped_bytes"] < before
    first, count = p.vt.page_range(g.row_bytes, g.row_bytes)
    assert set(p.vt.page_states(first, count)) == {SINK}  # a finished row's writes go nowhere
    p.prepare(1000)  # the other rows go on
    p.close()


def test_row_errors(alloc):
    p = KVPages(geo(), allocator=alloc, rows=[0])
    with pytest.raises(memlake.InvalidArgumentError, match="out of range"):
        p.finish_row(3)
    with pytest.raises(memlake.InvalidArgumentError, match="out of range"):
        p.add_row(-1)
    with pytest.raises(memlake.InvalidArgumentError, match="not active"):
        p.finish_row(1)  # never added
    p.finish_row(0)
    with pytest.raises(memlake.InvalidArgumentError, match="finished twice"):
        p.finish_row(0)
    p.add_row(0)
    with pytest.raises(memlake.InvalidArgumentError, match="already active"):
        p.add_row(0)
    with pytest.raises(memlake.InvalidArgumentError, match="past the reserved maximum"):
        p.prepare(1024)
    with pytest.raises(memlake.InvalidArgumentError, match="past the reserved maximum"):
        p.add_row(1, start=1000, length=30)
    assert p.active == [True, False, False]
    p.close()


def test_out_of_memory_keeps_every_row(alloc):
    g = KVGeometry(page_size=PAGE, **geo())
    per_page = g.tokens_per_page
    # Room for the shared pages and 6 private ones.
    p = KVPages(geo(), allocator=alloc, memory_limit=8 * PAGE, margin=0)
    p.prepare(0, per_page)  # 3 rows x (1 page + the page ahead)
    mapped = list(p.mapped)
    states = p.vt.page_states()
    with pytest.raises(memlake.OutOfMemoryError):
        p.prepare(per_page, 4 * per_page)
    assert p.stats()["physical_bytes"] <= 8 * PAGE
    for r in range(3):
        assert p.mapped[r] >= mapped[r]  # no row lost what it had
    assert all(states[i] != PRIVATE or p.vt.page_states(i, 1)[0] == PRIVATE for i in range(len(states)))
    p.finish_row(2)
    p.prepare(per_page, per_page)  # room again
    p.close()


def test_add_row_maps_only_its_live_positions(alloc):
    p = KVPages(geo(), allocator=alloc, rows=[], margin=0)
    assert p.stats()["mapped_bytes"] == 0
    g = p.geometry
    p.add_row(1, start=600, length=50)  # left padding [0, 600) reads zeros, costs nothing
    s = p.stats()
    assert s["live_bytes"] == 50 * g.token_bytes
    assert s["mapped_bytes"] <= s["live_bytes"] + 2 * PAGE + g.tokens_per_page * g.token_bytes
    first, _ = p.vt.page_range(g.row_bytes, 600 * g.token_bytes)
    assert p.vt.page_states(first, 1) == bytes([ZERO])
    p.reset()
    assert p.stats()["mapped_bytes"] == 0
    p.close()


def test_continuous_batching_fits_more_rows_than_static(alloc):
    """Final lengths log-uniform in [16, 1024]; the pages of rows that finish serve new ones."""
    d = geo(layers=8, max_len=1024)
    g = KVGeometry(page_size=PAGE, batch=1, **{k: v for k, v in d.items() if k != "batch"})
    static_rows = 4
    budget = static_rows * 1024 * g.token_bytes

    def fits(n):
        rng = random.Random(5)
        p = KVPages(dict(d, batch=n), allocator=alloc, rows=[], memory_limit=budget)
        want, pos = [0] * n, [0] * n
        try:
            for step in range(1500):
                for r in range(n):
                    if step == 0 or pos[r] >= want[r]:
                        if step:
                            p.finish_row(r)
                        want[r] = int(math.exp(rng.uniform(math.log(16), math.log(1024))))
                        p.add_row(r, 0, 8)
                        pos[r] = 8
                    pos[r] += 1
                    p.grow(r, pos[r])
            return True
        except memlake.OutOfMemoryError:
            return False
        finally:
            p.close()

    assert fits(static_rows)
    assert fits(2 * static_rows)
