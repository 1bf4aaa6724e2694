// Statistics as a layer: StatsRecorder observes what the allocator reports
// for each operation (AllocInfo, FreeInfo, Gauges) and keeps counters and
// peaks. The allocator itself keeps no counters.
#pragma once

#include <cstdint>
#include <string>

#include "core/allocator.h"
#include "core/tick_clock.h"
#include "prim/decorators.h"

namespace memlake::core {

struct Stat {
  std::uint64_t current = 0;
  std::uint64_t peak = 0;
  void set(std::uint64_t v) {
    current = v;
    if (v > peak) peak = v;
  }
  void add(std::uint64_t v) { set(current + v); }
  void sub(std::uint64_t v) { current -= v; }
};

struct Stats {
  int device = 0;
  std::string backend;
  std::string uuid;  // the backend's device identity (prim::Backend::uuid): "GPU-...", "host-0"
  std::uint64_t page_size = 0;
  std::uint64_t memory_cap = 0;
  Stat requested;   // bytes asked for, live allocations
  Stat allocated;   // bytes after rounding (512 B small, whole pages large)
  Stat reserved;    // physical memory held
  Stat mapped;      // virtual memory mapped (views; aliases counted per view)
  Stat active;      // live allocations
  std::uint64_t num_allocs = 0, num_frees = 0, num_ooms = 0;
  std::uint64_t small_allocs = 0;
  std::uint64_t cache_hits = 0;      // large requests served by a cached view, no driver call
  std::uint64_t stitch_reuses = 0;   // ... of which from a stitched view
  std::uint64_t stitches = 0;        // new views that alias existing free pages
  std::uint64_t grows = 0;           // requests that created physical pages
  std::uint64_t repairs = 0;         // idle cached views re-mapped in part instead of a new stitch
  std::uint64_t slow_paths = 0;      // large requests that missed the first fit
  std::uint64_t slow_path_ns = 0;    // time in them: settling, stitching, repairing, growing (driver calls included)
  std::uint64_t host_ns = 0;         // time inside every alloc and free, slow paths and driver calls included
  std::uint64_t pages_created = 0;
  std::uint64_t views = 0, stitched_views = 0, small_slabs = 0;
  std::uint64_t largest_free = 0;    // largest contiguous free range in a view
  prim::OpCounts calls;              // primitive calls
  // Residency (docs/design/residency.md): filled by DeviceAllocator::stats().
  struct Residency {
    std::uint64_t sleeps = 0, wakes = 0, evictions = 0, restores = 0;
    std::uint64_t bytes_evicted = 0, bytes_restored = 0;  // in all, since start
    std::uint64_t evicted_now = 0, evicted_bytes_now = 0;  // allocations (bytes) off the GPU now
    std::uint64_t host_tier_bytes = 0, host_tier_used = 0;  // pinned host tier
    std::uint64_t demotions = 0, disk_tier_used = 0;       // disk tier: moves to it, bytes held
    std::uint64_t disk_written = 0, disk_read = 0;         // bytes through the disk tier
    bool asleep = false;
    std::uint64_t reclaimed_bytes = 0;  // restored ahead, taken back under memory pressure, in all
  } residency;
};

class StatsRecorder {
 public:
  void on_alloc(std::size_t size, const AllocInfo& info, const Gauges& g);
  void on_free(const FreeInfo& info, const Gauges& g);
  void on_oom() { ++s_.num_ooms; }
  void on_gauges(const Gauges& g);  // after empty_cache and the like
  void reset_peaks();
  // The watermark: the highest allocated bytes since its last reset, apart
  // from the peaks (reset_peaks() and this reset touch nothing of each
  // other's). `current` is allocated bytes now; reset restarts the mark there
  // after reading it. For callers that measure what a stretch of work
  // allocated and freed inside itself (memlake_watermark).
  Stat watermark(bool reset) {
    Stat w{s_.allocated.current, mark_};
    if (reset) mark_ = s_.allocated.current;
    return w;
  }
  // One operation's time (TickClock ticks), from its start to its end.
  void on_time(std::uint64_t ticks) { ticks_ += ticks; }
  std::uint64_t reserved() const { return s_.reserved.current; }
  // A snapshot; the caller fills the fields that need a query (views, calls).
  Stats stats() const {
    Stats s = s_;
    s.host_ns = static_cast<std::uint64_t>(rate_.ns(ticks_));
    return s;
  }

 private:
  Stats s_;
  std::uint64_t mark_ = 0;  // the watermark (see watermark()): only allocations raise allocated, so on_alloc keeps it
  std::uint64_t ticks_ = 0;
  TickRate rate_;
};

std::string stats_json(const Stats& s);

}  // namespace memlake::core
