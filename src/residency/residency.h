// Residency: the one mechanism that moves a live allocation's bytes off the
// GPU and back *at the same virtual address* (sleep/wake now; tiering and
// the daemon build on it). The allocator unmaps and remaps pages
// (Allocator::evict/restore over PagePool::evict_span/restore_span); this
// unit moves the bytes, on copy streams of its own, ordered with compute by
// events, into and out of a pinned host tier.
//
// Ordering guarantees (docs/design/residency.md):
//  * sleep() synchronises the device first: no kernel queued before it can
//    touch memory it unmaps. An allocation's pages are unmapped only after
//    its copy to the host has completed.
//  * wake() returns once every byte is back (the copy stream is drained).
//  * evict() orders its copy after the work queued on the allocation's
//    stream and unmaps after the copy; restore() maps first, copies on the
//    restore stream, and makes the allocation's stream wait for the copy.
//  * Work on streams other than the allocation's own is the caller's to
//    order (as with freeing memory used on several streams).
//
// Failures leave everything consistent: an allocation is either resident,
// intact, or evicted with its bytes in the host tier (or deliberately
// discarded). Not thread-safe: DeviceAllocator holds its lock around calls.
#pragma once

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <unordered_map>
#include <deque>
#include <exception>
#include <vector>

#include "core/allocator.h"
#include "core/error.h"
#include "residency/disk_tier.h"
#include "residency/host_tier.h"

namespace memlake::residency {

enum class Mode { offload, discard };

struct SleepReport {
  std::size_t allocations = 0;  // allocations that left the GPU
  std::size_t offloaded = 0;    // bytes copied to the host tier
  std::size_t kept = 0;         // read-only bytes whose host copy was still true: no copy
  std::size_t discarded = 0;    // bytes dropped
  std::size_t released = 0;     // GPU memory given back to the driver, cache included
  double seconds = 0;
};

struct WakeReport {
  std::size_t allocations = 0;  // allocations mapped again
  std::size_t restored = 0;     // bytes copied back from the host tier
  std::size_t refilled = 0;     // bytes of discarded allocations mapped again (contents undefined)
  double seconds = 0;
};

struct ResidencyStats {
  std::uint64_t sleeps = 0, wakes = 0, evictions = 0, restores = 0;
  std::uint64_t bytes_evicted = 0, bytes_restored = 0, bytes_discarded = 0;
  std::uint64_t evicted_now = 0, evicted_bytes_now = 0;  // allocations (bytes) off the GPU now
  std::uint64_t leaving_now = 0;                         // evictions whose copies are in flight
  std::uint64_t demotions = 0, disk_used = 0, disk_file = 0;  // disk tier: bytes held, file size
  std::uint64_t fetches = 0, disk_failures = 0;              // read-aheads done; asynchronous moves that failed
  std::uint64_t disk_writing_now = 0, disk_reading_now = 0;  // bytes of asynchronous moves in flight
  std::uint64_t disk_written = 0, disk_read = 0;             // bytes through the disk tier
  double disk_write_s = 0, disk_read_s = 0;                  // seconds with a write (read) in flight
  double disk_busy_s = 0;                                    // seconds with any request in flight
  bool disk_direct = false;                                  // O_DIRECT (false: buffered, e.g. tmpfs)
  std::uint64_t host_capacity = 0, host_used = 0;        // pinned host tier
  std::uint64_t reclaimed = 0, reclaimed_bytes = 0;      // restored ahead, taken back under memory pressure
  std::uint64_t ahead_now = 0, ahead_bytes_now = 0;      // restored ahead, not ready() yet
  std::uint64_t spare_now = 0, spare_bytes_now = 0;      // marked spare, not ready() yet
  std::uint64_t pressure_waits = 0;                      // out-of-memory retries that freed pages
  double pressure_s = 0;                                 // time in them (waits for copies out included)
  std::uint64_t leaving_bytes_now = 0;                   // bytes of the evictions in flight (still mapped)
  bool asleep = false;
  double last_sleep_s = 0, last_wake_s = 0;
};

class Residency {
 public:
  // host_initial: pinned at the first eviction (the host_tier option); the
  // tier grows beyond it by what an eviction lacks.
  Residency(prim::Backend& be, core::Allocator& alloc, std::size_t host_initial = 0);
  ~Residency();
  Residency(const Residency&) = delete;
  Residency& operator=(const Residency&) = delete;

