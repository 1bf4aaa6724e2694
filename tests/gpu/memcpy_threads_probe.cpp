// Host memcpy bandwidth with T threads into pinned and pageable buffers (a
// session-8 probe of the copy engine's staging; build: nvcc -O2 -x cu).
#include <cuda_runtime.h>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <thread>
#include <vector>
#include <cstdlib>
using C = std::chrono::steady_clock;
// memcpy bandwidth, T threads, from src to dst (each n bytes), repeated in chunks cycling through dst buffers
double run(int T, char* dst, size_t dstn, const char* src, size_t n, size_t chunk) {
  auto t0 = C::now();
  for (size_t off = 0; off < n; off += chunk) {
    size_t len = std::min(chunk, n - off);
    char* d = dst + (off % dstn);
    const char* s = src + off;
    std::vector<std::thread> ts;
    size_t sl = (len / T + 4095) / 4096 * 4096;
    for (int i = 0; i < T; ++i) { size_t o = i * sl; if (o >= len) break; size_t l = std::min(sl, len - o);
      ts.emplace_back([=] { std::memcpy(d + o, s + o, l); }); }
    for (auto& t : ts) t.join();
  }
  return n / std::chrono::duration<double>(C::now() - t0).count() / 1e9;
}
// persistent threads: each thread copies its own contiguous 1/T of the whole n
double run_persist(int T, char* dst, const char* src, size_t n) {
  auto t0 = C::now();
  std::vector<std::thread> ts; size_t sl = n / T;
  for (int i = 0; i < T; ++i) ts.emplace_back([=] { std::memcpy(dst + i * sl, src + i * sl, sl); });
  for (auto& t : ts) t.join();
  return n / std::chrono::duration<double>(C::now() - t0).count() / 1e9;
}
int main() {
  size_t n = 1ull << 30, stg = 32ull << 20;
  char* pg = (char*)malloc(n); char* pg2 = (char*)malloc(n);
  memset(pg, 1, n); memset(pg2, 2, n);
  char* pin; cudaHostAlloc((void**)&pin, n, cudaHostAllocPortable);
  memset(pin, 3, n);
  char* wc; cudaHostAlloc((void**)&wc, stg, cudaHostAllocPortable);
  for (int T : {1, 2, 4, 8, 12, 16}) {
    double a = run(T, wc, stg, pg, n, 8 << 20);
    double b = run(T, pg2, n, pin, n, 8 << 20);
    double c = run_persist(T, pin, pg, n);
    double d = run_persist(T, pg2, pin, n);
    double e = run_persist(T, pg2, pg, n);
    double f = run(T, wc, stg, pg, n, 64 << 20);
    printf("T=%2d  pg->stg8M %.1f  pin->pg8M %.1f | persist pg->pin %.1f pin->pg %.1f pg->pg %.1f | pg->stg64M %.1f\n", T, a, b, c, d, e, f);
  }
  // concurrent DMA: H2D from pinned while CPU copies pg->stg
  void* dev; cudaMalloc(&dev, n); cudaStream_t s; cudaStreamCreate(&s);
  for (int T : {4, 8}) {
    auto t0 = C::now();
    for (int i = 0; i < 4; ++i) cudaMemcpyAsync(dev, pin, n, cudaMemcpyHostToDevice, s);
    double a = run(T, wc, stg, pg, n, 8 << 20);
    cudaStreamSynchronize(s);
    double dm = 4.0 * n / std::chrono::duration<double>(C::now() - t0).count() / 1e9;
    printf("T=%d with DMA: pg->stg %.1f (dma overall %.1f)\n", T, a, dm);
  }
}
