// The LD_PRELOAD shim's own logic on a machine without a GPU: run with
// LD_PRELOAD=libmemlake_preload.so, a stand-in driver (fake_cuda.cpp, as
// libcuda.so.1 on LD_LIBRARY_PATH), a stand-in runtime (fake_cudart.cpp,
// linked in) and MEMLAKE_BACKEND=host, so what the shim takes is memlake's
// real (host) memory and what it passes on reaches the stand-ins, which
// count it. `shim_hosted off` (with MEMLAKE_SHIM=0) checks that everything
// passes through. Exit status 0 = all held.
#include <dlfcn.h>

#include <cstdio>
#include <cstring>
#include <vector>

extern "C" {
extern int fake_cudart_mallocs, fake_cudart_frees;
extern void* fake_cudart_last_freed;
int cudaMalloc(void** p, std::size_t n);
int cudaFree(void* p);
int cudaMallocAsync(void** p, std::size_t n, void* stream);
int cudaFreeAsync(void* p, void* stream);
}

namespace {

int failures = 0;
void expect(bool ok, const char* what) {
  std::printf("%s: %s\n", ok ? "ok" : "FAILED", what);
  failures += ok ? 0 : 1;
}

// A counter of the stand-in driver (loaded by the shim, RTLD_GLOBAL).
int driver(const char* name) {
  auto* p = static_cast<int*>(dlsym(RTLD_DEFAULT, name));
  return p ? *p : -1;
}

bool filled(void* p, std::size_t n, unsigned char v) {
  std::memset(p, v, n);
  std::vector<unsigned char> back(n);
  std::memcpy(back.data(), p, n);
  for (unsigned char c : back)
    if (c != v) return false;
  return true;
}

using CuAlloc = int (*)(unsigned long long*, std::size_t);
using CuFree = int (*)(unsigned long long);
using CuInfo = int (*)(std::size_t*, std::size_t*);
using CuGetProc = int (*)(const char*, void**, int, unsigned long long, int*);
constexpr std::size_t kMiB = std::size_t{1} << 20;
constexpr int kInvalidValue = 1;
void* const kRuntimeBlock = reinterpret_cast<void*>(0x7f0000abc000);  // fake_cudart.cpp's

}  // namespace