  // What a sleep takes: allocations with `label` (0 in a one-entry list:
  // every allocation) leave the GPU in `mode`.
  struct Select {
    std::uint16_t label;
    Mode mode;
  };
  // Every resident large allocation selected leaves the GPU: offload copies
  // its bytes to the host tier (read-only ones whose host copy is still true
  // are not copied again), discard drops them. Then the allocator's cache
  // goes back to the driver. One call may mix modes (offload the weights,
  // discard the KV cache): the host unmaps what needs no copy while the
  // copies run. Atomic against a short host tier: Errc::out_of_memory before
  // anything moves. Errc::invalid_argument when nothing selected is still
  // on the GPU (asleep already). Sleeping more tags while asleep is allowed.
  SleepReport sleep(const std::vector<Select>& what);
  SleepReport sleep(Mode mode) { return sleep({Select{0, mode}}); }
  // Maps every allocation sleep() evicted at its address again and copies
  // its bytes back; allocations labelled read-only are mapped read-only and
  // keep their host copy. Errc::invalid_argument when not asleep. On a
  // failure (out of memory) what is back stays back, the rest stays asleep
  // and wake() may be called again.
  WakeReport wake();

  // One allocation (tiering). With `wait`, evict() returns once its pages
  // are unmapped (they stay in the allocator's pool for other allocations).
  // Without, it queues the copy after the work on the allocation's stream
  // and returns at once: the allocation is *leaving*, still mapped, until
  // its copy completes; settle() (or any later residency call) unmaps it
  // then. The caller must not write a leaving allocation (its host copy
  // would miss the write); restore() of a leaving allocation cancels the
  // eviction (the bytes never left). Evictions and restores run on
  // separate streams, so both directions move at once.
  void evict(void* ptr, Mode mode, bool wait = true);
  // With `wait` (the default) the allocation's stream waits for the copy at
  // once. Without, the copy is queued and nothing waits for it yet: ready()
  // makes the allocation's stream wait, at the point its work needs the bytes
  // (a prefetch issued ahead then overlaps the work queued in between). Until
  // then no kernel may touch the allocation. A free, an evict or a sleep of
  // an allocation still arriving waits for its copy first (on its stream).
  // A restore without a wait keeps the allocation's host copy until ready()
  // (or an evict or free): until then its bytes are still true in the host
  // tier, so an evict needs no copy and memory pressure may take the pages
  // back (reclaim_ahead); ready() of an allocation so reclaimed restores it
  // again, waiting, before its stream goes on.
  void restore(void* ptr, bool wait = true);
  void ready(void* ptr);  // nothing if its copy is not pending
  void ready_all();       // every allocation with a copy pending (before a graph capture begins)
  // Memory pressure (an allocation or a restore out of memory): allocations
  // restored ahead and not yet ready() are evicted again, the latest
  // restored first, until `want` bytes are unmapped or none is left; no
  // copy (their host copies are still true), only a wait for their copies
  // in. Returns the bytes unmapped. Errors stop it (what was taken stays
  // evicted and restorable; the rest stays ahead).
  std::size_t reclaim_ahead(std::size_t want);
  // A resident allocation its owner does not need before it calls ready()
  // (a saved activation kept on the GPU until backward): under memory
  // pressure, after the restores ahead, spare allocations are evicted too,
  // the first marked first, their bytes copied out (after the work queued on
  // their stream) and waited for; ready() restores one so taken, and ends the
  // promise otherwise. Errc::invalid_argument if evicted or being moved.
  void mark_spare(void* ptr);
  // f() (an allocation, a mapping) and, each time it runs out of memory,
  // again after freeing about `want` bytes more: the evictions in flight,
  // oldest first, finished (waited for) while there are any, then (with
  // `reclaim`) allocations restored ahead taken back.
  template <class F>
  auto retry_oom(std::size_t want, F&& f, bool reclaim = true) -> decltype(f()) {
    const int stages = reclaim ? 2 : 1;
    for (int stage = 0;;) {
      try {
        return f();
      } catch (const Error& e) {
        if (e.code() != Errc::out_of_memory) throw;
        bool freed = false;
        const auto t0 = std::chrono::steady_clock::now();
        while (!freed && stage < stages)
          if (!(freed = relieve(stage, want))) ++stage;
        st_.pressure_s += std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
        if (!freed) throw;
        ++st_.pressure_waits;
      }
    }
  }
  // Unmaps leaving allocations whose copies completed (`wait`: all of
  // them, blocking until their copies complete); returns how many.
  // Finished disk moves are completed too; a demotion that failed since the
  // last settle() is thrown here (Errc::driver), once.
  std::size_t settle(bool wait);
  std::size_t leaving() const { return leaving_; }  // evictions whose copies are in flight
  // The disk tier below the host tier (an O_DIRECT file in `dir`; limit 0:
  // what the disk holds). Set before the first demote().
  void set_disk(const std::string& dir, std::size_t limit, FileOps* ops = nullptr);
  // An evicted allocation's bytes move from the host tier to the disk tier
  // (the host extent is free for others once they are on disk); restore()
  // reads them back through a pinned extent and checks their checksum
  // before anything is mapped. A leaving allocation is settled first.
  // Errors: Errc::invalid_argument (not evicted, discarded, asleep, on disk
  // already, no disk tier), Errc::out_of_memory (disk or its limit full),
  // Errc::driver (I/O error); the bytes stay in the host tier.
  // Without `wait` the write is queued on the disk tier's I/O threads and
  // demote returns at once: the host extent is given back once the write
  // completes (seen by any later residency call); a write that fails leaves
  // the bytes in the host tier, counted in disk_failures, and the next
  // settle() throws its error. A restore or free meanwhile stops the write
  // (waiting only for its requests in flight: the bytes are still in the
  // host tier). A demote of
  // an allocation being read ahead stops the read (it is on disk).
  void demote(void* ptr, bool wait = true);
  // Read-ahead: an allocation on disk has its bytes read back into the host
  // tier on the I/O threads (checked part by part), so that its restore is a
  // plain copy from the host. Nothing if its bytes are in the host tier or
  // on their way; a demotion still writing is stopped (they stay in the host). A restore meanwhile waits for the read; a failed read
  // leaves it on disk (the restore then reads it itself and reports the
  // error). Errc::invalid_argument when not evicted or asleep.
  void fetch(void* ptr);

