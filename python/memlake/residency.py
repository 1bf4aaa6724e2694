"""Sleep and wake: GPU memory leaves the process while idle and comes back
at the same addresses, so tensors, pointers and captured CUDA graphs stay
valid (the residency engine, include/memlake/memlake.h).

    import memlake
    with memlake.tag("weights", readonly=True):
        model = build_model().cuda()
    with memlake.tag("kv"):
        cache = torch.empty(..., device="cuda")
    memlake.host_tier(24 << 30)                       # pin the host pool once, up front
    memlake.sleep(mode="offload", tags=["weights"])   # bytes to pinned host memory
    memlake.sleep(mode="discard", tags=["kv"])        # ... or dropped
    memlake.wake()                                     # both come back

Works on allocations of the default allocator: under memlake.torch.enable()
(every tensor) and memlake.torch.pool() (PyTorch's segments; call
torch.cuda.empty_cache() before a sleep so PyTorch's cached free blocks are
not copied). Only allocations over small_max (1 MiB) move; smaller ones
share slabs and stay.
"""
import contextlib
import ctypes
import threading
from ctypes import POINTER, c_double, c_int, c_size_t, c_uint32, c_uint64, c_void_p

from . import InvalidArgumentError, _check, _default, _lib

__all__ = ["tag", "sleep", "wake", "evict", "restore", "ready", "demote", "fetch", "settle", "host_tier",
           "residency_stats"]

TAG_READONLY = 1
_MODES = {"offload": 0, "discard": 1}


class _Report(ctypes.Structure):
    _fields_ = [("struct_size", c_uint32), ("allocations", c_uint32), ("offloaded_bytes", c_uint64),
                ("kept_bytes", c_uint64), ("discarded_bytes", c_uint64), ("released_bytes", c_uint64),
                ("restored_bytes", c_uint64), ("refilled_bytes", c_uint64), ("seconds", c_double)]


class _Stats(ctypes.Structure):
    _fields_ = [("struct_size", c_uint32), ("asleep", c_uint32), ("sleeps", c_uint64), ("wakes", c_uint64),
                ("evictions", c_uint64), ("restores", c_uint64), ("bytes_evicted", c_uint64),
                ("bytes_restored", c_uint64), ("bytes_discarded", c_uint64), ("evicted_now", c_uint64),
                ("evicted_bytes_now", c_uint64), ("host_capacity", c_uint64), ("host_used", c_uint64),
                ("last_sleep_seconds", c_double), ("last_wake_seconds", c_double), ("leaving_now", c_uint64),
                ("demotions", c_uint64), ("disk_used", c_uint64), ("disk_file", c_uint64),
                ("disk_written", c_uint64), ("disk_read", c_uint64), ("disk_direct", ctypes.c_uint32),
                ("reserved_", ctypes.c_uint32), ("disk_write_seconds", c_double), ("disk_read_seconds", c_double),
                ("fetches", c_uint64), ("disk_failures", c_uint64), ("disk_writing_now", c_uint64),
                ("disk_reading_now", c_uint64), ("disk_busy_seconds", c_double), ("ahead_now", c_uint64),
                ("ahead_bytes_now", c_uint64), ("reclaimed", c_uint64), ("reclaimed_bytes", c_uint64),
                ("spare_now", c_uint64), ("spare_bytes_now", c_uint64), ("pressure_waits", c_uint64),
                ("pressure_seconds", c_double),
                ("leaving_bytes_now", c_uint64)]


for _name, _res, _args in [
        ("memlake_tag_register", c_int, [ctypes.c_char_p, ctypes.c_uint, POINTER(c_int)]),
        ("memlake_tag_set", c_int, [c_int, POINTER(c_int)]),
        ("memlake_sleep", c_int, [c_void_p, c_int, POINTER(c_int), POINTER(c_int), c_size_t, c_int,
                                  POINTER(_Report)]),
        ("memlake_wake", c_int, [c_void_p, c_int, POINTER(_Report)]),
        ("memlake_evict", c_int, [c_void_p, c_void_p, c_int, c_int]),
        ("memlake_restore", c_int, [c_void_p, c_void_p, c_int]),
        ("memlake_restore_ex", c_int, [c_void_p, c_void_p, c_int, c_int]),
        ("memlake_restore_ready", c_int, [c_void_p, c_void_p, c_int]),
        ("memlake_mark_spare", c_int, [c_void_p, c_void_p, c_int]),
        ("memlake_settle", c_int, [c_void_p, c_int, c_int, POINTER(c_size_t)]),
        ("memlake_demote", c_int, [c_void_p, c_void_p, c_int]),
        ("memlake_demote_ex", c_int, [c_void_p, c_void_p, c_int, c_int]),
        ("memlake_fetch", c_int, [c_void_p, c_void_p, c_int]),
        ("memlake_host_tier_reserve", c_int, [c_void_p, c_int, c_size_t]),
        ("memlake_get_residency_stats", c_int, [c_void_p, c_int, POINTER(_Stats)])]:
    _f = getattr(_lib, _name)
    _f.restype, _f.argtypes = _res, _args

