"""ctypes binding of libmemlake's C ABI (include/memlake/memlake.h).

The library is found, in order, at $MEMLAKE_LIBRARY, next to this package
(installed wheels put it there), in the source tree's build directories, and
on the system's library path.
"""
import ctypes
import os
from ctypes import POINTER, c_char_p, c_int, c_int32, c_size_t, c_ssize_t, c_uint32, c_uint64, c_void_p

MEMLAKE_OK = 0
OUT_OF_MEMORY = 1
INVALID_ARGUMENT = 2
DRIVER = 3
UNAVAILABLE = 4
INTERNAL = 5

NUM_OPS = 10


class Stat(ctypes.Structure):
    _fields_ = [("current", c_uint64), ("peak", c_uint64)]


class Stats(ctypes.Structure):
    _fields_ = [
        ("struct_size", c_uint32), ("device", c_int32),
        ("requested_bytes", Stat), ("allocated_bytes", Stat), ("reserved_bytes", Stat),
        ("mapped_bytes", Stat), ("active_blocks", Stat),
        ("num_allocs", c_uint64), ("num_frees", c_uint64), ("num_ooms", c_uint64), ("small_allocs", c_uint64),
        ("cache_hits", c_uint64), ("stitch_reuses", c_uint64), ("stitches", c_uint64), ("grows", c_uint64),
        ("pages_created", c_uint64), ("views", c_uint64), ("stitched_views", c_uint64), ("small_slabs", c_uint64),
        ("largest_free_bytes", c_uint64), ("page_size", c_uint64), ("memory_cap", c_uint64),
        ("primitive_calls", c_uint64 * 16), ("primitive_ns", c_uint64 * 16), ("repairs", c_uint64),
        ("slow_paths", c_uint64), ("slow_path_ns", c_uint64),
        ("host_ns", c_uint64),
    ]


class CopyStats(ctypes.Structure):
    _fields_ = [
        ("struct_size", c_uint32), ("threads", c_uint32),
        ("copies", c_uint64), ("bytes", c_uint64), ("direct", c_uint64), ("pinned", c_uint64),
        ("staged", c_uint64), ("registered", c_uint64), ("chunks", c_uint64),
        ("paths_gpus", c_uint32), ("reserved0", c_uint32),
        ("transfers", c_uint64), ("split", c_uint64), ("bytes_via", c_uint64 * 16),
        ("lane_copy_ns", c_uint64), ("lane_wait_ns", c_uint64),
    ]


class VtStats(ctypes.Structure):
    _fields_ = [
        ("struct_size", c_uint32), ("reserved0", c_uint32),
        ("base", c_uint64), ("bytes", c_uint64), ("page_size", c_uint64), ("pages", c_uint64),
        ("private_pages", c_uint64), ("zero_pages", c_uint64), ("sink_pages", c_uint64), ("hole_pages", c_uint64),
        ("physical_bytes", c_uint64), ("physical_peak", c_uint64), ("memory_limit", c_uint64),
        ("pages_mapped", c_uint64), ("pages_unmapped", c_uint64), ("syncs", c_uint64),
    ]


def _candidates():
    env = os.environ.get("MEMLAKE_LIBRARY")
    if env:
        yield env
    here = os.path.dirname(os.path.abspath(__file__))
    yield os.path.join(here, "libmemlake.so")
    yield os.path.join(here, "libmemlake.so.0")  # the wheel's: the soname the shim beside it needs
    root = os.path.dirname(os.path.dirname(here))  # python/memlake -> repo root
    for build in ("build", "build-gpu", "build-release"):
        yield os.path.join(root, build, "libmemlake.so")
    yield "libmemlake.so"


def _load():
    errors = []
    for path in _candidates():
        if os.sep in path and not os.path.exists(path):
            continue
        try:
            lib = ctypes.CDLL(path)
            lib._memlake_path = path
            return lib
        except OSError as e:
            errors.append(f"{path}: {e}")
    raise ImportError("memlake: cannot find libmemlake.so; build it (scripts/setup.sh) or set MEMLAKE_LIBRARY. "
                      + "; ".join(errors))


lib = _load()
path = lib._memlake_path