  // Called on every free of a large allocation (cheap when nothing is tracked).
  void on_free(void* ptr) {
    if (!entries_.empty()) forget(reinterpret_cast<std::uintptr_t>(ptr));
  }
  // Before a free: an allocation whose restored bytes are still arriving is
  // freed after them (its stream waits), so its pages are not reused under
  // the copy.
  void before_free(void* ptr) {
    if (!arriving_.empty()) arrive(reinterpret_cast<std::uintptr_t>(ptr));
  }
  void reserve_host(std::size_t bytes) { host_.reserve(bytes); }
  ResidencyStats stats() const;
  bool asleep() const { return asleep_; }

 private:
  struct Entry {
    std::optional<HostTier::Extent> ext;  // its bytes (or its clean copy) in the host tier
    bool evicted = false;
    bool by_sleep = false;  // wake() brings it back
    bool clean = false;     // resident read-only, and ext still holds its bytes
    // Restored without a wait, not ready() yet: resident, ext still holds its
    // bytes (no kernel may have written it), its copy in is arriving_'s.
    bool ahead = false;
    bool reclaimed = false;  // evicted again by reclaim_ahead while ahead: ready() restores it
    bool spare = false;      // resident, not needed before ready(): pressure may evict it
    std::size_t bytes = 0;  // what is copied: the requested size
    prim::Event leaving = 0;  // an asynchronous eviction's copy (or stream) still running
    std::optional<DiskTier::Extent> disk;  // its bytes on disk (then ext is empty, unless moving)
    // A disk move in flight (0: none): a demotion (io_write: ext -> disk,
    // both held) or a read-ahead (disk -> ext, both held).
    std::uint64_t io = 0;
    bool io_write = false;
  };
  void finish_eviction(std::uintptr_t ptr, Entry& e);
  void refuse_under_capture(const char* what) const;  // Errc::invalid_argument while a capture runs
  void cancel_eviction(std::uintptr_t ptr);  // back to resident; the extent is reclaimed after the copy
  void forget(std::uintptr_t ptr);
  void streams();  // and the host tier's first chunk
  void reclaim(bool wait);  // extents of restores whose copies completed
  void give(Entry& e);
  void arrive(std::uintptr_t ptr);  // its stream waits for a pending restore's copy
  bool relieve(int stage, std::size_t want);  // retry_oom's ways: true if pages came back
  // A restore from disk failed after mapping: waits for the parts' copies and
  // unmaps again (evicted, on disk). If that fails too, throws its own error.
  // Finishes the disk moves that are done (`wait`: all of them).
  void poll_io(bool wait);
  void begin_move(std::uintptr_t ptr, Entry& e, std::uint64_t id, bool write);  // e's move is in flight
  // One entry's move, waited for: a demotion's bytes end on disk, a
  // read-ahead's in the host tier; a failure leaves them where they were.
  void complete_io(Entry& e);
  // One entry's move, stopped (waits only for its requests in flight): a
  // demotion's bytes stay in the host tier, a read-ahead's on disk.
  void cancel_io(Entry& e);
public:
  // settle()'s evictions part. With `wait`, stops once the allocations
  // unmapped add up to `want` bytes (an out-of-memory retry needs only its
  // request's pages back, not every copy in flight).
  std::size_t settle_leaving(bool wait, std::size_t want = SIZE_MAX);
private:
  void unmap_failed_restore(std::uintptr_t ptr, const HostTier::Extent& staging, std::exception_ptr why);

