// Multi-path copies: a transfer split over the target's own link and peer
// GPUs that forward over NVLink, executed for real. On the host backend the
// "GPUs" are host backends of one process (peer memory is only reachable
// where it was granted, as on a device); on the cuda backend the test runs
// as a loopback (two backends of GPU 0 stand for two GPUs), which exercises
// every driver call of the mechanism on a one-GPU machine.
#include <atomic>
#include <thread>

#include "io/multipath.h"
#include "prim/decorators.h"
#include "support.h"

namespace memlake::test {
namespace {

// A backend that says it cannot reach its peers, or fails its peer copies.
class PeerlessBackend final : public prim::ForwardingBackend {
 public:
  using ForwardingBackend::ForwardingBackend;
  bool no_peers = false;
  std::atomic<int> fail_copies{0};
  bool can_access_peer(int peer) override { return !no_peers && inner().can_access_peer(peer); }
  void copy_device_async(std::uintptr_t dst, std::uintptr_t src, std::size_t n, prim::Stream s) override {
    if (fail_copies.load() > 0 && fail_copies.fetch_sub(1) > 0) throw_error(Errc::driver, "injected peer copy failure");
    inner().copy_device_async(dst, src, n, s);
  }
};

class MultiPathTest : public BackendTest {
 protected:
  void SetUp() override {
    BackendTest::SetUp();
    if (IsSkipped()) return;
    gpus_ = is_host() ? 4 : 2;  // cuda: a loopback over GPU 0
    for (int i = 0; i < gpus_; ++i) {
      prim::BackendConfig c;
      c.kind = GetParam();
      c.device = is_host() ? i : 0;
      auto b = std::make_unique<PeerlessBackend>(prim::make_backend(c));
      raw.push_back(b.get());
      backends.push_back(std::move(b));
    }
  }
  void TearDown() override {
    mp.reset();
    for (auto& [va, size] : owned) {
      raw[0]->unmap(va, size);
      raw[0]->free_reservation(va, size);
    }
    for (auto h : handles) raw[0]->release(h);
  }
  void make(const std::string& topo, io::MultiPathOptions o = small()) {
    std::vector<prim::Backend*> v(raw.begin(), raw.end());
    mp = std::make_unique<io::MultiPath>(v, io::Topology::parse(topo), o);
  }
  static io::MultiPathOptions small() {
    io::MultiPathOptions o;
    o.slot = 2 << 20;  // several pieces per share
    o.plan.min_share = 1 << 20;
    o.plan.align = 4096;
    o.copy.chunk = 1 << 20;
    o.copy.threads = 2;
    o.copy.direct_below = 64 << 10;
    return o;
  }
  std::string all_peers() const { return "gpus " + std::to_string(gpus_) + "; pcie 24; nvlink all 200"; }
  // Device memory of GPU 0 (the target), mapped read-write.
  std::uintptr_t device_mem(std::size_t n) {
    const std::size_t g = raw[0]->granularity(), size = (n + g - 1) / g * g;
    auto va = raw[0]->reserve(size, 0);
    auto h = raw[0]->create(size);
    raw[0]->map(va, size, h);
    raw[0]->set_access(va, size, prim::Access::read_write);
    owned.push_back({va, size});
    handles.push_back(h);
    return va;
  }
  // H2D then D2H of n bytes through the multi-path copier; checks every byte
  // on the device itself and back on the host. Returns the H2D plan.
  io::Plan round_trip(std::size_t n, std::uint64_t seed, bool pinned_src = false) {
    auto pat = pattern(n, seed);
    std::vector<unsigned char> pageable(n + 3);
    unsigned char* src = pageable.data() + 3;  // unaligned
    if (pinned_src) src = static_cast<unsigned char*>(raw[0]->alloc_pinned(n));
    std::copy(pat.begin(), pat.end(), src);
    const std::uintptr_t d = device_mem(n + 1) + 1;  // unaligned device side too
    io::Plan p = mp->to_device(0, d, src, n, nullptr);
    raw[0]->synchronize_stream(nullptr);
    std::vector<unsigned char> direct(n);
    raw[0]->read(direct.data(), d, n);
    EXPECT_TRUE(direct == pat) << "device bytes differ after H2D of " << n;
    std::vector<unsigned char> back(n + 1, 0xEE);
    mp->to_host(0, back.data(), d, n, nullptr);
    EXPECT_TRUE(std::equal(pat.begin(), pat.end(), back.begin())) << "host bytes differ after D2H of " << n;
    EXPECT_EQ(back[n], 0xEE) << "wrote past the end";
    if (pinned_src) raw[0]->free_pinned(src);
    return p;
  }

