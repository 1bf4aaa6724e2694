// Allocator micro-benchmarks (Google Benchmark; not part of ctest).
//   memlake_bench --benchmark_filter=HotPath      alloc+free of a cached size
//   memlake_bench --benchmark_filter=Stitch       cost of stitching N pages
// Each runs on the host backend and, where a GPU is present, on cuda.
#include <benchmark/benchmark.h>

#include <vector>

#include "core/device_allocator.h"
#include "core/error.h"
#include "prim/prim.h"

namespace {

using memlake::Options;
using memlake::core::DeviceAllocator;

bool usable(benchmark::State& st, const char* backend) {
  if (std::string(backend) == "cuda") {
    std::string why;
    if (!memlake::prim::cuda_available(&why)) {
      st.SkipWithError(("cuda backend skipped: " + why).c_str());
      return false;
    }
  }
  return true;
}

Options opts(const char* backend) {
  Options o;
  o.backend = backend;
  return o;
}

// alloc + free of a size that is cached: the common case in training loops.
void HotPath(benchmark::State& st, const char* backend) {
  if (!usable(st, backend)) return;
  DeviceAllocator dev(0, opts(backend));
  const std::size_t size = static_cast<std::size_t>(st.range(0));
  // Some live neighbours so that the structures are not trivially empty.
  std::vector<void*> keep;
  for (int i = 0; i < 64; ++i) keep.push_back(dev.alloc(size, nullptr));
  dev.free(dev.alloc(size, nullptr));
  for (auto _ : st) {
    void* p = dev.alloc(size, nullptr);
    benchmark::DoNotOptimize(p);
    dev.free(p);
  }
  for (void* p : keep) dev.free(p);
  st.SetLabel(backend);
}
BENCHMARK_CAPTURE(HotPath, host, "host")->Arg(512)->Arg(64 << 10)->Arg(4 << 20)->Arg(64 << 20)->Arg(1 << 30);
BENCHMARK_CAPTURE(HotPath, cuda, "cuda")->Arg(512)->Arg(64 << 10)->Arg(4 << 20)->Arg(64 << 20)->Arg(1 << 30);

// Stitch cost: N free single pages scattered between live ones, then one
// N-page request, which must map them into a new view.
void Stitch(benchmark::State& st, const char* backend) {
  if (!usable(st, backend)) return;
  const int n = static_cast<int>(st.range(0));
  Options o = opts(backend);
  o.max_mapped_ratio = 1e9;  // measure the stitch, not the eviction
  for (auto _ : st) {
    st.PauseTiming();
    {
      DeviceAllocator dev(0, o);
      const std::size_t page = dev.stats().page_size;
      std::vector<void*> v;
      for (int i = 0; i < 2 * n; ++i) v.push_back(dev.alloc(page, nullptr));
      for (int i = 0; i < 2 * n; i += 2) dev.free(v[i]);
      st.ResumeTiming();
      void* s = dev.alloc(static_cast<std::size_t>(n) * page, nullptr);
      st.PauseTiming();
      benchmark::DoNotOptimize(s);
      if (dev.stats().stitches != 1) st.SkipWithError("request was not served by a stitch");
      dev.free(s);
      for (int i = 1; i < 2 * n; i += 2) dev.free(v[i]);
    }
    st.ResumeTiming();
  }
  st.SetLabel(backend);
  st.counters["pages"] = n;
}
BENCHMARK_CAPTURE(Stitch, host, "host")->RangeMultiplier(4)->Range(2, 512)->Unit(benchmark::kMicrosecond);
BENCHMARK_CAPTURE(Stitch, cuda, "cuda")->RangeMultiplier(4)->Range(2, 512)->Unit(benchmark::kMicrosecond);

// Growth: a new N-page request with an empty cache (create + map + access).
void Grow(benchmark::State& st, const char* backend) {
  if (!usable(st, backend)) return;
  const int n = static_cast<int>(st.range(0));
  for (auto _ : st) {
    st.PauseTiming();
    {
      DeviceAllocator dev(0, opts(backend));
      const std::size_t page = dev.stats().page_size;
      st.ResumeTiming();
      void* p = dev.alloc(static_cast<std::size_t>(n) * page, nullptr);
      st.PauseTiming();
      dev.free(p);
    }
    st.ResumeTiming();
  }
  st.SetLabel(backend);
}
BENCHMARK_CAPTURE(Grow, host, "host")->RangeMultiplier(8)->Range(1, 512)->Unit(benchmark::kMicrosecond);
BENCHMARK_CAPTURE(Grow, cuda, "cuda")->RangeMultiplier(8)->Range(1, 512)->Unit(benchmark::kMicrosecond);

}  // namespace

BENCHMARK_MAIN();