  prim::Backend& be_;
  core::Allocator& alloc_;
  HostTier host_;
  std::unique_ptr<DiskTier> disk_;
  std::size_t host_initial_;
  prim::Stream d2h_ = nullptr, h2d_ = nullptr;
  bool have_streams_ = false;
  std::unordered_map<std::uintptr_t, Entry> entries_;
  struct Pending {
    prim::Event event;
    HostTier::Extent ext;
    std::uintptr_t ptr = 0;  // the allocation restored
  };
  // Restores queued without a wait: allocation -> (its stream, its copy's event,
  // owned by pending_; the entry goes when the event completes or is waited for).
  struct Arriving {
    prim::Stream stream;
    prim::Event event;
  };
  std::unordered_map<std::uintptr_t, Arriving> arriving_;
  std::vector<std::uintptr_t> ahead_;  // entries ahead, in the order restored (may hold stale ones)
  std::deque<std::uintptr_t> spare_;   // spare entries, in the order marked (may hold stale ones)
  void unspare(std::unordered_map<std::uintptr_t, Entry>::iterator it);  // ends the promise; drops an empty entry
  std::size_t reclaim_spare(std::size_t want);
  void taken(Entry& e);  // evicted under pressure (reclaimed): flags and counts
  void end_ahead(Entry& e);  // no longer ahead: flag and counts
  void end_spare(Entry& e);  // no longer spare: flag and counts
  // Queues r's bytes to `dst` on the D2H stream, after the work queued on r's stream.
  void copy_out(const core::Resident& r, void* dst);
  // An order list of entries with `flag` (ahead_, spare_) drops the stale ones
  // (ready, evicted or freed since) once they outnumber the live ones.
  template <class List>
  void prune(List& list, std::uint64_t live, bool Entry::*flag) {
    if (list.size() <= 2 * live + 64) return;
    list.erase(std::remove_if(list.begin(), list.end(),
                              [&](std::uintptr_t q) {
                                auto x = entries_.find(q);
                                return x == entries_.end() || !(x->second.*flag);
                              }),
               list.end());
  }
  void drop_ahead(std::uintptr_t ptr, Entry& e);  // ahead -> resident, ext kept; waits for its copy in
  prim::Event take_ahead(std::uintptr_t ptr, Entry& e);  // ahead -> resident, ext kept; its copy-in event is the caller's
  void arrive_all();
  std::vector<Pending> pending_;  // host extents still read by a restore's copy
  bool asleep_ = false;
  std::size_t leaving_ = 0;  // entries with an eviction in flight
  std::size_t leaving_bytes_ = 0;  // their bytes (still mapped: on the GPU until settled)
  std::vector<std::uintptr_t> moving_;  // entries with a disk move in flight
  std::string io_error_;                // the first failed demotion's error, until settle() reports it
  std::deque<std::uintptr_t> order_;  // leaving entries in the order their copies were queued (may hold stale ones)
  ResidencyStats st_;
};

}  // namespace memlake::residency
