// Does changing mappings slow the kernels that run meanwhile? In PyTorch
// fine-tuning with variable shapes (session 13, LRV), memlake re-mapped
// 100-200 handles per step and the steps ran 50-100 ms slower than native,
// while the driver calls themselves took only 4-14 ms of host time per step;
// with stitching off (no maps after warm-up) the steps ran at native speed.
// This probe measures the GPU-side cost directly: a queue of memory-bound
// kernels runs on a buffer; meanwhile the host maps (and then unmaps) M
// 2 MiB handles into a separate reservation. The kernels' time with and
// without that activity, divided by M, is the stall each handle costs.
// Session 13 on the H200: none (0.1 us per handle), and the driver calls did
// not wait for the GPU. So the second mode, `pipeline`, looks for a cost the
// first cannot see: work the driver defers to the next kernel launch, or to
// a kernel's first use of a new mapping. It runs training-like steps (many
// short kernels, the host just ahead of the GPU, a synchronisation at the
// end of each step) three ways: plain; with a stitch every 20 launches (8
// handles mapped into a fresh range, access set, the next kernel reading
// that range; the step's ranges unmapped after it); and with the host
// spinning for as long as those driver calls took, at the same points. If
// the stitched steps cost more than the spinning ones, mapping costs more
// than its host time. The third mode, `copies`, asks the same of the copy
// engines: pinned copies in both directions at once (the residency engine's
// evict and restore, results §21c: 68.8 GB/s against 93.5 for plain copies),
// while the host maps and unmaps 8 MiB handles at the engine's cadence (per
// 32 MiB piece: four handles mapped, one access call, an earlier range
// unmapped), maps only, or unmaps only.
//
//   nvcc -O2 -arch=sm_90 -o map_stall tests/gpu/map_stall.cu -lcuda
//   ./map_stall [M=256] [kernels=400]
//   ./map_stall pipeline [steps=30]
//   ./map_stall copies [GiB=4]
#include <cuda.h>
#include <cuda_runtime.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <string>
#include <vector>

#include "probe.cuh"

