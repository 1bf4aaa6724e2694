"""memlake.torch.KVCache on a GPU with transformers (skipped without them).

A small Qwen2-like model with random weights: greedy generate() through the
KVCache gives StaticCache's tokens, maps within the bound, and grows, finishes
and replaces rows; errors are the documented ones."""
import pytest

torch = pytest.importorskip("torch", reason="PyTorch not installed")
pytest.importorskip("transformers", reason="transformers not installed")
if not torch.cuda.is_available():
    pytest.skip("no CUDA device: GPU tests skipped", allow_module_level=True)

import memlake  # noqa: E402
import memlake.torch as mt  # noqa: E402
from transformers import AutoModelForCausalLM, DynamicCache, LogitsProcessorList, Qwen2Config, StaticCache  # noqa: E402


@pytest.fixture(scope="module")
def model():
    cfg = Qwen2Config(hidden_size=512, intermediate_size=1024, num_hidden_layers=8, num_attention_heads=4,
                      num_key_value_heads=2, vocab_size=4096, max_position_embeddings=4096, tie_word_embeddings=True)
    cfg.head_dim = 128
    torch.manual_seed(0)
    with torch.device("cuda"):
        m = AutoModelForCausalLM.from_config(cfg, dtype=torch.bfloat16, attn_implementation="sdpa")
    m.eval()
    m.generation_config.pad_token_id = 0
    m.generation_config.eos_token_id = None
    return m


class Bound:
    def __init__(self, cache):
        self.cache, self.steps = cache, 0

    def __call__(self, input_ids, scores):
        s = self.cache.stats()
        assert s["live_bytes"] <= s["mapped_bytes"] <= s["bound_bytes"], s
        self.steps += 1
        return scores


def generate(model, ids, cache, new, hook=None):
    kw = dict(max_new_tokens=new, do_sample=False, past_key_values=cache, disable_compile=True)
    if hook:
        kw["logits_processor"] = LogitsProcessorList([hook])
    with torch.no_grad():
        return model.generate(ids, attention_mask=torch.ones_like(ids), **kw)


def test_live_reads_give_dynamic_caches_tokens_within_the_bound(model):
    # eager_reads="live": no mask, grouped K/V straight to SDPA, as DynamicCache: the same kernels
    ids = torch.randint(1, 4096, (4, 100), device="cuda", generator=torch.Generator("cuda").manual_seed(2))
    ref = generate(model, ids, DynamicCache(config=model.config), 300)
    cache = mt.KVCache(model.config, max_batch_size=4, max_cache_len=464, dtype=torch.bfloat16, eager_reads="live")
    assert cache.is_compileable is False  # so transformers may drop the mask
    hook = Bound(cache)
    out = generate(model, ids, cache, 300, hook)
    assert hook.steps == 300 and cache.hook_calls >= 300
    assert torch.equal(out, ref)
    cache.close()


@pytest.mark.parametrize("layout,group", [("tokens", None), ("rows", None), ("rows", 2)])
def test_generate_matches_static_cache_within_the_bound(model, layout, group):
    ids = torch.randint(1, 4096, (4, 100), device="cuda", generator=torch.Generator("cuda").manual_seed(1))
    max_len = 464
    ref = generate(model, ids, StaticCache(config=model.config, max_cache_len=max_len), 300)
    cache = mt.KVCache(model.config, max_batch_size=4, max_cache_len=max_len, dtype=torch.bfloat16, layout=layout,
                       group=group)
    hook = Bound(cache)
    out = generate(model, ids, cache, 300, hook)
    assert torch.equal(out, ref)
    assert hook.steps == 300
    s = cache.stats()
    assert s["pages_mapped"] > 4  # rows crossed pages during decode
    cache.close()


def test_rows_finish_and_errors(model):
    cache = mt.KVCache(model.config, max_batch_size=3, max_cache_len=8192, dtype=torch.bfloat16, rows=[0, 1],
                       memory_limit=8 << 21)
    k = cache.layers[0].keys
    cache.prepare(0, 8)
    k[0, :, :8].fill_(1.5)
    k[1, :, :8].fill_(2.5)
    with pytest.raises(torch.OutOfMemoryError):
        cache.prepare(8, 8000)
    assert bool((k[0, :, :8] == 1.5).all()) and bool((k[1, :, :8] == 2.5).all())
    with pytest.raises(memlake.InvalidArgumentError, match="past the reserved maximum"):
        cache.prepare(8192)
    with pytest.raises(memlake.InvalidArgumentError, match="out of range"):
        cache.finish_row(3)
    before = cache.stats()["mapped_bytes"]
    cache.finish_row(1)
    assert cache.stats()["mapped_bytes"] < before
    with pytest.raises(memlake.InvalidArgumentError, match="finished twice"):
        cache.finish_row(1)
    cache.add_row(1, start=100, length=20)
    with pytest.raises(memlake.InvalidArgumentError, match="already active"):
        cache.add_row(1)
    assert cache.active_rows() == [0, 1]
    cache.close()
