// Run with LD_PRELOAD=libmemlake_preload.so on a machine without a CUDA
// driver: the shim must leave the process working, pass every other dlsym
// lookup through, and answer its own entry points with the driver's
// "not initialized" error instead of crashing. Exit status 0 = all held.
#include <dlfcn.h>

#include <cstdio>
#include <cstring>

// From fake_cudart.cpp (standing in for libcudart.so, which the shim also hooks).
extern "C" {
extern std::size_t fake_cudart_last_bytes;
extern void* fake_cudart_last_stream;
int cudaMemcpy(void* dst, const void* src, std::size_t n, int kind);
int cudaMemcpyAsync(void* dst, const void* src, std::size_t n, int kind, void* stream);
extern int fake_cudart_mallocs;
int cudaMalloc(void** p, std::size_t n);
}

int main() {
  int failures = 0;
  auto expect = [&](bool ok, const char* what) {
    std::printf("%s: %s\n", ok ? "ok" : "FAILED", what);
    failures += ok ? 0 : 1;
  };
  using Strlen = std::size_t (*)(const char*);
  auto sl = reinterpret_cast<Strlen>(dlsym(RTLD_DEFAULT, "strlen"));
  expect(sl && sl("memlake") == 7, "dlsym passes other symbols through");
  expect(dlsym(RTLD_DEFAULT, "no_such_symbol_anywhere") == nullptr, "an unknown symbol is still unknown");
  using Alloc = int (*)(unsigned long long*, std::size_t);
  using Free = int (*)(unsigned long long);
  using Info = int (*)(std::size_t*, std::size_t*);
  auto alloc = reinterpret_cast<Alloc>(dlsym(RTLD_DEFAULT, "cuMemAlloc_v2"));
  auto fr = reinterpret_cast<Free>(dlsym(RTLD_DEFAULT, "cuMemFree_v2"));
  auto info = reinterpret_cast<Info>(dlsym(RTLD_DEFAULT, "cuMemGetInfo_v2"));
  expect(alloc && fr && info, "the shim's driver entry points are visible");
  if (alloc && fr && info) {
    unsigned long long p = 0;
    std::size_t f = 0, t = 0;
    const int kNotInitialized = 3;  // CUDA_ERROR_NOT_INITIALIZED
    expect(alloc(&p, 1 << 20) == kNotInitialized && p == 0, "cuMemAlloc without a driver: not initialized");
    expect(fr(0x1000) == kNotInitialized, "cuMemFree without a driver: not initialized");
    expect(info(&f, &t) == kNotInitialized, "cuMemGetInfo without a driver: not initialized");
  }
  using HtoD = int (*)(unsigned long long, const void*, std::size_t);
  using DtoHAsync = int (*)(void*, unsigned long long, std::size_t, void*);
  auto htod = reinterpret_cast<HtoD>(dlsym(RTLD_DEFAULT, "cuMemcpyHtoD_v2"));
  auto dtoh = reinterpret_cast<DtoHAsync>(dlsym(RTLD_DEFAULT, "cuMemcpyDtoHAsync_v2_ptsz"));
  expect(htod && dtoh, "the shim's copy entry points are visible");
  if (htod && dtoh) {  // MEMLAKE_SHIM_COPY=1 is set by the test: the copy path is taken and finds no driver
    static char host[16 << 20];
    const int kNotInitialized = 3;
    expect(htod(0x1000, host, sizeof host) == kNotInitialized, "cuMemcpyHtoD without a driver: not initialized");
    expect(dtoh(host, 0x1000, sizeof host, nullptr) == kNotInitialized, "cuMemcpyDtoHAsync without a driver: not initialized");
  }
  // The runtime's copy functions: without a driver nothing is taken, and the
  // call reaches the runtime behind the shim with its arguments.
  expect(dlsym(RTLD_DEFAULT, "cudaMemcpy") != dlsym(RTLD_NEXT, "cudaMemcpy"), "the shim interposes cudaMemcpy");
  static char a[16 << 20], b[16 << 20];
  expect(cudaMemcpy(a, b, sizeof a, 1) == 4242 && fake_cudart_last_bytes == sizeof a,
         "cudaMemcpy (host to device) is passed on when the shim does not take it");
  expect(cudaMemcpy(a, b, 77, 0) == 4242 && fake_cudart_last_bytes == 77, "cudaMemcpy host to host is passed on");
  void* stream = reinterpret_cast<void*>(0x5);
  expect(cudaMemcpyAsync(a, b, sizeof a, 2, stream) == 4343 && fake_cudart_last_stream == stream,
         "cudaMemcpyAsync is passed on with its stream");
  void* p = nullptr;
  expect(cudaMalloc(&p, 1 << 20) == 0 && p && fake_cudart_mallocs == 1, "cudaMalloc without a driver is passed on to the runtime");
  return failures == 0 ? 0 : 1;
}
