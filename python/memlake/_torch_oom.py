"""Out-of-memory as torch.OutOfMemoryError under memlake.torch.enable().

PyTorch's CUDAPluggableAllocator calls plain C functions; an exception they
throw reaches Python as torch.OutOfMemoryError only if it is PyTorch's own
c10::OutOfMemoryError, a type libmemlake cannot throw without PyTorch's
headers. _torch_oom.cpp wraps libmemlake's functions and throws that type; it
is compiled here, once per (PyTorch version, libmemlake path), against the
installed PyTorch (torch.utils.cpp_extension: needs a C++ compiler and ninja)
and cached under $MEMLAKE_CACHE_DIR or ~/.cache/memlake. Where it cannot be
built, enable() keeps libmemlake's functions (a RuntimeError on OOM, which
memlake.torch.oom_errors() converts) and says so once.

MEMLAKE_TORCH_OOM=0 skips it.
"""
import hashlib
import os

from . import _native

SRC = os.path.join(os.path.dirname(os.path.abspath(__file__)), "_torch_oom.cpp")
MALLOC, FREE = "memlake_torch_malloc_oom", "memlake_torch_free_oom"


def _cache_dir(torch):
    base = os.environ.get("MEMLAKE_CACHE_DIR") or os.path.join(os.path.expanduser("~"), ".cache", "memlake")
    with open(SRC, "rb") as f:
        src = f.read()
    key = hashlib.sha256(b"\0".join([torch.__version__.encode(), os.path.realpath(_native.path).encode(),
                                     src])).hexdigest()[:16]
    return os.path.join(base, f"torch_oom-{key}")


def build(verbose=False):
    """The path of the compiled wrapper library (built on first use, then cached)."""
    import torch
    from torch.utils import cpp_extension
    out = _cache_dir(torch)
    lib = os.path.join(out, "memlake_torch_oom.so")
    if os.path.exists(lib):
        return lib
    os.makedirs(out, mode=0o700, exist_ok=True)
    libdir = os.path.dirname(os.path.realpath(_native.path))
    cpp_extension.load(name="memlake_torch_oom", sources=[SRC], build_directory=out, verbose=verbose,
                       is_python_module=False,
                       extra_ldflags=[f"-L{libdir}", f"-l:{os.path.basename(os.path.realpath(_native.path))}",
                                      f"-Wl,-rpath,{libdir}"])
    if not os.path.exists(lib):
        raise OSError(f"building {SRC} left no {lib}")
    return lib
