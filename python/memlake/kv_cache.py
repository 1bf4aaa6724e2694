"""memlake.torch.KVCache: a Hugging Face StaticCache whose tensors live in memlake virtual memory.

    cache = memlake.torch.KVCache(model.config, max_batch_size=8, max_cache_len=8192)
    out = model.generate(**inputs, past_key_values=cache, max_new_tokens=256)
    cache.stats()   # mapped vs live KV bytes

It IS a transformers StaticCache (a subclass): its layers are StaticLayer
subclasses that keep StaticLayer's update(), shapes and mask sizes, so eager
and compiled decode run exactly StaticCache's code and kernels (with
eager_reads="live", an uncompiled step reads only the positions written,
as DynamicCache does: see KVCache). Only where the key/value tensors live
differs: every layer's K and V are views of one
memlake virtual tensor reserved for max batch x max length, at addresses
that never move (so torch.compile / CUDA graphs work as with StaticCache),
with physical pages mapped only for the positions rows have reached
(memlake.kv_pages explains the layouts). Positions not reached yet read a
shared zero page; attention over the whole maximum length reads them, as it
reads StaticCache's zeros.

Pages are mapped outside the compiled step, ahead of it: generate() calls
the cache's get_mask_sizes() eagerly before each step (to build the mask),
and the cache maps there; a hand-written loop calls prepare(position)
before each step. Continuous batching: add_row(), finish_row(),
write_row(); finished rows give their pages back at once.

Errors: a position past max_cache_len is memlake.InvalidArgumentError (a
ValueError); out of memory while rows grow is memlake.torch.OutOfMemoryError
(a torch.OutOfMemoryError) and no row loses what it has; a row out of range,
finishing a row twice or adding an active row are InvalidArgumentError.
Beam search (reorder_cache) and sliding-window layers are not supported.
"""
import torch
from transformers.cache_utils import StaticCache, StaticLayer

from . import OutOfMemoryError as _MemlakeOOM
from .kv_pages import KVPages

__all__ = ["KVCache"]


class _Cai:
    """__cuda_array_interface__ of raw device memory (bytes), for torch.as_tensor."""

    def __init__(self, ptr, nbytes):
        self.__cuda_array_interface__ = {"shape": (nbytes,), "typestr": "|u1", "data": (ptr, False), "version": 3,
                                         "strides": None}


def _wrap(ptr, nbytes, shape, strides, dtype, device):
    """A tensor over device memory at ptr (not owned), with the given shape and strides (elements):
    its own storage of nbytes, so torch sees no aliasing between two such tensors. A CPU device
    (memlake's host backend, whose pages are host memory) wraps the bytes in place too."""
    if device.type == "cpu":
        import ctypes
        flat = torch.frombuffer((ctypes.c_uint8 * nbytes).from_address(ptr), dtype=torch.uint8)
        return torch.as_strided(flat.view(dtype), shape, strides)
    make = getattr(torch._C, "_construct_storage_from_data_pointer", None)
    if make is not None:
        storage = make(ptr, device, nbytes)
    else:  # older torch: a byte tensor over the memory, through __cuda_array_interface__
        storage = torch.as_tensor(_Cai(ptr, nbytes), device=device).untyped_storage()
    t = torch.empty(0, dtype=dtype, device=device)
    t.set_(storage, 0, shape, strides)
    return t


def _mark_static(t):
    """torch.compile: t's address never changes (no copy into a CUDA graph's buffers). Not in torch < 2."""
    dynamo = getattr(torch, "_dynamo", None)
    if dynamo is not None:
        dynamo.mark_static_address(t)


def _outside_graph(fn):
    """fn run eagerly from a compiled step (a graph break), where torch has torch.compiler.disable."""
    compiler = getattr(torch, "compiler", None)
    disable = getattr(compiler, "disable", None)
    return disable(fn) if disable is not None else fn


def _prepare_traced_step(cache, args, kwargs):
    """A step whose mask is made inside a compiled graph: its pages mapped, the whole length read."""
    cache._hook_step_at(args, kwargs, False)


