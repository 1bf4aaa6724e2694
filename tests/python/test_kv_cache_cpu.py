"""memlake.torch.KVCache on the CPU: the cache class itself, over the host backend's pages.

transformers is not installed here, so a stand-in of the two classes KVCache builds on takes
its place: StaticLayer and StaticCache as transformers 5.17 has them (a layer's update writes
at its device counter `cumulative_length`, advances it, and returns the whole [B, H, L, D]
tensors; the mask covers the whole maximum length). Each layout's update must return, step
after step, exactly what StaticCache's returns for the same keys and values, with mapped
bytes within the bound. The same class on a GPU: tests/python/test_kv_cache_gpu.py."""
import importlib
import sys
import types

import pytest

torch = pytest.importorskip("torch", reason="PyTorch not installed")

import memlake  # noqa: E402


class StaticLayer:
    """transformers 5.17's StaticLayer, the parts KVCache relies on."""

    def __init__(self, max_cache_len):
        self.max_cache_len = max_cache_len
        self.keys = self.values = None
        self.is_initialized = False
        self.cumulative_length = torch.zeros((), dtype=torch.long)

    def lazy_initialization(self, key_states, value_states):
        b, h, _, d = key_states.shape
        self.keys = torch.zeros((b, h, self.max_cache_len, d), dtype=key_states.dtype)
        self.values = torch.zeros_like(self.keys)
        self.is_initialized = True

    def update(self, key_states, value_states, *args, **kwargs):
        if not self.is_initialized:
            self.lazy_initialization(key_states, value_states)
        n = key_states.shape[-2]
        position = torch.arange(n) + self.cumulative_length
        self.cumulative_length.add_(n)
        self.keys.index_copy_(2, position, key_states)
        self.values.index_copy_(2, position, value_states)
        return self.keys, self.values

    def get_mask_sizes(self, query_length, *args, **kwargs):
        return self.max_cache_len, 0

    def get_seq_length(self):
        return self.cumulative_length

    def reset(self):
        self.cumulative_length.zero_()


class StaticCache:
    def __init__(self, config, max_cache_len):
        self.layers = [StaticLayer(max_cache_len) for _ in range(config.num_hidden_layers)]

    def update(self, key_states, value_states, layer_idx, cache_kwargs=None):
        return self.layers[layer_idx].update(key_states, value_states, cache_kwargs)

    def get_mask_sizes(self, query_length, layer_idx=0):
        return self.layers[layer_idx].get_mask_sizes(query_length)


@pytest.fixture
def kv_cache_module(monkeypatch):
    """memlake.kv_cache imported over the stand-in (and the real module, if any, put back after)."""
    fake = types.ModuleType("transformers")
    utils = types.ModuleType("transformers.cache_utils")
    utils.StaticLayer, utils.StaticCache = StaticLayer, StaticCache
    fake.cache_utils = utils
    monkeypatch.setitem(sys.modules, "transformers", fake)
    monkeypatch.setitem(sys.modules, "transformers.cache_utils", utils)
    monkeypatch.delitem(sys.modules, "memlake.kv_cache", raising=False)
    return importlib.import_module("memlake.kv_cache")


@pytest.fixture(scope="module")
def alloc():
    a = memlake.Allocator(backend="host", granularity="64K", small_max="16K")
    yield a
    a.close()


LAYERS, BATCH, HEADS, DIM, MAX_LEN = 3, 2, 2, 64, 256  # fp32: one head's 256 positions are one 64 KiB page


@pytest.mark.parametrize("layout,group", [(None, None), ("tokens", None), ("rows", None), ("rows", 2), ("rows", 3),
                                          ("heads", None)])
