"""memlake: a defragmenting (stitching) caching allocator over CUDA virtual memory.

Pure Python over libmemlake's C ABI (ctypes); no compiled extension.

    import memlake
    memlake.torch.enable()          # before the first CUDA allocation
    ...
    print(memlake.summary())

`Allocator` gives direct access (any backend, e.g. "host" on a CPU-only
machine); the module-level functions act on the process-wide default
allocator, the one PyTorch uses after memlake.torch.enable().
"""
import ctypes
import json as _json
import numbers as _numbers

from . import _native
from ._native import lib as _lib

__all__ = ["Allocator", "Error", "OutOfMemoryError", "InvalidArgumentError", "DriverError", "UnavailableError",
           "configure", "options", "stats", "reset_peak_stats", "watermark", "empty_cache", "set_memory_cap", "summary",
           "copy", "copy_forget", "version", "library_path", "preload_library"]

version = _lib.memlake_version().decode()
__version__ = version  # the library's, which CMake takes from the repository's VERSION file
library_path = _native.path


def preload_library():
    """Path of libmemlake_preload.so, the LD_PRELOAD shim, found next to libmemlake.so
    (the wheel ships both in the package): `LD_PRELOAD=$(python3 -m memlake.preload_path) prog`."""
    import os
    path = os.path.join(os.path.dirname(os.path.abspath(library_path)), "libmemlake_preload.so")
    if not os.path.exists(path):
        raise FileNotFoundError(f"memlake: no libmemlake_preload.so beside {library_path} "
                                "(it is built only where cuda.h was found)")
    return path


class Error(RuntimeError):
    """Base class of memlake's errors."""


class OutOfMemoryError(Error, MemoryError):
    """A valid request memlake could not satisfy (memory cap or device full).

    memlake.torch makes a subclass of this and torch.OutOfMemoryError."""


class InvalidArgumentError(Error, ValueError):
    """Misuse: double free, foreign pointer, unknown option or bad value."""


class DriverError(Error):
    """The CUDA driver (or the host kernel) failed."""


class UnavailableError(Error):
    """The backend cannot run here (no CUDA driver, no device)."""


_ERRORS = {_native.OUT_OF_MEMORY: OutOfMemoryError, _native.INVALID_ARGUMENT: InvalidArgumentError,
           _native.DRIVER: DriverError, _native.UNAVAILABLE: UnavailableError}


def _check(status):
    if status != _native.MEMLAKE_OK:
        raise _ERRORS.get(status, Error)(_native.last_error())


_SIZE_MAX = (1 << (8 * ctypes.sizeof(ctypes.c_size_t))) - 1
_ADDR_MAX = (1 << (8 * ctypes.sizeof(ctypes.c_void_p))) - 1
_INT_MAX = (1 << (8 * ctypes.sizeof(ctypes.c_int) - 1)) - 1


def _integer(v, what, lo, hi):
    """v as an int in [lo, hi]; InvalidArgumentError (a ValueError) otherwise.

    ctypes would wrap an out-of-range Python int silently (-1 -> SIZE_MAX, 2**64 -> 0)."""
    if isinstance(v, bool) or not isinstance(v, _numbers.Integral):
        raise InvalidArgumentError(f"{what} must be an integer, got {type(v).__name__}")
    v = int(v)
    if v < lo or v > hi:
        raise InvalidArgumentError(f"{what} {v} is out of range ({lo}..{hi})")
    return v


def _size(v, what="size"):
    return _integer(v, what, 0, _SIZE_MAX)


def _device(v):
    return _integer(v, "device", 0, _INT_MAX)


def _addr(v, what):
    """An address for a void* argument: None/0 stay None."""
    if v is None:
        return None
    return _integer(v, what, 0, _ADDR_MAX) or None


def _opt_value(v):
    if isinstance(v, bool):
        return "1" if v else "0"
    return str(v)


