// Allocator benchmark scenarios, shared by `memlake bench alloc` and the
// Google Benchmark program (bench/bench_allocator.cpp).
#pragma once

#include <cstddef>
#include <string>
#include <vector>

#include "core/options.h"

namespace memlake::bench {

struct Sample {
  std::string name;     // scenario
  std::string backend;
  std::size_t param;    // bytes (hot path) or pages (stitch, grow)
  double median_ns;     // per operation
  double p90_ns;
  std::size_t reps;
  double calls_per_op;  // primitive calls per operation (driver calls on cuda)
};

// alloc + free of a cached size, with 64 live neighbours of the same size.
Sample hot_path(const Options& o, std::size_t size, std::size_t reps);
// One request served by stitching `pages` scattered free pages.
Sample stitch(const Options& o, std::size_t pages, std::size_t reps);
// One request of `pages` new pages on an empty cache (create + map + access).
Sample grow(const Options& o, std::size_t pages, std::size_t reps);

// Every scenario over the standard sizes; `quick` uses fewer repetitions.
// with_fragmented: also the C ABI loop after an 11 GiB fragmenting pattern.
std::vector<Sample> run_all(const Options& o, bool quick, bool with_fragmented = false);
std::string samples_table(const std::vector<Sample>& s);
std::string samples_json(const std::vector<Sample>& s);

}  // namespace memlake::bench