namespace {

using probe::kMiB;
using probe::stream_read;

struct Sample {
  double gpu_ms, host_ms;
};

// The kernels' time (events around the queue) and the host time of `work`,
// which runs after the queue is submitted.
Sample queue_with(const std::function<void()>& work, const float4* buf, size_t n, int kernels, int blocks,
                  float* out) {
  cudaEvent_t a, b;
  RK(cudaEventCreate(&a));
  RK(cudaEventCreate(&b));
  RK(cudaEventRecord(a));
  for (int k = 0; k < kernels; ++k) stream_read<<<blocks, 256>>>(buf, n, out);
  RK(cudaEventRecord(b));
  const auto t0 = std::chrono::steady_clock::now();
  work();
  const double host = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
  RK(cudaEventSynchronize(b));
  float ms = 0;
  RK(cudaEventElapsedTime(&ms, a, b));
  RK(cudaGetLastError());
  RK(cudaEventDestroy(a));
  RK(cudaEventDestroy(b));
  return {ms, host};
}

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

double ms_since(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
}

int pipeline(int steps) {
  int sms = 0;
  RK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 0));
  const size_t bytes = 64 * kMiB, page = 2 * kMiB;  // a kernel reads 64 MiB (~20 us)
  const int launches = 400, every = 20, per_stitch = 8, stitches = launches / every;
  void* buf = nullptr;
  float* out = nullptr;
  RK(cudaMalloc(&buf, bytes));
  RK(cudaMemset(buf, 0, bytes));
  RK(cudaMalloc(&out, 64));
  const CUmemAllocationProp prop = probe::device_prop();
  const CUmemAccessDesc acc = probe::device_rw();
  // Two sets of handles, mapped alternately into fresh slots of one large
  // reservation (a new range for each stitch, as stitched views are; a page
  // may be mapped at several addresses). Nothing is unmapped while kernels may
  // still read it: the step's ranges are unmapped after its synchronisation,
  // outside the timed part.
  std::vector<CUmemGenericAllocationHandle> h(2 * per_stitch);
  for (auto& x : h) CK(cuMemCreate(&x, page, &prop, 0));
  const size_t slot = per_stitch * page;
  CUdeviceptr va = 0;
  CK(cuMemAddressReserve(&va, stitches * slot, page, 0, 0));
  std::vector<double> drv_ms;  // host time of each stitch's driver calls (mode 1)
  auto step = [&](int mode, int s) {
    for (int k = 0; k < launches; ++k) {
      const void* src = buf;
      size_t n = bytes / 16;
      if (k % every == 0) {
        const int j = k / every;
        n = slot / 16;  // the same kernel in every mode: it reads 16 MiB
        if (mode == 1) {
          const auto t0 = std::chrono::steady_clock::now();
          const CUdeviceptr v = va + j * slot;
          for (int i = 0; i < per_stitch; ++i) CK(cuMemMap(v + i * page, page, 0, h[(j & 1) * per_stitch + i], 0));
          CK(cuMemSetAccess(v, slot, &acc, 1));
          src = reinterpret_cast<const void*>(v);
          drv_ms[static_cast<size_t>(s) * stitches + j] = ms_since(t0);
        } else if (mode == 2) {  // spin as long as mode 1's driver calls took at this point
          const double want = drv_ms[static_cast<size_t>(s) * stitches + j];
          const auto t0 = std::chrono::steady_clock::now();
          while (ms_since(t0) < want) {
          }
        }
      }
      stream_read<<<sms * 4, 256>>>(static_cast<const float4*>(src), n, out);
    }
    RK(cudaDeviceSynchronize());  // the step's loss.item()
  };
  auto unmap_step = [&] { CK(cuMemUnmap(va, stitches * slot)); };
  drv_ms.assign(static_cast<size_t>(steps) * stitches, 0.0);
  for (int s = 0; s < 3; ++s) step(0, 0);  // warm-up
  // Interleaved: plain, stitched, spinning; each step timed on the host.
  std::vector<double> t[3];
  for (int s = 0; s < steps; ++s)
    for (int mode : {0, 1, 2}) {
      const auto t0 = std::chrono::steady_clock::now();
      step(mode, s);
      t[mode].push_back(ms_since(t0));
      if (mode == 1) unmap_step();
    }
  RK(cudaGetLastError());
  double drv = 0;
  for (double x : drv_ms) drv += x;
  drv /= steps;
  std::printf("%d steps of %d kernels (64 MiB read each); a stitch of %d x 2 MiB every %d launches; medians\n",
              steps, launches, per_stitch, every);
  std::printf("%-48s %10s\n", "step", "ms");
  std::printf("%-48s %10.2f\n", "plain", median(t[0]));
  std::printf("%-48s %10.2f   (driver calls %.2f ms per step)\n", "with stitches", median(t[1]), drv);
  std::printf("%-48s %10.2f\n", "host spinning as long instead", median(t[2]));
  std::printf("stitched - spinning = what mapping costs beyond its host time\n");
  for (auto& x : h) CK(cuMemRelease(x));
  CK(cuMemAddressFree(va, stitches * slot));
  RK(cudaFree(buf));
  RK(cudaFree(out));
  return 0;
}