class _Options:
    """Owns a memlake_options built from defaults (or the environment) plus keyword overrides."""

    def __init__(self, from_env=True, **kw):
        self.h = ctypes.c_void_p()
        _check(_lib.memlake_options_create(ctypes.byref(self.h), 1 if from_env else 0))
        try:
            for k, v in kw.items():
                _check(_lib.memlake_options_set(self.h, k.encode(), _opt_value(v).encode()))
        except Exception:
            self.close()
            raise

    def get(self, key):
        buf = ctypes.create_string_buffer(256)
        _lib.memlake_options_get(self.h, key.encode(), buf, len(buf))
        return buf.value.decode()

    def close(self):
        if self.h:
            _lib.memlake_options_destroy(self.h)
            self.h = ctypes.c_void_p()

    def __del__(self):
        self.close()


def validate_options(**kw):
    """Checks keyword options against memlake's table; raises InvalidArgumentError."""
    _Options(from_env=True, **kw).close()


def _stats_dict(s):
    """Torch-compatible key names where the meaning matches, memlake.* for the rest."""
    d = {
        "allocated_bytes.all.current": s.allocated_bytes.current,
        "allocated_bytes.all.peak": s.allocated_bytes.peak,
        "requested_bytes.all.current": s.requested_bytes.current,
        "requested_bytes.all.peak": s.requested_bytes.peak,
        "reserved_bytes.all.current": s.reserved_bytes.current,
        "reserved_bytes.all.peak": s.reserved_bytes.peak,
        "active.all.current": s.active_blocks.current,
        "active.all.peak": s.active_blocks.peak,
        "allocation.all.current": s.active_blocks.current,
        "allocation.all.peak": s.active_blocks.peak,
        "allocation.all.allocated": s.num_allocs,
        "allocation.all.freed": s.num_frees,
        "num_ooms": s.num_ooms,
        "num_device_alloc": s.primitive_calls[_native.OP_NAMES.index("create")],
        "num_device_free": s.primitive_calls[_native.OP_NAMES.index("release")],
        "memlake.mapped_bytes.current": s.mapped_bytes.current,
        "memlake.mapped_bytes.peak": s.mapped_bytes.peak,
        "memlake.small_allocs": s.small_allocs,
        "memlake.cache_hits": s.cache_hits,
        "memlake.stitch_reuses": s.stitch_reuses,
        "memlake.stitches": s.stitches,
        "memlake.grows": s.grows,
        "memlake.repairs": s.repairs,
        "memlake.slow_paths": s.slow_paths,
        "memlake.slow_path_seconds": s.slow_path_ns / 1e9,
        "memlake.host_seconds": s.host_ns / 1e9,
        "memlake.pages_created": s.pages_created,
        "memlake.views": s.views,
        "memlake.stitched_views": s.stitched_views,
        "memlake.small_slabs": s.small_slabs,
        "memlake.largest_free_bytes": s.largest_free_bytes,
        "memlake.page_size": s.page_size,
        "memlake.memory_cap": s.memory_cap,
    }
    for i, name in enumerate(_native.OP_NAMES):
        d[f"memlake.calls.{name}"] = s.primitive_calls[i]
        d[f"memlake.seconds.{name}"] = s.primitive_ns[i] / 1e9
    d["memlake.driver_seconds"] = sum(s.primitive_ns[i] for i in range(len(_native.OP_NAMES))) / 1e9
    peak_res = s.reserved_bytes.peak
    d["memlake.utilization"] = (s.requested_bytes.peak / peak_res) if peak_res else 0.0
    return d


def _fmt(n):
    for unit in ("B", "KiB", "MiB", "GiB", "TiB"):
        if abs(n) < 1024 or unit == "TiB":
            return f"{n:.0f} {unit}" if unit == "B" else f"{n:.2f} {unit}"
        n /= 1024.0


