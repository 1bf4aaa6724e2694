"""memlake for PyTorch, without rebuilding PyTorch.

Two ways in:

enable(**options)
    Replaces PyTorch's CUDA allocator for the whole process
    (torch.cuda.memory.change_current_allocator). Every tensor comes from
    memlake, which stitches free pages whenever nothing cached fits: this is
    what brings the reserved memory down to what is live. It must run before
    the first CUDA allocation. torch.cuda.memory_stats() and friends are
    answered by memlake (enable() installs memlake's versions of
    torch.cuda.memory_stats, memory_allocated, max_memory_allocated,
    memory_reserved, max_memory_reserved, reset_peak_memory_stats and
    memory_summary: PyTorch's pluggable allocator has none); memlake.stats()
    is the full view. An out-of-memory raises torch.OutOfMemoryError
    ("memlake: CUDA out of memory. ..." with memlake's summary): enable()
    compiles a small wrapper against the installed PyTorch on first use
    (memlake._torch_oom, cached; MEMLAKE_TORCH_OOM=0 skips it). Where it
    cannot be built the error is a RuntimeError with the same message, and
    memlake.torch.oom_errors() turns it into memlake.torch.OutOfMemoryError,
    a subclass of torch.OutOfMemoryError. CUDA graphs (torch.cuda.graph,
    torch.compile(mode="reduce-overhead")) work: enable() wraps
    torch.cuda.CUDAGraph so that memlake learns of each capture and its
    pool (memlake_capture_begin/end) and of the graph's end
    (memlake_graph_pool_release, at reset() or when the graph is collected);
    the memory a capture allocates stays the graph's until then
    (docs/design/graphs.md). Inductor's CUDA graph trees are turned off:
    they need the native allocator's checkpoint API, which
    CUDAPluggableAllocator lacks; reduce-overhead then captures one graph
    per compiled function through torch.cuda.graph.

pool(**options)
    A context manager: only the code inside allocates through memlake, via
    torch.cuda.MemPool. PyTorch's caching allocator stays on top and asks
    memlake for whole segments, so torch.cuda.memory_stats(), graphs and
    torch.OutOfMemoryError work as usual. The trade-off: PyTorch keeps its
    freed segments cached and returns them to memlake only when it runs out
    (it then frees its cache and retries, and memlake stitches what came
    back) or on torch.cuda.empty_cache(); so the saving is smaller than
    with enable() except under memory pressure.
"""
import contextlib
import threading
import weakref

import torch as _torch

from . import Error, OutOfMemoryError as _MemlakeOOM, _check, _default, _lib, _native, configure

__all__ = ["enable", "pool", "enabled", "oom_errors", "OutOfMemoryError", "is_oom", "tier", "share_weights",
           "load_safetensors_shared"]

_OOM_PREFIX = "memlake: CUDA out of memory"


_TorchOOM = getattr(_torch, "OutOfMemoryError", None) or _torch.cuda.OutOfMemoryError  # torch < 2: only the latter


class OutOfMemoryError(_MemlakeOOM, _TorchOOM):
    """Out of memory in memlake, catchable as torch.OutOfMemoryError."""


_state = {"enabled": None, "pool_allocator": None}


def _pluggable(malloc_name):
    return _torch.cuda.memory.CUDAPluggableAllocator(_native.path, malloc_name, "memlake_torch_free")


def _oom_allocator():
    """memlake's functions wrapped so that out-of-memory is torch.OutOfMemoryError (memlake._torch_oom);
    None, said once, where the wrapper cannot be built."""
    import os
    if os.environ.get("MEMLAKE_TORCH_OOM", "1") == "0":
        return None
    from . import _torch_oom
    try:
        lib = _torch_oom.build()
    except Exception as e:  # no compiler, no ninja, no headers: the RuntimeError path still works
        import warnings
        warnings.warn("memlake: out of memory will surface as RuntimeError (memlake.torch.oom_errors() converts "
                      f"it): the torch.OutOfMemoryError wrapper could not be built: {str(e)[:300]}", stacklevel=3)
        return None
    return _torch.cuda.memory.CUDAPluggableAllocator(lib, _torch_oom.MALLOC, _torch_oom.FREE)


def _too_late(e):
    return Error("memlake.torch.enable() came too late: PyTorch's CUDA allocator is already in use "
                 f"({e}); call it before the first CUDA allocation and before torch.cuda.set_device (which "
                 "sets PyTorch's allocator up), or use memlake.torch.pool()")