_tags = {}
_tags_mu = threading.Lock()


def _tag_id(name, readonly=False):
    if not isinstance(name, str) or not name:
        raise InvalidArgumentError(f"tag name must be a non-empty string, got {name!r}")
    with _tags_mu:
        key = (name, bool(readonly))
        if key not in _tags:
            i = c_int()
            _check(_lib.memlake_tag_register(name.encode(), TAG_READONLY if readonly else 0, ctypes.byref(i)))
            _tags[key] = i.value
        return _tags[key]


def _known_tag(name):
    with _tags_mu:
        for (n, _), i in _tags.items():
            if n == name:
                return i
    raise InvalidArgumentError(f"unknown tag {name!r}: no allocation was made under memlake.tag({name!r})")


@contextlib.contextmanager
def tag(name, readonly=False):
    """Allocations this thread makes inside the block belong to tag `name`.

    readonly=True (weights): after a wake they are mapped read-only and keep
    their host copy, so the next sleep copies nothing; a device write to them
    then faults."""
    prev = c_int()
    _check(_lib.memlake_tag_set(_tag_id(name, readonly), ctypes.byref(prev)))
    try:
        yield
    finally:
        _check(_lib.memlake_tag_set(prev.value, None))


def _handle(allocator):
    return (allocator or _default())._handle()


def _device(device):
    if not isinstance(device, int) or device < -1:
        raise InvalidArgumentError(f"device must be an ordinal or -1 (every device), got {device!r}")
    return device


def _report(r, keys):
    return {k: getattr(r, k) for k in keys}


def sleep(tags=None, mode="offload", device=-1, allocator=None):
    """Large allocations with one of `tags` (None: all) leave the GPU after the
    work queued so far; then the allocator's cache goes back to the driver.

    mode "offload" keeps the bytes in pinned host memory, "discard" drops them;
    `tags` may map each tag to its own mode ({"weights": "offload", "kv":
    "discard"}): one call, the cache unmapped while the weights copy.
    Returns {allocations, offloaded_bytes, kept_bytes, discarded_bytes,
    released_bytes, seconds}. Raises memlake.OutOfMemoryError, before
    anything moves, if the host cannot hold the offload."""
    if isinstance(tags, str):
        tags = [tags]
    per_tag = dict(tags) if isinstance(tags, dict) else {t: mode for t in (tags or [])}
    for m in list(per_tag.values()) + [mode]:
        if m not in _MODES:
            raise InvalidArgumentError(f"mode must be 'offload' or 'discard', got {m!r}")
    if tags is not None and not per_tag:
        raise InvalidArgumentError("tags is empty: pass None to sleep every allocation")
    ids = [_known_tag(t) for t in per_tag]
    modes = [_MODES[m] for m in per_tag.values()]
    n = len(ids)
    r = _Report(struct_size=ctypes.sizeof(_Report))
    _check(_lib.memlake_sleep(_handle(allocator), _device(device), (c_int * max(1, n))(*ids),
                              (c_int * max(1, n))(*modes), n, _MODES[mode], ctypes.byref(r)))
    return _report(r, ["allocations", "offloaded_bytes", "kept_bytes", "discarded_bytes", "released_bytes", "seconds"])


def wake(device=-1, allocator=None):
    """Brings back everything sleep() took, at the same addresses; returns once
    the bytes are back. {allocations, restored_bytes, refilled_bytes, seconds}."""
    r = _Report(struct_size=ctypes.sizeof(_Report))
    _check(_lib.memlake_wake(_handle(allocator), _device(device), ctypes.byref(r)))
    return _report(r, ["allocations", "restored_bytes", "refilled_bytes", "seconds"])


