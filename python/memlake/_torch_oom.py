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

build() compiles _torch_direct.cpp the same way (build_direct()): memlake as a
direct subclass of PyTorch's CUDAAllocator, which enable() installs instead of
CUDAPluggableAllocator unless MEMLAKE_TORCH_DIRECT=0 (memlake.torch.enable).
"""
import hashlib
import os

from . import _native

_HERE = os.path.dirname(os.path.abspath(__file__))
SRC = os.path.join(_HERE, "_torch_oom.cpp")
MALLOC, FREE = "memlake_torch_malloc_oom", "memlake_torch_free_oom"
# memlake's allocator as a direct subclass of PyTorch's CUDAAllocator (memlake.torch.enable(), issue 27):
# built the same way, against PyTorch's CUDA headers too.
DIRECT_SRC, DIRECT_NAME = os.path.join(_HERE, "_torch_direct.cpp"), "memlake_torch_direct"


def _cache_dir(torch, sources=(SRC,), name="memlake_torch_oom"):
    base = os.environ.get("MEMLAKE_CACHE_DIR") or os.path.join(os.path.expanduser("~"), ".cache", "memlake")
    texts = []
    for src in sources:
        with open(src, "rb") as f:
            texts.append(f.read())
    key = hashlib.sha256(b"\0".join([torch.__version__.encode(), os.path.realpath(_native.path).encode(),
                                     *texts])).hexdigest()[:16]
    return os.path.join(base, f"{name.replace('memlake_', '', 1)}-{key}")


def _cuda_include_dir(torch):
    """A directory with cuda_runtime_api.h for PyTorch's c10/cuda headers: the toolkit
    torch.utils.cpp_extension finds (CUDA_HOME), else the headers of pip's CUDA runtime package
    (nvidia/cuda_runtime/include or, for CUDA 13, nvidia/cu13/include, beside torch), else
    /usr/local/cuda."""
    from torch.utils import cpp_extension
    cands = []
    if getattr(cpp_extension, "CUDA_HOME", None):
        cands.append(os.path.join(cpp_extension.CUDA_HOME, "include"))
    site = os.path.dirname(os.path.dirname(os.path.abspath(torch.__file__)))
    # CUDA 12 wheels: nvidia/cuda_runtime/include; CUDA 13 wheels share nvidia/cu13/include.
    cands += [os.path.join(site, "nvidia", "cuda_runtime", "include"), os.path.join(site, "nvidia", "cu13", "include"),
              "/usr/local/cuda/include"]
    for d in cands:
        if os.path.exists(os.path.join(d, "cuda_runtime_api.h")):
            return d
    raise OSError("no CUDA runtime headers (cuda_runtime_api.h) found in " + ", ".join(cands))


def build(verbose=False, sources=(SRC,), name="memlake_torch_oom", cuda=False):
    """The path of a wrapper library compiled from `sources` (built on first use, then cached): by
    default the out-of-memory wrapper; cuda=True adds PyTorch's CUDA libraries (c10_cuda,
    torch_cuda) and the CUDA runtime's headers. The CUDA runtime itself is not linked: it
    resolves through c10_cuda, so it is the one PyTorch loaded."""
    import torch
    from torch.utils import cpp_extension
    out = _cache_dir(torch, sources, name)
    lib = os.path.join(out, f"{name}.so")
    if os.path.exists(lib):
        return lib
    os.makedirs(out, mode=0o700, exist_ok=True)
    libdir = os.path.dirname(os.path.realpath(_native.path))
    ldflags = [f"-L{libdir}", f"-l:{os.path.basename(os.path.realpath(_native.path))}", f"-Wl,-rpath,{libdir}"]
    includes = []
    if cuda:
        includes.append(_cuda_include_dir(torch))
        ldflags += [f"-L{d}" for d in cpp_extension.library_paths()] + ["-lc10_cuda", "-ltorch_cuda"]
    cpp_extension.load(name=name, sources=list(sources), build_directory=out, verbose=verbose, is_python_module=False,
                       extra_include_paths=includes, extra_ldflags=ldflags)
    if not os.path.exists(lib):
        raise OSError(f"building {', '.join(sources)} left no {lib}")
    return lib


def build_direct(verbose=False):
    """The path of memlake's direct PyTorch allocator library (_torch_direct.cpp, with _torch_oom.cpp's
    out-of-memory wrapper)."""
    return build(verbose=verbose, sources=(DIRECT_SRC, SRC), name=DIRECT_NAME, cuda=True)
