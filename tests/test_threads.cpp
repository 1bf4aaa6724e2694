// Multi-threaded stress: several threads allocate, write, verify and free
// through one DeviceAllocator; the structures must stay consistent.
#include <atomic>
#include <random>
#include <thread>

#include "support.h"

namespace memlake::test {
namespace {

class ThreadTest : public BackendTest {};

TEST_P(ThreadTest, ConcurrentAllocFreeKeepsContentsAndInvariants) {
  Options o = options();
  if (is_host()) o.granularity = 64 << 10;
  o.small_max = is_host() ? (16 << 10) : (1 << 20);
  core::DeviceAllocator dev(0, o);
  const std::size_t page = dev.stats().page_size;
  const int threads = 4, iters = is_host() ? 3000 : 600;
  std::atomic<int> corrupt{0};
  std::vector<std::thread> ts;
  for (int t = 0; t < threads; ++t)
    ts.emplace_back([&, t] {
      std::mt19937_64 rng(t + 1);
      prim::Stream s = nullptr;
      std::vector<std::pair<void*, std::pair<std::size_t, std::uint64_t>>> mine;
      for (int i = 0; i < iters; ++i) {
        if (mine.size() < 16 && (rng() % 3 != 0 || mine.empty())) {
          std::size_t n = rng() % 2 ? 1 + rng() % 8192 : page * (1 + rng() % 4) - rng() % 512;
          void* p = dev.alloc(n, s);
          std::uint64_t seed = (static_cast<std::uint64_t>(t) << 32) | static_cast<std::uint64_t>(i);
          std::size_t k = std::min<std::size_t>(n, 256);
          fill(dev.backend(), p, k, seed);
          mine.push_back({p, {k, seed}});
        } else {
          std::size_t j = rng() % mine.size();
          auto [p, info] = mine[j];
          if (!holds(dev.backend(), p, info.first, info.second)) corrupt++;
          dev.free(p);
          mine.erase(mine.begin() + static_cast<long>(j));
        }
      }
      for (auto& [p, info] : mine) {
        if (!holds(dev.backend(), p, info.first, info.second)) corrupt++;
        dev.free(p);
      }
    });
  std::thread checker([&] {
    for (int i = 0; i < 20; ++i) {
      dev.check();
      dev.stats();
      std::this_thread::yield();
    }
  });
  for (auto& th : ts) th.join();
  checker.join();
  EXPECT_EQ(corrupt.load(), 0);
  dev.check();
  auto st = dev.stats();
  EXPECT_EQ(st.active.current, 0u);
  EXPECT_EQ(st.num_allocs, st.num_frees);
}

MEMLAKE_INSTANTIATE_BACKENDS(ThreadTest);

}  // namespace
}  // namespace memlake::test
