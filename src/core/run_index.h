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
// Layout: per tag, one bucket per run length, each a sorted vector of
// (view, start) packed in 64 bits, and a two-level bitmap of the lengths
// whose bucket is not empty. Insert and erase: a binary search in one small
// bucket and a bit. Visiting in order: the set bits from a length upwards.
// Memory: a 24-byte bucket header per length up to 1.5 x the longest run seen,
// per tag (a run of 72k slots, a 141 GB device in 2 MiB pages: 2.6 MB).
// Not thread-safe (the page pool's owner serialises).
#pragma once

#include <algorithm>
#include <cstdint>
#include <vector>

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
    PerTag& t = tag(k.tag);
    if (k.len >= t.buckets.size()) t.grow(k.len);
    auto& b = t.buckets[k.len];
    const std::uint64_t loc = pack(k);
    b.insert(std::lower_bound(b.begin(), b.end(), loc), loc);
    if (b.size() == 1) t.set(k.len);
    ++size_;
  }
  // Precondition: k is in the index.
  void erase(const RunKey& k) {
    PerTag& t = tags_[k.tag];
    auto& b = t.buckets[k.len];
    b.erase(std::lower_bound(b.begin(), b.end(), pack(k)));
    if (b.empty()) t.clear(k.len);
    --size_;
  }
  bool contains(const RunKey& k) const {
    if (k.tag >= tags_.size() || k.len >= tags_[k.tag].buckets.size()) return false;
    const auto& b = tags_[k.tag].buckets[k.len];
    return std::binary_search(b.begin(), b.end(), pack(k));
  }
  std::size_t size() const { return size_; }

  // f(run) for the runs of `t` with len >= min_len, in (len, view, start)
  // order, until f returns false.
  template <class F>
  void visit(Tag t, std::uint32_t min_len, F&& f) const {
    if (t >= tags_.size()) return;
    const PerTag& pt = tags_[t];
    for (std::uint32_t len = pt.next(min_len); len != kNone; len = pt.next(len + 1))
      for (std::uint64_t loc : pt.buckets[len])
        if (!f(RunKey{t, len, static_cast<ViewId>(loc >> 32), static_cast<std::uint32_t>(loc)})) return;
  }
  // The longest run of any tag, 0 if none.
  std::uint32_t longest() const {
    std::uint32_t best = 0;
    for (const PerTag& t : tags_) best = std::max(best, t.last());
    return best;
  }
  // Every run, in order (for consistency checks).
  std::vector<RunKey> all() const {
    std::vector<RunKey> out;
    for (Tag t = 0; t < tags_.size(); ++t) visit(t, 0, [&](const RunKey& k) { return out.push_back(k), true; });
    return out;
  }

 private:
  static constexpr std::uint32_t kNone = 0xffffffffu;
  static std::uint64_t pack(const RunKey& k) { return std::uint64_t{k.view} << 32 | k.start; }

  struct PerTag {
    std::vector<std::vector<std::uint64_t>> buckets;  // by run length
    std::vector<std::uint64_t> bits;                  // bit len: buckets[len] not empty
    std::vector<std::uint64_t> words;                 // bit w: bits[w] != 0

    void grow(std::uint32_t len) {
      buckets.resize(std::size_t{len} + 1 + len / 2);
      bits.resize((buckets.size() + 63) / 64, 0);
      words.resize((bits.size() + 63) / 64, 0);
    }
    void set(std::uint32_t len) {
      bits[len / 64] |= std::uint64_t{1} << (len % 64);
      words[len / 4096] |= std::uint64_t{1} << (len / 64 % 64);
    }
    void clear(std::uint32_t len) {
      if ((bits[len / 64] &= ~(std::uint64_t{1} << (len % 64))) == 0)
        words[len / 4096] &= ~(std::uint64_t{1} << (len / 64 % 64));
    }
    // The smallest length >= len with runs, kNone if none.
    std::uint32_t next(std::uint32_t len) const {
      std::size_t w = len / 64;
      if (w >= bits.size()) return kNone;
      if (const std::uint64_t m = bits[w] & (~std::uint64_t{0} << (len % 64)))
        return static_cast<std::uint32_t>(w * 64 + static_cast<std::size_t>(__builtin_ctzll(m)));
      // The next non-empty word after w, through the summary.
      std::size_t s = (w + 1) / 64;
      std::uint64_t m = s < words.size() ? words[s] & (~std::uint64_t{0} << ((w + 1) % 64)) : 0;
      while (m == 0) {
        if (++s >= words.size()) return kNone;
        m = words[s];
      }
      const std::size_t nw = s * 64 + static_cast<std::size_t>(__builtin_ctzll(m));
      return static_cast<std::uint32_t>(nw * 64 + static_cast<std::size_t>(__builtin_ctzll(bits[nw])));
    }
    std::uint32_t last() const {
      for (std::size_t s = words.size(); s-- > 0;)
        if (words[s]) {
          const std::size_t w = s * 64 + 63 - static_cast<std::size_t>(__builtin_clzll(words[s]));
          return static_cast<std::uint32_t>(w * 64 + 63 - static_cast<std::size_t>(__builtin_clzll(bits[w])));
        }
      return 0;
    }
  };
  PerTag& tag(Tag t) {
    if (t >= tags_.size()) tags_.resize(std::size_t{t} + 1);
    return tags_[t];
  }

  std::vector<PerTag> tags_;
  std::size_t size_ = 0;
};

}  // namespace memlake::core