class _DirectAllocator:
    """What enable() keeps for memlake's direct allocator (memlake._torch_direct): the loaded library."""

    name = "memlake-direct"

    def __init__(self, path, lib):
        self.path, self.lib = path, lib

    def allocator(self):
        """PyTorch's handle of the current allocator, as CUDAPluggableAllocator.allocator() gives."""
        return _torch._C._cuda_getAllocator()

    def installed(self):
        return bool(self.lib.memlake_torch_direct_installed())

    def __repr__(self):
        return f"<memlake direct CUDA allocator {self.path}>"


_direct = {"warned": False}


def _off(value):
    return str(value).strip().lower() in ("0", "false", "no", "off")


def _direct_allocator(choice):
    """memlake installed as PyTorch's CUDAAllocator itself (memlake._torch_direct; issue 27): a
    _DirectAllocator, or None where it is turned off (torch_direct=0, MEMLAKE_TORCH_DIRECT=0) or
    cannot be built or installed (said once), for the pluggable allocator to follow. Raises the
    too-late Error where PyTorch's allocator is already set up (the pluggable one would be refused too)."""
    import ctypes
    import os
    if choice is None:
        choice = os.environ.get("MEMLAKE_TORCH_DIRECT", "0")
    if _off(choice):
        return None
    from . import _torch_oom
    try:
        path = _torch_oom.build_direct()
        lib = ctypes.CDLL(path)
        lib.memlake_torch_direct_install.argtypes = [ctypes.c_int]
        lib.memlake_torch_direct_install.restype = ctypes.c_int
        lib.memlake_torch_direct_error.restype = ctypes.c_char_p
        lib.memlake_torch_direct_installed.restype = ctypes.c_int
        # MEMLAKE_TORCH_OOM=0: out of memory stays libmemlake's RuntimeError, as on the pluggable path.
        convert_oom = os.environ.get("MEMLAKE_TORCH_OOM", "1") != "0"
        if lib.memlake_torch_direct_install(int(convert_oom)) != 0:
            why = (lib.memlake_torch_direct_error() or b"").decode(errors="replace")
            if "already initialized" in why:
                raise _too_late(why)
            raise RuntimeError(why)
    except Error:
        raise
    except Exception as e:  # no compiler, ninja, headers, or another PyTorch interface: the pluggable path
        if not _direct["warned"]:
            _direct["warned"] = True
            import warnings
            warnings.warn("memlake: PyTorch's allocator goes through CUDAPluggableAllocator (slower per tensor): "
                          f"memlake's direct allocator could not be built or installed: {str(e)[:300]}",
                          stacklevel=3)
        return None
    return _DirectAllocator(path, lib)


def _configure_default(options):
    """Applies options to the default allocator, which must not exist yet if options are given."""
    opts = dict(options)
    opts.setdefault("backend", "cuda")
    try:
        configure(**opts)
    except Error as e:
        if "already exists" in str(e) and not options:
            return  # configured earlier (e.g. by a previous call): nothing asked for, nothing to change
        raise


def enabled():
    """True once enable() has swapped PyTorch's allocator."""
    return _state["enabled"] is not None


def enable(torch_direct=None, **options):
    """Makes memlake PyTorch's CUDA allocator for this process.

    options: any key of `memlake options` (memory_cap="24G", granularity="2M", ...).
    torch_direct: memlake as a direct subclass of PyTorch's CUDAAllocator (memlake._torch_direct,
    compiled on first use like the out-of-memory wrapper) rather than through
    CUDAPluggableAllocator, which costs each tensor a std::function call, a lock and a map
    entry each way; off by default until measured on a GPU ($MEMLAKE_TORCH_DIRECT=1 or
    torch_direct=True turns it on). Where it cannot
    be built or installed, enable() says so once and takes the pluggable allocator.
    Raises memlake.Error if PyTorch already allocated CUDA memory."""
    if enabled():
        if options or torch_direct is not None:
            raise Error("memlake.torch.enable() was already called; options can only be given the first time")
        return
    if _torch.cuda.is_initialized() and _torch.cuda.memory_reserved() > 0:
        raise Error("memlake.torch.enable() must run before the first CUDA allocation of the process "
                    f"(PyTorch already reserved {_torch.cuda.memory_reserved()} bytes); call it at the top of "
                    "the program, or use memlake.torch.pool() for part of it")
    _configure_default(options)
    alloc = _direct_allocator(torch_direct)
    if alloc is None:
        alloc = _oom_allocator() or _pluggable("memlake_torch_malloc")
        try:
            _torch.cuda.memory.change_current_allocator(alloc)
        except RuntimeError as e:
            raise _too_late(e) from None
    _state["enabled"] = alloc
    _announce_graphs()
    _answer_torch_stats()


