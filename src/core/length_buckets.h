// LengthBuckets: values kept by a small integer length, for best-fit lookups
// ("the first value of the smallest length >= n") that touch a few cache
// lines instead of a balanced tree's path.
//
// Layout: one bucket per length, each a vector of values sorted by the
// values' operator<, and a two-level bitmap of the lengths whose bucket is
// not empty. Insert and erase: a binary search in one bucket and a bit.
// Visiting in (length, value) order: the set bits from a length upwards.
// Memory: a 24-byte bucket header per length up to 1.5 x the longest seen.
// Used by the page pool's free runs (RunIndex) and the small pool's free
// blocks. Not thread-safe.
#pragma once

#include <algorithm>
#include <cstdint>
#include <vector>

namespace memlake::core {

template <class V>
class LengthBuckets {
 public:
  static constexpr std::uint32_t kNone = 0xffffffffu;

  void insert(std::uint32_t len, const V& v) {
    if (len >= buckets_.size()) grow(len);
    auto& b = buckets_[len];
    b.insert(std::lower_bound(b.begin(), b.end(), v), v);
    if (b.size() == 1) set(len);
  }
  // Precondition: v is in bucket len.
  void erase(std::uint32_t len, const V& v) {
    auto& b = buckets_[len];
    b.erase(std::lower_bound(b.begin(), b.end(), v));
    if (b.empty()) clear(len);
  }
  bool contains(std::uint32_t len, const V& v) const {
    if (len >= buckets_.size()) return false;
    const auto& b = buckets_[len];
    return std::binary_search(b.begin(), b.end(), v);
  }
  // f(len, value) for the values of length >= min_len, in (len, value)
  // order, until f returns false.
  template <class F>
  void visit(std::uint32_t min_len, F&& f) const {
    for (std::uint32_t len = next(min_len); len != kNone; len = next(len + 1))
      for (const V& v : buckets_[len])
        if (!f(len, v)) return;
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
  void grow(std::uint32_t len) {
    buckets_.resize(std::size_t{len} + 1 + len / 2);
    bits_.resize((buckets_.size() + 63) / 64, 0);
    words_.resize((bits_.size() + 63) / 64, 0);
  }
  void set(std::uint32_t len) {
    bits_[len / 64] |= std::uint64_t{1} << (len % 64);
    words_[len / 4096] |= std::uint64_t{1} << (len / 64 % 64);
  }
  void clear(std::uint32_t len) {
    if ((bits_[len / 64] &= ~(std::uint64_t{1} << (len % 64))) == 0)
      words_[len / 4096] &= ~(std::uint64_t{1} << (len / 64 % 64));
  }

  std::vector<std::vector<V>> buckets_;  // by length
  std::vector<std::uint64_t> bits_;      // bit len: buckets_[len] not empty
  std::vector<std::uint64_t> words_;     // bit w: bits_[w] != 0
};

}  // namespace memlake::core
