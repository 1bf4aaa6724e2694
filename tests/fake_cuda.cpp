// A stand-in for the CUDA driver (built as libcuda.so.1 in a directory of
// its own) for the shim's tests on a machine without a GPU: only the entry
// points the shim itself calls, with counters the test reads. memlake runs
// on its host backend there, so what the shim takes is real memory.
#include <cstddef>
#include <cstring>
#include <set>

namespace {
constexpr int kSuccess = 0, kInvalidValue = 1, kInvalidContext = 201, kNotFound = 500;
std::set<unsigned long long> g_live;                   // the driver's own allocations
unsigned long long g_next = 0x7e0000000000ull;          // addresses no real memory uses here
}  // namespace

extern "C" {
int fake_cuda_context = 0;  // a context is current (the fake runtime's cudaFree(0) makes one)
int fake_cuda_ctx_syncs = 0, fake_cuda_stream_syncs = 0, fake_cuda_allocs = 0, fake_cuda_frees = 0;
void* fake_cuda_synced_stream = nullptr;

int cuCtxGetDevice(int* dev) {
  if (!fake_cuda_context) return kInvalidContext;
  *dev = 0;
  return kSuccess;
}
int cuCtxSynchronize() {
  ++fake_cuda_ctx_syncs;
  return kSuccess;
}
int cuStreamSynchronize(void* s) {
  ++fake_cuda_stream_syncs;
  fake_cuda_synced_stream = s;
  return kSuccess;
}
int cuStreamIsCapturing(void*, int* status) {
  *status = 0;
  return kSuccess;
}
int cuPointerGetAttribute(void*, int, unsigned long long) { return kInvalidValue; }
int cuMemGetInfo_v2(std::size_t* free_b, std::size_t* total_b) {
  *free_b = std::size_t{1} << 30;
  *total_b = std::size_t{4} << 30;
  return kSuccess;
}
int cuMemAlloc_v2(unsigned long long* p, std::size_t n) {
  ++fake_cuda_allocs;
  *p = g_next;
  g_next += (n + 0xfff) & ~0xfffull;
  g_live.insert(*p);
  return kSuccess;
}
int cuMemFree_v2(unsigned long long p) {
  ++fake_cuda_frees;
  return g_live.erase(p) ? kSuccess : kInvalidValue;
}
int cuGetProcAddress(const char* name, void** fn, int, unsigned long long) {
  struct {
    const char* name;
    void* fn;
  } static const table[] = {
      {"cuMemAlloc", reinterpret_cast<void*>(&cuMemAlloc_v2)},
      {"cuMemFree", reinterpret_cast<void*>(&cuMemFree_v2)},
      {"cuMemGetInfo", reinterpret_cast<void*>(&cuMemGetInfo_v2)},
      {"cuCtxSynchronize", reinterpret_cast<void*>(&cuCtxSynchronize)},
  };
  for (const auto& e : table)
    if (std::strcmp(name, e.name) == 0) {
      *fn = e.fn;
      return kSuccess;
    }
  *fn = nullptr;
  return kNotFound;
}
int cuGetProcAddress_v2(const char* name, void** fn, int version, unsigned long long flags, int* status) {
  const int r = cuGetProcAddress(name, fn, version, flags);
  if (status) *status = r == kSuccess ? 0 : 1;  // CU_GET_PROC_ADDRESS_SUCCESS / _SYMBOL_NOT_FOUND
  return r;
}
}