_P = c_void_p
_sigs = {
    "memlake_options_create": (c_int, [POINTER(_P), c_int]),
    "memlake_options_set": (c_int, [_P, c_char_p, c_char_p]),
    "memlake_options_get": (c_size_t, [_P, c_char_p, c_char_p, c_size_t]),
    "memlake_options_destroy": (None, [_P]),
    "memlake_option_key": (c_char_p, [c_int]),
    "memlake_create": (c_int, [_P, POINTER(_P)]),
    "memlake_destroy": (None, [_P]),
    "memlake_alloc": (c_int, [_P, c_size_t, c_int, _P, POINTER(_P)]),
    "memlake_free": (c_int, [_P, _P, c_int, _P]),
    "memlake_empty_cache": (c_int, [_P, c_int]),
    "memlake_set_memory_cap": (c_int, [_P, c_size_t]),
    "memlake_reset_peak_stats": (c_int, [_P, c_int]),
    "memlake_prim_op_name": (c_char_p, [c_int]),
    "memlake_get_stats": (c_int, [_P, c_int, POINTER(Stats)]),
    "memlake_watermark": (c_int, [_P, c_int, c_int, POINTER(Stat)]),
    "memlake_stats_json": (c_size_t, [_P, c_char_p, c_size_t]),
    "memlake_last_error": (c_char_p, []),
    "memlake_version": (c_char_p, []),
    "memlake_copy": (c_int, [_P, _P, _P, c_size_t, c_int, _P]),
    "memlake_copy_forget": (c_int, [_P, _P, c_size_t]),
    "memlake_get_copy_stats": (c_int, [_P, c_int, POINTER(CopyStats)]),
    "memlake_content_id": (c_int, [_P, _P, c_size_t, c_int, c_char_p]),
    "memlake_share": (c_int, [_P, _P, c_size_t, c_int, c_char_p, POINTER(_P)]),
    "memlake_attach": (c_int, [_P, c_char_p, c_int, POINTER(_P), POINTER(c_size_t)]),
    "memlake_unshare": (c_int, [_P, _P]),
    "memlake_daemon_status": (c_size_t, [c_char_p, c_char_p, c_size_t]),
    "memlake_plan": (c_int, [c_char_p, c_char_p, c_char_p, c_char_p, c_size_t, POINTER(c_size_t)]),
    "memlake_default": (_P, []),
    "memlake_default_init": (c_int, [_P]),
    "memlake_torch_malloc": (_P, [c_ssize_t, c_int, _P]),
    "memlake_torch_pool_malloc": (_P, [c_ssize_t, c_int, _P]),
    "memlake_torch_free": (None, [_P, c_size_t, c_int, _P]),
    "memlake_capture_begin": (c_int, [_P, c_int, _P, c_uint64]),
    "memlake_capture_end": (c_int, [_P, c_int, _P]),
    "memlake_graph_pool_release": (c_int, [_P, c_int, c_uint64]),
    "memlake_vt_create": (c_int, [_P, c_int, c_size_t, c_size_t, POINTER(_P)]),
    "memlake_vt_destroy": (None, [_P]),
    "memlake_vt_map": (c_int, [_P, c_size_t, c_size_t, _P]),
    "memlake_vt_unmap": (c_int, [_P, c_size_t, c_size_t, c_int, _P]),
    "memlake_vt_set_memory_limit": (c_int, [_P, c_size_t]),
    "memlake_vt_pages": (c_int, [_P, c_size_t, c_size_t, c_char_p]),
    "memlake_vt_get_stats": (c_int, [_P, POINTER(VtStats)]),
}
for _name, (_res, _args) in _sigs.items():
    _f = getattr(lib, _name)
    _f.restype = _res
    _f.argtypes = _args

OP_NAMES = [lib.memlake_prim_op_name(i).decode() for i in range(NUM_OPS)]


def last_error():
    return lib.memlake_last_error().decode(errors="replace")


class Handle:
    """A native handle's Python owner: `close()` frees it; usable in `with`, closed when collected."""

    def close(self):
        raise NotImplementedError

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    def __del__(self):
        try:
            self.close()
        except Exception:
            pass
