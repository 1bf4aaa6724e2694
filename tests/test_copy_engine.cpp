// The copy engine: byte-exact results for odd sizes and unaligned pointers,
// pageable and pinned host memory, several threads sharing the staging
// pool, and clear errors. Written once, run on both backends.
#include <atomic>
#include <thread>

#include "io/copy_engine.h"
#include "io/stream_copy.h"
#include "support.h"

namespace memlake::test {
namespace {

class CopyEngineTest : public BackendTest {
 protected:
  void SetUp() override {
    BackendTest::SetUp();
    if (IsSkipped()) return;
    dev = std::make_unique<core::DeviceAllocator>(0, options());
    io::CopyOptions o;
    o.chunk = 1 << 20;  // small chunks: many per copy
    o.buffers = 3;
    o.threads = 3;
    o.direct_below = 64 << 10;
    engine = std::make_unique<io::CopyEngine>(dev->backend(), o);
  }
  void TearDown() override {
    engine.reset();
    dev.reset();
  }
  // Host -> device -> host through the engine; `shift` misaligns both host sides.
  void round_trip(std::size_t n, std::size_t shift, std::uint64_t seed, prim::Stream s = nullptr) {
    std::vector<unsigned char> src(n + shift), back(n + shift + 1, 0xEE);
    auto pat = pattern(n, seed);
    std::copy(pat.begin(), pat.end(), src.begin() + static_cast<long>(shift));
    void* d = dev->alloc(n + 3, s);
    auto dp = reinterpret_cast<std::uintptr_t>(d) + 3;  // unaligned device side too
    engine->to_device(dp, src.data() + shift, n, s);
    engine->to_host(back.data() + shift, dp, n, s);
    ASSERT_TRUE(std::equal(pat.begin(), pat.end(), back.begin() + static_cast<long>(shift)))
        << "bytes differ after a round trip of " << n << " bytes";
    EXPECT_EQ(back[shift + n], 0xEE) << "wrote past the end of the destination";
    std::vector<unsigned char> direct(n);
    dev->backend().read(direct.data(), dp, n);  // the device copy itself is right
    ASSERT_TRUE(direct == pat);
    dev->free(d);
  }
  std::unique_ptr<core::DeviceAllocator> dev;
  std::unique_ptr<io::CopyEngine> engine;
};

TEST_P(CopyEngineTest, OddSizesAndUnalignedPointersAreByteExact) {
  std::uint64_t seed = 1;
  for (std::size_t n : {std::size_t{1}, std::size_t{511}, std::size_t{64} << 10, (std::size_t{1} << 20) - 1,
                        std::size_t{1} << 20, (std::size_t{5} << 20) + 3, (std::size_t{9} << 20) + 4097})
    for (std::size_t shift : {0, 1, 7}) {
      round_trip(n, shift, seed++);
      if (HasFatalFailure()) return;
    }
  auto st = engine->stats();
  EXPECT_GT(st.staged, 0u);
  EXPECT_GT(st.direct, 0u);
  EXPECT_GE(st.chunks, 10u);
  EXPECT_GT(st.lane_copy_ns, 0u) << "staged copies account for their lanes' memcpy time";
}

TEST_P(CopyEngineTest, PinnedMemoryGoesStraightToTheCopyEngine) {
  const std::size_t n = (3 << 20) + 5;
  auto* pinned = static_cast<unsigned char*>(dev->backend().alloc_pinned(n));
  EXPECT_EQ(dev->backend().pointer_kind(pinned), prim::Backend::PointerKind::pinned);
  auto pat = pattern(n, 77);
  std::copy(pat.begin(), pat.end(), pinned);
  void* d = dev->alloc(n, nullptr);
  EXPECT_EQ(dev->backend().pointer_kind(d), prim::Backend::PointerKind::device);
  engine->to_device(reinterpret_cast<std::uintptr_t>(d), pinned, n, nullptr);
  dev->backend().synchronize_stream(nullptr);  // a pinned source is read by the DMA itself, later
  std::fill(pinned, pinned + n, 0);
  engine->to_host(pinned, reinterpret_cast<std::uintptr_t>(d), n, nullptr);
  EXPECT_TRUE(std::equal(pat.begin(), pat.end(), pinned));
  EXPECT_EQ(engine->stats().pinned, 2u);
  EXPECT_EQ(engine->stats().staged, 0u);
  dev->free(d);
  dev->backend().free_pinned(pinned);
}

TEST_P(CopyEngineTest, ThreadsAndStreamsShareTheStagingPool) {
  std::vector<prim::Stream> streams;
  for (int i = 0; i < 4; ++i) streams.push_back(dev->backend().create_stream());
  std::atomic<int> bad{0};
  std::vector<std::thread> ts;
  for (int t = 0; t < 4; ++t)
    ts.emplace_back([&, t] {
      for (int i = 0; i < 6; ++i) {
        const std::size_t n = (std::size_t{2} << 20) + static_cast<std::size_t>(t * 1000 + i * 37);
        std::vector<unsigned char> src = pattern(n, static_cast<std::uint64_t>(t * 100 + i)), back(n, 0);
        void* d = dev->alloc(n, streams[t]);
        engine->to_device(reinterpret_cast<std::uintptr_t>(d), src.data(), n, streams[t]);
        engine->to_host(back.data(), reinterpret_cast<std::uintptr_t>(d), n, streams[t]);
        if (back != src) ++bad;
        dev->free(d);
      }
    });
  for (auto& th : ts) th.join();
  EXPECT_EQ(bad.load(), 0);
  for (auto s : streams) dev->backend().destroy_stream(s);
}

// With several H2D streams the lanes' pieces land on different streams: the
// copy must still be byte-exact and ordered with the caller's stream (work
// queued on it after to_device sees the data).
TEST_P(CopyEngineTest, SeveralHostToDeviceStreamsKeepBytesAndOrder) {
  io::CopyOptions o;
  o.chunk = 1 << 20;
  o.buffers = 4;
  o.threads = 3;
  o.h2d_streams = 3;
  o.direct_below = 64 << 10;
  io::CopyEngine multi(dev->backend(), o);
  prim::Backend& be = dev->backend();
  prim::Stream s = be.create_stream();
  std::uint64_t seed = 40;
  for (std::size_t n : {(std::size_t{9} << 20) + 4097, (std::size_t{17} << 20) + 3}) {
    const auto pat = pattern(n, seed++);
    void* d = dev->alloc(n, s);
    const auto dp = reinterpret_cast<std::uintptr_t>(d);
    multi.to_device(dp, pat.data(), n, s);
    auto* after = static_cast<unsigned char*>(be.alloc_pinned(n));  // read back on the caller's stream, asynchronously
    be.copy_to_host_async(after, dp, n, s);
    be.synchronize_stream(s);
    EXPECT_TRUE(std::equal(pat.begin(), pat.end(), after)) << n << " bytes over 3 streams, read after the copy on its stream";
    be.free_pinned(after);
    std::vector<unsigned char> back(n, 0);
    multi.to_host(back.data(), dp, n, s);
    EXPECT_TRUE(back == pat) << n << " bytes back over 3 streams";
    dev->free(d);
  }
  EXPECT_GE(multi.stats().chunks, 20u);
  be.destroy_stream(s);
  for (int bad : {0, 17}) {
    o.h2d_streams = bad;
    std::string msg;
    EXPECT_EQ(error_of([&] { io::CopyEngine e(be, o); }, &msg), Errc::invalid_argument) << bad;
    EXPECT_NE(msg.find("host-to-device streams"), std::string::npos) << msg;
  }
}

// A smaller smallest piece (the ramp's first pieces and the schedule's last) keeps
// copies byte-exact with many more, smaller pieces; one off the 4 KiB grain is refused.
TEST_P(CopyEngineTest, TheSmallestPieceIsConfigurable) {
  io::CopyOptions o;
  o.chunk = 1 << 20;
  o.buffers = 4;
  o.threads = 3;
  o.min_piece = 64 << 10;
  o.direct_below = 64 << 10;
  io::CopyEngine fine(dev->backend(), o);
  const std::size_t n = (std::size_t{5} << 20) + 777;
  const auto pat = pattern(n, 91);
  void* d = dev->alloc(n, nullptr);
  fine.to_device(reinterpret_cast<std::uintptr_t>(d), pat.data(), n, nullptr);
  std::vector<unsigned char> back(n, 0);
  fine.to_host(back.data(), reinterpret_cast<std::uintptr_t>(d), n, nullptr);
  EXPECT_TRUE(back == pat);
  const std::uint64_t before = engine->stats().chunks;  // the same copies with the default 1 MiB
  engine->to_device(reinterpret_cast<std::uintptr_t>(d), pat.data(), n, nullptr);
  engine->to_host(back.data(), reinterpret_cast<std::uintptr_t>(d), n, nullptr);
  EXPECT_GT(fine.stats().chunks, engine->stats().chunks - before) << "smaller first and last pieces: more of them";
  dev->free(d);
  o.min_piece = 1000;
  std::string msg;
  EXPECT_EQ(error_of([&] { io::CopyEngine e(dev->backend(), o); }, &msg), Errc::invalid_argument);
  EXPECT_NE(msg.find("not a multiple of 4 KiB"), std::string::npos) << msg;
}

TEST_P(CopyEngineTest, BadPointersAreClearErrorsAndTheEngineGoesOn) {
  std::vector<unsigned char> host(4 << 20, 1);
  void* d = dev->alloc(4 << 20, nullptr);
  std::string msg;
  EXPECT_NE(error_of([&] { engine->to_device(reinterpret_cast<std::uintptr_t>(d), d, 4 << 20, nullptr); }, &msg),
            Errc::ok);
  EXPECT_NE(msg.find("is device memory"), std::string::npos) << msg;
  if (is_host()) {  // the host backend checks every device range precisely
    EXPECT_EQ(error_of([&] { engine->to_device(0x1000, host.data(), 4 << 20, nullptr); }, &msg), Errc::invalid_argument);
    EXPECT_NE(msg.find("not mapped"), std::string::npos) << msg;
    EXPECT_EQ(error_of([&] { engine->to_host(host.data(), 0x1000, 4 << 20, nullptr); }, &msg), Errc::invalid_argument);
  }
  dev->free(d);
  round_trip((3 << 20) + 1, 1, 5);  // still works, staging pool intact
}

MEMLAKE_INSTANTIATE_BACKENDS(CopyEngineTest);

TEST(StreamCopy, EveryAlignmentAndTailIsByteExact) {
  const std::size_t big = (std::size_t{1} << 20) + 123;  // above the non-temporal threshold
  auto pat = pattern(big + 64, 9);
  for (std::size_t n : {std::size_t{0}, std::size_t{5}, std::size_t{300} << 10, big})
    for (std::size_t so : {0, 1, 15, 33})
      for (std::size_t d_off : {0, 3, 16, 47}) {
        std::vector<unsigned char> dst(big + 128, 0xAB);
        io::stream_copy(dst.data() + d_off, pat.data() + so, n);
        ASSERT_TRUE(std::equal(pat.begin() + static_cast<long>(so), pat.begin() + static_cast<long>(so + n),
                               dst.begin() + static_cast<long>(d_off)))
            << n << " bytes, source offset " << so << ", destination offset " << d_off;
        for (std::size_t i = 0; i < d_off; ++i) ASSERT_EQ(dst[i], 0xAB);
        for (std::size_t i = d_off + n; i < dst.size(); ++i) ASSERT_EQ(dst[i], 0xAB) << "wrote past the end";
      }
}

}  // namespace
}  // namespace memlake::test
