// The floor of any allocator plugged into PyTorch through CUDAPluggableAllocator:
// an exact-size cache over cuMemAlloc with one lock and two hash maps, no
// stream semantics, no stitching, no statistics. bench/torch_alloc_replay.py
// builds it on the GPU machine and runs it as the allocator "null", so the
// table separates PyTorch's pluggable-allocator wrapper from memlake's own
// work. Benchmark only: it never returns memory and ignores streams.
//
//   nvcc -O2 -shared -Xcompiler -fPIC -o null_pluggable.so bench/null_pluggable.cpp -lcuda
#include <cuda.h>
#include <sys/types.h>

#include <mutex>
#include <new>
#include <unordered_map>
#include <vector>

namespace {
std::mutex mu;
std::unordered_map<size_t, std::vector<CUdeviceptr>> cached;  // rounded size -> free blocks
std::unordered_map<CUdeviceptr, size_t> live;                 // block -> rounded size
size_t round_up(size_t n) { return (n + 511) & ~size_t{511}; }
}  // namespace

extern "C" void* null_malloc(ssize_t size, int, void*) {
  size_t n = round_up(size > 0 ? static_cast<size_t>(size) : 1);
  std::lock_guard<std::mutex> g(mu);
  CUdeviceptr p = 0;
  auto it = cached.find(n);
  if (it != cached.end() && !it->second.empty()) {
    p = it->second.back();
    it->second.pop_back();
  } else if (cuMemAlloc(&p, n) != CUDA_SUCCESS) {
    throw std::bad_alloc();
  }
  live.emplace(p, n);
  return reinterpret_cast<void*>(p);
}

extern "C" void null_free(void* ptr, size_t, int, void*) {
  std::lock_guard<std::mutex> g(mu);
  auto it = live.find(reinterpret_cast<CUdeviceptr>(ptr));
  if (it == live.end()) return;
  cached[it->second].push_back(it->first);
  live.erase(it);
}
