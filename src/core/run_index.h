// RunIndex: the page pool's best-fit index of free runs, in the order of
// (tag, len, view, start), as a std::set<RunKey> would keep them, but with
// updates that touch a few cache lines instead of a red-black tree's path.
//
// Why. Every large allocation and free re-indexes the free runs of its view
// and of the views aliasing its pages: ~8 windows per operation, each an
// erase and an insert or two. With a std::set those were ~13-level tree
// walks over nodes scattered in the heap, cold by the time the next tensor
// is allocated (docs/design/allocator.md, "The hot path's footprint").
//
// Layout: per tag, LengthBuckets (core/length_buckets.h) of (view, start)
// packed in 64 bits by run length. Insert: an append and a bit; erase: a
// scan of one small bucket and a swap; a bucket is sorted again only when a
// visit reaches it. Visiting in order: the set bits from a length upwards. Memory: a 24-byte bucket header per length up to 1.5 x the
// longest run seen, per tag (a run of 72k slots, a 141 GB device in 2 MiB
// pages: 2.6 MB).
// Not thread-safe (the page pool's owner serialises).
#pragma once

#include <algorithm>
#include <cstdint>
#include <vector>

#include "core/length_buckets.h"

namespace memlake::core {

using Tag = std::uint32_t;
using ViewId = std::uint32_t;

struct RunKey {
  Tag tag;
  std::uint32_t len;
  ViewId view;
  std::uint32_t start;
  friend bool operator<(const RunKey& x, const RunKey& y) {
    const std::uint64_t a = std::uint64_t{x.tag} << 32 | x.len, b = std::uint64_t{y.tag} << 32 | y.len;
    return a < b || (a == b && (std::uint64_t{x.view} << 32 | x.start) < (std::uint64_t{y.view} << 32 | y.start));
  }
  bool operator==(const RunKey&) const = default;
};

class RunIndex {
 public:
  void insert(const RunKey& k) {
    tag(k.tag).insert(k.len, pack(k));
    ++size_;
  }
  // Precondition: k is in the index.
  void erase(const RunKey& k) {
    tags_[k.tag].erase(k.len, pack(k));
    --size_;
  }
  bool contains(const RunKey& k) const { return k.tag < tags_.size() && tags_[k.tag].contains(k.len, pack(k)); }
  std::size_t size() const { return size_; }

  // f(run) for the runs of `t` with len >= min_len, in (len, view, start)
  // order, until f returns false.
  template <class F>
  void visit(Tag t, std::uint32_t min_len, F&& f) const {
    if (t >= tags_.size()) return;
    tags_[t].visit(min_len, [&](std::uint32_t len, std::uint64_t loc) {
      return f(RunKey{t, len, static_cast<ViewId>(loc >> 32), static_cast<std::uint32_t>(loc)});
    });
  }
  // The longest run of any tag, 0 if none.
  std::uint32_t longest() const {
    std::uint32_t best = 0;
    for (const auto& t : tags_) best = std::max(best, t.last());
    return best;
  }
  // Every run, in order (for consistency checks).
  std::vector<RunKey> all() const {
    std::vector<RunKey> out;
    for (Tag t = 0; t < tags_.size(); ++t) visit(t, 0, [&](const RunKey& k) { return out.push_back(k), true; });
    return out;
  }

 private:
  static std::uint64_t pack(const RunKey& k) { return std::uint64_t{k.view} << 32 | k.start; }
  LengthBuckets<std::uint64_t>& tag(Tag t) {
    if (t >= tags_.size()) tags_.resize(std::size_t{t} + 1);
    return tags_[t];
  }

  std::vector<LengthBuckets<std::uint64_t>> tags_;
  std::size_t size_ = 0;
};

}  // namespace memlake::core
