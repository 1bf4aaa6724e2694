// Multi-path copy planning over described topologies (issue 5's planner).
#include "io/planner.h"
#include <algorithm>

#include "support.h"

namespace memlake::test {
namespace {

constexpr std::size_t GiB = std::size_t{1} << 30, MiB = std::size_t{1} << 20;

void expect_covering(const io::Plan& p, std::size_t align) {
  std::size_t off = 0;
  for (std::size_t i = 0; i < p.shares.size(); ++i) {
    const auto& s = p.shares[i];
    EXPECT_EQ(s.offset, off) << "share " << i << " is not contiguous";
    if (i + 1 < p.shares.size()) {
      EXPECT_EQ((s.offset + s.bytes) % align, 0u) << "boundary not aligned";
    }
    EXPECT_GT(s.bytes, 0u);
    off += s.bytes;
  }
  EXPECT_EQ(off, p.bytes) << "shares do not cover the transfer";
}

TEST(Planner, OneGpuIsTheDirectPath) {
  auto t = io::Topology::parse("gpus 1; pcie 55");
  auto p = io::plan(t, 0, io::Direction::h2d, 4 * GiB);
  ASSERT_EQ(p.shares.size(), 1u);
  EXPECT_EQ(p.shares[0].via, 0);
  EXPECT_EQ(p.shares[0].bytes, 4 * GiB);
  EXPECT_DOUBLE_EQ(p.predicted_gbps, 55.0);
}

// 8 GPUs, two per PCIe switch with one x16 uplink each, NVLink between all
// (a DGX A100-like box, figures of GLake's paper order).
const char* kDgx =
    "gpus 8\n"
    "pcie 24          # each GPU's own link\n"
    "group 0 0 1 1 2 2 3 3 uplink 24\n"
    "nvlink all 240\n";

TEST(Planner, PeersOnOtherSwitchesAddTheirLinks) {
  auto t = io::Topology::parse(kDgx);
  auto p = io::plan(t, 0, io::Direction::h2d, 4 * GiB);
  // GPU 1 shares GPU 0's switch, so it adds nothing; one peer per other switch does.
  ASSERT_EQ(p.shares.size(), 4u) << io::describe(p);
  EXPECT_EQ(p.shares[0].via, 0);
  std::vector<int> vias;
  for (auto& s : p.shares) vias.push_back(t.pcie_group[s.via]);
  std::sort(vias.begin(), vias.end());
  EXPECT_EQ(vias, (std::vector<int>{0, 1, 2, 3})) << "one path per switch";
  EXPECT_NEAR(p.predicted_gbps, 96.0, 1.0);
  EXPECT_DOUBLE_EQ(p.direct_gbps, 24.0);
  expect_covering(p, 2 * MiB);
}

TEST(Planner, NoPeerAccessMeansDirectOnly) {
  auto t = io::Topology::parse("gpus 2; pcie 55");
  auto p = io::plan(t, 1, io::Direction::d2h, GiB);
  ASSERT_EQ(p.shares.size(), 1u);
  EXPECT_EQ(p.shares[0].via, 1);
}

TEST(Planner, SmallTransfersAreNotSplit) {
  auto t = io::Topology::parse(kDgx);
  io::PlanOptions o;
  o.min_share = 32 * MiB;
  EXPECT_EQ(io::plan(t, 0, io::Direction::h2d, 40 * MiB, o).shares.size(), 1u);
  auto p = io::plan(t, 0, io::Direction::h2d, 100 * MiB, o);  // 25 MiB each would be too small for 4 paths
  EXPECT_LT(p.shares.size(), 4u);
  for (auto& s : p.shares) EXPECT_GE(s.bytes, 30 * MiB);
  expect_covering(p, 2 * MiB);
}

TEST(Planner, SharesFollowBandwidthAndRespectLimits) {
  // GPU 0 on Gen5 (55), peer 1 on Gen4 (25) but NVLink only 20 to GPU 0.
  auto t = io::Topology::parse("gpus 3; pcie 55; pcie gpu 1 25; pcie gpu 2 55; nvlink 1 0 20; nvlink 2 0 100");
  auto p = io::plan(t, 0, io::Direction::h2d, 13 * GiB);
  ASSERT_EQ(p.shares.size(), 3u) << io::describe(p);
  EXPECT_EQ(p.shares[1].via, 2) << "fastest peer first";
  EXPECT_DOUBLE_EQ(p.shares[1].gbps, 55.0);
  EXPECT_DOUBLE_EQ(p.shares[2].gbps, 20.0) << "a peer is limited by its NVLink to the target";
  // Shares proportional to 55 : 55 : 20 (within the alignment).
  EXPECT_NEAR(static_cast<double>(p.shares[2].bytes) / static_cast<double>(p.bytes), 20.0 / 130.0, 0.01);
  EXPECT_NEAR(p.predicted_gbps, 130.0, 2.0);
  expect_covering(p, 2 * MiB);
  // D2H uses the reverse NVLink direction, absent here: direct only.
  EXPECT_EQ(io::plan(t, 0, io::Direction::d2h, 13 * GiB).shares.size(), 1u);
}

TEST(Planner, MaxPathsAndPeersOff) {
  auto t = io::Topology::parse(kDgx);
  io::PlanOptions o;
  o.max_paths = 2;
  EXPECT_EQ(io::plan(t, 0, io::Direction::h2d, 4 * GiB, o).shares.size(), 2u);
  o.max_paths = 0;
  o.use_peers = false;
  EXPECT_EQ(io::plan(t, 0, io::Direction::h2d, 4 * GiB, o).shares.size(), 1u);
}

TEST(Planner, BadDescriptionsNameTheLine) {
  std::string msg;
  EXPECT_EQ(error_of([] { io::Topology::parse("pcie 24"); }, &msg), Errc::invalid_argument);
  EXPECT_NE(msg.find("line 1: 'gpus N' must come first"), std::string::npos) << msg;
  EXPECT_EQ(error_of([] { io::Topology::parse("gpus 2\npcie 24\nnvlink 0 5 10"); }, &msg), Errc::invalid_argument);
  EXPECT_NE(msg.find("line 3"), std::string::npos) << msg;
  EXPECT_EQ(error_of([] { io::Topology::parse("gpus 2\nwarp 9"); }, &msg), Errc::invalid_argument);
  EXPECT_NE(msg.find("unknown statement 'warp'"), std::string::npos) << msg;
  EXPECT_EQ(error_of([] { io::Topology::parse("gpus 2\npcie gpu 0 10"); }, &msg), Errc::invalid_argument);
  EXPECT_NE(msg.find("GPU 1 has no PCIe bandwidth"), std::string::npos) << msg;
  auto t = io::Topology::parse("gpus 1; pcie 10");
  EXPECT_EQ(error_of([&] { io::plan(t, 3, io::Direction::h2d, GiB); }), Errc::invalid_argument);
}

}  // namespace
}  // namespace memlake::test