# ---- torch.cuda's memory statistics under enable(), answered by memlake.

def torch_stats_functions():
    """torch.cuda.memory_stats() and friends over memlake's statistics (same key names where the
    meaning matches; memlake.* keys for the rest). PyTorch's pluggable allocator answers none of
    them (a RuntimeError), so enable() installs these in torch.cuda and torch.cuda.memory: code
    and libraries that read torch.cuda.max_memory_allocated() and the like keep working."""
    import collections
    from . import summary as _summary

    def dev(device):
        if device is None:
            return _torch.cuda.current_device()
        if isinstance(device, _torch.device):
            return device.index if device.index is not None else _torch.cuda.current_device()
        if isinstance(device, str):
            return dev(_torch.device(device))
        return int(device)

    def memory_stats(device=None):
        return collections.OrderedDict(sorted(_default().stats(dev(device)).items()))

    def stat(name, key):
        def f(device=None):
            return _default().stats(dev(device))[key]
        f.__name__ = name
        return f

    def reset_peak_memory_stats(device=None):
        _default().reset_peak_stats(dev(device))

    def memory_summary(device=None, abbreviated=False):
        return _summary(dev(device))

    out = {name: stat(name, key) for name, key in (
        ("memory_allocated", "allocated_bytes.all.current"), ("max_memory_allocated", "allocated_bytes.all.peak"),
        ("memory_reserved", "reserved_bytes.all.current"), ("max_memory_reserved", "reserved_bytes.all.peak"))}
    return dict(out, memory_stats=memory_stats, reset_peak_memory_stats=reset_peak_memory_stats,
                reset_max_memory_allocated=reset_peak_memory_stats, memory_summary=memory_summary)


def _answer_torch_stats():
    import torch.cuda.memory as m
    for name, f in torch_stats_functions().items():
        setattr(m, name, f)
        setattr(_torch.cuda, name, f)


# ---- CUDA graphs under enable(): tell memlake about every capture and its pool.

_graphs = {"patched": False, "lock": threading.Lock()}


def _pool_key(pool):
    """PyTorch's mempool id (a pair of integers) as one 64-bit number."""
    a, b = (int(x) for x in pool)
    return ((a & 0xFFFFFFFF) << 32 | (b & 0xFFFFFFFF)) & 0xFFFFFFFFFFFFFFFF


def _default_handle():
    h = _lib.memlake_default()
    if not h:
        _default()  # raises with memlake's reason
    return h


def _release(device, key):
    h = _lib.memlake_default()
    if h:
        _lib.memlake_graph_pool_release(h, device, key)  # at exit or from a finalizer: nothing to raise to


class _Once:
    """Calls f(*args) once, like weakref.finalize's call."""

    def __init__(self, f, *args):
        self.f, self.args = f, args

    def __call__(self):
        f, self.f = self.f, None
        if f:
            f(*self.args)


def _announce_graphs():
    """Wraps torch.cuda.CUDAGraph's capture_begin/capture_end/reset (once per process)."""
    with _graphs["lock"]:
        if _graphs["patched"]:
            return
        G = _torch.cuda.CUDAGraph
        begin, end, reset = G.capture_begin, G.capture_end, G.reset

        def capture_begin(self, *args, **kwargs):
            # Restores still arriving (tier()'s prefetches) are waited for on their streams before
            # the capture: no wait on a copy from outside may go into the graph.
            _check(_lib.memlake_restore_ready(_default_handle(), None, _torch.cuda.current_device()))
            # The graph's pool, known before the capture (torch >= 2.10 refuses pool() until a capture
            # has ended): the caller's, else a new one made here and handed to PyTorch.
            pool = args[0] if args else kwargs.get("pool")
            if pool is None:
                pool = _torch.cuda.graph_pool_handle()
                if args:
                    args = (pool,) + tuple(args[1:])
                else:
                    kwargs["pool"] = pool
            begin(self, *args, **kwargs)
            device = _torch.cuda.current_device()
            stream = _torch.cuda.current_stream(device).cuda_stream
            key = _pool_key(pool)
            _check(_lib.memlake_capture_begin(_default_handle(), device, stream, key))
            self._memlake_capture = (device, stream)
            # One release per capture: at reset(), or when the graph is collected.
            try:
                fin = weakref.finalize(self, _release, device, key)
                fin.atexit = False  # at exit the process gives everything back anyway
            except TypeError:  # no weak references to this graph type: released at reset() only
                fin = _Once(_release, device, key)
            self.__dict__.setdefault("_memlake_releases", []).append(fin)

        def capture_end(self, *args, **kwargs):
            try:
                return end(self, *args, **kwargs)
            finally:
                cap = self.__dict__.pop("_memlake_capture", None)
                if cap is not None:
                    _check(_lib.memlake_capture_end(_default_handle(), cap[0], cap[1]))

        def reset_(self, *args, **kwargs):
            try:
                return reset(self, *args, **kwargs)
            finally:
                for fin in self.__dict__.pop("_memlake_releases", []):
                    fin()

        G.capture_begin, G.capture_end, G.reset = capture_begin, capture_end, reset_
        _graphs["patched"] = True
    # Inductor's CUDA graph trees read and restore the native allocator's
    # state (getCheckpointState / setCheckpointPoolState), which
    # CUDAPluggableAllocator does not implement; without trees,
    # mode="reduce-overhead" captures each compiled graph with torch.cuda.graph.
    try:
        import torch._inductor.config as _ic
        _ic.triton.cudagraph_trees = False
    except Exception:  # no inductor in this build of PyTorch: nothing to configure
        pass


