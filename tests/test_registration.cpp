// The copy engine's registration cache: a pageable buffer copied again and
// again is registered on its N-th use and then copied by DMA directly; the
// limit evicts the least recently used; forget() unregisters before a free.
// Run on both backends (the cuda instance registers with the driver).
#include <cstdlib>

#include "io/copy_engine.h"
#include "support.h"

namespace memlake::test {
namespace {

using Kind = prim::Backend::PointerKind;

// Host memory of its own pages (the driver registers whole pages), starting
// 5 bytes into its first page so nothing is page-aligned.
class HostBuf {
 public:
  explicit HostBuf(std::size_t n) : n_(n), mem_(static_cast<unsigned char*>(std::aligned_alloc(4096, (n + 5 + 4095) / 4096 * 4096))) {}
  ~HostBuf() { std::free(mem_); }
  HostBuf(const HostBuf&) = delete;
  HostBuf& operator=(const HostBuf&) = delete;
  unsigned char* data() { return mem_ + 5; }
  std::size_t size() const { return n_; }
  unsigned char* begin() { return data(); }
  unsigned char* end() { return data() + n_; }

 private:
  std::size_t n_;
  unsigned char* mem_;
};

class RegistrationTest : public BackendTest {
 protected:
  static constexpr std::size_t kSize = (std::size_t{3} << 20) + 123;  // not a page multiple

  void make(int after, std::size_t limit) {
    if (!dev) dev = std::make_unique<core::DeviceAllocator>(0, options());
    engine.reset();
    io::CopyOptions o;
    o.chunk = 1 << 20;
    o.threads = 2;
    o.direct_below = 64 << 10;
    o.registration.after = after;
    o.registration.limit = limit;
    o.registration.min_bytes = 1 << 20;
    engine = std::make_unique<io::CopyEngine>(dev->backend(), o);
  }
  void TearDown() override {
    engine.reset();
    dev.reset();
  }
  // Fresh contents each time: a registered range must carry the bytes of now.
  void round_trip(HostBuf& host, std::uint64_t seed) {
    auto pat = pattern(host.size(), seed);
    std::copy(pat.begin(), pat.end(), host.begin());
    void* d = dev->alloc(host.size(), nullptr);
    engine->to_device(reinterpret_cast<std::uintptr_t>(d), host.data(), host.size(), nullptr);
    std::fill(host.begin(), host.end(), 0);
    engine->to_host(host.data(), reinterpret_cast<std::uintptr_t>(d), host.size(), nullptr);
    dev->free(d);
    ASSERT_TRUE(std::equal(pat.begin(), pat.end(), host.begin())) << "bytes differ (seed " << seed << ")";
  }
  Kind kind(const void* p) { return dev->backend().pointer_kind(p); }

