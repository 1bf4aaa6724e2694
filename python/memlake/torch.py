"""memlake for PyTorch, without rebuilding PyTorch.

Two ways in:

enable(**options)
    Replaces PyTorch's CUDA allocator for the whole process
    (torch.cuda.memory.change_current_allocator). Every tensor comes from
    memlake, which stitches free pages whenever nothing cached fits: this is
    what brings the reserved memory down to what is live. It must run before
    the first CUDA allocation. torch.cuda.memory_stats() and friends are
    then unavailable (PyTorch's limitation); use memlake.stats() and
    memlake.summary(). An out-of-memory surfaces from PyTorch as a
    RuntimeError("memlake: CUDA out of memory. ..."); wrap code in
    memlake.torch.oom_errors() to get memlake.torch.OutOfMemoryError, a
    subclass of torch.OutOfMemoryError. CUDA graph capture is refused with
    a clear error (never silently corrupted): capture under pool() instead.

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

import torch as _torch

from . import Error, OutOfMemoryError as _MemlakeOOM, _default, _lib, _native, configure

__all__ = ["enable", "pool", "enabled", "oom_errors", "OutOfMemoryError", "is_oom", "tier"]

_OOM_PREFIX = "memlake: CUDA out of memory"


class OutOfMemoryError(_MemlakeOOM, _torch.OutOfMemoryError):
    """Out of memory in memlake, catchable as torch.OutOfMemoryError."""


_state = {"enabled": None, "pool_allocator": None}


def _pluggable(malloc_name):
    return _torch.cuda.memory.CUDAPluggableAllocator(_native.path, malloc_name, "memlake_torch_free")


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


def enable(**options):
    """Makes memlake PyTorch's CUDA allocator for this process.

    options: any key of `memlake options` (memory_cap="24G", granularity="2M", ...).
    Raises memlake.Error if PyTorch already allocated CUDA memory."""
    if enabled():
        if options:
            raise Error("memlake.torch.enable() was already called; options can only be given the first time")
        return
    if _torch.cuda.is_initialized() and _torch.cuda.memory_reserved() > 0:
        raise Error("memlake.torch.enable() must run before the first CUDA allocation of the process "
                    f"(PyTorch already reserved {_torch.cuda.memory_reserved()} bytes); call it at the top of "
                    "the program, or use memlake.torch.pool() for part of it")
    _configure_default(options)
    alloc = _pluggable("memlake_torch_malloc")
    try:
        _torch.cuda.memory.change_current_allocator(alloc)
    except RuntimeError as e:
        raise Error("memlake.torch.enable() came too late: PyTorch's CUDA allocator is already in use "
                    f"({e}); call it before the first CUDA allocation, or use memlake.torch.pool()") from None
    _state["enabled"] = alloc


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
    return isinstance(exc, (_MemlakeOOM, _torch.OutOfMemoryError)) or (
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


def tier(model, optimizer, budget=None, host=None, **kw):
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
