#include "residency/host_tier.h"

#include <algorithm>

#include "core/error.h"

namespace memlake::residency {

HostTier::~HostTier() {
  for (Chunk& c : chunks_) {
    try {
      be_.free_pinned(c.base);
    } catch (...) {
      // Destruction must not throw.
    }
  }
}

void HostTier::reserve(std::size_t bytes, std::size_t limit) {
  if (free_bytes() < bytes) grow(bytes - free_bytes(), limit);
}

void HostTier::grow(std::size_t bytes, std::size_t limit) {
  const std::size_t more = round_extent(bytes);
  if (limit && capacity_ + more > limit)
    throw_error(Errc::out_of_memory, "host tier: " + format_bytes(free_bytes()) + " free of " +
                                         format_bytes(capacity_) + " pinned; pinning " + format_bytes(more) +
                                         " more would pass the limit of " + format_bytes(limit));
  void* p = nullptr;
  try {
    p = be_.alloc_pinned(more);
  } catch (const Error& e) {
    throw_error(Errc::out_of_memory, "host tier: cannot pin " + format_bytes(more) + " more host memory (" +
                                         format_bytes(capacity_) + " pinned already): " + e.what());
  }
  Chunk c;
  c.base = p;
  c.size = more;
  c.free.add(0, more);
  chunks_.push_back(std::move(c));
  capacity_ += more;
}

std::optional<HostTier::Extent> HostTier::take(std::size_t n) {
  const std::size_t want = round_extent(std::max<std::size_t>(n, 1));
  for (std::uint32_t ci = 0; ci < chunks_.size(); ++ci)
    if (auto off = chunks_[ci].free.take(want)) {
      used_ += want;
      return Extent{ci, *off, want};
    }
  return std::nullopt;
}

HostTier::Extent HostTier::take_or_grow(std::size_t n) {
  if (auto e = take(n)) return *e;
  grow(n);
  return *take(n);
}

void HostTier::give(const Extent& e) {
  if (e.chunk >= chunks_.size() || e.offset + e.bytes > chunks_[e.chunk].size || e.bytes > used_)
    throw_error(Errc::internal, "host tier: extent returned that it never handed out");
  chunks_[e.chunk].free.give(e.offset, e.bytes);
  used_ -= e.bytes;
}

std::size_t HostTier::largest_free() const {
  std::size_t best = 0;
  for (const Chunk& c : chunks_) best = std::max(best, c.free.largest());
  return best;
}

}  // namespace memlake::residency