@contextlib.contextmanager
def pool(**options):
    """Allocations inside the `with` block come from memlake segments (torch.cuda.MemPool).

    Yields the torch.cuda.MemPool; keep it alive as long as its tensors live."""
    if _state["pool_allocator"] is None:
        _configure_default(options)
        _state["pool_allocator"] = _pluggable("memlake_torch_pool_malloc")
    elif options:
        raise Error("memlake.torch.pool(): options can only be given the first time")
    mp = _torch.cuda.MemPool(_state["pool_allocator"].allocator())
    with _torch.cuda.use_mem_pool(mp):
        yield mp


def is_oom(exc):
    """True for an exception that is memlake's out-of-memory, whatever PyTorch wrapped it in."""
    return isinstance(exc, (_MemlakeOOM, _TorchOOM)) or (
        isinstance(exc, RuntimeError) and str(exc).lstrip().startswith(_OOM_PREFIX))


@contextlib.contextmanager
def oom_errors():
    """Re-raises memlake's out-of-memory RuntimeError as memlake.torch.OutOfMemoryError."""
    try:
        yield
    except OutOfMemoryError:
        raise
    except RuntimeError as e:
        if str(e).lstrip().startswith(_OOM_PREFIX):
            raise OutOfMemoryError(str(e)) from e
        raise


def stats(device=None):
    """memlake.stats() for the current CUDA device by default."""
    return _default().stats(_torch.cuda.current_device() if device is None else device)


def tier(model, optimizer, budget=None, host="auto", **kw):
    """Trains past GPU memory: optimizer states leave the GPU between their
    uses and come back ahead of them, planned from the first iteration
    (memlake.tiering; docs/design/tiering.md). Needs enable() first.
    Returns a memlake.tiering.Tiering (stats(), profile(), close())."""
    from .tiering import tier as _tier
    return _tier(model, optimizer, budget=budget, host=host, **kw)


def __getattr__(name):
    # memlake.torch.KVCache imports transformers on first use only.
    if name == "KVCache":
        from .kv_cache import KVCache
        return KVCache
    raise AttributeError(name)
# ---- Weights shared between processes (the memory daemon, `memlake daemon`)

_ALIGN = 512


class SharedWeights:
    """What share_weights returns: the shared buffer (id, nbytes, address) and the number of tensors moved into it."""

    def __init__(self, buffer, tensors, first=None):
        self.buffer, self.tensors = buffer, tensors
        self.id, self.nbytes = buffer.id, buffer.nbytes

    def __repr__(self):
        return f"SharedWeights(id={self.id[:16]}..., nbytes={self.nbytes}, tensors={self.tensors})"


def _layout(tensors):
    off, out = 0, []
    for t in tensors:
        n = t.numel() * t.element_size()
        out.append((t, off, n))
        off = (off + n + _ALIGN - 1) // _ALIGN * _ALIGN
    return out, max(off, 1)


def _view(base, off, n, dtype, shape):
    return base[off:off + n].view(dtype).view(shape)


