// Two copy-engine benchmarks beside `memlake bench copy`'s main table:
//  * registration: what registering a pageable buffer costs against what it
//    saves per copy, hence after how many copies it pays off (the figure the
//    registration cache's MEMLAKE_COPY_REGISTER_AFTER is chosen from);
//  * multipath: a measured topology, then H2D and D2H into GPU 0 over the
//    direct path alone and over every useful path, side by side, bytes
//    checked. With --loopback K, K extra backends of GPU 0 stand for peers
//    (a one-GPU machine: checks the mechanism, cannot show a speed-up).
#pragma once

#include <cstddef>
#include <string>

#include "core/options.h"

namespace memlake::bench {

struct PathBenchConfig {
  Options options;  // backend, copy_threads, copy_chunk
  std::size_t min_bytes = std::size_t{64} << 20;
  std::size_t max_bytes = std::size_t{1} << 30;
  int reps = 3;
  int loopback = 0;  // multipath: peers emulated on GPU 0 (host backend: separate host "GPUs")
};

// Each returns a readable table; *ok is false when bytes differed.
std::string run_registration_bench(const PathBenchConfig& cfg, bool* ok);
std::string run_multipath_bench(const PathBenchConfig& cfg, bool* ok);

}  // namespace memlake::bench
