// Memory-safety modes on the host backend: overruns and uses after free
// fault, and the report names the allocation (death tests).
#include <cstring>

#include "memlake/memlake.h"
#include "support.h"

namespace memlake::test {
namespace {

constexpr std::size_t kPage = 64 << 10;

Options safe_options(bool guard, std::size_t quarantine) {
  Options o;
  o.backend = "host";
  o.granularity = kPage;
  o.small_max = kPage / 4;
  o.guard = guard;
  o.quarantine = quarantine;
  return o;
}

volatile char g_sink;

TEST(SafetyDeathTest, OverrunPastTheGuardIsNamed) {
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  core::DeviceAllocator dev(0, safe_options(true, 0));
  char* p = static_cast<char*>(dev.alloc(100, nullptr));
  std::memset(p, 1, 100);  // in bounds: fine
  p[511] = 2;              // inside the 512-byte rounding: not caught (documented)
  EXPECT_DEATH(p[512] = 3, "memlake: out-of-bounds access at 0x[0-9a-f]+: 412 bytes past the end of allocation 0x[0-9a-f]+ \\(100 bytes\\)");
  char* q = static_cast<char*>(dev.alloc(2 * kPage, nullptr));
  q[2 * kPage - 1] = 1;
  EXPECT_DEATH(g_sink = q[2 * kPage + 10], "out-of-bounds access .*: 10 bytes past the end of allocation");
  dev.free(p);
  dev.free(q);
  dev.check();
}

TEST(SafetyDeathTest, UseAfterFreeFaultsWhileQuarantined) {
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  core::DeviceAllocator dev(0, safe_options(false, 2));
  char* p = static_cast<char*>(dev.alloc(3000, nullptr));
  p[0] = 1;
  dev.free(p);
  EXPECT_DEATH(p[10] = 1, "memlake: use after free at 0x[0-9a-f]+: allocation 0x[0-9a-f]+ \\(3000 bytes\\), freed 0 frees ago");
  void* a = dev.alloc(100, nullptr);
  dev.free(a);
  EXPECT_DEATH(g_sink = p[0], "use after free .* \\(3000 bytes\\), freed 1 frees ago");
  dev.check();
}

// What a GPU fault needs: the address (from the kernel log or
// compute-sanitizer) named after the fact, without a signal.
TEST(Safety, AnAddressIsDescribedOnRequest) {
  core::DeviceAllocator dev(0, safe_options(true, 2));
  auto p = reinterpret_cast<std::uintptr_t>(dev.alloc(100, nullptr));
  char buf[256];
  const std::size_t n = memlake_describe_address(p + 600, buf, sizeof buf);
  EXPECT_EQ(n, std::strlen(buf));
  EXPECT_NE(std::string(buf).find("500 bytes past the end of allocation"), std::string::npos) << buf;
  EXPECT_NE(std::string(buf).find("(100 bytes)"), std::string::npos) << buf;
  EXPECT_EQ(memlake_describe_address(p + 10, buf, sizeof buf), 0u) << "in bounds is no fault";
  EXPECT_STREQ(buf, "");
  dev.free(reinterpret_cast<void*>(p));
  ASSERT_GT(memlake_describe_address(p + 10, buf, sizeof buf), 0u);
  EXPECT_NE(std::string(buf).find("use after free"), std::string::npos) << buf;
  char small[8];
  EXPECT_GT(memlake_describe_address(p + 10, small, sizeof small), sizeof small);  // the length needed
  EXPECT_EQ(std::strlen(small), sizeof small - 1);
}

TEST(Safety, GuardAndQuarantineKeepStateAndReusePages) {
  prim::HostBackend* host;
  auto be = std::make_unique<prim::HostBackend>(0, kPage, 0);
  host = be.get();
  core::DeviceAllocator dev(std::move(be), safe_options(true, 3));
  std::vector<void*> live;
  for (int round = 0; round < 50; ++round) {
    for (int i = 0; i < 4; ++i) live.push_back(dev.alloc(1000 + 7000 * i, nullptr));
    for (void* p : live) {
      fill(dev.backend(), p, 1000, round);
      EXPECT_TRUE(holds(dev.backend(), p, 1000, round));
    }
    for (void* p : live) dev.free(p);
    live.clear();
    dev.check();
  }
  auto s = dev.stats();
  EXPECT_EQ(s.active.current, 0u);
  EXPECT_LE(s.reserved.peak, 4 * kPage) << "freed pages are reused, not leaked: memory stays at the live peak";
  EXPECT_EQ(host->live_reservations(), 3u) << "exactly the quarantined ranges stay reserved";
}

TEST(Safety, ModesAreOffByDefaultAndCostNothing) {
  Options o;
  EXPECT_FALSE(o.guard);
  EXPECT_EQ(o.quarantine, 0u);
  core::DeviceAllocator dev(0, safe_options(false, 0));
  void* a = dev.alloc(100, nullptr);
  void* b = dev.alloc(100, nullptr);
  EXPECT_EQ(dev.stats().small_slabs, 1u) << "small requests share a slab when no mode is on";
  dev.free(a);
  dev.free(b);
}

}  // namespace
}  // namespace memlake::test
