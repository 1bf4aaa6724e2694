// The copy engine under injected faults at the primitives it calls (pinned
// staging, copies, events, stream waits, synchronisation, registration): a
// copy either completes byte-exact or fails with a clean error, nothing
// hangs or crashes, the allocator's live memory stays intact, and the
// engine works again once the faults stop.
#include <cstdio>
#include <random>
#include <vector>

#include "fault_audit.h"
#include "io/copy_engine.h"

namespace memlake::test {
namespace {

using prim::FaultSite;

void copies_under_faults(const std::vector<FaultSite>& sites) {
  constexpr std::size_t kPage = 64 << 10;
  auto h = std::make_unique<prim::HostBackend>(0, kPage, 0);
  prim::HostBackend* host = h.get();
  auto f = std::make_unique<prim::FaultyBackend>(std::move(h));
  prim::FaultyBackend* faulty = f.get();
  Options o;
  o.backend = "host";
  o.small_max = kPage / 4;
  core::DeviceAllocator dev(std::move(f), o);
  LiveMap live;
  const std::size_t n = (std::size_t{1} << 20) + 4097;
  void* keep = dev.alloc(2 * kPage, nullptr);
  stamp(dev.backend(), keep, 2 * kPage, 99, kPage);
  live.emplace(keep, LiveBlock{2 * kPage, 99});
  void* d = dev.alloc(n, nullptr);
  const auto dp = reinterpret_cast<std::uintptr_t>(d);
  std::uint64_t failed = 0, done = 0;
  {
    io::CopyOptions co;
    co.chunk = 256 << 10;
    co.min_piece = 64 << 10;
    co.buffers = 3;
    co.threads = 2;
    co.direct_below = 64 << 10;
    io::CopyEngine engine(dev.backend(), co);
    std::mt19937_64 rng(5);
    for (int i = 0; i < 40; ++i) {
      SCOPED_TRACE("copy " + std::to_string(i));
      const auto pat = pattern(n, static_cast<std::uint64_t>(i) + 1);
      std::vector<unsigned char> back(n, 0);
      faulty->fail_randomly(0.03, rng(), sites);
      std::string msg;
      const Errc e = error_of(
          [&] {
            engine.to_device(dp, pat.data(), n, nullptr);
            engine.to_host(back.data(), dp, n, nullptr);
          },
          &msg);
      faulty->stop_failing();
      if (e == Errc::ok) {
        ++done;
        EXPECT_TRUE(back == pat) << "a copy that reported success is byte-exact";
      } else {
        ++failed;
        EXPECT_EQ(e, Errc::driver) << msg;
      }
      EXPECT_TRUE(audit(dev, host, live, kPage));
      if (::testing::Test::HasFailure()) break;
    }
    const auto pat = pattern(n, 1000);
    std::vector<unsigned char> back(n, 0);
    engine.to_device(dp, pat.data(), n, nullptr);  // works once faults stop
    engine.to_host(back.data(), dp, n, nullptr);
    EXPECT_TRUE(back == pat);
  }
  std::printf("[copy faults] %llu copies failed cleanly, %llu completed, %llu faults injected\n",
              static_cast<unsigned long long>(failed), static_cast<unsigned long long>(done),
              static_cast<unsigned long long>(faulty->faults_injected()));
  EXPECT_GT(failed, 0u);
  dev.free(d);
  dev.free(keep);
  dev.empty_cache();
  EXPECT_EQ(host->live_handles(), 0u);
}

TEST(CopyFaults, FaultsInCopiesAndStreamOpsFailCopiesCleanly) {
  copies_under_faults({FaultSite::copy_to_device, FaultSite::copy_to_host, FaultSite::stream_wait,
                       FaultSite::synchronize_stream});
}

// Disabled: hangs. CopyEngine::acquire (src/io/copy_engine.cpp) marks a
// staging buffer busy and then waits for and destroys its last DMA's event;
// when wait_event or destroy_event throws, the buffer stays busy for ever and
// the next copy waits for a free buffer that never comes. Enable once
// acquire() hands the buffer back on failure (src/io is not this change's).
TEST(CopyFaults, FaultsInEventsFailCopiesCleanly) {
  copies_under_faults({FaultSite::event_record, FaultSite::event_query, FaultSite::wait_event,
                       FaultSite::destroy_event, FaultSite::stream_query});
}

}  // namespace
}  // namespace memlake::test