def share_weights(model, device=None, allocator=None):
    """Moves every parameter of `model` (on one CUDA device) into one read-only
    buffer shared through the memory daemon: processes with the same weights
    keep one copy on the GPU. The parameters' values do not change; writing to
    them faults (the CUDA context of the writing process is lost; nobody else's
    memory changes). Returns SharedWeights.

    The buffer's content id is a BLAKE2b hash of the packed bytes (computed on
    the host over a copy through pinned memory). Its first publisher copies
    them into the daemon's pages; later processes map those pages and free
    their own copies."""
    from . import daemon as _daemon

    params, seen = [], set()
    for p in model.parameters():
        if p.data_ptr() in seen:
            continue
        seen.add(p.data_ptr())
        params.append(p)
    if not params:
        raise ValueError("share_weights: the model has no parameters")
    dev = params[0].device if device is None else _torch.device(device)
    if dev.type != "cuda" or any(p.device != dev for p in params):
        raise ValueError(f"share_weights: every parameter must be on one CUDA device ({dev})")
    # Offsets only: no reference to the private copies may outlive the copy
    # loop, or empty_cache() below could not give their memory back.
    layout, total = _layout([p.data for p in params])
    metas = [(off, n, t.dtype, t.shape) for t, off, n in layout]
    flat = _torch.empty(total, dtype=_torch.uint8, device=dev)
    flat.zero_()  # the alignment gaps too: the id covers every byte
    for t, off, n in layout:
        flat[off:off + n].copy_(t.contiguous().view(-1).view(_torch.uint8))
    del layout, t
    _torch.cuda.synchronize(dev)
    buf = _daemon.share(flat, total, device=dev.index or 0, allocator=allocator)
    del flat
    base = _torch.as_tensor(buf, device=dev)
    with _torch.no_grad():
        for p, (off, n, dtype, shape) in zip(params, metas):
            p.data = _view(base, off, n, dtype, shape)
    del base, p
    _torch.cuda.synchronize(dev)
    _torch.cuda.empty_cache()  # the private copies go back to the driver
    return SharedWeights(buf, len(params), None)


_ST_DTYPES = {"F64": "float64", "F32": "float32", "F16": "float16", "BF16": "bfloat16", "I64": "int64",
              "I32": "int32", "I16": "int16", "I8": "int8", "U8": "uint8", "BOOL": "bool"}


def load_safetensors_shared(path, device="cuda", allocator=None):
    """Loads a .safetensors file's tensors straight into pages shared through the
    memory daemon and returns {name: tensor} (read-only, on `device`).

    The file's data section is hashed on the host; when another process
    published the same bytes they are mapped without copying, else they are
    copied to the GPU once and published."""
    import json as _json
    import mmap
    import struct

    from . import UnavailableError, daemon as _daemon

    dev = _torch.device(device)
    if dev.index is None:
        dev = _torch.device("cuda", _torch.cuda.current_device())
    with open(path, "rb") as f:
        m = mmap.mmap(f.fileno(), 0, access=mmap.ACCESS_READ)
    try:
        if len(m) < 8:
            raise ValueError(f"{path}: not a safetensors file")
        (hlen,) = struct.unpack("<Q", m[:8])
        if hlen > min(len(m) - 8, 100 << 20):
            raise ValueError(f"{path}: header length {hlen} is implausible")
        header = _json.loads(bytes(m[8:8 + hlen]))
        data_off = 8 + hlen
        n = len(m) - data_off
        if n <= 0:
            raise ValueError(f"{path}: no tensor data")
        host = _torch.frombuffer(m, dtype=_torch.uint8, offset=data_off, count=n)
        id = _daemon.content_id(host.data_ptr(), n, device=dev.index, allocator=allocator)
        try:
            buf = _daemon.attach(id, device=dev.index, allocator=allocator)
        except UnavailableError:
            staging = _torch.empty(n, dtype=_torch.uint8, device=dev)
            staging.copy_(host)
            _torch.cuda.synchronize(dev)
            buf = _daemon.share(staging, n, device=dev.index, id=id, allocator=allocator)
            del staging
        del host
    finally:
        try:
            m.close()
        except BufferError:
            pass
    base = _torch.as_tensor(buf, device=dev)
    out = {}
    for name, meta in header.items():
        if name == "__metadata__":
            continue
        dtype = getattr(_torch, _ST_DTYPES.get(meta.get("dtype"), ""), None)
        a, b = meta["data_offsets"]
        if dtype is None or not (0 <= a <= b <= n):
            raise ValueError(f"{path}: tensor {name!r} has a bad dtype or offsets")
        out[name] = base[a:b].view(dtype).view(meta["shape"])
    return out
