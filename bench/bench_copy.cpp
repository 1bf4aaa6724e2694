// Google Benchmark front end for the copy engine (not part of ctest):
//   memlake_copy_bench --benchmark_filter=cuda     on a GPU
// Bytes/s of a pageable H2D and D2H copy through memlake's engine and through
// the plain driver copy, side by side. `memlake bench copy` is the fuller table.
#include <benchmark/benchmark.h>

#include <cstring>
#include <vector>

#include "core/device_allocator.h"
#include "io/copy_engine.h"

namespace {

template <class F>
void run(benchmark::State& st, const char* backend, F body) {
  if (std::string(backend) == "cuda") {
    std::string why;
    if (!memlake::prim::cuda_available(&why)) {
      st.SkipWithError(("cuda backend skipped: " + why).c_str());
      return;
    }
  }
  memlake::Options o;
  o.backend = backend;
  memlake::core::DeviceAllocator dev(0, o);
  memlake::io::CopyEngine engine(dev.backend());
  const std::size_t n = static_cast<std::size_t>(st.range(0));
  std::vector<unsigned char> host(n, 1);
  void* d = dev.alloc(n, nullptr);
  for (auto _ : st) body(dev.backend(), engine, reinterpret_cast<std::uintptr_t>(d), host.data(), n);
  st.SetBytesProcessed(static_cast<std::int64_t>(st.iterations()) * static_cast<std::int64_t>(n));
  st.SetLabel(backend);
  dev.free(d);
}

void H2D_memlake(benchmark::State& st, const char* b) {
  run(st, b, [](auto& be, auto& e, std::uintptr_t d, unsigned char* h, std::size_t n) {
    e.to_device(d, h, n, nullptr);
    be.synchronize_stream(nullptr);
  });
}
void H2D_plain(benchmark::State& st, const char* b) {
  run(st, b, [](auto& be, auto&, std::uintptr_t d, unsigned char* h, std::size_t n) {
    be.copy_to_device_async(d, h, n, nullptr);
    be.synchronize_stream(nullptr);
  });
}
void D2H_memlake(benchmark::State& st, const char* b) {
  run(st, b, [](auto&, auto& e, std::uintptr_t d, unsigned char* h, std::size_t n) { e.to_host(h, d, n, nullptr); });
}
void D2H_plain(benchmark::State& st, const char* b) {
  run(st, b, [](auto& be, auto&, std::uintptr_t d, unsigned char* h, std::size_t n) {
    be.copy_to_host_async(h, d, n, nullptr);
    be.synchronize_stream(nullptr);
  });
}

#define MEMLAKE_COPY_BENCH(fn)                                                                               \
  BENCHMARK_CAPTURE(fn, host, "host")->RangeMultiplier(16)->Range(1 << 20, 256 << 20)->Unit(benchmark::kMillisecond); \
  BENCHMARK_CAPTURE(fn, cuda, "cuda")->RangeMultiplier(16)->Range(1 << 20, 256 << 20)->Unit(benchmark::kMillisecond);

MEMLAKE_COPY_BENCH(H2D_memlake)
MEMLAKE_COPY_BENCH(H2D_plain)
MEMLAKE_COPY_BENCH(D2H_memlake)
MEMLAKE_COPY_BENCH(D2H_plain)

}  // namespace

BENCHMARK_MAIN();