def _summary(d, device, where):
    rows = [
        ("Requested memory", "requested_bytes.all.current", "requested_bytes.all.peak", True),
        ("Allocated memory (rounded)", "allocated_bytes.all.current", "allocated_bytes.all.peak", True),
        ("Reserved memory (physical)", "reserved_bytes.all.current", "reserved_bytes.all.peak", True),
        ("Mapped memory (virtual views)", "memlake.mapped_bytes.current", "memlake.mapped_bytes.peak", True),
        ("Active allocations", "active.all.current", "active.all.peak", False),
    ]
    w = 75
    out = ["=" * w, f" memlake memory summary, device {device} ({where})".ljust(w), "-" * w,
           f" {'Metric':<32}{'Current':>20}{'Peak':>20}", "-" * w]
    for label, cur, peak, is_bytes in rows:
        f = _fmt if is_bytes else str
        out.append(f" {label:<32}{f(d[cur]):>20}{f(d[peak]):>20}")
    out.append("-" * w)
    out.append(f" {'Utilization (peak requested / peak reserved)':<52}{d['memlake.utilization']:>20.4f}")
    out.append(f" {'Allocations / frees / OOMs':<52}{d['allocation.all.allocated']:>9} / {d['allocation.all.freed']} / {d['num_ooms']}")
    out.append(f" {'Cache hits (from stitched views)':<52}{d['memlake.cache_hits']:>9} ({d['memlake.stitch_reuses']})")
    out.append(f" {'Stitches / repairs / grows (pages created)':<52}{d['memlake.stitches']:>9} / {d['memlake.repairs']} / {d['memlake.grows']} ({d['memlake.pages_created']})")
    out.append(f" {'Slow paths (seconds in them, driver included)':<52}{d['memlake.slow_paths']:>9} ({d['memlake.slow_path_seconds']:.3f})")
    out.append(f" {'Seconds inside alloc and free (all of it)':<52}{d['memlake.host_seconds']:>9.3f}")
    out.append(f" {'Views (stitched) / small slabs':<52}{d['memlake.views']:>9} ({d['memlake.stitched_views']}) / {d['memlake.small_slabs']}")
    out.append(f" {'Largest free block':<52}{_fmt(d['memlake.largest_free_bytes']):>20}")
    cap = d["memlake.memory_cap"]
    out.append(f" {'Memory cap':<52}{(_fmt(cap) if cap else 'none'):>20}")
    calls = ", ".join(f"{n}={d['memlake.calls.' + n]}" for n in _native.OP_NAMES if d['memlake.calls.' + n])
    out.append(f" Driver calls: {calls or 'none'}")
    secs = ", ".join(f"{n}={d['memlake.seconds.' + n] * 1e3:.1f}" for n in _native.OP_NAMES if d['memlake.calls.' + n])
    out.append(f" Time in driver calls: {d['memlake.driver_seconds']:.3f} s ({secs or 'none'}; ms)")
    out.append("=" * w)
    return "\n".join(out)


