// Google Benchmark front end over the shared scenarios (not part of ctest):
//   memlake_bench --benchmark_filter=host      CPU only
//   memlake_bench --benchmark_filter=cuda      on a GPU
// The same scenarios run without Google Benchmark as `memlake bench alloc`.
#include <benchmark/benchmark.h>

#include "bench/alloc_bench.h"
#include "prim/prim.h"

namespace {

using memlake::Options;
namespace mb = memlake::bench;

template <class F>
void run(benchmark::State& st, const char* backend, F scenario) {
  if (std::string(backend) == "cuda") {
    std::string why;
    if (!memlake::prim::cuda_available(&why)) {
      st.SkipWithError(("cuda backend skipped: " + why).c_str());
      return;
    }
  }
  Options o;
  o.backend = backend;
  for (auto _ : st) {
    mb::Sample s = scenario(o, static_cast<std::size_t>(st.range(0)));
    st.SetIterationTime(s.median_ns * 1e-9);
    st.counters["calls_per_op"] = s.calls_per_op;
  }
  st.SetLabel(backend);
}

void HotPath(benchmark::State& st, const char* b) {
  run(st, b, [](const Options& o, std::size_t n) { return mb::hot_path(o, n, 50); });
}
void Stitch(benchmark::State& st, const char* b) {
  run(st, b, [](const Options& o, std::size_t n) { return mb::stitch(o, n, 1); });
}
void Grow(benchmark::State& st, const char* b) {
  run(st, b, [](const Options& o, std::size_t n) { return mb::grow(o, n, 1); });
}

#define MEMLAKE_BENCH(fn, ...)                                                           \
  BENCHMARK_CAPTURE(fn, host, "host")->__VA_ARGS__->UseManualTime();                    \
  BENCHMARK_CAPTURE(fn, cuda, "cuda")->__VA_ARGS__->UseManualTime();

MEMLAKE_BENCH(HotPath, Arg(512)->Arg(64 << 10)->Arg(4 << 20)->Arg(64 << 20)->Arg(1 << 30))
MEMLAKE_BENCH(Stitch, RangeMultiplier(4)->Range(2, 512)->Unit(benchmark::kMicrosecond))
MEMLAKE_BENCH(Grow, RangeMultiplier(8)->Range(1, 512)->Unit(benchmark::kMicrosecond))

}  // namespace

BENCHMARK_MAIN();