int main(int argc, char** argv) {
  const bool off = argc > 1 && std::strcmp(argv[1], "off") == 0;
  auto cu_alloc = reinterpret_cast<CuAlloc>(dlsym(RTLD_DEFAULT, "cuMemAlloc_v2"));
  auto cu_free = reinterpret_cast<CuFree>(dlsym(RTLD_DEFAULT, "cuMemFree_v2"));
  auto cu_info = reinterpret_cast<CuInfo>(dlsym(RTLD_DEFAULT, "cuMemGetInfo_v2"));
  auto get_proc = reinterpret_cast<CuGetProc>(dlsym(RTLD_DEFAULT, "cuGetProcAddress_v2"));
  if (!cu_alloc || !cu_free || !cu_info || !get_proc) {
    std::printf("FAILED: the shim's driver entry points are not visible\n");
    return 1;
  }
  std::size_t free_b = 0, total_b = 0;
  if (off) {
    expect(cu_info(&free_b, &total_b) == 0 && free_b == std::size_t{1} << 30, "MEMLAKE_SHIM=0: cuMemGetInfo is the driver's");
    void* p = nullptr;
    expect(cudaMalloc(&p, 4 * kMiB) == 0 && p == kRuntimeBlock && fake_cudart_mallocs == 1, "MEMLAKE_SHIM=0: cudaMalloc is the runtime's");
    expect(cudaFree(p) == 0 && fake_cudart_last_freed == p, "MEMLAKE_SHIM=0: cudaFree is the runtime's");
    unsigned long long d = 0;
    expect(cu_alloc(&d, kMiB) == 0 && d >= 0x7e0000000000ull && driver("fake_cuda_allocs") == 1, "MEMLAKE_SHIM=0: cuMemAlloc is the driver's");
    expect(cu_free(d) == 0 && driver("fake_cuda_frees") == 1, "MEMLAKE_SHIM=0: cuMemFree is the driver's");
    return failures == 0 ? 0 : 1;
  }

  // No context is current yet: the runtime is asked for one (cudaFree(0)), then memlake allocates.
  void* p = nullptr;
  expect(cudaMalloc(&p, 4 * kMiB) == 0 && p && p != kRuntimeBlock, "cudaMalloc is served by memlake");
  expect(fake_cudart_mallocs == 0 && fake_cudart_frees == 1 && fake_cudart_last_freed == nullptr,
         "the runtime was only asked to make its context current (cudaFree(0))");
  expect(p && filled(p, 4 * kMiB, 0xab), "the block is real memory, 4 MiB of it");
  const int syncs = driver("fake_cuda_ctx_syncs");
  expect(cudaFree(p) == 0 && driver("fake_cuda_ctx_syncs") == syncs + 1 && fake_cudart_frees == 1,
         "cudaFree of memlake's block waits for the device, and the runtime never sees it");
  void* q = nullptr;
  expect(cudaMalloc(&q, 4 * kMiB) == 0 && q == p, "memlake's cache serves the next cudaMalloc of that size");
  expect(cudaFree(q) == 0, "... which is freed again");
  expect(cudaFree(q) == kInvalidValue && fake_cudart_last_freed == q, "a double free is the runtime's to report");
  expect(cudaFree(kRuntimeBlock) == 0 && fake_cudart_last_freed == kRuntimeBlock, "a pointer the runtime allocated goes back to it");
  void* z = nullptr;
  expect(cudaMalloc(&z, 0) == 0 && fake_cudart_mallocs == 1, "cudaMalloc of 0 bytes is the runtime's to answer");

  // Stream-ordered allocation: a free on another stream waits for that stream first.
  void* const s1 = reinterpret_cast<void*>(0x5000);
  void* const s2 = reinterpret_cast<void*>(0x6000);
  void* a = nullptr;
  expect(cudaMallocAsync(&a, 64 * kMiB, s1) == 0 && a && a != kRuntimeBlock && filled(a, 64 * kMiB, 7),
         "cudaMallocAsync is served by memlake");
  const int ssyncs = driver("fake_cuda_stream_syncs");
  expect(cudaFreeAsync(a, s1) == 0 && driver("fake_cuda_stream_syncs") == ssyncs, "cudaFreeAsync on the allocation's stream: no wait");
  expect(cudaMallocAsync(&a, 64 * kMiB, s1) == 0 && a, "cudaMallocAsync again");
  expect(cudaFreeAsync(a, s2) == 0 && driver("fake_cuda_stream_syncs") == ssyncs + 1 &&
             dlsym(RTLD_DEFAULT, "fake_cuda_synced_stream") &&
             *static_cast<void**>(dlsym(RTLD_DEFAULT, "fake_cuda_synced_stream")) == s2,
         "cudaFreeAsync on another stream waits for that stream");
  expect(cudaFreeAsync(a, s1) == kInvalidValue, "an async double free is the runtime's to report");

  // The driver's entry points, directly and as cuGetProcAddress hands them out.
  unsigned long long d = 0;
  expect(cu_alloc(&d, 3 * kMiB) == 0 && d && driver("fake_cuda_allocs") == 0 && filled(reinterpret_cast<void*>(d), 3 * kMiB, 9),
         "cuMemAlloc is served by memlake");
  expect(cu_free(d) == 0 && driver("fake_cuda_frees") == 0, "cuMemFree of memlake's block stays in memlake");
  expect(cu_free(0x7e0000001000ull) == kInvalidValue && driver("fake_cuda_frees") == 1, "cuMemFree of a foreign pointer is the driver's to answer");
  void* fn = nullptr;
  int status = -1;
  expect(get_proc("cuMemAlloc", &fn, 12000, 0, &status) == 0 && fn == reinterpret_cast<void*>(cu_alloc),
         "cuGetProcAddress hands out the shim's cuMemAlloc");
  expect(get_proc("cuMemAlloc", &fn, 3000, 0, &status) == 0 && fn && fn != reinterpret_cast<void*>(cu_alloc),
         "... and the driver's own for the 32-bit ABI of CUDA 3.0");
  expect(get_proc("cuCtxSynchronize", &fn, 12000, 0, &status) == 0 && fn == dlsym(dlopen("libcuda.so.1", RTLD_NOW | RTLD_NOLOAD), "cuCtxSynchronize"),
         "cuGetProcAddress passes every other entry point through");
  expect(cu_info(&free_b, &total_b) == 0 && free_b > (std::size_t{1} << 30) && total_b == std::size_t{4} << 30,
         "cuMemGetInfo counts memlake's cached memory as free");
  return failures == 0 ? 0 : 1;
}
