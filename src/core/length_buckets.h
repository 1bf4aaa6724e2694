// LengthBuckets: values kept by a small integer length, for best-fit lookups
// ("the first value of the smallest length >= n") that touch a few cache
// lines instead of a balanced tree's path.
//
// Layout: one bucket per length, each a vector of values, and a two-level
// bitmap of the lengths whose bucket is not empty. Insert: an append and a
// bit; erase: a scan of one bucket (a few values) and a swap with its last.
// A bucket is put back in order (the values' operator<) only when a visit
// reaches it, so updates that no lookup sees in between cost no search and
// no shift: the page pool updates ~14 buckets per large allocation or free
// (its own view's runs and the aliasing views') and looks at one to three.
// Visiting in (length, value) order: the set bits from a length upwards.
// Values must be distinct (under operator<).
// Memory: a 24-byte bucket header per length up to 1.5 x the longest seen.
// Used by the page pool's free runs (RunIndex) and the small pool's free
// blocks. Not thread-safe, visits included: a const visit may reorder a
// bucket (the page pool and the small pool are used under their owner's lock).
#pragma once

#include <algorithm>
#include <cstdint>
#include <vector>

#include "core/debug.h"

namespace memlake::core {

template <class V>
class LengthBuckets {
 public:
  static constexpr std::uint32_t kNone = 0xffffffffu;

  void insert(std::uint32_t len, const V& v) {
    if (len >= buckets_.size()) grow(len);
    auto& b = buckets_[len];
    if (b.empty()) set(len);
    else if (v < b.back()) unsorted_[len / 64] |= std::uint64_t{1} << (len % 64);
    b.push_back(v);
  }
  // Precondition: v is in bucket len.
  void erase(std::uint32_t len, const V& v) {
    ML_DEBUG_ASSERT(contains(len, v));
    auto& b = buckets_[len];
    V* const last = &b.back();
    V* at = b.data();
    while (*at < v || v < *at) ++at;
    if (at != last) {  // the last value takes its place: order is restored at the next visit
      *at = *last;
      unsorted_[len / 64] |= std::uint64_t{1} << (len % 64);
    }
    b.pop_back();
    if (b.empty()) clear(len);
  }
  bool contains(std::uint32_t len, const V& v) const {
    if (len >= buckets_.size()) return false;
    const auto& b = buckets_[len];
    return std::any_of(b.begin(), b.end(), [&](const V& x) { return !(x < v) && !(v < x); });
  }
  // f(len, value) for the values of length >= min_len, in (len, value)
  // order, until f returns false. Sorts the buckets it reaches that updates
  // left out of order (their contents are the same; only the order is kept
  // lazily, hence const).
  template <class F>
  void visit(std::uint32_t min_len, F&& f) const {
    for (std::uint32_t len = next(min_len); len != kNone; len = next(len + 1)) {
      auto& b = buckets_[len];
      std::uint64_t& u = unsorted_[len / 64];
      if (u >> (len % 64) & 1) {
        restore_order(b);
        u &= ~(std::uint64_t{1} << (len % 64));
      }
      ML_DEBUG_ASSERT(std::is_sorted(b.begin(), b.end()));
      for (const V& v : b)
        if (!f(len, v)) return;
    }
  }
  // The smallest length >= len with values, kNone if none.
  std::uint32_t next(std::uint32_t len) const {
    std::size_t w = len / 64;
    if (w >= bits_.size()) return kNone;
    if (const std::uint64_t m = bits_[w] & (~std::uint64_t{0} << (len % 64)))
      return static_cast<std::uint32_t>(w * 64 + static_cast<std::size_t>(__builtin_ctzll(m)));
    // The next non-empty word after w, through the summary.
    std::size_t s = (w + 1) / 64;
    std::uint64_t m = s < words_.size() ? words_[s] & (~std::uint64_t{0} << ((w + 1) % 64)) : 0;
    while (m == 0) {
      if (++s >= words_.size()) return kNone;
      m = words_[s];
    }
    const std::size_t nw = s * 64 + static_cast<std::size_t>(__builtin_ctzll(m));
    return static_cast<std::uint32_t>(nw * 64 + static_cast<std::size_t>(__builtin_ctzll(bits_[nw])));
  }
  // The longest length with values, 0 if none.
  std::uint32_t last() const {
    for (std::size_t s = words_.size(); s-- > 0;)
      if (words_[s]) {
        const std::size_t w = s * 64 + 63 - static_cast<std::size_t>(__builtin_clzll(words_[s]));
        return static_cast<std::uint32_t>(w * 64 + 63 - static_cast<std::size_t>(__builtin_clzll(bits_[w])));
      }
    return 0;
  }

 private:
  // Insertion sort: O(size + the distance the updates moved values), about
  // what the shifts of an ordered insert and erase cost (a swap-erase moves
  // one value; appends land near their place).
  static void restore_order(std::vector<V>& b) {
    V* const d = b.data();
    for (std::size_t i = 1; i < b.size(); ++i) {
      if (!(d[i] < d[i - 1])) continue;
      const V x = d[i];
      std::size_t j = i;
      do d[j] = d[j - 1];
      while (--j > 0 && x < d[j - 1]);
      d[j] = x;
    }
  }
  void grow(std::uint32_t len) {
    buckets_.resize(std::size_t{len} + 1 + len / 2);
    bits_.resize((buckets_.size() + 63) / 64, 0);
    unsorted_.resize(bits_.size(), 0);
    words_.resize((bits_.size() + 63) / 64, 0);
  }
  void set(std::uint32_t len) {
    bits_[len / 64] |= std::uint64_t{1} << (len % 64);
    words_[len / 4096] |= std::uint64_t{1} << (len / 64 % 64);
  }
  void clear(std::uint32_t len) {
    unsorted_[len / 64] &= ~(std::uint64_t{1} << (len % 64));  // an empty bucket is in order
    if ((bits_[len / 64] &= ~(std::uint64_t{1} << (len % 64))) == 0)
      words_[len / 4096] &= ~(std::uint64_t{1} << (len / 64 % 64));
  }

  mutable std::vector<std::vector<V>> buckets_;  // by length; in order unless unsorted_ says otherwise
  std::vector<std::uint64_t> bits_;              // bit len: buckets_[len] not empty
  mutable std::vector<std::uint64_t> unsorted_;  // bit len: buckets_[len] may be out of order
  std::vector<std::uint64_t> words_;     // bit w: bits_[w] != 0
};

}  // namespace memlake::core
