// Host backend: the primitives contract on Linux host memory.
//
// Physical memory is one memfd arena; a handle is a granule-aligned extent
// of it. Reservations are PROT_NONE anonymous mappings; map() places the
// handle's extent there with mmap(MAP_FIXED|MAP_SHARED) and PROT_NONE, and
// set_access() mprotects it. Two mappings of one handle therefore really
// alias the same pages, exactly like two cuMemMap of one CUDA handle.
//
// Streams are simulated: work on a stream is "complete" unless a test has
// called hold(stream); waiting on a held stream (wait_event,
// synchronize_stream, synchronize_device) completes it, as a real wait
// would. This lets tests exercise cross-stream reuse rules on the CPU.
// With a device lag (set_lag, `memlake replay --device-lag`), work is queued
// on every stream at every value of a clock the caller advances (a trace's
// timestamps) and completes `lag` clock units later, or when waited for: a
// replay then meets pending frees as a training process does on a GPU.
#pragma once

#include <map>
#include <mutex>
#include <set>
#include <unordered_map>

#include "prim/prim.h"

namespace memlake::prim {

class HostBackend final : public Backend {
 public:
  HostBackend(int device, std::size_t granularity, std::size_t memory_limit);
  ~HostBackend() override;

  std::string name() const override { return "host"; }
  int device() const override { return device_; }
  std::string uuid() const override { return "host-" + std::to_string(device_); }
  std::size_t granularity() const override { return gran_; }
  std::size_t total_memory() const override { return limit_; }

  std::uintptr_t reserve(std::size_t size, std::size_t align) override;
  void free_reservation(std::uintptr_t va, std::size_t size) override;
  PhysHandle create(std::size_t size) override;
  void release(PhysHandle h) override;
  void map(std::uintptr_t va, std::size_t size, PhysHandle h) override;
  void unmap(std::uintptr_t va, std::size_t size) override;
  void set_access(std::uintptr_t va, std::size_t size, Access a) override;

  Stream create_stream() override;
  void destroy_stream(Stream s) override;
  Event record_event(Stream s) override;
  bool query_event(Event e) override;
  bool query_stream(Stream s) override;  // false while held
  void wait_event(Event e) override;
  void destroy_event(Event e) override;
  void synchronize_stream(Stream s) override;
  void synchronize_device() override;
  bool is_capturing(Stream) override { return false; }
  // Copies run at once (host streams complete immediately); pinned memory is
  // ordinary memory the backend tracks, so pointer_kind can tell it apart.
  void* alloc_pinned(std::size_t n) override;
  void free_pinned(void* p) override;
  PointerKind pointer_kind(const void* p) override;
  void copy_to_device_async(std::uintptr_t dst, const void* src, std::size_t n, Stream s) override;
  void copy_to_host_async(void* dst, std::uintptr_t src, std::size_t n, Stream s) override;
  void stream_wait(Stream, Event) override {}
  // Registration only marks the range pinned (host memory is DMA-able as
  // it is); the bookkeeping and its errors follow the driver's.
  void register_host(void* p, std::size_t n) override;
  void unregister_host(void* p) override;
  // Host "devices" are backends of one process: every one can reach every
  // other's memory, but only through ranges granted to it (checked, as a
  // device without access would fault).
  bool can_access_peer(int) override { return true; }
  void grant_peer(std::uintptr_t va, std::size_t size, int peer) override;
  void copy_device_async(std::uintptr_t dst, std::uintptr_t src, std::size_t n, Stream s) override;

  void write(std::uintptr_t dst, const void* src, std::size_t n) override;
  void read(void* dst, std::uintptr_t src, std::size_t n) override;
  // A shareable handle is a memfd of its own (not an extent of the arena);
  // read-only exports are the memfd reopened O_RDONLY through /proc, so a
  // process given one cannot map it writable (mprotect fails: EACCES).
  PhysHandle create_shareable(std::size_t size) override;
  int export_fd(PhysHandle h, bool read_only) override;
  PhysHandle import_fd(int fd, std::size_t size) override;

