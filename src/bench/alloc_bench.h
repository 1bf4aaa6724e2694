// Allocator benchmark scenarios, shared by `memlake bench alloc` and the
// Google Benchmark program (bench/bench_allocator.cpp).
#pragma once

#include <cstddef>
#include <memory>
#include <string>
#include <vector>

#include "core/options.h"
#include "memlake/memlake.h"
#include "prim/prim.h"

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

// A stream of a backend of its own (what a program's second stream is to
// memlake); destroy it after the allocator that used it.
class SideStream {
 public:
  explicit SideStream(const Options& o);
  ~SideStream();
  SideStream(const SideStream&) = delete;
  SideStream& operator=(const SideStream&) = delete;
  prim::Stream get() const { return stream_; }

 private:
  std::unique_ptr<prim::Backend> backend_;
  prim::Stream stream_ = nullptr;
};

// The allocation pattern of tests/gpu/shim_probe.cu through the C ABI on
// device 0: 96 blocks of 24..120 MiB, every other one freed, 12 stitched
// 640 MiB blocks, then all freed (about 11 GiB), then 64 MiB allocated and
// freed on `side`. Throws Errc::out_of_memory with the C ABI's message.
void fragment_like_shim_probe(memlake_allocator* a, prim::Stream side);

// Every scenario over the standard sizes; `quick` uses fewer repetitions.
// with_fragmented: also the C ABI loop after an 11 GiB fragmenting pattern.
std::vector<Sample> run_all(const Options& o, bool quick, bool with_fragmented = false);
std::string samples_table(const std::vector<Sample>& s);
std::string samples_json(const std::vector<Sample>& s);

}  // namespace memlake::bench
