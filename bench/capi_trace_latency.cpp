// Per-operation latency of PyTorch's entry points (memlake_torch_malloc /
// memlake_torch_free, what CUDAPluggableAllocator calls) replaying a trace
// the way bench/alloc_latency.py does on its raw path, without Python and
// without a GPU: the first --events allocate/free events of the trace
// (allocations of size 0 and unmatched frees dropped), replayed in order,
// pass after pass (what is left live freed at the end of each), the last
// pass timed. A block's alloc+free is the sum of its two calls.
//
//   build/bench/memlake_trace_latency traces/opt13b-LR.csv.gz [events 60000] [passes 2]
//
// Host backend unless MEMLAKE_BACKEND says otherwise; the default allocator
// follows the MEMLAKE_* environment like under memlake.torch. Prints p50,
// p90, p99 and mean in ns of alloc+free pairs, allocations and frees.
// Timing includes two steady_clock reads per call (20-40 ns in a VM).
#include <sys/types.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <string>
#include <unordered_map>
#include <vector>

#include "memlake/memlake.h"
#include "trace/trace.h"

namespace {

struct Op {
  bool alloc;
  std::uint32_t id;   // block
  std::uint64_t size;
};

double pct(std::vector<double> v, double q) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  return v[std::min(v.size() - 1, static_cast<std::size_t>(q * static_cast<double>(v.size())))];
}

double mean(const std::vector<double>& v) {
  double s = 0;
  for (double x : v) s += x;
  return v.empty() ? 0 : s / static_cast<double>(v.size());
}

std::uint64_t now_ns() {
  return static_cast<std::uint64_t>(std::chrono::duration_cast<std::chrono::nanoseconds>(
                                        std::chrono::steady_clock::now().time_since_epoch())
                                        .count());
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2) {
    std::fprintf(stderr, "usage: %s TRACE [events 60000] [passes 2]\n", argv[0]);
    return 2;
  }
  const std::size_t limit = argc > 2 ? static_cast<std::size_t>(std::atoll(argv[2])) : 60000;
  const int passes = argc > 3 ? std::max(1, std::atoi(argv[3])) : 2;
  if (!std::getenv("MEMLAKE_BACKEND")) setenv("MEMLAKE_BACKEND", "host", 0);
  std::vector<Op> ops;
  std::uint32_t blocks = 0;
  try {
    memlake::trace::Reader reader(argv[1]);
    memlake::trace::Event e;
    std::unordered_map<std::uint64_t, std::uint32_t> live;  // trace pointer -> block
    while (ops.size() < limit && reader.next(e)) {
      if (e.action == memlake::trace::Action::allocate && e.size > 0) {
        live[e.ptr] = blocks;
        ops.push_back(Op{true, blocks++, e.size});
      } else if (e.action == memlake::trace::Action::free) {
        auto it = live.find(e.ptr);
        if (it == live.end()) continue;
        ops.push_back(Op{false, it->second, 0});
        live.erase(it);
      }
    }
  } catch (const std::exception& x) {
    std::fprintf(stderr, "%s\n", x.what());
    return 1;
  }
  std::vector<void*> ptr(blocks);
  std::vector<std::uint64_t> t_alloc(blocks);
  std::vector<char> alive(blocks);
  std::vector<double> pairs, allocs, frees;
  // MEMLAKE_BENCH_THRASH_KB=N: N KiB of other memory written between calls (untimed), as an interpreter
  // between two tensors' allocations would: the allocator's structures are then partly out of cache.
  const char* thrash_env = std::getenv("MEMLAKE_BENCH_THRASH_KB");
  std::vector<unsigned char> thrash(thrash_env ? static_cast<std::size_t>(std::atoll(thrash_env)) * 1024 : 0);
  unsigned char salt = 0;
  auto other_work = [&] {
    ++salt;
    for (std::size_t i = 0; i < thrash.size(); i += 64) thrash[i] = static_cast<unsigned char>(thrash[i] + salt);
  };
  try {
    for (int pass = 0; pass < passes; ++pass) {
      const bool timed = pass == passes - 1;
      std::fill(alive.begin(), alive.end(), 0);
      for (const Op& o : ops) {
        other_work();
        if (o.alloc) {
          const std::uint64_t a = now_ns();
          ptr[o.id] = memlake_torch_malloc(static_cast<ssize_t>(o.size), 0, nullptr);
          const std::uint64_t b = now_ns();
          t_alloc[o.id] = b - a;
          alive[o.id] = 1;
          if (timed) allocs.push_back(static_cast<double>(b - a));
        } else {
          const std::uint64_t a = now_ns();
          memlake_torch_free(ptr[o.id], 0, 0, nullptr);
          const std::uint64_t b = now_ns();
          alive[o.id] = 0;
          if (timed) {
            frees.push_back(static_cast<double>(b - a));
            pairs.push_back(static_cast<double>(t_alloc[o.id] + (b - a)));
          }
        }
      }
      for (std::uint32_t i = 0; i < blocks; ++i)
        if (alive[i]) memlake_torch_free(ptr[i], 0, 0, nullptr);
    }
  } catch (const std::exception& x) {  // memlake_torch_malloc throws on failure, as PyTorch expects
    std::fprintf(stderr, "%s\n", x.what());
    return 1;
  }
  std::printf("%s: %zu events, %zu pairs (pass %d of %d timed)\n", argv[1], ops.size(), pairs.size(), passes, passes);
  auto row = [](const char* name, const std::vector<double>& v) {
    std::printf("  %-10s p50 %7.0f ns  p90 %7.0f ns  p99 %7.0f ns  mean %7.0f ns\n", name, pct(v, 0.5), pct(v, 0.9),
                pct(v, 0.99), mean(v));
  };
  row("alloc+free", pairs);
  row("alloc", allocs);
  row("free", frees);
  return 0;
}
