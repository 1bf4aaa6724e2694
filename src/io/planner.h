// Path planning for host<->GPU copies over several PCIe links (GLake
// MultiPath's idea): a transfer to GPU g can go over g's own PCIe link and,
// in parallel, over peer GPUs that move their share over their own PCIe
// link and forward it to g over NVLink.
//
// The planner is pure: it takes a described topology (measured on the
// machine, or written by hand for tests and what-if questions) and returns
// which paths carry which byte ranges. Executing a plan is the copy
// engine's job.
#pragma once

#include <cstddef>
#include <string>
#include <vector>

namespace memlake::io {

enum class Direction { h2d, d2h };

struct Topology {
  int gpus = 0;
  std::vector<double> pcie_h2d;  // GB/s host -> GPU i
  std::vector<double> pcie_d2h;  // GB/s GPU i -> host
  std::vector<int> pcie_group;   // GPUs with the same id share one upstream link
  std::vector<double> group_h2d, group_d2h;  // that link's GB/s, per group id
  std::vector<std::vector<double>> nvlink;   // GB/s i -> j, 0 = no peer access

  // A described topology, one statement per line (or separated by ';'),
  // '#' starts a comment:
  //   gpus 8                          first: the number of GPUs
  //   pcie 24 [22]                    every GPU's host link, GB/s H2D [D2H]
  //   pcie gpu 3 12 [12]              one GPU's host link
  //   group 0 0 1 1 2 2 3 3 [uplink 24 [24]]
  //                                   the PCIe switch of each GPU; GPUs of one
  //                                   switch share its uplink (GB/s)
  //   nvlink all 240                  every pair, GB/s per direction
  //   nvlink 0 3 50 [both]            GPU 0 -> GPU 3 (and back)
  // Throws Errc::invalid_argument naming the line.
  static Topology parse(const std::string& text);
  void validate() const;
};

struct Share {
  int via;             // GPU whose PCIe link carries it (== target: the direct path)
  std::size_t offset;  // byte range of the transfer
  std::size_t bytes;
  double gbps;         // planned rate of this path
};

struct Plan {
  int target = 0;
  Direction dir = Direction::h2d;
  std::size_t bytes = 0;
  std::vector<Share> shares;    // contiguous, in offset order, covering [0, bytes)
  double predicted_gbps = 0;    // bytes / the slowest share's time
  double direct_gbps = 0;       // the direct path alone, for comparison
};

struct PlanOptions {
  int max_paths = 0;                          // 0 = as many as help
  std::size_t min_share = std::size_t{32} << 20;  // a path gets at least this much, or none
  std::size_t align = std::size_t{2} << 20;       // share boundaries (the last share takes the rest)
  bool use_peers = true;
};

Plan plan(const Topology& t, int target, Direction dir, std::size_t bytes, const PlanOptions& o = {});
std::string describe(const Plan& p);

}  // namespace memlake::io