  std::unique_ptr<core::DeviceAllocator> dev;
  std::unique_ptr<io::CopyEngine> engine;
};

TEST_P(RegistrationTest, ARangeIsRegisteredOnItsNthUseAndThenCopiedDirectly) {
  make(3, std::size_t{1} << 30);
  HostBuf host(kSize);
  round_trip(host, 1);  // uses 1 and 2 (to_device, to_host): staged
  EXPECT_EQ(kind(host.data()), Kind::pageable);
  EXPECT_EQ(engine->stats().staged, 2u);
  round_trip(host, 2);  // use 3 registers it; use 4 hits
  EXPECT_EQ(kind(host.data()), Kind::pinned);
  auto rs = engine->registration_stats();
  EXPECT_EQ(rs.registrations, 1u);
  EXPECT_EQ(rs.hits, 1u);
  EXPECT_GE(rs.bytes, kSize);  // whole pages
  EXPECT_LE(rs.bytes, kSize + 8192);
  EXPECT_EQ(engine->stats().registered, 2u);
  round_trip(host, 3);
  EXPECT_EQ(engine->stats().registered, 4u);
  EXPECT_EQ(engine->stats().staged, 2u);
  engine.reset();  // the engine unregisters what it registered
  EXPECT_EQ(kind(host.data()), Kind::pageable);
}

TEST_P(RegistrationTest, OffByDefaultAndSmallRangesAreNeverRegistered) {
  make(0, std::size_t{1} << 30);
  HostBuf host(kSize);
  for (int i = 0; i < 4; ++i) round_trip(host, 10 + i);
  EXPECT_EQ(engine->registration_stats().registrations, 0u);
  EXPECT_EQ(kind(host.data()), Kind::pageable);
  make(1, std::size_t{1} << 30);
  HostBuf small(512 << 10);  // staged, but below min_bytes
  round_trip(small, 20);
  EXPECT_EQ(engine->registration_stats().registrations, 0u);
}

TEST_P(RegistrationTest, TheLimitEvictsTheLeastRecentlyUsedRange) {
  make(1, 2 * kSize + 16384);  // two, in whole pages
  HostBuf a(kSize), b(kSize), c(kSize);
  round_trip(a, 1);
  round_trip(b, 2);
  round_trip(a, 3);  // a is now more recent than b
  round_trip(c, 4);  // over the limit: b goes
  EXPECT_EQ(kind(a.data()), Kind::pinned);
  EXPECT_EQ(kind(b.data()), Kind::pageable);
  EXPECT_EQ(kind(c.data()), Kind::pinned);
  auto rs = engine->registration_stats();
  EXPECT_EQ(rs.evictions, 1u);
  EXPECT_EQ(rs.ranges, 2u);
  EXPECT_LE(rs.bytes, 2 * kSize + 16384);
}

TEST_P(RegistrationTest, ForgetUnregistersAndCountingStartsAgain) {
  make(2, std::size_t{1} << 30);
  HostBuf host(kSize);
  round_trip(host, 1);
  EXPECT_EQ(kind(host.data()), Kind::pinned);
  engine->forget(host.data() + 100, 1);  // any byte of the range
  EXPECT_EQ(kind(host.data()), Kind::pageable);
  EXPECT_EQ(engine->registration_stats().forgotten, 1u);
  EXPECT_EQ(engine->registration_stats().bytes, 0u);
  const auto staged = engine->stats().staged;
  round_trip(host, 2);  // counted from zero: use 1 staged, use 2 registers
  EXPECT_EQ(engine->stats().staged, staged + 1);
  EXPECT_EQ(kind(host.data()), Kind::pinned);
  engine->forget(host.data(), host.size());
}

TEST_P(RegistrationTest, APartlyOverlappingRangeReplacesTheOldRegistration) {
  make(1, std::size_t{1} << 30);
  HostBuf big(2 * kSize);
  void* d = dev->alloc(2 * kSize, nullptr);
  const auto dp = reinterpret_cast<std::uintptr_t>(d);
  engine->to_device(dp, big.data(), kSize, nullptr);
  EXPECT_EQ(kind(big.data()), Kind::pinned);
  auto pat = pattern(kSize, 9);
  std::copy(pat.begin(), pat.end(), big.data() + kSize / 2);
  engine->to_device(dp, big.data() + kSize / 2, kSize, nullptr);  // overlaps the first half
  EXPECT_EQ(kind(big.data()), Kind::pageable);
  EXPECT_EQ(kind(big.data() + kSize), Kind::pinned);
  EXPECT_EQ(kind(big.data() + 2 * kSize - 1), Kind::pageable);
  std::vector<unsigned char> back(kSize);
  dev->backend().read(back.data(), dp, kSize);
  EXPECT_TRUE(back == pat);
  EXPECT_EQ(engine->registration_stats().ranges, 1u);
  dev->free(d);
}

MEMLAKE_INSTANTIATE_BACKENDS(RegistrationTest);

}  // namespace
}  // namespace memlake::test
