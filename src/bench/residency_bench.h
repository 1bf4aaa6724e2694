// Residency engine benchmark (`memlake bench residency`): evict and restore
// of 1-16 GiB of live allocations through the pinned host tier, each way and
// both directions at once, against plain pinned driver copies of the same
// bytes measured side by side in the same run.
#pragma once

#include <cstddef>
#include <string>
#include <vector>

#include "core/options.h"

namespace memlake::bench {

struct ResidencySample {
  std::size_t bytes = 0;      // per direction
  std::size_t pieces = 0;     // allocations moved
  // Median GB/s over the repeats. "both": bytes moved in both directions
  // together (2 x bytes) per second.
  double plain_d2h = 0, plain_h2d = 0, plain_both = 0;  // pinned driver copies
  double evict = 0, restore = 0, both = 0;              // memlake's engine
  // With a disk tier (options.disk_tier): demote (host tier -> disk) and
  // restore from disk (disk -> host tier -> GPU), once each, against plain
  // O_DIRECT writes and reads of as many bytes from pinned memory to a file
  // in the same directory (the disk's ceiling).
  bool disk = false, disk_direct = false;
  double plain_write = 0, demote = 0, plain_read = 0, disk_restore = 0;
  // Asynchronous: every piece's demotion queued, then settled; every piece read ahead (fetch), then settled.
  double demote_async = 0, fetch = 0;
  bool verified = false;  // every allocation's sampled bytes intact after the round trips
};

struct ResidencyBenchConfig {
  Options options;  // backend, granularity, tier_handle_size
  std::vector<std::size_t> sizes{std::size_t{1} << 30, std::size_t{4} << 30, std::size_t{16} << 30};
  std::size_t piece = std::size_t{256} << 20;  // allocation size (a tensor)
  int reps = 3;
};

std::vector<ResidencySample> run_residency_bench(const ResidencyBenchConfig& cfg);
std::string residency_table(const std::vector<ResidencySample>& s);
std::string residency_json(const std::vector<ResidencySample>& s);

}  // namespace memlake::bench
