"""The torch.OutOfMemoryError wrapper (memlake._torch_oom): built against the installed PyTorch
the way enable() builds it, then called from C++ the way CUDAPluggableAllocator calls it. The default
allocator runs on the host backend under an 8 MiB cap: an allocation over it must throw
PyTorch's own c10::OutOfMemoryError (what PyTorch's bindings turn into torch.OutOfMemoryError)
with memlake's message; any other failure passes through as it was (not an OOM, which PyTorch
would retry)."""
import os
import shutil
import subprocess

import pytest

torch = pytest.importorskip("torch", reason="PyTorch not installed")
if shutil.which("ninja") is None or shutil.which("c++") is None:
    pytest.skip("no ninja or C++ compiler: the wrapper cannot be built here", allow_module_level=True)

from memlake import _torch_oom  # noqa: E402
from torch.utils import cpp_extension as _ce  # noqa: E402

if not any(os.path.exists(os.path.join(d, "c10", "util", "Exception.h")) for d in _ce.include_paths()):
    pytest.skip("PyTorch's C++ headers are not installed (Debian: libtorch-dev)", allow_module_level=True)

DRIVER = r"""
#include <c10/util/Exception.h>
#include <dlfcn.h>
#include <cstdio>
#include <sys/types.h>
int main(int argc, char** argv) {
  void* h = dlopen(argv[1], RTLD_NOW | RTLD_LOCAL);
  if (!h) { std::printf("DLOPEN %s\n", dlerror()); return 2; }
  auto m = reinterpret_cast<void* (*)(ssize_t, int, void*)>(dlsym(h, "memlake_torch_malloc_oom"));
  auto f = reinterpret_cast<void (*)(void*, size_t, int, void*)>(dlsym(h, "memlake_torch_free_oom"));
  if (!m || !f) { std::printf("DLSYM\n"); return 2; }
  for (int device : {0, -1}) {  // 64 MiB over an 8 MiB cap: out of memory; device -1: misuse
    try {
      void* p = m(64 << 20, device, nullptr);
      std::printf("NO-THROW %p\n", p);
    } catch (const c10::OutOfMemoryError& e) {
      std::printf("OOM %s\n", e.what_without_backtrace());
    } catch (const std::exception& e) {
      std::printf("OTHER %s\n", e.what());
    }
  }
  void* p = m(1 << 20, 0, nullptr);  // within the cap: an allocation, freed through the wrapper
  std::printf("SMALL %d\n", p != nullptr);
  f(p, 1 << 20, 0, nullptr);
  std::printf("ZERO %p\n", m(0, 0, nullptr));  // size 0: no allocation, no error
  return 0;
}
"""


def test_out_of_memory_is_c10s_own_type(tmp_path, monkeypatch):
    monkeypatch.setenv("MEMLAKE_CACHE_DIR", str(tmp_path / "cache"))
    lib = _torch_oom.build()
    assert os.path.exists(lib) and lib.startswith(str(tmp_path))
    assert _torch_oom.build() == lib  # cached: the second call builds nothing
    from torch.utils import cpp_extension
    src = tmp_path / "driver.cpp"
    src.write_text(DRIVER)
    exe = tmp_path / "driver"
    libs = cpp_extension.library_paths()
    cmd = ["c++", "-std=c++17", str(src), "-o", str(exe), "-ldl"]
    cmd += [f"-I{p}" for p in cpp_extension.include_paths()]
    cmd += [f"-L{p}" for p in libs] + ["-lc10"] + [f"-Wl,-rpath,{p}" for p in libs]
    subprocess.run(cmd, check=True, capture_output=True, text=True)
    env = dict(os.environ, MEMLAKE_BACKEND="host", MEMLAKE_MEMORY_CAP="8M")
    out = subprocess.run([str(exe), lib], capture_output=True, text=True, env=env, timeout=60).stdout
    assert "OOM memlake: CUDA out of memory. cannot allocate 64.00 MiB" in out, out
    assert "OTHER memlake: allocation of 67108864 bytes failed: device -1" in out, out
    assert "SMALL 1" in out, out
    assert "ZERO (nil)" in out or "ZERO 0" in out, out