// Both directions at once, 32 MiB pieces on two streams, while the host does
// `mode` per piece: 0 nothing, 1 maps + access and an unmap two pieces back,
// 2 maps + access only, 3 unmaps only (of ranges mapped before the clock).
int copies(int gib) {
  const size_t piece = 32 * kMiB, handle = 8 * kMiB, per = piece / handle, ring = 2048 * kMiB;
  const size_t n = static_cast<size_t>(gib) * 1024 * kMiB / piece;
  void *dev = nullptr, *hx = nullptr, *hy = nullptr;
  RK(cudaMalloc(&dev, 2 * ring));
  RK(cudaMallocHost(&hx, ring));
  RK(cudaMallocHost(&hy, ring));
  std::memset(hx, 1, ring);
  std::memset(hy, 2, ring);
  cudaStream_t s1, s2;
  RK(cudaStreamCreateWithFlags(&s1, cudaStreamNonBlocking));
  RK(cudaStreamCreateWithFlags(&s2, cudaStreamNonBlocking));
  const CUmemAllocationProp prop = probe::device_prop();
  const CUmemAccessDesc acc = probe::device_rw();
  std::vector<CUmemGenericAllocationHandle> h(per * n);
  for (auto& x : h) CK(cuMemCreate(&x, handle, &prop, 0));
  CUdeviceptr va = 0;
  CK(cuMemAddressReserve(&va, n * piece, handle, 0, 0));
  auto map_piece = [&](size_t j) {
    for (size_t i = 0; i < per; ++i) CK(cuMemMap(va + j * piece + i * handle, handle, 0, h[j * per + i], 0));
    CK(cuMemSetAccess(va + j * piece, piece, &acc, 1));
  };
  auto unmap_piece = [&](size_t j) { CK(cuMemUnmap(va + j * piece, piece)); };
  char* d = static_cast<char*>(dev);
  auto run = [&](int mode, double* host_ms) {
    if (mode == 3)
      for (size_t j = 0; j < n; ++j) map_piece(j);
    RK(cudaDeviceSynchronize());
    const auto t0 = std::chrono::steady_clock::now();
    double host = 0;
    for (size_t j = 0; j < n; ++j) {
      const size_t off = j * piece % ring;
      RK(cudaMemcpyAsync(static_cast<char*>(hx) + off, d + off, piece, cudaMemcpyDeviceToHost, s1));
      RK(cudaMemcpyAsync(d + ring + off, static_cast<char*>(hy) + off, piece, cudaMemcpyHostToDevice, s2));
      const auto h0 = std::chrono::steady_clock::now();
      if (mode == 1 || mode == 2) map_piece(j);
      if (mode == 1 && j >= 2) unmap_piece(j - 2);
      if (mode == 3) unmap_piece(j);
      host += ms_since(h0);
    }
    RK(cudaStreamSynchronize(s1));
    RK(cudaStreamSynchronize(s2));
    const double ms = ms_since(t0);
    if (mode == 1)
      for (size_t j = n - 2; j < n; ++j) unmap_piece(j);
    if (mode == 2)
      for (size_t j = 0; j < n; ++j) unmap_piece(j);
    *host_ms = host;
    return 2.0 * static_cast<double>(n * piece) / (ms * 1e6);  // GB/s, both directions
  };
  double hm = 0;
  run(0, &hm);  // warm-up
  const char* what[] = {"nothing", "maps + access, unmap two pieces back", "maps + access only", "unmaps only"};
  std::vector<double> rate[4], host[4];
  for (int r = 0; r < 5; ++r)
    for (int m = 0; m < 4; ++m) {
      rate[m].push_back(run(m, &hm));
      host[m].push_back(hm);
    }
  std::printf("pinned copies both ways, %d GiB each way in 32 MiB pieces; the host per piece does...; medians of 5\n", gib);
  std::printf("%-44s %10s %10s\n", "host per piece", "GB/s", "host ms");
  for (int m = 0; m < 4; ++m) std::printf("%-44s %10.1f %10.2f\n", what[m], median(rate[m]), median(host[m]));
  std::printf("a lower rate with the same copies queued means the driver calls held the copy engines back\n");
  for (auto& x : h) CK(cuMemRelease(x));
  CK(cuMemAddressFree(va, n * piece));
  RK(cudaStreamDestroy(s1));
  RK(cudaStreamDestroy(s2));
  RK(cudaFreeHost(hx));
  RK(cudaFreeHost(hy));
  RK(cudaFree(dev));
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc > 1 && std::string(argv[1]) == "copies") {
    RK(cudaFree(nullptr));
    return copies(argc > 2 ? std::atoi(argv[2]) : 4);
  }
  if (argc > 1 && std::string(argv[1]) == "pipeline") {
    RK(cudaFree(nullptr));
    return pipeline(argc > 2 ? std::atoi(argv[2]) : 30);
  }
  const int m = argc > 1 ? std::atoi(argv[1]) : 256;
  const int kernels = argc > 2 ? std::atoi(argv[2]) : 400;
  RK(cudaFree(nullptr));
  int sms = 0;
  RK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 0));
  const size_t bytes = 1024 * kMiB;  // each kernel reads 1 GiB
  void* buf = nullptr;
  float* out = nullptr;
  RK(cudaMalloc(&buf, bytes));
  RK(cudaMemset(buf, 0, bytes));
  RK(cudaMalloc(&out, 64));
  const float4* b4 = static_cast<const float4*>(buf);
  const size_t n4 = bytes / 16;

  const CUmemAllocationProp prop = probe::device_prop();
  const CUmemAccessDesc acc = probe::device_rw();
  const size_t page = 2 * kMiB;
  std::vector<CUmemGenericAllocationHandle> h(m);
  for (auto& x : h) CK(cuMemCreate(&x, page, &prop, 0));
  CUdeviceptr va = 0;
  CK(cuMemAddressReserve(&va, m * page, page, 0, 0));

  auto map_each = [&] {  // a stitch: each handle mapped, access set per handle
    for (int i = 0; i < m; ++i) {
      CK(cuMemMap(va + i * page, page, 0, h[i], 0));
      CK(cuMemSetAccess(va + i * page, page, &acc, 1));
    }
  };
  auto map_then_access = [&] {  // all maps, then one cuMemSetAccess over the range
    for (int i = 0; i < m; ++i) CK(cuMemMap(va + i * page, page, 0, h[i], 0));
    CK(cuMemSetAccess(va, m * page, &acc, 1));
  };
  auto unmap_each = [&] {
    for (int i = 0; i < m; ++i) CK(cuMemUnmap(va + i * page, page));
  };
  auto unmap_all = [&] { CK(cuMemUnmap(va, m * page)); };
  auto idle = [] {};

  queue_with(idle, b4, n4, 20, sms * 4, out);  // warm-up
  std::vector<double> base, me, ma, ue, ua, hme, hma, hue, hua;
  for (int r = 0; r < 5; ++r) {
    base.push_back(queue_with(idle, b4, n4, kernels, sms * 4, out).gpu_ms);
    Sample s = queue_with(map_each, b4, n4, kernels, sms * 4, out);
    me.push_back(s.gpu_ms), hme.push_back(s.host_ms);
    s = queue_with(unmap_each, b4, n4, kernels, sms * 4, out);
    ue.push_back(s.gpu_ms), hue.push_back(s.host_ms);
    s = queue_with(map_then_access, b4, n4, kernels, sms * 4, out);
    ma.push_back(s.gpu_ms), hma.push_back(s.host_ms);
    s = queue_with(unmap_all, b4, n4, kernels, sms * 4, out);
    ua.push_back(s.gpu_ms), hua.push_back(s.host_ms);
  }
  const double b0 = median(base);
  std::printf("%d kernels reading 1 GiB each (cudaMalloc), %d handles of 2 MiB; medians of 5\n", kernels, m);
  std::printf("%-44s %10s %10s %14s\n", "while the host does", "kernels ms", "host ms", "stall/handle us");
  auto row = [&](const char* what, double g, double host) {
    std::printf("%-44s %10.2f %10.2f %14.1f\n", what, g, host, (g - b0) * 1000.0 / m);
  };
  row("nothing", b0, 0);
  row("map + set_access per handle", median(me), median(hme));
  row("unmap per handle", median(ue), median(hue));
  row("maps, one set_access over the range", median(ma), median(hma));
  row("one unmap over the range", median(ua), median(hua));
  std::printf("a host time close to the kernels' time means the driver call waited for the GPU\n");
  for (auto& x : h) CK(cuMemRelease(x));
  CK(cuMemAddressFree(va, m * page));
  RK(cudaFree(buf));
  RK(cudaFree(out));
  return 0;
}
