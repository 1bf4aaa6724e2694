// CopyEngine: host<->device copies near the link's limit, also from and to
// pageable (malloc'd) memory.
//
// Pageable memory cannot be read by DMA, so the driver stages it in small
// pinned buffers one piece at a time (7.6 GB/s H2D on the H200 against 55
// from pinned memory, anchors.md). The engine instead:
//  * sends pinned (page-locked) host memory straight to the copy engine;
//  * passes small copies (< direct_below) straight to the driver;
//  * for large pageable copies, splits the copy into chunks that several
//    host threads ("lanes") take in turn: each lane copies its chunk into a
//    pinned staging buffer with non-temporal stores and queues its DMA (H2D),
//    or queues the DMA into a buffer and copies the chunk out once it lands,
//    keeping a second chunk in flight meanwhile (D2H). Lanes never wait for
//    each other, so the host copy runs at the memory system's rate while the
//    DMA engine drains the buffers. H2D and D2H use separate streams, so
//    both directions run at once on separate copy engines.
//
// With the registration cache on (CopyOptions::registration.after > 0), a
// pageable buffer copied again and again is registered on its N-th use and
// then sent straight to DMA (see registration_cache.h for the contract:
// forget() before freeing it).
//
// Ordering: a copy starts after all work queued on the caller's stream
// before the call, and work queued on that stream after the call starts
// after the copy. to_device() returns once the source may be reused (all
// of it has been staged or, when pinned, once the DMA has been queued: a
// pinned source must then stay untouched until the stream reaches it).
// to_host() returns when the destination holds the data.
//
// Thread-safe: calls from several threads share the staging pool safely.
#pragma once

#include <atomic>
#include <condition_variable>
#include <cstddef>
#include <cstdint>
#include <deque>
#include <functional>
#include <memory>
#include <mutex>
#include <thread>
#include <vector>

#include "io/registration_cache.h"
#include "prim/prim.h"

namespace memlake::io {

struct CopyOptions {
  std::size_t chunk = std::size_t{4} << 20;          // staging buffer size = one lane's unit of work
  int buffers = 0;                                   // staging buffers in the pool; 0 = 2 per thread
  int threads = 0;                                   // host copy threads (lanes); 0 = all cores, at most 16
  std::size_t direct_below = std::size_t{8} << 20;   // smaller pageable copies go to the driver as they are (measured: below 8 MiB it is as fast)
  bool streaming_stores = true;                      // non-temporal stores for the host side of staged copies
  bool ramp = true;                                  // each lane's first pieces small (min_piece, doubling): the DMA starts sooner
  std::size_t min_piece = std::size_t{1} << 20;      // smallest piece: the ramp's first and the guided schedule's last
  int h2d_streams = 4;                               // DMA streams for staged H2D copies; lane i queues its pieces on stream i mod h2d_streams
  RegistrationOptions registration;                  // keep reused large pageable buffers registered (off by default)
};

struct CopyStats {
  std::uint64_t copies = 0, bytes = 0;
  std::uint64_t direct = 0;       // small pageable copies handed to the driver
  std::uint64_t pinned = 0;       // pinned host memory sent straight to DMA
  std::uint64_t staged = 0;       // pipelined through staging buffers
  std::uint64_t registered = 0;   // pageable, sent straight to DMA because the registration cache holds it
  std::uint64_t chunks = 0;
  // Staged copies, summed over lanes: time in the host memcpy to or from staging, and
  // time waiting for a staging buffer or its DMA. Mostly copying: the host side limits;
  // mostly waiting: the DMA does.
  std::uint64_t lane_copy_ns = 0, lane_wait_ns = 0;
  int threads = 0;
};

class CopyEngine {
 public:
  CopyEngine(prim::Backend& backend, const CopyOptions& opts = {});
  ~CopyEngine();
  CopyEngine(const CopyEngine&) = delete;
  CopyEngine& operator=(const CopyEngine&) = delete;

  void to_device(std::uintptr_t dst, const void* src, std::size_t n, prim::Stream stream);
  void to_host(void* dst, std::uintptr_t src, std::size_t n, prim::Stream stream);
  CopyStats stats() const;
  RegistrationStats registration_stats() const { return reg_.stats(); }
  // Unregisters what the registration cache holds of [p, p+n): call before
  // freeing host memory that was copied with the cache on.
  void forget(const void* p, std::size_t n) { reg_.forget(p, n); }

 private:
  struct Buffer {
    void* p = nullptr;
    prim::Event pending = 0;  // DMA that still reads or writes it
    bool busy = false;
  };
  class Lease;  // one staging buffer, returned to the pool however the copy ends
  class LaneClock;  // a lane's time copying and waiting, for the statistics
  struct Task;   // one staged copy, run by several lanes
  Buffer* acquire(bool wait);
  void release(Buffer* b, prim::Event pending);
  class Pieces;  // splits one staged copy among its lanes
  std::size_t lanes_for(std::size_t n) const;
  // Work queued on each of `waiters` from now on starts after the work queued on `signaller` so far.
  void start_after(const std::vector<prim::Stream>& waiters, prim::Stream signaller);
  // Work queued on `waiter` from now on starts after the work queued on each of `signallers` so far.
  void finish_before(prim::Stream waiter, const std::vector<prim::Stream>& signallers);
  void host_copy(void* dst, const void* src, std::size_t n) const;
  // Runs lane() on up to `lanes` threads (the caller and idle workers) and
  // returns when all have returned; rethrows the first lane's exception.
  void run_lanes(std::size_t lanes, const std::function<void(const std::atomic<bool>& failed)>& lane);
  void count(std::uint64_t CopyStats::*kind, std::size_t bytes, std::size_t chunks);
  void add_lane_time(std::uint64_t copy_ns, std::uint64_t wait_ns);
  void run_workers();
  // A pageable range the registration cache holds goes straight to DMA; the
  // call still returns only when the host buffer may be touched again.
  bool try_registered_to_device(std::uintptr_t dst, const void* src, std::size_t n, prim::Stream stream);
  bool try_registered_to_host(void* dst, std::uintptr_t src, std::size_t n, prim::Stream stream);

  prim::Backend& be_;
  CopyOptions opts_;
  // Separate streams per direction, so H2D and D2H run at once on separate
  // copy engines; h2d_streams of them for H2D.
  std::vector<prim::Stream> h2d_;
  prim::Stream d2h_ = nullptr;
  std::vector<Buffer> pool_;
  mutable std::mutex mu_;
  std::condition_variable cv_;
  CopyStats stats_;
  RegistrationCache reg_;

  // Lane workers: each job is one lane of a staged copy; copies from
  // several callers share the workers.
  std::vector<std::thread> workers_;
  std::mutex jobs_mu_;
  std::condition_variable jobs_cv_;
  std::deque<std::shared_ptr<Task>> jobs_;
  bool stop_ = false;
};

}  // namespace memlake::io