class Allocator(_native.Handle):
    """A memlake allocator of its own (not the one PyTorch uses).

        a = memlake.Allocator(backend="host", granularity="64K")
        p = a.alloc(1 << 20)      # an integer address
        a.free(p)
    """

    def __init__(self, **options):
        o = _Options(from_env=True, **options)
        try:
            self._h = ctypes.c_void_p()
            _check(_lib.memlake_create(o.h, ctypes.byref(self._h)))
            self.backend = o.get("backend")
        finally:
            o.close()

    def _handle(self):
        if not self._h:
            raise InvalidArgumentError("allocator is closed")
        return self._h

    def alloc(self, size, device=0, stream=None):
        size, device, stream = _size(size), _device(device), _addr(_stream_handle(stream), "stream")
        p = ctypes.c_void_p()
        _check(_lib.memlake_alloc(self._handle(), size, device, stream, ctypes.byref(p)))
        return p.value or 0

    def free(self, ptr, device=0, stream=None):
        ptr, device, stream = _addr(ptr, "ptr"), _device(device), _addr(_stream_handle(stream), "stream")
        _check(_lib.memlake_free(self._handle(), ptr, device, stream))

    def stats(self, device=0):
        device = _device(device)
        s = _native.Stats()
        s.struct_size = ctypes.sizeof(s)
        _check(_lib.memlake_get_stats(self._handle(), device, ctypes.byref(s)))
        return _stats_dict(s)

    def stats_json(self):
        n = _lib.memlake_stats_json(self._handle(), None, 0)
        buf = ctypes.create_string_buffer(n + 1)
        _lib.memlake_stats_json(self._handle(), buf, n + 1)
        return _json.loads(buf.value.decode())

    def reset_peak_stats(self, device=0):
        _check(_lib.memlake_reset_peak_stats(self._handle(), _device(device)))

    def watermark(self, device=0, reset=False):
        """(allocated bytes now, the most allocated since the watermark's last reset); reset=True
        restarts it at the current bytes after reading. Apart from the peaks that stats() shows
        and reset_peak_stats() resets (memlake_watermark in memlake.h)."""
        w = _native.Stat()
        _check(_lib.memlake_watermark(self._handle(), _device(device), 1 if reset else 0, ctypes.byref(w)))
        return w.current, w.peak

    def empty_cache(self, device=0):
        _check(_lib.memlake_empty_cache(self._handle(), _device(device)))

    def set_memory_cap(self, nbytes):
        """nbytes = 0 removes the cap; a negative one is an error (it used to mean no cap)."""
        _check(_lib.memlake_set_memory_cap(self._handle(), _size(nbytes, "memory cap")))

    def summary(self, device=0):
        return _summary(self.stats(device), device, f"{self.backend} backend")

    def copy(self, dst, src, nbytes=None, device=0, stream=None):
        """Copies nbytes between host and device memory (direction from the pointers).

        dst/src: integer addresses, torch tensors, objects with __cuda_array_interface__,
        or buffers (bytearray, numpy arrays) for host memory. nbytes defaults to the smaller size."""
        device = _device(device)
        d, dn, _keep_d = _address(dst, "dst")
        s, sn, _keep_s = _address(src, "src")
        if nbytes is not None:
            nbytes = _size(nbytes, "copy: nbytes")
        if nbytes is None:
            sizes = [x for x in (dn, sn) if x is not None]
            if not sizes:
                raise InvalidArgumentError("copy: nbytes is required for raw addresses")
            nbytes = min(sizes)
        for name, have in (("dst", dn), ("src", sn)):
            if have is not None and nbytes > have:
                raise InvalidArgumentError(f"copy: nbytes {nbytes} exceeds {name}'s {have} bytes")
        _check(_lib.memlake_copy(self._handle(), d, s, nbytes, device, _addr(_stream_handle(stream), "stream")))

    def copy_forget(self, buf, nbytes=None):
        """Unregisters what the copy engine's registration cache holds of a host buffer
        (MEMLAKE_COPY_REGISTER_AFTER > 0); call before the buffer is freed."""
        p, n, _keep = _address(buf, "buf")
        if nbytes is None:
            nbytes = n if n is not None else 1
        nbytes = _size(nbytes, "copy_forget: nbytes")
        _check(_lib.memlake_copy_forget(self._handle(), p, nbytes))

    def copy_stats(self, device=0):
        """What the copy engine of `device` has done: copies, bytes, how they went
        (direct / pinned / staged / registered), host threads, and with
        MEMLAKE_COPY_TOPOLOGY the multi-path transfers and bytes per GPU link."""
        device = _device(device)
        s = _native.CopyStats()
        s.struct_size = ctypes.sizeof(s)
        _check(_lib.memlake_get_copy_stats(self._handle(), device, ctypes.byref(s)))
        d = {k: getattr(s, k) for k, _ in _native.CopyStats._fields_
             if k not in ("struct_size", "reserved0", "bytes_via")}
        d["bytes_via"] = list(s.bytes_via[: s.paths_gpus])
        return d

    def close(self):
        if getattr(self, "_h", None):
            _lib.memlake_destroy(self._h)
            self._h = ctypes.c_void_p()


