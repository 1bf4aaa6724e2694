"""The memory daemon from Python (`memlake daemon`, docs/design/daemon.md).

Processes that hold the same read-only bytes (model weights) keep one copy
on the GPU: the first `share()` copies its bytes into pages the daemon owns,
every later one with the same bytes maps those pages read-only. The daemon's
socket is the option daemon_socket (MEMLAKE_DAEMON_SOCKET).

    p = memlake.share(tensor)            # the address of the shared, read-only copy
    buf = memlake.attach(id)             # SharedBuffer: address, nbytes, id, __cuda_array_interface__
    memlake.unshare(p)
    memlake.daemon_status()              # the daemon's view (dict)
"""
import ctypes
import json

from . import _check, _default, _device, _lib, _native, _address, InvalidArgumentError, UnavailableError


class SharedBuffer:
    """Bytes published through the daemon, mapped read-only in this process.

    Usable as a uint8 array on the GPU (__cuda_array_interface__): torch.as_tensor(buf, device="cuda").
    Writing to it faults. close() unmaps it (the tensors over it must be gone)."""

    def __init__(self, address, nbytes, id, device, allocator):
        self.address, self.nbytes, self.id, self.device = address, nbytes, id, device
        self._allocator = allocator

    @property
    def __cuda_array_interface__(self):
        return {"shape": (self.nbytes,), "typestr": "|u1", "data": (self.address, False), "strides": None,
                "version": 3}

    def close(self):
        if self.address:
            unshare(self.address, allocator=self._allocator)
            self.address = 0

    def __repr__(self):
        return f"SharedBuffer(id={self.id[:16]}..., nbytes={self.nbytes}, address={self.address:#x})"


def _alloc_handle(allocator):
    return (allocator or _default())._handle()


def content_id(buf, nbytes=None, device=0, allocator=None):
    """BLAKE2b content id (64 hex digits) of device or host bytes (tensor, address or buffer)."""
    ptr, n, keep = _address(buf, "buf")
    n = nbytes if nbytes is not None else n
    if n is None:
        raise InvalidArgumentError("nbytes is required with an address")
    out = ctypes.create_string_buffer(65)
    _check(_lib.memlake_content_id(_alloc_handle(allocator), ptr, n, _device(device), out))
    del keep
    return out.value.decode()


def share(buf, nbytes=None, device=0, id=None, allocator=None):
    """Publishes the bytes of `buf` (device memory) and returns a SharedBuffer over
    the shared, read-only copy. `buf` stays the caller's to free."""
    ptr, n, keep = _address(buf, "buf")
    n = nbytes if nbytes is not None else n
    if not n:
        raise InvalidArgumentError("share: nothing to share (0 bytes)")
    out = ctypes.c_void_p()
    a = allocator or _default()
    id = id or content_id(ptr, n, device, allocator)
    _check(_lib.memlake_share(a._handle(), ptr, n, _device(device), id.encode(), ctypes.byref(out)))
    del keep
    return SharedBuffer(out.value, n, id, device, allocator)


def attach(id, device=0, allocator=None):
    """Maps bytes published under `id`; UnavailableError when nothing is."""
    out, n = ctypes.c_void_p(), ctypes.c_size_t()
    _check(_lib.memlake_attach(_alloc_handle(allocator), id.encode(), _device(device), ctypes.byref(out), ctypes.byref(n)))
    return SharedBuffer(out.value, n.value, id, device, allocator)


def unshare(address, allocator=None):
    """Unmaps a shared buffer (its address); the daemon frees it once nobody holds it."""
    if isinstance(address, SharedBuffer):
        return address.close()
    _check(_lib.memlake_unshare(_alloc_handle(allocator), ctypes.c_void_p(address)))


def daemon_status(socket=None):
    """The daemon's view as a dict: pool, clients, shared buffers, savings."""
    s = socket.encode() if socket else None
    n = _lib.memlake_daemon_status(s, None, 0)
    if n == 0:
        raise UnavailableError(_native.last_error())
    buf = ctypes.create_string_buffer(n + 1)
    _lib.memlake_daemon_status(s, buf, n + 1)
    return json.loads(buf.value.decode())
