// DeviceAllocator: what the C ABI, the CLI and the tests use for one device.
// Composes, each concern in its own piece:
//   backend chain  make_backend() -> CountingBackend (primitive call counts)
//   algorithm      Allocator (not thread-safe)
//   statistics     StatsRecorder fed after each operation
//   thread safety  one mutex around the two above
#pragma once

#include <atomic>
#include <limits>
#include <map>
#include <memory>
#include <mutex>
#include <unordered_map>
#include <vector>

#include "core/allocator.h"
#include "residency/residency.h"
#include "core/stats.h"
#include "prim/decorators.h"
#include "trace/tracer.h"

namespace memlake::core {

class DeviceAllocator {
 public:
  // Builds the backend from the options (backend kind, granularity).
  DeviceAllocator(int device, const Options& opts);
  // Uses a caller-built backend (tests wrap it in fault injection).
  DeviceAllocator(std::unique_ptr<prim::Backend> backend, const Options& opts);
  // Every successful alloc and free is also written to `tracer` (shared by
  // the devices of one process-level allocator); nullptr = no tracing.
  void set_tracer(std::shared_ptr<trace::Tracer> tracer) { tracer_ = std::move(tracer); }
  ~DeviceAllocator();

  void* alloc(std::size_t size, prim::Stream stream);
  void free(void* ptr);
  std::size_t size_of(const void* ptr) const;
  struct Lookup {
    std::size_t size;
    prim::Stream stream;
  };
  bool lookup(const void* ptr, Lookup* out) const;  // false: not a live allocation
  // Frees ptr if it is a live allocation (true, *out says what it was);
  // false and nothing changed otherwise. One lock, for callers such as the
  // LD_PRELOAD shim that pass foreign pointers on.
  bool free_if_owned(void* ptr, Lookup* out);
  // Every free page back to the driver, or (want) until that many bytes are.
  std::size_t empty_cache(std::size_t want = std::numeric_limits<std::size_t>::max());
  void set_memory_cap(std::size_t bytes);
  Stats stats() const;
  std::uint64_t reserved_bytes() const;  // stats().reserved.current, without the rest of stats()
  void reset_peaks();
  Stat watermark(bool reset);  // StatsRecorder::watermark, under the lock
  void check() const;
  PagePool::Holdings holdings() const;  // see Allocator::holdings

  // Residency (residency/residency.h): sleep and wake of labelled
  // allocations, eviction and restore of one allocation.
  residency::SleepReport sleep(const std::vector<residency::Residency::Select>& what);
  residency::SleepReport sleep(residency::Mode mode) { return sleep({{0, mode}}); }
  residency::WakeReport wake();
  void evict(void* ptr, residency::Mode mode, bool wait = true);
  void restore(void* ptr, bool wait = true);  // wait = false: restore_ready() at the use
  void restore_ready(void* ptr);  // nullptr: every allocation with a copy pending
  void mark_spare(void* ptr);     // Residency::mark_spare
  std::size_t settle(bool wait);  // asynchronous evictions whose copies completed (and disk moves)
  void demote(void* ptr, bool wait = true);  // an evicted allocation's bytes: host tier -> disk tier
  void fetch(void* ptr);                     // read-ahead: disk tier -> host tier, in the background
  void set_disk_tier(const std::string& dir, std::size_t limit, residency::FileOps* ops = nullptr);
  void reserve_host_tier(std::size_t bytes);
  residency::ResidencyStats residency_stats() const;

  // ---- CUDA graph capture (docs/design/graphs.md).
  // From now until capture_end(stream), allocations on `stream` come from
  // graph pool `pool` (made at its first capture): a block freed during or
  // after the capture stays the pool's, reused only by allocations of the
  // same size on the same stream of a capture into the pool, until the
  // pool's last graph is released. Errc::invalid_argument if `stream` is
  // being captured already.
  void capture_begin(prim::Stream stream, std::uint64_t pool);
  // Errc::invalid_argument if `stream` is not being captured.
  void capture_end(prim::Stream stream);
  // One graph that captured into `pool` is gone (every capture_begin counts
  // one). At the last: the device is synchronised, the pool's free blocks go
  // back to the cache and its live ones are freed as usual when they are.
  // Errc::invalid_argument for an unknown pool or one being captured into.
  void graph_pool_release(std::uint64_t pool);
  // Slow paths refuse an allocation on a stream under a capture nobody announced.
  void set_capture_guard(bool on);
  bool capture_guarded() const { return capture_guard_.load(std::memory_order_relaxed); }
  struct GraphStats {
    std::size_t pools = 0, capturing = 0, held_blocks = 0, free_blocks = 0;
  };
  GraphStats graph_stats() const;

  prim::Backend& backend() { return *counting_; }
  bool is_capturing(prim::Stream s) { return counting_->is_capturing(s); }  // counted, like the allocator's calls
  int device() const { return device_; }

 private:
  class OpTimer;
  template <class F>
  auto gauged(F&& f) -> decltype(f());
  // free() after the lock is taken: the allocator, statistics and tracing.
  FreeInfo free_locked(void* ptr, prim::Stream stream);

  struct GraphPool;
  struct PoolBlock {
    GraphPool* pool;
    prim::Stream stream;
    std::size_t rounded;
    bool free;  // freed by its user, kept by the pool
  };
  GraphPool* capture_pool(prim::Stream s) const;
  void* pool_alloc(GraphPool& gp, std::size_t size, prim::Stream stream);
  // True if the free was a graph pool's (kept by the pool, or done here for a released pool).
  bool pool_free(void* ptr, FreeInfo* fi);
  FreeInfo free_now(void* ptr, prim::Stream stream);

  int device_;
  std::unique_ptr<prim::CountingBackend> counting_;
  mutable std::mutex mu_;
  Allocator alloc_;
  residency::Residency res_;
  StatsRecorder rec_;
  std::shared_ptr<trace::Tracer> tracer_;
  // Graph pools: by id while some graph uses them; released ones live on
  // while allocations of theirs do.
  std::map<std::uint64_t, std::unique_ptr<GraphPool>> pools_;
  std::vector<std::unique_ptr<GraphPool>> released_;
  std::vector<std::pair<prim::Stream, GraphPool*>> capturing_;
  std::unordered_map<std::uintptr_t, PoolBlock> pool_blocks_;  // every live block of every pool
  std::atomic<bool> capture_guard_{false};
};

}  // namespace memlake::core
