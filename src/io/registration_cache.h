// RegistrationCache: keeps large host buffers that are copied again and
// again page-locked (cuMemHostRegister), so later copies go straight to
// DMA instead of through the staging buffers: no host threads, no second
// pass over the data.
//
// Registering costs about as much as copying the buffer several times over
// (the driver pins it page by page), so a range is registered only on its
// N-th use (`after`), and at most `limit` bytes stay registered (least
// recently used ranges are unregistered first).
//
// The contract that makes a cache of registrations safe: a buffer the
// cache may have registered must be forgotten (forget(), memlake_copy_forget,
// memlake.copy_forget) before it is freed. The driver pins the pages the
// range had when it was registered; after free() and a new allocation at
// the same address, DMA would still target the old pages. That is why the
// cache is off by default (after == 0) and documented as opt-in.
//
// Thread-safe. A range in use by a copy (a Hold is alive) is never
// unregistered; forget() of a range in use waits for the copy to finish.
#pragma once

#include <condition_variable>
#include <cstddef>
#include <cstdint>
#include <list>
#include <map>
#include <mutex>

#include "prim/prim.h"

namespace memlake::io {

struct RegistrationOptions {
  int after = 0;                                    // register a range on its N-th use; 0 = never
  std::size_t limit = std::size_t{8} << 30;         // registered bytes kept at most
  std::size_t min_bytes = std::size_t{8} << 20;     // smaller ranges are never registered
};

struct RegistrationStats {
  std::uint64_t registrations = 0;  // cuMemHostRegister calls
  std::uint64_t hits = 0;           // uses served by a registered range
  std::uint64_t evictions = 0;      // ranges unregistered to stay under the limit
  std::uint64_t forgotten = 0;      // ranges unregistered by forget()
  std::size_t bytes = 0;            // registered now
  std::size_t ranges = 0;
};

class RegistrationCache {
 public:
  RegistrationCache(prim::Backend& backend, const RegistrationOptions& opts);
  ~RegistrationCache();  // unregisters everything
  RegistrationCache(const RegistrationCache&) = delete;
  RegistrationCache& operator=(const RegistrationCache&) = delete;

  // Keeps a registered range registered while a copy uses it.
  class Hold {
   public:
    Hold() = default;
    Hold(Hold&& o) noexcept : c_(o.c_), base_(o.base_) { o.c_ = nullptr; }
    Hold& operator=(Hold&&) = delete;
    ~Hold();
    explicit operator bool() const { return c_ != nullptr; }

   private:
    friend class RegistrationCache;
    Hold(RegistrationCache* c, std::uintptr_t base) : c_(c), base_(base) {}
    RegistrationCache* c_ = nullptr;
    std::uintptr_t base_ = 0;
  };

  // Counts one use of [p, p+n). Returns a live Hold when the range is
  // registered now (already, or registered by this call), an empty one
  // otherwise. Throws what the backend throws when registration fails
  // (nothing is left registered by the failed call).
  Hold use(const void* p, std::size_t n);
  // Unregisters every registered range overlapping [p, p+n) and forgets
  // its use count. Call before freeing such host memory.
  void forget(const void* p, std::size_t n);
  // Whether a range this cache registered overlaps [p, p+n): such memory
  // looks pinned to the driver but is the caller's pageable memory.
  bool overlaps(const void* p, std::size_t n);
  RegistrationStats stats() const;
  bool enabled() const { return opts_.after > 0; }

 private:
  struct Entry {
    std::size_t size;
    int holds = 0;
    std::uint64_t last_use = 0;
  };
  void release_hold(std::uintptr_t base);
  void evict_for(std::size_t incoming, std::unique_lock<std::mutex>& g);
  // Registered entries overlapping [a, a+n).
  std::map<std::uintptr_t, Entry>::iterator first_overlap(std::uintptr_t a, std::size_t n);

  prim::Backend& be_;
  const RegistrationOptions opts_;
  mutable std::mutex mu_;
  std::condition_variable cv_;
  std::map<std::uintptr_t, Entry> registered_;                // base -> entry
  std::map<std::pair<std::uintptr_t, std::size_t>, int> seen_;  // uses of ranges not registered yet
  std::list<std::pair<std::uintptr_t, std::size_t>> seen_order_;  // oldest first, bounds seen_
  std::uint64_t tick_ = 0;
  RegistrationStats stats_;
};

}  // namespace memlake::io