@pytest.mark.parametrize("traced", [False, True], ids=["eager", "traced"])
def test_each_layouts_update_returns_what_static_cache_returns(kv_cache_module, alloc, monkeypatch, layout, group,
                                                               traced):
    # traced: the update a compiled step runs (the bases written, the views made from them); the
    # mask sizes are asked eagerly, outside the step, as generate() does
    inside = [False]
    monkeypatch.setattr(kv_cache_module, "_compiling", lambda: inside[0])
    config = types.SimpleNamespace(num_hidden_layers=LAYERS, num_key_value_heads=HEADS, num_attention_heads=4,
                                   hidden_size=4 * DIM, head_dim=DIM, torch_dtype=torch.float32)
    cache = kv_cache_module.KVCache(config, max_batch_size=BATCH, max_cache_len=MAX_LEN, dtype=torch.float32,
                                    device="cpu", layout=layout, group=group, allocator=alloc)
    ref = StaticCache(config, MAX_LEN)
    g = torch.Generator().manual_seed(7)
    steps = [37] + [1] * 60 + [5, 1, 1]  # a prefill, decode steps, a chunk, decode again
    for n in steps:
        cache.get_mask_sizes(n, 0)  # generate() asks before each step: the pages are mapped here
        for i in range(LAYERS):
            k = torch.randn(BATCH, HEADS, n, DIM, generator=g)
            v = torch.randn(BATCH, HEADS, n, DIM, generator=g)
            rk, rv = ref.update(k, v, i)
            inside[0] = traced
            ck, cv = cache.update(k, v, i)
            inside[0] = False
            assert ck.shape == rk.shape and torch.equal(ck, rk) and torch.equal(cv, rv), (layout, group, i)
        s = cache.stats()
        assert s["live_bytes"] <= s["mapped_bytes"], s
        if layout != "heads":  # "heads" may pass a page per (row, layer, K/V): one per head
            assert s["mapped_bytes"] <= s["bound_bytes"], s
    written = sum(steps)
    assert int(cache.layers[0].cumulative_length) == written
    assert cache.stats()["live_bytes"] == BATCH * written * 2 * LAYERS * HEADS * DIM * 4
    cache.close()


def test_the_default_layout_is_rows_with_a_layers_k_and_v_in_one_region(kv_cache_module, alloc):
    config = types.SimpleNamespace(num_hidden_layers=LAYERS, num_key_value_heads=HEADS, num_attention_heads=4,
                                   hidden_size=4 * DIM, head_dim=DIM, torch_dtype=torch.float32)
    cache = kv_cache_module.KVCache(config, max_batch_size=BATCH, max_cache_len=MAX_LEN, dtype=torch.float32,
                                    device="cpu", allocator=alloc)
    s = cache.stats()
    assert (s["layout"], s["group"]) == ("rows", 2), s
    cache.close()
    cache = kv_cache_module.KVCache(config, max_batch_size=BATCH, max_cache_len=MAX_LEN, dtype=torch.float32,
                                    device="cpu", layout="rows", allocator=alloc)
    assert cache.stats()["group"] == 1  # an explicit "rows" keeps its own default
    cache.close()


def test_a_group_that_does_not_divide_the_tensors_is_refused(kv_cache_module, alloc):
    config = types.SimpleNamespace(num_hidden_layers=LAYERS, num_key_value_heads=HEADS, num_attention_heads=4,
                                   hidden_size=4 * DIM, head_dim=DIM, torch_dtype=torch.float32)
    with pytest.raises(memlake.InvalidArgumentError, match="group"):
        kv_cache_module.KVCache(config, max_batch_size=BATCH, max_cache_len=MAX_LEN, dtype=torch.float32,
                                device="cpu", layout="rows", group=4, allocator=alloc)


def _config():
    return types.SimpleNamespace(num_hidden_layers=LAYERS, num_key_value_heads=HEADS, num_attention_heads=4,
                                 hidden_size=4 * DIM, head_dim=DIM, torch_dtype=torch.float32)