  int gpus_ = 0;
  std::vector<std::unique_ptr<PeerlessBackend>> backends;
  std::vector<PeerlessBackend*> raw;
  std::unique_ptr<io::MultiPath> mp;
  std::vector<std::pair<std::uintptr_t, std::size_t>> owned;
  std::vector<prim::PhysHandle> handles;
};

TEST_P(MultiPathTest, ASplitTransferIsByteExactOverEveryPath) {
  make(all_peers());
  const std::size_t n = (std::size_t{29} << 20) + 4099;
  io::Plan p = round_trip(n, 1);
  ASSERT_EQ(p.shares.size(), static_cast<std::size_t>(gpus_)) << io::describe(p);
  auto st = mp->stats();
  EXPECT_EQ(st.transfers, 2u);
  EXPECT_EQ(st.split, 2u);
  for (int g = 0; g < gpus_; ++g) EXPECT_GT(st.bytes_via[static_cast<std::size_t>(g)], 0u) << "GPU " << g << " carried nothing";
  std::uint64_t total = 0;
  for (auto b : st.bytes_via) total += b;
  EXPECT_EQ(total, 2 * n);
}

TEST_P(MultiPathTest, PinnedSourcesAndRepeatedTransfersReuseTheSlots) {
  make(all_peers());
  for (int i = 0; i < 3; ++i) round_trip((std::size_t{13} << 20) + static_cast<std::size_t>(i) * 777, 10 + i, i == 1);
  EXPECT_EQ(mp->stats().split, 6u);
}

TEST_P(MultiPathTest, SmallCopiesAndMaxPathsAndNoPeersTakeFewerPaths) {
  make(all_peers());
  EXPECT_EQ(round_trip(600 << 10, 2).shares.size(), 1u);  // below min_share per path
  auto o = small();
  o.plan.max_paths = 2;
  make(all_peers(), o);
  EXPECT_EQ(round_trip(std::size_t{9} << 20, 3).shares.size(), 2u);
  for (auto* b : raw) b->no_peers = true;  // links the devices cannot use are no links
  make(all_peers());
  EXPECT_EQ(round_trip(std::size_t{9} << 20, 4).shares.size(), 1u);
  EXPECT_EQ(mp->topology().nvlink[1][0], 0.0);
}

TEST_P(MultiPathTest, APeerFailureIsReportedAndTheNextTransferWorks) {
  make(all_peers());
  const std::size_t n = std::size_t{12} << 20;
  std::vector<unsigned char> src(n, 7);
  const std::uintptr_t d = device_mem(n);
  raw[0]->fail_copies = 1;  // the target forwards: its first device-to-device copy fails
  std::string msg;
  EXPECT_EQ(error_of([&] { mp->to_device(0, d, src.data(), n, nullptr); }, &msg), Errc::driver);
  EXPECT_NE(msg.find("injected"), std::string::npos) << msg;
  raw[0]->fail_copies = 0;
  round_trip(n, 5);
}

TEST_P(MultiPathTest, BadArgumentsAreClearErrors) {
  make(all_peers());
  std::vector<unsigned char> host(4 << 20);
  std::string msg;
  EXPECT_EQ(error_of([&] { mp->to_device(0, reinterpret_cast<std::uintptr_t>(host.data()), host.data(), host.size(), nullptr); }, &msg),
            Errc::invalid_argument);
  EXPECT_NE(msg.find("not device memory of GPU 0"), std::string::npos) << msg;
  EXPECT_EQ(error_of([&] { mp->to_device(gpus_, 0x1000, host.data(), 1, nullptr); }, &msg), Errc::invalid_argument);
  std::vector<prim::Backend*> one{raw[0]};
  EXPECT_EQ(error_of([&] { io::MultiPath bad(one, io::Topology::parse(all_peers())); }, &msg), Errc::invalid_argument);
  EXPECT_NE(msg.find("GPU backends for a topology of"), std::string::npos) << msg;
  round_trip(std::size_t{5} << 20, 6);  // still works
}

TEST_P(MultiPathTest, MeasuredTopologyDescribesEveryLinkAndPlans) {
  std::vector<prim::Backend*> v(raw.begin(), raw.end());
  std::string text;
  io::Topology t = io::measure_topology(v, std::size_t{8} << 20, &text);
  ASSERT_EQ(t.gpus, gpus_) << text;
  for (int i = 0; i < gpus_; ++i) {
    EXPECT_GT(t.pcie_h2d[static_cast<std::size_t>(i)], 0) << text;
    for (int j = 0; j < gpus_; ++j)
      if (i != j) {
        EXPECT_GT(t.nvlink[static_cast<std::size_t>(i)][static_cast<std::size_t>(j)], 0) << text;
      }
  }
  EXPECT_NE(text.find("nvlink 1 0 "), std::string::npos) << text;
  mp = std::make_unique<io::MultiPath>(v, t, small());
  round_trip(std::size_t{17} << 20, 7);
}

MEMLAKE_INSTANTIATE_BACKENDS(MultiPathTest);

}  // namespace
}  // namespace memlake::test
