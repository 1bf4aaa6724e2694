// SpanCache: large spans freed a moment ago, kept as they are for the next
// allocation of the same page count on the same stream.
//
// Why. Handing a span back to the page pool re-indexes the free runs of its
// view and of every view that aliases its pages, and taking one does it
// again: thousands of instructions and hundreds of cold cache lines per
// allocation once views alias each other (docs/design/allocator.md, "The
// hot path's footprint"). Training steps free and re-allocate the same
// shapes over and over: on the LRV trace 92 % of large allocations find a
// span of their page count among the last 32 freed. A hit skips the pool.
//
// The contract with the allocator above: parked spans are still BUSY in the
// pool, so nothing else can take them; before any slow path (a stitch, a
// repair, new memory) every parked span is given back, so keeping them
// never makes memory grow. An entry keeps the stream tag and the free
// number it was freed with, and is only reused by that stream (work queued
// on it before the free is ordered before the reuse).
//
// Bounded: `per_size` entries of one page count, `total` in all; the oldest
// go back first. Not thread-safe (the allocator serialises).
#pragma once

#include <cstdint>
#include <optional>
#include <vector>

#include "core/page_pool.h"

namespace memlake::core {

class SpanCache {
 public:
  struct Entry {
    Span span;
    Tag tag;
    std::uint64_t seq;  // the free number the span was freed with
  };

  // Room for `total` entries is taken now: put() and take() never allocate (a free must not fail).
  SpanCache(std::size_t per_size, std::size_t total) : per_size_(per_size), total_(total) { entries_.reserve(total); }

  bool enabled() const { return total_ > 0 && per_size_ > 0; }
  bool empty() const { return entries_.empty(); }
  std::size_t size() const { return entries_.size(); }
  std::uint64_t slots() const { return slots_; }
  std::size_t capacity() const { return total_; }

  // The most recently parked span of `count` slots and tag `tag`, removed.
  std::optional<Entry> take(std::uint32_t count, Tag tag) {
    for (std::size_t i = entries_.size(); i-- > 0;)
      if (entries_[i].span.count == count && entries_[i].tag == tag) {
        const Entry e = entries_[i];
        entries_.erase(entries_.begin() + static_cast<std::ptrdiff_t>(i));
        slots_ -= count;
        return e;
      }
    return std::nullopt;
  }

  // Parks e. What no longer fits (the oldest of its page count, or the
  // oldest of all) is appended to `out`, for the caller to give back.
  void put(const Entry& e, std::vector<Entry>& out) {
    std::size_t same = 0, oldest_same = entries_.size();
    for (std::size_t i = 0; i < entries_.size(); ++i)
      if (entries_[i].span.count == e.span.count && same++ == 0) oldest_same = i;
    if (same >= per_size_) evict(oldest_same, out);
    else if (entries_.size() >= total_) evict(0, out);
    entries_.push_back(e);
    slots_ += e.span.count;
  }

  // Every entry, oldest first, and empties the cache.
  void drain(std::vector<Entry>& out) {
    out.insert(out.end(), entries_.begin(), entries_.end());
    entries_.clear();
    slots_ = 0;
  }

  const std::vector<Entry>& entries() const { return entries_; }

 private:
  void evict(std::size_t i, std::vector<Entry>& out) {
    out.push_back(entries_[i]);
    slots_ -= entries_[i].span.count;
    entries_.erase(entries_.begin() + static_cast<std::ptrdiff_t>(i));
  }

  const std::size_t per_size_, total_;
  std::vector<Entry> entries_;  // oldest first
  std::uint64_t slots_ = 0;     // slots parked
};

}  // namespace memlake::core
