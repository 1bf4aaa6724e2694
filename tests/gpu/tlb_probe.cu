// Does the speed of a kernel depend on how its memory was built from VMM
// handles? Session 11 saw fine-tuning steps without any driver call run
// 16-34 % slower than native on memory made of 2 MiB handles and 8-12 % on
// 8 MiB handles. This probe separates the candidate causes on one buffer:
// handle size, the virtual alignment of a handle's mapping, and the
// physical order of the handles (a stitched view's pages come from
// anywhere). (Mapping 2 MiB pieces of larger handles is not an option: the
// driver refuses a partial mapping of a handle, anchors.md.)
//
//   nvcc -O2 -o tlb_probe tests/gpu/tlb_probe.cu -lcuda
//   ./tlb_probe [GiB=8]
//
// For each layout: the time to map it (cuMemMap calls, one cuMemSetAccess
// over the range), a streaming read (GB/s) and random 4-byte reads over the
// whole buffer and over its first 256 MiB (millions of reads per ms), a
// device-to-device cudaMemcpyAsync (copy engines) and a cudaMemsetAsync,
// best of 5 runs. cudaMalloc's memory is the reference row. Session 13: the
// kernels ran at the same speed on every layout; the copy columns came after.
#include <cuda.h>
#include <cuda_runtime.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <random>
#include <string>
#include <vector>

#include "probe.cuh"

namespace {

using probe::kMiB;
using probe::stream_read;


__device__ unsigned long long mix(unsigned long long x) {
  x ^= x >> 33;
  x *= 0xff51afd7ed558ccdULL;
  x ^= x >> 33;
  x *= 0xc4ceb9fe1a85ec53ULL;
  return x ^ (x >> 33);
}

__global__ void gather(const unsigned* p, size_t words, int reads, unsigned* out) {
  const unsigned long long t = blockIdx.x * static_cast<unsigned long long>(blockDim.x) + threadIdx.x;
  unsigned acc = 0;
  for (int k = 0; k < reads; ++k) acc += p[mix(t * 1315423911ULL + k) % words];
  if (acc == 0xdeadbeefu) out[0] = acc;
}

struct Layout {
  std::string name;
  size_t handle = 0;   // 0: cudaMalloc
  size_t shift = 0;    // bytes added to a handle-aligned base
  bool shuffle = false;  // map the handles in shuffled physical order
  int aliases = 0;       // also map every handle into this many other ranges (stitched views alias pages)
};

struct Timing {
  double map_ms = 0, access_ms = 0, stream_gbs = 0, gather_all = 0, gather_256 = 0, copy_gbs = 0, memset_gbs = 0;
  size_t maps = 0;
};

template <class F>
double best_ms(F&& f) {
  cudaEvent_t a, b;
  RK(cudaEventCreate(&a));
  RK(cudaEventCreate(&b));
  f();  // warm-up
  double best = 1e30;
  for (int i = 0; i < 5; ++i) {
    RK(cudaEventRecord(a));
    f();
    RK(cudaEventRecord(b));
    RK(cudaEventSynchronize(b));
    float ms = 0;
    RK(cudaEventElapsedTime(&ms, a, b));
    best = std::min(best, static_cast<double>(ms));
  }
  RK(cudaGetLastError());
  RK(cudaEventDestroy(a));
  RK(cudaEventDestroy(b));
  return best;
}

void measure(void* base, size_t bytes, Timing* t, unsigned* out, int sms) {
  RK(cudaMemset(base, 0, bytes));
  const int blocks = sms * 8, threads = 256, reads = 256;
  const double s = best_ms([&] { stream_read<<<blocks, threads>>>(static_cast<const float4*>(base), bytes / 16, reinterpret_cast<float*>(out)); });
  t->stream_gbs = static_cast<double>(bytes) / s / 1e6;
  const double n = static_cast<double>(blocks) * threads * reads;
  const double g1 = best_ms([&] { gather<<<blocks, threads>>>(static_cast<const unsigned*>(base), bytes / 4, reads, out); });
  const double g2 = best_ms([&] { gather<<<blocks, threads>>>(static_cast<const unsigned*>(base), 256 * kMiB / 4, reads, out); });
  t->gather_all = n / g1 / 1e6;
  t->gather_256 = n / g2 / 1e6;
  // The copy engines (cudaMemcpyAsync device to device, which PyTorch uses for contiguous
  // copies) and cudaMemsetAsync: one half of the buffer into the other, then the whole.
  const size_t half = bytes / 2;
  char* c = static_cast<char*>(base);
  const double cp = best_ms([&] { RK(cudaMemcpyAsync(c + half, c, half, cudaMemcpyDeviceToDevice)); });
  const double ms = best_ms([&] { RK(cudaMemsetAsync(base, 0, bytes)); });
  t->copy_gbs = static_cast<double>(half) / cp / 1e6;  // bytes copied (each read and written once)
  t->memset_gbs = static_cast<double>(bytes) / ms / 1e6;
}

double ms_since(std::chrono::steady_clock::time_point a) {
  return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - a).count();
}

