// memlake's allocator functions for torch.cuda.memory.CUDAPluggableAllocator, with
// out-of-memory raised as PyTorch's own c10::OutOfMemoryError, which PyTorch's
// Python bindings turn into torch.OutOfMemoryError (what code written for the
// native allocator catches). libmemlake's memlake_torch_malloc cannot throw that
// type without PyTorch's headers; this file is compiled against them, on the
// user's machine, by memlake._torch_oom.build() (torch.utils.cpp_extension),
// and linked to the libmemlake the package loaded.
#include <c10/util/Exception.h>

#include <cstddef>
#include <exception>
#include <string>
#include <sys/types.h>

extern "C" void* memlake_torch_malloc(ssize_t size, int device, void* stream);
extern "C" void memlake_torch_free(void* ptr, size_t size, int device, void* stream);

namespace {
constexpr char kOom[] = "memlake: CUDA out of memory";
}

extern "C" void* memlake_torch_malloc_oom(ssize_t size, int device, void* stream) {
  try {
    return memlake_torch_malloc(size, device, stream);
  } catch (const c10::Error&) {
    throw;
  } catch (const std::exception& e) {
    const std::string what = e.what();
    if (what.rfind(kOom, 0) == 0) TORCH_CHECK_WITH(OutOfMemoryError, false, what);
    throw;
  }
}

extern "C" void memlake_torch_free_oom(void* ptr, size_t size, int device, void* stream) {
  memlake_torch_free(ptr, size, device, stream);
}