  // Device lag, for replays (see the top): 0 (the default) = work completes at once.
  void set_lag(std::uint64_t lag);
  void advance_clock(std::uint64_t now);  // never moves back

  // Test hooks.
  void hold(Stream s);           // work on s stays pending until waited on
  std::size_t live_handles() const;       // created and not yet freed
  std::size_t live_reservations() const;
  std::size_t live_mappings() const;
  std::size_t physical_bytes() const;     // bytes of live handles
  bool accessible(std::uintptr_t va, std::size_t n) const;  // mapped read-write throughout

 private:
  struct Handle {
    std::size_t offset, size;
    int maps = 0;
    bool released = false;
    int fd = -1;             // its own file (shareable or imported); -1: an extent of fd_
    bool read_only = false;  // fd is open O_RDONLY
    bool counted = true;     // counts against limit_ (imported memory is someone else's)
  };
  struct Mapping {
    std::size_t size;
    PhysHandle handle;
    Access access;
  };
  struct EventRec {
    Stream stream;
    std::uint64_t hold_gen;  // 0: recorded while not held
    std::uint64_t at;        // the clock when recorded
  };
  // Device lag: whether the work queued on s before clock `at` is complete
  // (an event recorded at `at` covers it; a wait at `at` completes it).
  bool lag_done(Stream s, std::uint64_t at) const;
  bool lag_idle(Stream s) const;  // all work queued on s is complete

  void check_aligned(const char* op, std::uintptr_t va, std::size_t size) const;
  void free_extent(std::size_t offset, std::size_t size);
  std::size_t alloc_extent(std::size_t size);
  void maybe_drop(PhysHandle h);
  // Every byte of [va, va+n) is mapped with at least `need` access.
  bool covered(std::uintptr_t va, std::size_t n, Access need) const;
  // [va, va+n) is this backend's memory, or memory of a live host backend
  // granted to this backend's device.
  bool reachable(std::uintptr_t va, std::size_t n) const;
  bool granted_to(std::uintptr_t va, std::size_t n, int device) const;
  static bool in(const std::map<std::uintptr_t, std::size_t>& ranges, std::uintptr_t a);

  const int device_;
  const std::size_t gran_;
  const std::size_t limit_;
  int fd_ = -1;
  std::size_t file_size_ = 0;
  std::size_t live_bytes_ = 0;

  mutable std::mutex mu_;
  std::map<std::size_t, std::size_t> free_extents_;  // offset -> size
  std::unordered_map<PhysHandle, Handle> handles_;
  PhysHandle next_handle_ = 1;
  std::map<std::uintptr_t, std::size_t> reservations_;  // va -> size
  std::map<std::uintptr_t, Mapping> mappings_;          // va -> mapping
  std::unordered_map<std::uintptr_t, std::uint64_t> held_;  // stream -> hold gen
  std::uint64_t hold_gen_ = 0;
  std::uint64_t lag_ = 0, clock_ = 0, prev_clock_ = 0;  // prev: the last work queued before now
  std::uint64_t drained_all_ = 0;                       // synchronize_device: work to here is complete
  std::unordered_map<std::uintptr_t, std::uint64_t> drained_;  // stream -> clock its work is complete to
  std::unordered_map<Event, EventRec> events_;
  Event next_event_ = 1;
  std::uintptr_t next_stream_ = 0x1000;
  std::set<std::uintptr_t> streams_;
  std::map<std::uintptr_t, std::size_t> pinned_;      // address -> size
  std::map<std::uintptr_t, std::size_t> registered_;  // address -> size
  struct Grant {
    std::size_t size;
    int peer;
  };
  std::multimap<std::uintptr_t, Grant> grants_;  // va -> range granted to a peer device
};

}  // namespace memlake::prim