_prepare_outside_graph = _outside_graph(_prepare_traced_step)  # made once, not while tracing


def _compiling():
    compiler = getattr(torch, "compiler", None)
    return bool(getattr(compiler, "is_compiling", None) and compiler.is_compiling())


def _init_layer(layer, keys, values, batch, heads, head_dim, dtype, device, bases=None):
    """What StaticLayer.lazy_initialization sets, over the given tensors: the attributes of
    transformers 5.17 (batch_size, k/v_head_dim, a device cumulative_length) and of earlier
    versions (max_batch_size, head_dim). bases: the [batch, max_len, heads, head_dim] tensors
    that keys/values are views of ("tokens" and "rows" layouts), which update() writes."""
    layer.dtype, layer.device = dtype, device
    layer.batch_size = layer.max_batch_size = batch
    layer.num_heads = heads
    layer.head_dim = layer.k_head_dim = layer.v_head_dim = head_dim
    layer.keys, layer.values = keys, values
    layer._bases = bases
    statics = [*(bases or ()), keys, values]  # the views too: StaticLayer's own update writes them (no device counter)
    if isinstance(getattr(layer, "cumulative_length", None), torch.Tensor):
        layer.cumulative_length = layer.cumulative_length.to(device)
        statics.append(layer.cumulative_length)
    for t in statics:
        _mark_static(t)
    layer.is_initialized = True


class _VirtualLayer(StaticLayer):
    """StaticLayer over memlake memory: get_mask_sizes(), get_seq_length() are StaticLayer's, and so is
    update() in "heads" (and where transformers has no device counter); "tokens" and "rows" write
    their bases (below)."""

    def lazy_initialization(self, key_states, *args, **kwargs):  # initialised by the cache, up front
        self.is_initialized = True

    def update(self, key_states, value_states, *args, **kwargs):
        """Eager: StaticLayer's own update (the same operators as StaticCache's, on the views). Compiled,
        "tokens" and "rows" layouts: StaticLayer's update (positions from the layer's device counter)
        written into the [batch, max_len, heads, head_dim] bases (contiguous in "rows"), and the
        [batch, heads, max_len, head_dim] views returned are made from them inside the step. A compiled
        step then mutates a contiguous graph input in place, as StaticCache's does; an in-place update
        of the permuted view itself is compiled into a copy of the whole tensor per step (docs/results.md
        §17a). Eager has no such copy, and the base path's extra operators would cost host time in a
        decode step that is host-bound (results §19d)."""
        counter = getattr(self, "cumulative_length", None)
        if not getattr(self, "_bases", None) or not isinstance(counter, torch.Tensor) or not _compiling():
            keys, values = super().update(key_states, value_states, *args, **kwargs)
        else:
            kb, vb = self._bases
            n = key_states.shape[-2]
            positions = torch.arange(n, device=kb.device) + counter
            counter.add_(n)
            kb.index_copy_(1, positions, key_states.transpose(1, 2))
            vb.index_copy_(1, positions, value_states.transpose(1, 2))
            keys, values = kb.transpose(1, 2), vb.transpose(1, 2)
        end = self._owner._live_end_for(self)  # live reads: where the mask of this step ends too
        return (keys, values) if end is None else (keys[:, :, :end], values[:, :, :end])

    def reset(self):
        self._owner.reset()

    def get_mask_sizes(self, *args, **kwargs):
        if not self._owner._in_mask_sizes:  # asked directly, not through the cache's (which ran the hook)
            self._owner._eager_hook(*args, **kwargs)
        return self._owner._mask_sizes(super().get_mask_sizes(*args, **kwargs))

    def reorder_cache(self, beam_idx):
        raise NotImplementedError("memlake.torch.KVCache does not support beam search (reorder_cache)")

    def offload(self):
        raise NotImplementedError("memlake.torch.KVCache does not offload layers")