@pytest.mark.parametrize("layout", [None, "tokens", "heads"])
def test_live_reads_end_where_the_step_ends_and_the_mask_agrees_with_the_kv(kv_cache_module, alloc, monkeypatch,
                                                                           layout):
    # eager_reads="live". Each step: where its mask sizes are asked (eagerly, or inside a compiled
    # graph) and where its layers update (eagerly, or traced: a whole compiled model, or compiled
    # layers under an eager model). The mask's length and every layer's K/V length must agree: the
    # live end where the hook ran eagerly, the whole length where it ran inside a graph.
    inside = [False]
    monkeypatch.setattr(kv_cache_module, "_compiling", lambda: inside[0])
    cache = kv_cache_module.KVCache(_config(), max_batch_size=BATCH, max_cache_len=MAX_LEN, dtype=torch.float32,
                                    device="cpu", layout=layout, allocator=alloc, eager_reads="live")
    ref = StaticCache(_config(), MAX_LEN)
    g = torch.Generator().manual_seed(11)
    end = 0
    steps = [(29, False, False), (1, False, False), (1, True, True), (4, False, False), (1, False, True),
             (1, True, True), (1, False, False)]
    for n, mask_traced, update_traced in steps:  # (False, True): compiled layers under an eager model
        inside[0] = mask_traced
        assert cache.is_compileable is mask_traced
        calls = cache.hook_calls
        sizes = cache.get_mask_sizes(n, 0)
        assert cache.hook_calls == calls + 1  # once per step, not again through the layer's
        end += n
        want = MAX_LEN if mask_traced else end
        assert sizes[0] == want
        inside[0] = update_traced
        for i in range(LAYERS):
            k = torch.randn(BATCH, HEADS, n, DIM, generator=g)
            v = torch.randn(BATCH, HEADS, n, DIM, generator=g)
            rk, rv = ref.update(k, v, i)
            ck, cv = cache.update(k, v, i)
            assert ck.shape == (BATCH, HEADS, want, DIM), (n, mask_traced, update_traced, i, ck.shape)
            assert torch.equal(ck, rk[:, :, :want]) and torch.equal(cv, rv[:, :, :want]), (n, i)
            if not update_traced:  # a view of the cache itself: the address stays
                assert ck.data_ptr() == cache.layers[i].keys.data_ptr()
    inside[0] = False
    # a step only some layers reached (an exception in the forward), then a step the hook never saw
    # (a mask the caller made for the whole length): every layer reads the whole length
    cache.get_mask_sizes(1, 0)
    k = torch.randn(BATCH, HEADS, 1, DIM, generator=g)
    for i in range(LAYERS - 1):
        ref.update(k, k, i)
        cache.update(k, k, i)
    for i in range(LAYERS):
        rk, _ = ref.update(k, k, i)
        ck, _ = cache.update(k, k, i)
        assert ck.shape[2] == MAX_LEN and torch.equal(ck, rk), i
    # asked twice in one step (older versions pass the same cache_position tensor): one step
    pos = torch.tensor([int(cache.layers[0].cumulative_length)])
    calls = cache.hook_calls
    assert cache.get_mask_sizes(pos, 0)[0] == cache.get_mask_sizes(pos, 0)[0] == int(pos) + 1
    assert cache.hook_calls == calls + 1
    cache.reset()
    assert cache._live_end is None
    cache.close()


def test_explicit_is_compileable_is_kept(kv_cache_module, alloc, monkeypatch):
    # a version whose StaticCache.__init__ assigns is_compileable does not decide a live cache's
    init = StaticCache.__init__

    def assigning_init(self, *a, **k):
        init(self, *a, **k)
        self.is_compileable = True
    monkeypatch.setattr(StaticCache, "__init__", assigning_init)
    live = kv_cache_module.KVCache(_config(), max_batch_size=BATCH, max_cache_len=MAX_LEN, dtype=torch.float32,
                                   device="cpu", allocator=alloc, eager_reads="live")
    assert live.is_compileable is False
    live.close()
    cache = kv_cache_module.KVCache(_config(), max_batch_size=BATCH, max_cache_len=MAX_LEN, dtype=torch.float32,
                                    device="cpu", allocator=alloc)
    assert cache.is_compileable is True
    cache.is_compileable = False
    assert cache.is_compileable is False
    cache.is_compileable = None  # the mode decides again
    assert cache.is_compileable is True
    cache.close()


def test_full_reads_are_static_caches_and_a_bad_mode_is_refused(kv_cache_module, alloc):
    cache = kv_cache_module.KVCache(_config(), max_batch_size=BATCH, max_cache_len=MAX_LEN, dtype=torch.float32,
                                    device="cpu", allocator=alloc)
    assert cache.is_compileable is True
    assert cache.get_mask_sizes(5, 0)[0] == MAX_LEN
    k = torch.zeros(BATCH, HEADS, 5, DIM)
    assert cache.update(k, k, 0)[0].shape[2] == MAX_LEN
    cache.close()
    with pytest.raises(memlake.InvalidArgumentError, match="eager_reads"):
        kv_cache_module.KVCache(_config(), max_batch_size=BATCH, max_cache_len=MAX_LEN, dtype=torch.float32,
                                device="cpu", allocator=alloc, eager_reads="some")
