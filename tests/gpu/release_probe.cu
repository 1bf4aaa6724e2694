// What a repeat sleep pays the driver (issue 21): per physical handle, the
// unmap and the release (cuMemUnmap, cuMemRelease) of memory that was mapped
// and written, for several handle sizes, released on 1..8 host threads.
// Build: nvcc -O2 -o release_probe tests/gpu/release_probe.cu -lcuda
//   ./release_probe [GiB]   (default 16)
#include <cuda.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <thread>
#include <vector>

#define CK(x)                                                             \
  do {                                                                    \
    CUresult r_ = (x);                                                    \
    if (r_ != CUDA_SUCCESS) {                                             \
      const char* s_ = nullptr;                                           \
      cuGetErrorName(r_, &s_);                                            \
      std::fprintf(stderr, "%s:%d %s: %s\n", __FILE__, __LINE__, #x, s_); \
      std::exit(1);                                                       \
    }                                                                     \
  } while (0)

using Clock = std::chrono::steady_clock;
static double ms_since(Clock::time_point t) { return std::chrono::duration<double, std::milli>(Clock::now() - t).count(); }

int main(int argc, char** argv) {
  const size_t total = (argc > 1 ? std::strtoull(argv[1], nullptr, 10) : 16) << 30;
  CK(cuInit(0));
  CUdevice dev;
  CK(cuDeviceGet(&dev, 0));
  CUcontext ctx;
  CK(cuDevicePrimaryCtxRetain(&ctx, dev));
  CK(cuCtxSetCurrent(ctx));
  CUmemAllocationProp prop = {};
  prop.type = CU_MEM_ALLOCATION_TYPE_PINNED;
  prop.location.type = CU_MEM_LOCATION_TYPE_DEVICE;
  prop.location.id = dev;
  CUmemAccessDesc acc = {};
  acc.location = prop.location;
  acc.flags = CU_MEM_ACCESS_FLAGS_PROT_READWRITE;
  CUdeviceptr va;
  CK(cuMemAddressReserve(&va, total, 1 << 30, 0, 0));
  std::printf("%-10s %7s %8s %10s %10s %12s %10s\n", "handle", "count", "threads", "unmap ms", "release ms",
              "release/handle us", "create ms");
  for (size_t hs : {size_t(2) << 20, size_t(32) << 20, size_t(64) << 20, size_t(256) << 20, size_t(1) << 30}) {
    const size_t n = total / hs;
    for (int threads : {1, 2, 4, 8}) {
      for (int rep = 0; rep < 2; ++rep) {
        std::vector<CUmemGenericAllocationHandle> h(n);
        auto t0 = Clock::now();
        for (size_t i = 0; i < n; ++i) CK(cuMemCreate(&h[i], hs, &prop, 0));
        const double create = ms_since(t0);
        for (size_t i = 0; i < n; ++i) CK(cuMemMap(va + i * hs, hs, 0, h[i], 0));
        CK(cuMemSetAccess(va, n * hs, &acc, 1));
        CK(cuMemsetD8(va, 1, n * hs));
        CK(cuCtxSynchronize());
        t0 = Clock::now();
        for (size_t i = 0; i < n; ++i) CK(cuMemUnmap(va + i * hs, hs));
        const double unmap = ms_since(t0);
        t0 = Clock::now();
        std::vector<std::thread> ts;
        for (int t = 0; t < threads; ++t)
          ts.emplace_back([&, t] {
            CK(cuCtxSetCurrent(ctx));
            for (size_t i = t; i < n; i += threads) CK(cuMemRelease(h[i]));
          });
        for (auto& x : ts) x.join();
        const double rel = ms_since(t0);
        if (rep == 1)
          std::printf("%6zu MiB %7zu %8d %10.2f %10.2f %12.1f %10.2f\n", hs >> 20, n, threads, unmap, rel,
                      rel * 1e3 / n, create);
      }
    }
  }
  // One unmap call over many handles' ranges (if the driver takes it).
  {
    const size_t hs = size_t(64) << 20, n = total / hs;
    std::vector<CUmemGenericAllocationHandle> h(n);
    for (size_t i = 0; i < n; ++i) CK(cuMemCreate(&h[i], hs, &prop, 0));
    for (size_t i = 0; i < n; ++i) CK(cuMemMap(va + i * hs, hs, 0, h[i], 0));
    CK(cuMemSetAccess(va, n * hs, &acc, 1));
    auto t0 = Clock::now();
    CUresult r = cuMemUnmap(va, n * hs);
    const double one = ms_since(t0);
    const char* s = nullptr;
    cuGetErrorName(r, &s);
    std::printf("one cuMemUnmap over %zu handles of 64 MiB: %s, %.2f ms\n", n, s, one);
    if (r != CUDA_SUCCESS)
      for (size_t i = 0; i < n; ++i) CK(cuMemUnmap(va + i * hs, hs));
    for (size_t i = 0; i < n; ++i) CK(cuMemRelease(h[i]));
  }
  CK(cuMemAddressFree(va, total));
  return 0;
}