Timing run(const Layout& l, size_t bytes, unsigned* out, int sms) {
  Timing t;
  if (l.handle == 0) {
    void* p = nullptr;
    RK(cudaMalloc(&p, bytes));
    measure(p, bytes, &t, out, sms);
    RK(cudaFree(p));
    return t;
  }
  const CUmemAllocationProp prop = probe::device_prop();
  const size_t n = bytes / l.handle;
  std::vector<CUmemGenericAllocationHandle> h(n);
  for (auto& x : h) CK(cuMemCreate(&x, l.handle, &prop, 0));
  CUdeviceptr res = 0;
  const size_t span = bytes + l.handle;
  CK(cuMemAddressReserve(&res, span, l.handle, 0, 0));
  const CUdeviceptr base = res + l.shift;
  std::mt19937 rng(7);
  auto t0 = std::chrono::steady_clock::now();
  std::vector<size_t> order(n);
  for (size_t i = 0; i < n; ++i) order[i] = i;
  if (l.shuffle) std::shuffle(order.begin(), order.end(), rng);
  for (size_t j = 0; j < n; ++j) CK(cuMemMap(base + j * l.handle, l.handle, 0, h[order[j]], 0));
  t.maps = n;
  t.map_ms = ms_since(t0);
  const CUmemAccessDesc acc = probe::device_rw();
  t0 = std::chrono::steady_clock::now();
  CK(cuMemSetAccess(base, bytes, &acc, 1));
  t.access_ms = ms_since(t0);
  std::vector<CUdeviceptr> alias(l.aliases);
  for (CUdeviceptr& a : alias) {  // the same handles, in reverse order, in another range
    CK(cuMemAddressReserve(&a, bytes, l.handle, 0, 0));
    for (size_t j = 0; j < n; ++j) CK(cuMemMap(a + j * l.handle, l.handle, 0, h[order[n - 1 - j]], 0));
    CK(cuMemSetAccess(a, bytes, &acc, 1));
  }
  measure(reinterpret_cast<void*>(base), bytes, &t, out, sms);
  for (CUdeviceptr a : alias) {
    CK(cuMemUnmap(a, bytes));
    CK(cuMemAddressFree(a, bytes));
  }
  CK(cuMemUnmap(base, bytes));
  for (auto& x : h) CK(cuMemRelease(x));
  CK(cuMemAddressFree(res, span));
  return t;
}

}  // namespace

int main(int argc, char** argv) {
  const size_t gib = argc > 1 ? std::strtoull(argv[1], nullptr, 10) : 8;
  const size_t bytes = gib << 30;
  RK(cudaFree(nullptr));  // the runtime's primary context, current for the driver calls too
  int sms = 0;
  RK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 0));
  unsigned* out = nullptr;
  RK(cudaMalloc(&out, 64));
  const Layout layouts[] = {
      {"cudaMalloc", 0},
      {"2M handles", 2 * kMiB},
      {"2M handles, shuffled", 2 * kMiB, 0, true},
      {"8M handles", 8 * kMiB},
      {"8M handles at +2M", 8 * kMiB, 2 * kMiB},
      {"8M handles, shuffled", 8 * kMiB, 0, true},
      {"2M handles, shuffled, aliased 3x", 2 * kMiB, 0, true, 3},
      {"32M handles", 32 * kMiB},
      {"512M handles", 512 * kMiB},
      {"512M handles at +2M", 512 * kMiB, 2 * kMiB},
      {"2G handles", 2048 * kMiB},
  };
  std::printf("buffer %zu GiB, %d SMs; best of 5 (after one warm-up)\n", gib, sms);
  std::printf("%-34s %7s %9s %11s %10s %12s %12s %10s %11s\n", "layout", "maps", "map ms", "access ms", "read GB/s",
              "gather all", "gather 256M", "copy GB/s", "memset GB/s");
  for (const Layout& l : layouts) {
    Timing t = run(l, bytes, out, sms);
    std::printf("%-34s %7zu %9.1f %11.2f %10.0f %12.1f %12.1f %10.0f %11.0f\n", l.name.c_str(), t.maps, t.map_ms,
                t.access_ms, t.stream_gbs, t.gather_all, t.gather_256, t.copy_gbs, t.memset_gbs);
    std::fflush(stdout);
  }
  std::printf("gather: millions of random 4-byte reads per ms (higher is faster)\n");
  RK(cudaFree(out));
  return 0;
}
