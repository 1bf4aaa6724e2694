// Configuration, read once from one table.
//
// Every tunable lives in kOptionTable below: its key (used by the C ABI and
// Python's enable(**options)), its MEMLAKE_* environment variable, default,
// and meaning. Options::from_env() starts from the defaults and applies the
// environment; set() applies one key=value (validated, with a clear error).
#pragma once

#include <cstddef>
#include <string>
#include <vector>

namespace memlake {

struct Options {
  std::string backend = "cuda";
  std::size_t granularity = 0;           // 0 = backend default
  // Growth creates handles of this size for the bulk of a shortfall; 0 = one page per
  // handle; kAutoHandleSize = 8 MiB where that is a multiple of a smaller page, else one page.
  static constexpr std::size_t kAutoHandleSize = ~std::size_t{0};
  static constexpr std::size_t kAutoHandleBytes = std::size_t{8} << 20;
  std::size_t handle_size = kAutoHandleSize;
  // Growth shortfalls worth at least two of these get handles of this size for their
  // bulk (then handle_size, then pages); 0 = off. A multiple of the handle size.
  std::size_t large_handle_size = 0;
  std::size_t small_max = 1u << 20;      // requests <= this are packed in slabs
  std::size_t memory_cap = 0;            // 0 = none
  bool stitch = true;
  bool tail_share = true;                // a large allocation may begin in the last page of the one before it
  int recent_spans = 0;                  // large spans freed recently, kept for a same-size reuse (0 = off)
  double max_mapped_ratio = 2.0;         // mapped VA <= ratio x reserved (cached views)
  std::size_t host_memory_limit = 0;     // host backend physical limit
  std::string trace;                     // write an allocation log here ("" = off)
  int copy_threads = 0;                  // copy engine host threads (0 = auto)
  std::size_t copy_chunk = 4u << 20;     // copy engine staging buffer size
  int copy_h2d_streams = 4;              // copy engine DMA streams for staged host-to-device copies
  int copy_register_after = 0;           // register a reused pageable buffer on its N-th copy (0 = never)
  std::size_t copy_register_limit = std::size_t{8} << 30;  // bytes the registration cache keeps registered
  std::size_t host_tier = 0;             // residency: pinned host pool for evicted bytes (0 = grown on demand)
  std::size_t tier_handle_size = std::size_t{256} << 20;  // residency: largest handle a restore creates
  std::string disk_tier;                 // residency: directory of the disk tier's file ("" = none)
  std::size_t disk_tier_limit = 0;       // residency: most bytes on disk (0 = what the disk holds)
  std::string copy_topology;             // multi-path copies: "" = direct only, "measure", a described topology or @FILE
  bool stats_server = false;             // serve live stats on a Unix socket
  std::string daemon_socket;             // memlaked's socket for share/attach ("" = the default path)
  bool daemon_pool = false;              // physical pages come from memlaked's pool
  std::size_t daemon_pool_min = 0;       // pool quota asked: guaranteed bytes (0 = the policy's)
  std::size_t daemon_pool_max = 0;       // pool quota asked: burst bytes (0 = the policy's)
  bool shim = true;                      // LD_PRELOAD shim routes allocations to memlake
  enum class CaptureCheck { hooks, query, off };
  CaptureCheck capture_check = CaptureCheck::hooks;  // how memlake_torch_malloc learns of CUDA graph capture
  bool shim_sync_free = true;            // shim: synchronous free waits for the device, like cuMemFree
  bool shim_copy = false;                // shim: large pageable cudaMemcpy(Async) go through the copy engine
  bool shim_log = false;                 // shim: log driver entry points asked for and copy decisions
  bool guard = false;                    // every allocation before an unmapped guard page
  std::size_t quarantine = 0;            // freed ranges stay unmapped for this many frees

  static Options defaults() { return Options{}; }
  static Options from_env();             // defaults + MEMLAKE_* variables
  // Throws Errc::invalid_argument on an unknown key or a bad value.
  void set(const std::string& key, const std::string& value);
  std::string get(const std::string& key) const;
};

struct OptionInfo {
  const char* key;
  const char* env;
  const char* default_value;
  const char* doc;
};
const std::vector<OptionInfo>& option_table();

// "2M", "1.5GiB", "4096", "1g" -> bytes. Throws Errc::invalid_argument.
std::size_t parse_size(const std::string& s);

}  // namespace memlake