def _ptr(obj):
    p = obj.data_ptr() if hasattr(obj, "data_ptr") else obj
    if not isinstance(p, int) or p <= 0:
        raise InvalidArgumentError(f"expected a tensor or a positive address, got {obj!r}")
    return p


_EVICT_ASYNC = 0x100


def evict(obj, mode="offload", device=0, allocator=None, wait=True):
    """One allocation (a tensor's storage start, or an address) leaves the GPU
    after the work queued on its stream; its pages serve other allocations.
    With wait=False the copy is queued and evict returns at once: the
    allocation is leaving (do not write it) until settle() or a later
    residency call finds its copy complete and unmaps it."""
    if mode not in _MODES:
        raise InvalidArgumentError(f"mode must be 'offload' or 'discard', got {mode!r}")
    flags = 0 if wait else _EVICT_ASYNC
    _check(_lib.memlake_evict(_handle(allocator), _ptr(obj), _device(device), _MODES[mode] | flags))


_DEMOTE_ASYNC = 0x1


def demote(obj, device=0, allocator=None, wait=True):
    """An evicted allocation's bytes move from the pinned host tier to the disk
    tier (option disk_tier); restore() reads and checks them back. With
    wait=False the write is queued on the disk tier's I/O threads and this
    returns at once; the host copy is given back once the write completes, and
    a write that fails leaves the bytes in the host tier and raises from the
    next settle()."""
    _check(_lib.memlake_demote_ex(_handle(allocator), _ptr(obj), _device(device), 0 if wait else _DEMOTE_ASYNC))


def fetch(obj, device=0, allocator=None):
    """Read-ahead: an evicted allocation on the disk tier is read back into the
    host tier in the background, so that its restore() is a copy from the host
    (a restore meanwhile waits for the read). Nothing if its bytes are in the
    host tier already."""
    _check(_lib.memlake_fetch(_handle(allocator), _ptr(obj), _device(device)))


def settle(wait=True, device=0, allocator=None):
    """Unmaps leaving allocations whose copies completed (wait: all, blocking);
    returns how many."""
    n = c_size_t(0)
    _check(_lib.memlake_settle(_handle(allocator), _device(device), 1 if wait else 0, ctypes.byref(n)))
    return n.value


_RESTORE_NO_WAIT = 0x1


def restore(obj, device=0, allocator=None, wait=True):
    """Brings an evicted allocation back; its stream waits for the copy. With
    wait=False the copy is queued and nothing waits for it yet: call ready()
    where the work that needs the bytes is about to be queued (a restore
    issued ahead then overlaps the work queued in between); until then no
    kernel may touch the allocation."""
    _check(_lib.memlake_restore_ex(_handle(allocator), _ptr(obj), _device(device), 0 if wait else _RESTORE_NO_WAIT))


def ready(obj, device=0, allocator=None):
    """The allocation's stream waits for a restore(wait=False)'s copy (nothing
    if it has none pending, or it completed)."""
    _check(_lib.memlake_restore_ready(_handle(allocator), _ptr(obj), _device(device)))


def spare(obj, device=0, allocator=None):
    """Marks a resident allocation spare: not touched again before ready(obj). Under memory
    pressure it may then be evicted (its bytes copied out) instead of an allocation failing;
    ready() brings it back and its stream waits, or just ends the mark."""
    _check(_lib.memlake_mark_spare(_handle(allocator), _ptr(obj), _device(device)))


def host_tier(nbytes, device=0, allocator=None):
    """Pins host memory for the host tier now, so that sleep() pins nothing."""
    if not isinstance(nbytes, int) or nbytes < 0 or nbytes >= 1 << 64:
        raise InvalidArgumentError(f"nbytes must be a non-negative integer, got {nbytes!r}")
    _check(_lib.memlake_host_tier_reserve(_handle(allocator), _device(device), nbytes))


def residency_stats(device=0, allocator=None):
    s = _Stats(struct_size=ctypes.sizeof(_Stats))
    _check(_lib.memlake_get_residency_stats(_handle(allocator), _device(device), ctypes.byref(s)))
    return {k: getattr(s, k) for k, _ in _Stats._fields_ if k not in ("struct_size", "reserved_")}
