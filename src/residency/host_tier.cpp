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
  c.free.emplace(0, more);
  chunks_.push_back(std::move(c));
  capacity_ += more;
}

std::optional<HostTier::Extent> HostTier::take(std::size_t n) {
  const std::size_t want = round_extent(std::max<std::size_t>(n, 1));
  for (std::uint32_t ci = 0; ci < chunks_.size(); ++ci) {
    auto& fl = chunks_[ci].free;
    for (auto it = fl.begin(); it != fl.end(); ++it) {
      if (it->second < want) continue;
      const Extent e{ci, it->first, want};
      const std::size_t off = it->first + want, left = it->second - want;
      fl.erase(it);
      if (left) fl.emplace(off, left);
      used_ += want;
      return e;
    }
  }
  return std::nullopt;
}

void HostTier::give(const Extent& e) {
  if (e.chunk >= chunks_.size() || e.offset + e.bytes > chunks_[e.chunk].size || e.bytes > used_)
    throw_error(Errc::internal, "host tier: extent returned that it never handed out");
  auto& fl = chunks_[e.chunk].free;
  std::size_t off = e.offset, len = e.bytes;
  auto next = fl.lower_bound(off);
  if (next != fl.end() && next->first < off + len) throw_error(Errc::internal, "host tier: extent returned twice");
  if (next != fl.begin()) {
    auto prev = std::prev(next);
    if (prev->first + prev->second > off) throw_error(Errc::internal, "host tier: extent returned twice");
    if (prev->first + prev->second == off) {
      off = prev->first;
      len += prev->second;
      fl.erase(prev);
    }
  }
  if (next != fl.end() && next->first == e.offset + e.bytes) {
    len += next->second;
    fl.erase(next);
  }
  fl.emplace(off, len);
  used_ -= e.bytes;
}

std::size_t HostTier::largest_free() const {
  std::size_t best = 0;
  for (const Chunk& c : chunks_)
    for (auto [off, len] : c.free) best = std::max(best, len);
  return best;
}

}  // namespace memlake::residency
