// Copy bandwidth benchmark (`memlake bench copy`): memlake's copy engine
// against the plain driver copy, measured side by side in one run.
#pragma once

#include <cstddef>
#include <string>
#include <vector>

#include "core/options.h"

namespace memlake::bench {

struct CopySample {
  std::string direction;  // "h2d", "d2h", "both"
  std::string host;       // "pageable", "pinned"
  std::size_t bytes;
  double plain_gbps;      // driver copy (cudaMemcpy-equivalent)
  double memlake_gbps;
  bool verified;          // bytes checked after the memlake copy
  // Staged memlake copies: the share of the lanes' time spent in the host memcpy (the
  // rest waited for staging buffers or their DMA), and the bytes per second of one
  // lane's memcpy. -1 / 0 when nothing was staged.
  double lane_copy_share = -1;
  double lane_gbps = 0;
};

struct CopyBenchConfig {
  Options options;                              // backend; copy_threads, copy_chunk for the engine
  std::size_t min_bytes = std::size_t{64} << 10;
  std::size_t max_bytes = std::size_t{1} << 30;
  int reps = 5;
  bool streaming_stores = true;                 // engine's host copies with non-temporal stores
  bool ramp = true;                             // engine's small first pieces per lane
  std::size_t min_piece = std::size_t{1} << 20;  // engine's smallest piece (the ramp's first)
};

std::vector<CopySample> run_copy_bench(const CopyBenchConfig& cfg, int* threads_used = nullptr);
std::string copy_table(const std::vector<CopySample>& s, int threads);
std::string copy_json(const std::vector<CopySample>& s, int threads);
// Bandwidth against size, one line per direction x host memory x copier (report::svg;
// title is plain text, escaped there).
std::string copy_svg(const std::vector<CopySample>& s, const std::string& title);

}  // namespace memlake::bench
