// An ordinary CUDA program, knowing nothing of memlake: run it plain and
// under LD_PRELOAD=libmemlake_preload.so to compare (scripts/gpu_suite.sh).
//   shim_probe            -> prints "RESULT {json}" and exits 0 when every check passed
// It checks that memory from cudaMalloc/cudaMallocAsync works with kernels
// and copies, that cudaFree of a foreign pointer still fails as the
// driver's does, and measures a cudaMalloc/cudaFree loop of a cached size and
// the device memory in use (total - free from cudaMemGetInfo) at the peak of
// a fragmenting allocation pattern, and cudaMemcpy(Async) bandwidth from and
// to pageable memory (bytes checked).
#include <cuda.h>
#include <cuda_runtime.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>

#define CHECK(x)                                                                      \
  do {                                                                                \
    cudaError_t e_ = (x);                                                             \
    if (e_ != cudaSuccess) {                                                          \
      std::printf("FAIL %s:%d %s: %s\n", __FILE__, __LINE__, #x, cudaGetErrorString(e_)); \
      std::exit(1);                                                                   \
    }                                                                                 \
  } while (0)

__global__ void fill(unsigned* p, size_t n, unsigned seed) {
  for (size_t i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x) p[i] = seed ^ (unsigned)i;
}
__global__ void verify(const unsigned* p, size_t n, unsigned seed, int* bad) {
  for (size_t i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x)
    if (p[i] != (seed ^ (unsigned)i)) atomicAdd(bad, 1);
}

static size_t used() {
  size_t f = 0, t = 0;
  CHECK(cudaMemGetInfo(&f, &t));
  return t - f;
}

// "storm SECONDS": nothing but cudaMalloc/cudaFree of mixed sizes from
// several threads for that long (the load under which `memlake stat` must
// still answer quickly).
static int storm(double seconds) {
  using C = std::chrono::steady_clock;
  const auto end = C::now() + std::chrono::duration<double>(seconds);
  unsigned long long n = 0;
  std::vector<void*> live(64, nullptr);
  for (unsigned i = 0; C::now() < end; ++i) {
    void*& slot = live[i % live.size()];
    if (slot) CHECK(cudaFree(slot));
    CHECK(cudaMalloc(&slot, size_t(512) << ((i * 7) % 16)));  // 512 B .. 16 MiB
    ++n;
  }
  for (void* p : live)
    if (p) CHECK(cudaFree(p));
  std::printf("STORM %llu malloc+free pairs in %.1f s\n", n, seconds);
  return 0;
}

int main(int argc, char** argv) {
  if (argc > 2 && std::strcmp(argv[1], "storm") == 0) return storm(std::atof(argv[2]));
  using C = std::chrono::steady_clock;
  int* bad;
  CHECK(cudaMalloc(&bad, sizeof(int)));
  CHECK(cudaMemset(bad, 0, sizeof(int)));
  const size_t base = used();

  // 1. Fragmenting pattern: 96 blocks of 24..120 MiB, free every other one,
  //    then ask for 12 blocks of 640 MiB; data checked throughout.
  std::vector<void*> keep, blocks;
  size_t peak = 0;
  for (int i = 0; i < 96; ++i) {
    size_t n = size_t(24 + (i * 37) % 97) << 20;
    void* p;
    CHECK(cudaMalloc(&p, n));
    fill<<<256, 256>>>((unsigned*)p, n / 4, i);
    blocks.push_back(p);
  }
  for (int i = 0; i < 96; i += 2) CHECK(cudaFree(blocks[i]));
  for (int i = 0; i < 12; ++i) {
    void* p;
    CHECK(cudaMalloc(&p, size_t(640) << 20));
    fill<<<256, 256>>>((unsigned*)p, (size_t(640) << 20) / 4, 1000 + i);
    keep.push_back(p);
    peak = std::max(peak, used());
  }
  for (int i = 1; i < 96; i += 2) {
    size_t n = size_t(24 + (i * 37) % 97) << 20;
    verify<<<256, 256>>>((const unsigned*)blocks[i], n / 4, i, bad);
  }
  for (int i = 0; i < 12; ++i) verify<<<256, 256>>>((const unsigned*)keep[i], (size_t(640) << 20) / 4, 1000 + i, bad);
  int nbad = 0;
  CHECK(cudaMemcpy(&nbad, bad, sizeof(int), cudaMemcpyDeviceToHost));
  size_t live = 0;
  for (int i = 1; i < 96; i += 2) live += size_t(24 + (i * 37) % 97) << 20;
  live += 12 * (size_t(640) << 20);
  for (int i = 1; i < 96; i += 2) CHECK(cudaFree(blocks[i]));
  for (void* p : keep) CHECK(cudaFree(p));

  // 2. Stream-ordered allocation.
  cudaStream_t s;
  CHECK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
  void* a;
  CHECK(cudaMallocAsync(&a, 64 << 20, s));
  fill<<<256, 256, 0, s>>>((unsigned*)a, (64 << 20) / 4, 7);
  verify<<<256, 256, 0, s>>>((const unsigned*)a, (64 << 20) / 4, 7, bad);
  CHECK(cudaFreeAsync(a, s));
  CHECK(cudaStreamSynchronize(s));
  CHECK(cudaMemcpy(&nbad, bad, sizeof(int), cudaMemcpyDeviceToHost));

  // 3. A foreign pointer is still refused.
  int host_var = 0;
  const bool foreign_refused = cudaFree(&host_var) != cudaSuccess;
  cudaGetLastError();

  // 4. cudaMalloc + cudaFree of a cached size, in a loop.
  const int iters = 20000;
  double us[3];
  size_t sizes[3] = {size_t(512), size_t(4) << 20, size_t(64) << 20};
  for (int k = 0; k < 3; ++k) {
    void* p;
    CHECK(cudaMalloc(&p, sizes[k]));
    CHECK(cudaFree(p));
    auto t0 = C::now();
    for (int i = 0; i < iters; ++i) {
      CHECK(cudaMalloc(&p, sizes[k]));
      CHECK(cudaFree(p));
    }
    us[k] = std::chrono::duration<double, std::micro>(C::now() - t0).count() / iters;
  }
  // 4b. The same loop through the driver API (cuMemAlloc/cuMemFree, what
  //     the runtime calls underneath): separates the runtime's own cost
  //     from the shim's.
  double drv_us[3];
  for (int k = 0; k < 3; ++k) {
    CUdeviceptr p;
    if (cuMemAlloc(&p, sizes[k]) != CUDA_SUCCESS || cuMemFree(p) != CUDA_SUCCESS) {
      std::printf("FAIL cuMemAlloc/cuMemFree\n");
      return 1;
    }
    auto t0 = C::now();
    for (int i = 0; i < iters; ++i) {
      cuMemAlloc(&p, sizes[k]);
      cuMemFree(p);
    }
    drv_us[k] = std::chrono::duration<double, std::micro>(C::now() - t0).count() / iters;
  }
  // 5. Pageable (malloc'd) host memory <-> device with cudaMemcpy and
  //    cudaMemcpyAsync (what MEMLAKE_SHIM_COPY=1 takes over), checked.
  const size_t big = size_t(1) << 30;
  unsigned* h = static_cast<unsigned*>(std::malloc(big));
  unsigned* back = static_cast<unsigned*>(std::malloc(big));
  for (size_t i = 0; i < big / 4; ++i) h[i] = 77u ^ (unsigned)i;
  std::memset(back, 0, big);
  void* d;
  CHECK(cudaMalloc(&d, big));
  const size_t csz[3] = {size_t(64) << 20, size_t(256) << 20, big};
  double gbps[3][3];  // [h2d, h2d_async, d2h][size]
  int copy_bad = 0;
  for (int k = 0; k < 3; ++k) {
    const size_t n = csz[k];
    for (int kind = 0; kind < 3; ++kind) {
      double best = 1e30;
      for (int rep = 0; rep < 4; ++rep) {
        CHECK(cudaDeviceSynchronize());
        auto t0 = C::now();
        if (kind == 0) CHECK(cudaMemcpy(d, h, n, cudaMemcpyHostToDevice));
        if (kind == 1) {
          CHECK(cudaMemcpyAsync(d, h, n, cudaMemcpyHostToDevice, s));
          CHECK(cudaStreamSynchronize(s));
        }
        if (kind == 2) CHECK(cudaMemcpy(back, d, n, cudaMemcpyDeviceToHost));
        if (kind != 1) CHECK(cudaDeviceSynchronize());
        double sec = std::chrono::duration<double>(C::now() - t0).count();
        if (rep > 0) best = std::min(best, sec);
      }
      gbps[kind][k] = double(n) / best / 1e9;
      if (kind < 2) {
        CHECK(cudaMemset(bad, 0, sizeof(int)));
        verify<<<256, 256>>>((const unsigned*)d, n / 4, 77u, bad);
        int b = 0;
        CHECK(cudaMemcpy(&b, bad, sizeof(int), cudaMemcpyDeviceToHost));
        copy_bad += b;
      } else {
        copy_bad += std::memcmp(back, h, n) != 0;
        std::memset(back, 0, n);
      }
    }
  }
  CHECK(cudaFree(d));
  std::free(h);
  std::free(back);

  std::printf("RESULT {\"peak_used_bytes\":%zu,\"peak_live_bytes\":%zu,\"bad_words\":%d,\"foreign_free_refused\":%s,"
              "\"malloc_free_us\":{\"512\":%.3f,\"4M\":%.3f,\"64M\":%.3f},"
              "\"cuMemAlloc_free_us\":{\"512\":%.3f,\"4M\":%.3f,\"64M\":%.3f},"
              "\"pageable_copy_gbps\":{\"h2d\":[%.1f,%.1f,%.1f],\"h2d_async\":[%.1f,%.1f,%.1f],\"d2h\":[%.1f,%.1f,%.1f],"
              "\"sizes\":\"64M,256M,1G\"},\"copy_bad\":%d}\n",
              peak - base, live, nbad, foreign_refused ? "true" : "false", us[0], us[1], us[2], drv_us[0], drv_us[1], drv_us[2], gbps[0][0], gbps[0][1],
              gbps[0][2], gbps[1][0], gbps[1][1], gbps[1][2], gbps[2][0], gbps[2][1], gbps[2][2], copy_bad);
  return nbad == 0 && foreign_refused && copy_bad == 0 ? 0 : 1;
}
