// HostTier: pinned host memory that holds evicted bytes.
//
// Pinned once, in few large chunks (reserve()), and handed out in extents
// (first fit, coalescing on return): an eviction never pins memory on its
// own path, because pinning costs about 50x the copy it serves (anchors.md:
// 20 GiB pinned per tensor at eviction time took 20.2 s, copied into a pool
// pinned beforehand 0.389 s). DMA reads and writes the extents directly.
//
// Not thread-safe: the residency engine's caller serialises.
#pragma once

#include <cstddef>
#include <optional>
#include <vector>

#include "prim/prim.h"
#include "residency/free_ranges.h"

namespace memlake::residency {

class HostTier {
 public:
  static constexpr std::size_t kAlign = 64 * 1024;  // extents start on 64 KiB (DMA-, O_DIRECT-friendly)

  explicit HostTier(prim::Backend& be) : be_(be) {}
  ~HostTier();
  HostTier(const HostTier&) = delete;
  HostTier& operator=(const HostTier&) = delete;

  struct Extent {
    std::uint32_t chunk = 0;
    std::size_t offset = 0;
    std::size_t bytes = 0;  // rounded to kAlign
  };

  // Pins one more chunk so that at least `bytes` are free in total; nothing
  // if that many are free already. Throws Errc::out_of_memory (pinning
  // failed or would pass `limit`, 0 = none) with the sizes.
  void reserve(std::size_t bytes, std::size_t limit = 0);
  // Pins one more chunk of `bytes` whatever is free (free ranges too short).
  void grow(std::size_t bytes, std::size_t limit = 0);
  // An extent of at least n bytes; nullopt when no free range is that large.
  std::optional<Extent> take(std::size_t n);
  // An extent of at least n bytes, pinning a chunk of n more when no free
  // range is that large (grow()'s errors).
  Extent take_or_grow(std::size_t n);
  void give(const Extent& e);
  void* addr(const Extent& e) const { return static_cast<char*>(chunks_[e.chunk].base) + e.offset; }

  std::size_t capacity() const { return capacity_; }
  std::size_t used() const { return used_; }
  std::size_t free_bytes() const { return capacity_ - used_; }
  std::size_t largest_free() const;

 private:
  struct Chunk {
    void* base = nullptr;
    std::size_t size = 0;
    FreeRanges free;
  };
  prim::Backend& be_;
  std::vector<Chunk> chunks_;
  std::size_t capacity_ = 0, used_ = 0;
};

inline std::size_t round_extent(std::size_t n) { return (n + HostTier::kAlign - 1) / HostTier::kAlign * HostTier::kAlign; }

}  // namespace memlake::residency