class KVCache(StaticCache):
    """StaticCache over memlake virtual memory. See the module's doc.

    config: the model's config. max_batch_size, max_cache_len: what is
    reserved (virtual memory only). dtype, device: of the K/V tensors
    (default: config's torch_dtype / the current CUDA device). layout:
    "rows" (each layer's K/V a [batch, max_len, heads, head_dim] block;
    group=N: N consecutive K/V tensors share a region of pages per row; the
    default is "rows" with group=2, a layer's K and V together: a page per
    (row, layer) of slack, StaticCache's greedy tokens in eager decode and
    its compiled speed), "tokens" (one region per row holding every layer's
    K/V: slack at most a page per row, the most rows under a budget, compiled
    decode a few percent slower) or "heads" (StaticCache's own contiguous
    layout; slack up to a page per head). rows: the rows active at the start (default all, from position 0).
    memory_limit: cap on the physical bytes (0 = none). margin: positions
    ahead at which a row's next page is mapped. eager_reads: what an
    uncompiled step's attention reads. "full" (the default): StaticCache's
    every position up to max_cache_len under a mask, the same shapes and
    kernels as StaticCache, and generate() compiles the step by itself as it
    does for StaticCache. "live": only the positions written so far (the
    views end there; their addresses do not move), so the mask sizes are the
    live length and, with no padding, transformers needs no mask: SDPA then
    reads grouped K/V heads directly instead of copying them out to every
    query head (repeat_kv), as with DynamicCache. The cache then says it is
    not compileable outside a compiled step (transformers decides the mask on
    that), so generate() leaves the step uncompiled. A step whose mask is
    made inside a graph the caller compiled reads every position, as "full"
    does, and maps its pages in a graph break (torch.compile(fullgraph=True)
    refuses that: such steps need "full"); compiled layers under an
    uncompiled model read the live length too (a recompilation per length).
    Each new length is a new attention shape: torch 2.11's cuDNN attention,
    SDPA's first choice on Hopper, builds a plan for every length not decoded
    before (a 52-56 ms step instead of 19), and in generation every step is a
    new length. Generate with live reads under
    torch.nn.attention.sdpa_kernel([SDPBackend.FLASH_ATTENTION,
    SDPBackend.EFFICIENT_ATTENTION]), whose kernels plan nothing per length
    (docs/results.md §24a, §25a)."""

    def __init__(self, config, max_batch_size, max_cache_len, dtype=None, device=None, layout=None,
                 rows=None, memory_limit=0, margin=2, allocator=None, group=None, eager_reads="full"):
        if eager_reads not in ("full", "live"):
            from . import InvalidArgumentError
            raise InvalidArgumentError(f"KV cache: eager_reads must be 'full' or 'live', got {eager_reads!r}")
        self._live = eager_reads == "live"
        # Live reads: where the step the hook prepared outside a compiled graph ends (None: this
        # step reads the whole length, mask and K/V alike), and the steps the hook prepared (each
        # layer takes _live_end once per step).
        self._live_end = None
        self._hook_step = 0
        self._in_mask_sizes = False  # the cache's get_mask_sizes ran the hook; its layer's need not
        self._compileable = None     # an explicit is_compileable = ... (None: the mode decides)
        if layout is None:  # the default: "rows", a layer's K and V in one region (results §19d)
            layout, group = "rows", (2 if group is None else group)
        try:
            super().__init__(config=config, max_cache_len=max_cache_len)
        except TypeError:  # versions that take the batch size up front
            super().__init__(config=config, max_batch_size=max_batch_size, max_cache_len=max_cache_len)
        self._compileable = None  # what a version's __init__ may have assigned: the mode decides
        text = config.get_text_config(decoder=True) if hasattr(config, "get_text_config") else config
        if any(type(layer) is not StaticLayer for layer in self.layers):
            raise NotImplementedError("memlake.torch.KVCache supports full-attention layers only "
                                      f"(got {sorted({type(x).__name__ for x in self.layers})})")
        heads = getattr(text, "num_key_value_heads", None) or text.num_attention_heads
        head_dim = getattr(text, "head_dim", None) or text.hidden_size // text.num_attention_heads
        dtype = dtype or getattr(text, "torch_dtype", None) or getattr(text, "dtype", None) or torch.float32
        if isinstance(dtype, str):
            dtype = getattr(torch, dtype)
        device = torch.device(device if device is not None else "cuda")
        if device.type == "cuda" and device.index is None:
            device = torch.device("cuda", torch.cuda.current_device())
        self._device = device
        itemsize = torch.empty(0, dtype=dtype).element_size()
        self._pages = KVPages(
            dict(layers=len(self.layers), batch=max_batch_size, heads=heads, head_dim=head_dim,
                 max_len=max_cache_len, itemsize=itemsize, order=layout, group=group),
            device=device.index or 0, memory_limit=memory_limit, allocator=allocator, rows=rows, margin=margin,
            stream_fn=(lambda: torch.cuda.current_stream(device).cuda_stream) if device.type == "cuda" else None)
        g, vt = self._pages.geometry, self._pages.vt
        layers = []
        for i in range(len(self.layers)):
            layer = _VirtualLayer(max_cache_len=max_cache_len)
            layer._owner = self
            kv, bases = [], []
            for which in (0, 1):
                off, shape, strides = g.tensor(i, which)
                span = (sum((s - 1) * st for s, st in zip(shape, strides)) + 1) * itemsize
                if layout in ("tokens", "rows"):  # the [batch, max_len, heads, head_dim] block, and the view of it
                    b, h, n, d = shape
                    bases.append(_wrap(vt.base + off, span, (b, n, h, d),
                                       (strides[0], strides[2], strides[1], strides[3]), dtype, device))
                    kv.append(bases[-1].transpose(1, 2))
                else:
                    kv.append(_wrap(vt.base + off, span, shape, strides, dtype, device))
            _init_layer(layer, kv[0], kv[1], max_batch_size, heads, head_dim, dtype, device, bases)
            layers.append(layer)
        self.layers = layers
        self._last_position = None
        self.hook_calls = 0  # steps prepared by the eager hook

    # ---- the eager hook: generate() builds each step's mask outside the compiled forward
    def position(self):
        """The next position a step writes (StaticLayer's own counter; None where the version has none)."""
        c = getattr(self.layers[0], "cumulative_length", None)
        return int(c) if c is not None else None

    def set_position(self, position):
        """Sets the next position every layer writes (continuous batching: rows share it)."""
        for layer in self.layers:
            c = getattr(layer, "cumulative_length", None)
            if isinstance(c, torch.Tensor):
                c.fill_(position)
            elif c is not None:
                layer.cumulative_length = position

    def _eager_hook(self, *args, **kwargs):
        """transformers 5.17 asks get_mask_sizes(query_length, layer_idx) before each step (positions come
        from the layers' counter); earlier versions pass cache_position (a tensor). Inside a compiled
        step: nothing for "full" (the pages were mapped by the eager mask generate() builds first, or by
        prepare()); with live reads generate() builds no eager mask, so the hook runs there as a graph
        break (a fullgraph compile refuses it: compile a live-reads cache's steps with prepare() per step,
        or use "full"), and that step reads the whole length."""
        if _compiling():
            if self._live:
                _prepare_outside_graph(self, args, kwargs)
            return
        self._hook_step_at(args, kwargs, self._live)

    def _hook_step_at(self, args, kwargs, live):
        """Maps what the step asking for its mask sizes writes; with `live`, its K/V and mask end there."""
        query = args[0] if args else kwargs.get("query_length", kwargs.get("cache_position"))
        if isinstance(query, torch.Tensor) and query is self._last_position and query.numel():
            return  # asked again in the same step
        self._live_end = None  # whatever follows, no earlier step's end
        if query is None:
            return
        if isinstance(query, torch.Tensor):
            if query.numel() == 0:
                return
            self._last_position = query
            position, n = int(query.reshape(-1)[0]), query.numel()
        else:
            n = int(query)
            position = self.position()  # an 8-byte read: generate has already waited for the last step
            if position is None or n <= 0:
                return
        self.hook_calls += 1
        self.prepare(position, n)
        self._hook_step += 1
        if live:
            self._live_end = position + n

    # ---- live reads (eager_reads="live")
    @property
    def is_compileable(self):
        """transformers builds a mask for a compileable cache whatever the lengths; live reads need none
        outside a compiled step (a compiled step reads every position, with the mask)."""
        if self._compileable is not None:
            return self._compileable
        return not self._live or _compiling()

    @is_compileable.setter
    def is_compileable(self, value):
        self._compileable = None if value is None else bool(value)

    def _mask_sizes(self, sizes):
        """The live length as the mask's length where this step's K/V end there (the hook decided)."""
        if not self._live or self._live_end is None:
            return sizes
        return (self._live_end, *tuple(sizes)[1:])

    def _live_end_for(self, layer):
        """Where `layer`'s K/V end in this step: the hook's live end, once per step and layer. None (the
        whole length, as StaticCache's) where the hook did not prepare a live step: inside a compiled
        step, or a step the hook never saw (a mask the caller made): a layer that already took this
        end is a new step's, and then nothing of the old end is used again."""
        if not self._live or self._live_end is None:
            return None
        if getattr(layer, "_seen_step", 0) == self._hook_step:
            self._live_end = None
            return None
        layer._seen_step = self._hook_step
        return self._live_end

    def get_mask_sizes(self, *args, **kwargs):
        self._eager_hook(*args, **kwargs)
        self._in_mask_sizes = True
        try:
            return self._mask_sizes(super().get_mask_sizes(*args, **kwargs))
        finally:
            self._in_mask_sizes = False

    def prepare(self, position, count=1):
        """Maps what a step writing positions [position, position+count) of the active rows needs."""
        try:
            self._pages.prepare(position, count)
        except _MemlakeOOM as e:
            from .torch import OutOfMemoryError
            raise OutOfMemoryError(f"memlake KV cache: {e}") from None

    # ---- continuous batching
    def add_row(self, row, start=0, length=0):
        """Row `row` begins a sequence; positions [start, start+length) get pages (fill them with write_row)."""
        try:
            self._pages.add_row(row, start, length)
        except _MemlakeOOM as e:
            from .torch import OutOfMemoryError
            raise OutOfMemoryError(f"memlake KV cache: {e}") from None

    def finish_row(self, row):
        """Row `row`'s sequence ends; its pages go back (its later writes go to a sink page)."""
        self._pages.finish_row(row)

    def write_row(self, row, start, keys, values):
        """Copies per-layer keys/values [heads, n, head_dim] (or [1, heads, n, head_dim]) into positions
        [start, start+n) of `row` (which add_row mapped)."""
        for layer, k, v in zip(self.layers, keys, values):
            k = k[0] if k.dim() == 4 else k
            v = v[0] if v.dim() == 4 else v
            n = k.shape[-2]
            layer.keys[row, :, start:start + n].copy_(k)
            layer.values[row, :, start:start + n].copy_(v)

    def active_rows(self):
        return [r for r, a in enumerate(self._pages.active) if a]

    def reset(self):
        """Every active row starts again at position 0: pages go back, reads give zeros."""
        self._pages.reset()
        self.set_position(0)
        self._live_end = None

    def reorder_cache(self, beam_idx):
        raise NotImplementedError("memlake.torch.KVCache does not support beam search (reorder_cache)")

    def stats(self):
        """Mapped vs live KV bytes (and the bound: live + one page per (row, layer, K/V))."""
        return self._pages.stats()

    @property
    def virtual_tensor(self):
        return self._pages.vt

    def close(self):
        """Frees the memory (after synchronising); the cache's tensors become invalid."""
        self._pages.close()
