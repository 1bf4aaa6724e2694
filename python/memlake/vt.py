"""Virtual tensors: one reserved range, physical pages only where data lives.

    vt = memlake.vt.VirtualTensor(1 << 30)          # reserves 1 GiB, costs two pages
    vt.map(0, 4)                                    # pages 0..3 get memory (zeroed)
    vt.unmap(2, 2, backing="sink")                  # pages 2..3 give it back
    vt.stats()["physical_bytes"]

Every page is "private" (its own memory), "zero" (the shared zero page; write
only zeros there) or "sink" (the shared scratch page, read-write). The address never
moves, so tensors over it (memlake.torch.KVCache) stay valid in CUDA graphs.
Map and unmap wait for the work queued on `stream` before they replace a
mapping. Errors: memlake.OutOfMemoryError (memory limit or device full;
nothing changed), memlake.InvalidArgumentError (pages outside the tensor).
The C ABI is memlake_vt_* (include/memlake/memlake.h).
"""
import ctypes

from . import InvalidArgumentError, _check, _default, _device, _size, _native, _stream_handle, _addr
from ._native import lib as _lib

__all__ = ["VirtualTensor", "ZERO", "SINK", "PRIVATE"]

ZERO, SINK, PRIVATE, HOLE = 0, 1, 2, 3
_BACKING = {"zero": ZERO, "sink": SINK, ZERO: ZERO, SINK: SINK}


class VirtualTensor(_native.Handle):
    """A virtual range of `nbytes` (rounded up to pages) on `device`.

    allocator: a memlake.Allocator (its backend: "cuda" or "host"); the
    process-wide default allocator when None. Keep the allocator alive as long
    as the tensor."""

    def __init__(self, nbytes, device=0, memory_limit=0, allocator=None):
        self._allocator = allocator if allocator is not None else _default()
        self._h = ctypes.c_void_p()
        _check(_lib.memlake_vt_create(self._allocator._handle(), _device(device), _size(nbytes, "nbytes"),
                                      _size(memory_limit, "memory_limit"), ctypes.byref(self._h)))
        self.device = device
        s = self._raw_stats()
        self.base = s.base
        self.nbytes = s.bytes
        self.page_size = s.page_size
        self.pages = s.pages

    def _handle(self):
        if not self._h:
            raise InvalidArgumentError("virtual tensor is closed")
        return self._h

    def map(self, first, count, stream=None):
        """Pages [first, first+count) get memory of their own (new ones zeroed on `stream`)."""
        _check(_lib.memlake_vt_map(self._handle(), _size(first, "first page"), _size(count, "count"),
                                   _addr(_stream_handle(stream), "stream")))

    def unmap(self, first, count, backing="zero", stream=None):
        """Pages [first, first+count) give their memory back; they read as the zero page or write to the sink."""
        if backing not in _BACKING:
            raise InvalidArgumentError(f"backing must be 'zero' or 'sink', got {backing!r}")
        _check(_lib.memlake_vt_unmap(self._handle(), _size(first, "first page"), _size(count, "count"),
                                     _BACKING[backing], _addr(_stream_handle(stream), "stream")))

    def page_range(self, offset, length):
        """The pages (first, count) that cover bytes [offset, offset+length)."""
        if length <= 0:
            return offset // self.page_size, 0
        first = offset // self.page_size
        return first, (offset + length + self.page_size - 1) // self.page_size - first

    def map_bytes(self, offset, length, stream=None):
        first, count = self.page_range(offset, length)
        if count:
            self.map(first, count, stream)

    def unmap_bytes(self, offset, length, backing="zero", stream=None):
        first, count = self.page_range(offset, length)
        if count:
            self.unmap(first, count, backing, stream)

    def set_memory_limit(self, nbytes):
        _check(_lib.memlake_vt_set_memory_limit(self._handle(), _size(nbytes, "memory_limit")))

    def page_states(self, first=0, count=None):
        """bytes of page states (ZERO, SINK, PRIVATE, HOLE) of pages [first, first+count)."""
        count = self.pages - first if count is None else count
        buf = ctypes.create_string_buffer(max(count, 1))
        _check(_lib.memlake_vt_pages(self._handle(), _size(first, "first page"), _size(count, "count"), buf))
        return buf.raw[:count]

    def _raw_stats(self):
        s = _native.VtStats()
        s.struct_size = ctypes.sizeof(s)
        _check(_lib.memlake_vt_get_stats(self._handle(), ctypes.byref(s)))
        return s

    def stats(self):
        s = self._raw_stats()
        return {name: getattr(s, name) for name, _ in _native.VtStats._fields_ if name not in ("struct_size", "reserved0")}

    def close(self):
        """Synchronises the device and frees everything (tensors over it become invalid)."""
        if self._h:
            _lib.memlake_vt_destroy(self._h)
            self._h = ctypes.c_void_p()