def _address(obj, what):
    """(address, nbytes or None, keep-alive) of an int, a torch tensor, a
    __cuda_array_interface__ or a buffer; the caller holds keep-alive for the copy."""
    if isinstance(obj, _numbers.Integral) and not isinstance(obj, bool):
        return _integer(obj, what, 0, _ADDR_MAX), None, None
    if hasattr(obj, "data_ptr") and hasattr(obj, "element_size"):  # torch.Tensor
        if hasattr(obj, "is_contiguous") and not obj.is_contiguous():
            raise InvalidArgumentError(f"{what}: tensor is not contiguous")
        return obj.data_ptr(), obj.numel() * obj.element_size(), obj
    cai = getattr(obj, "__cuda_array_interface__", None)
    if cai is not None:
        n = 1
        for d in cai["shape"]:
            n *= d
        import numpy as _np  # only for the item size of the typestr
        return cai["data"][0], n * _np.dtype(cai["typestr"]).itemsize, obj
    try:
        mv = memoryview(obj)
    except TypeError:
        raise InvalidArgumentError(f"{what}: expected an address, a tensor or a buffer, got {type(obj).__name__}") from None
    if mv.readonly and what == "dst":
        raise InvalidArgumentError("dst: buffer is read-only")
    if mv.nbytes == 0:
        return 0, 0, None
    # Writable buffers are used in place; a read-only source is copied first.
    holder = (ctypes.c_char * mv.nbytes).from_buffer(mv) if not mv.readonly else ctypes.create_string_buffer(mv.tobytes())
    return ctypes.addressof(holder), mv.nbytes, holder


def _stream_handle(stream):
    if stream is None:
        return None
    return getattr(stream, "cuda_stream", stream) or None


class _Default(Allocator):
    """The process-wide default allocator (never destroyed)."""

    def __init__(self, handle):
        self._h = ctypes.c_void_p(handle)
        self.backend = "default"

    def close(self):
        pass


def configure(**options):
    """Configures the process-wide default allocator; only before its first use."""
    o = _Options(from_env=True, **options)
    try:
        _check(_lib.memlake_default_init(o.h))
    finally:
        o.close()


def _default():
    h = _lib.memlake_default()
    if not h:
        raise UnavailableError(_native.last_error())
    return _Default(h)


def options():
    """The configuration table: {key: current value from defaults + environment}."""
    o = _Options(from_env=True)
    try:
        keys = []
        while _lib.memlake_option_key(len(keys)):
            keys.append(_lib.memlake_option_key(len(keys)).decode())
        return {k: o.get(k) for k in keys}
    finally:
        o.close()


def stats(device=0):
    """Statistics of the default allocator, with torch.cuda.memory_stats() key names."""
    return _default().stats(device)


def reset_peak_stats(device=0):
    _default().reset_peak_stats(device)


def watermark(device=0, reset=False):
    """The default allocator's Allocator.watermark()."""
    return _default().watermark(device, reset)


def empty_cache(device=0):
    _default().empty_cache(device)


def set_memory_cap(nbytes):
    _default().set_memory_cap(nbytes)


def summary(device=0):
    return _default().summary(device)


def copy(dst, src, nbytes=None, stream=None, device=0):
    """Host<->device copy through memlake's copy engine (pinned direct, pageable pipelined).

    Accepts torch tensors, integer addresses, __cuda_array_interface__ objects and buffers.
    Ordered on `stream` (a torch.cuda.Stream or a raw handle; None = default stream)."""
    _default().copy(dst, src, nbytes, device=device, stream=stream)


def copy_stats(device=0):
    """The copy engine's counters for `device` (see Allocator.copy_stats)."""
    return _default().copy_stats(device)


def copy_forget(buf, nbytes=None):
    """Before freeing a host buffer copied with the registration cache on
    (MEMLAKE_COPY_REGISTER_AFTER > 0): unregisters what the cache holds of it."""
    _default().copy_forget(buf, nbytes)


from .daemon import attach, content_id, daemon_status, share, unshare  # noqa: E402

__all__ += ["share", "attach", "unshare", "content_id", "daemon_status"]

from .residency import demote, evict, fetch, host_tier, ready, residency_stats, restore, settle, sleep, spare, tag, wake  # noqa: E402

__all__ += ["tag", "sleep", "wake", "evict", "demote", "fetch", "restore", "ready", "settle", "spare", "host_tier",
            "residency_stats"]


def __getattr__(name):
    # memlake.torch is imported on first use so that `import memlake` never imports torch.
    if name == "torch":
        import importlib
        return importlib.import_module(".torch", __name__)
    raise AttributeError(name)
